//! The replicated component types of an app ([`ReplicatedComponents`]): what the storage seam
//! needs of each, resolved once per type.

use std::any::{Any, TypeId};

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use mf_net::replication::Replicated;
use mf_net::store::Lend;

use crate::components::Networked;
use crate::rows::lend_component;

/// One replicated component type, type-erased.
#[derive(Clone, Copy)]
pub(crate) struct ComponentType {
    pub(crate) type_id: TypeId,
    /// The [`Lend<C>`] of the type.
    pub(crate) lender: fn() -> &'static dyn Any,
    /// The component of an entity, mutably (an RPC's receiver).
    pub(crate) value_mut: for<'w> fn(&'w mut World, Entity) -> Option<&'w mut dyn Any>,
    /// A new [`Networked`] entity holding the type's default value (a client applying a spawn).
    pub(crate) spawn: fn(&mut World) -> Entity,
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

fn spawn<C: Component + Replicated + Default>(world: &mut World) -> Entity {
    world.spawn((C::default(), Networked)).id()
}

/// The component types registered with
/// [`replicate`](crate::ReplicateAppExt::replicate), in registration order. An entity holds at
/// most one of them.
#[derive(Resource, Default)]
pub struct ReplicatedComponents {
    types: Vec<ComponentType>,
}

impl ReplicatedComponents {
    /// Registers `C` (once).
    pub(crate) fn add<C>(&mut self)
    where
        C: Component<Mutability = bevy_ecs::component::Mutable> + Replicated + Default,
    {
        let type_id = TypeId::of::<C>();
        if self.types.iter().any(|t| t.type_id == type_id) {
            return;
        }
        self.types.push(ComponentType {
            type_id,
            lender: lender::<C>,
            value_mut: value_mut::<C>,
            spawn: spawn::<C>,
        });
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
