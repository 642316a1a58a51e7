//! The replicated component types of an app ([`ReplicatedComponents`]): what the storage seam
//! needs of each, resolved once per type.

use std::any::{Any, TypeId};

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use mf_net::replication::Replicated;
use mf_net::store::{Lend, NodeId};

use crate::components::Networked;
use crate::rows::lend_component;
use crate::store::{node_at, MAX_REPLICATED_COMPONENTS};

/// One replicated component type, type-erased.
#[derive(Clone, Copy)]
pub(crate) struct ComponentType {
    pub(crate) type_id: TypeId,
    /// Its registration order: the last part of its nodes' indexes.
    pub(crate) slot: u32,
    /// The [`Lend<C>`] of the type.
    pub(crate) lender: fn() -> &'static dyn Any,
    /// The component of an entity, mutably (an RPC's receiver).
    pub(crate) value_mut: for<'w> fn(&'w mut World, Entity) -> Option<&'w mut dyn Any>,
    /// A new [`Networked`] entity holding the type's default value, a child of the entity
    /// given (a client applying a spawn).
    pub(crate) spawn: fn(&mut World, Option<Entity>) -> Entity,
    /// Inserts the type's default value into an entity; `None` if there is no such entity.
    pub(crate) insert: fn(&mut World, Entity) -> Option<()>,
}

fn lender<C: Component<Mutability = bevy_ecs::component::Mutable> + Replicated>() -> &'static dyn Any
{
    const { &(lend_component::<C> as Lend<C>) }
}

fn value_mut<C: Component<Mutability = bevy_ecs::component::Mutable> + Replicated>(
    world: &mut World,
    entity: Entity,
) -> Option<&mut dyn Any> {
    Some(world.get_mut::<C>(entity)?.into_inner())
}

fn spawn<C: Component + Replicated + Default>(world: &mut World, parent: Option<Entity>) -> Entity {
    let mut entity = world.spawn((C::default(), Networked));
    if let Some(parent) = parent {
        entity.insert(ChildOf(parent));
    }
    entity.id()
}

fn insert<C: Component + Replicated + Default>(world: &mut World, entity: Entity) -> Option<()> {
    world.get_entity_mut(entity).ok()?.insert(C::default());
    Some(())
}

/// The component types registered with
/// [`replicate`](crate::ReplicateAppExt::replicate), in registration order (a type's
/// position is its slot in its nodes' indexes).
#[derive(Resource, Default)]
pub struct ReplicatedComponents {
    types: Vec<ComponentType>,
}

impl ReplicatedComponents {
    /// Registers `C` (once).
    ///
    /// # Panics
    ///
    /// If [`MAX_REPLICATED_COMPONENTS`] types are registered already.
    pub(crate) fn add<C>(&mut self)
    where
        C: Component<Mutability = bevy_ecs::component::Mutable> + Replicated + Default,
    {
        let type_id = TypeId::of::<C>();
        if self.types.iter().any(|t| t.type_id == type_id) {
            return;
        }
        let slot = u32::try_from(self.types.len()).unwrap_or(u32::MAX);
        assert!(
            slot < MAX_REPLICATED_COMPONENTS,
            "mf-net-bevy replicates at most {MAX_REPLICATED_COMPONENTS} component types; \
             group members into fewer components (a struct marked #[replicated(flatten)])"
        );
        self.types.push(ComponentType {
            type_id,
            slot,
            lender: lender::<C>,
            value_mut: value_mut::<C>,
            spawn: spawn::<C>,
            insert: insert::<C>,
        });
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

    /// The registered types.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ComponentType> {
        self.types.iter()
    }

    /// Whether `ty` is registered.
    pub fn contains(&self, ty: TypeId) -> bool {
        self.get(ty).is_some()
    }
}
