//! The replicated component types of an app ([`ReplicatedComponents`]): what the storage seam
//! needs of each, resolved once per type.

use std::any::{Any, TypeId};

use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use mf_net::store::NodeId;

use crate::node::{node_at, ENTITY_SLOT, MAX_REPLICATED_COMPONENTS};

/// One replicated component type, type-erased.
#[derive(Clone, Copy)]
pub(crate) struct ComponentType {
    pub(crate) type_id: TypeId,
    /// Its registration order: the last part of its nodes' indexes.
    pub(crate) slot: u32,
    /// The [`Lend<C>`](mf_net::store::Lend) of the type.
    pub(crate) lender: fn() -> &'static dyn Any,
    /// The component of an entity, mutably (an RPC's receiver).
    pub(crate) value_mut: for<'w> fn(&'w mut World, Entity) -> Option<&'w mut dyn Any>,
    /// A new [`Networked`](crate::Networked) entity holding the type's default value, a child of the entity
    /// given (a client applying a spawn).
    pub(crate) spawn: fn(&mut World, Option<Entity>) -> Entity,
    /// Inserts the type's default value into an entity; `None` if there is no such entity.
    pub(crate) insert: fn(&mut World, Entity) -> Option<()>,
    /// Removes the type's component from an entity; whether it had one.
    pub(crate) remove: fn(&mut World, Entity) -> bool,
}

/// The component types registered with
/// [`replicate`](crate::ReplicateAppExt::replicate), in registration order (a type's
/// position is its slot in its nodes' indexes), after the entity's own node
/// ([`entity_node`](crate::entity_node), slot 0).
#[derive(Resource)]
pub struct ReplicatedComponents {
    types: Vec<ComponentType>,
}

impl ReplicatedComponents {
    /// No component type yet: only the entity's own node, `entity`, in slot 0.
    pub(crate) fn new(entity: ComponentType) -> Self {
        debug_assert_eq!(entity.slot, ENTITY_SLOT);
        Self {
            types: vec![entity],
        }
    }

    /// Registers the type `type_id` (once), its entry made by `entry` with its slot.
    ///
    /// # Panics
    ///
    /// If one type fewer than [`MAX_REPLICATED_COMPONENTS`] is registered already (the
    /// entity's own node takes a slot).
    pub(crate) fn add(&mut self, type_id: TypeId, entry: impl FnOnce(u32) -> ComponentType) {
        if self.types.iter().any(|t| t.type_id == type_id) {
            return;
        }
        let slot = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        assert!(
            slot < MAX_REPLICATED_COMPONENTS,
            "mf-net-bevy replicates at most {} component types; group members into fewer \
             components (a struct marked #[replicated(flatten)])",
            MAX_REPLICATED_COMPONENTS - 1
        );
        self.types.push(entry(slot));
    }

    /// The type in `slot`.
    pub(crate) fn by_slot(&self, slot: u32) -> Option<&ComponentType> {
        self.types.get(slot as usize)
    }

    /// The node of `entity`'s `C` component (what an RPC of `C` is called on, and what a
    /// `NetRef<C>` to it holds); `None` if `C` is not registered.
    pub fn node_of<C: 'static>(&self, entity: Entity) -> Option<NodeId> {
        node_at(entity, self.get(TypeId::of::<C>())?.slot)
    }

    /// The registered type `ty`.
    pub(crate) fn get(&self, ty: TypeId) -> Option<&ComponentType> {
        self.types.iter().find(|t| t.type_id == ty)
    }

    /// The registered component types (not the entity's own node).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ComponentType> {
        self.types.iter().skip(1)
    }

    /// Whether `ty` is registered.
    pub fn contains(&self, ty: TypeId) -> bool {
        self.get(ty).is_some()
    }
}
