//! Forgotten registrations: a component type that derives `Replicated` but was never
//! [registered](crate::ReplicateAppExt::replicate) is never sent. Each such type is reported
//! once ([`UnregisteredComponent`] and a warning) in the first frame whose end finds it among
//! the world's component types: the first frame for the types the app's systems use, else the
//! frame it is first spawned or inserted (beside registered components or not, into an entity
//! networked already or not). The world's types are looked at again only when their count
//! changed.

use std::any::TypeId;

use bevy_ecs::component::ComponentInfo;
use bevy_ecs::entity::Entity;
use bevy_ecs::message::Message;
use bevy_ecs::world::World;
use mf_net::replication::ReplicationRegistry;
use tracing::warn;

use crate::types::ReplicatedComponents;

/// A component type that derives `Replicated` but was never
/// [registered](crate::ReplicateAppExt::replicate): reported once, at the end of the first
/// frame whose world knows it (the app's first frame for the types its systems use, else the
/// frame it is first spawned or inserted), so that a forgotten `app.replicate::<T>()` shows;
/// such a component is not sent, even on a [`Networked`](crate::Networked) entity whose other
/// components are.
#[derive(Message, Debug, Clone, PartialEq, Eq)]
pub struct UnregisteredComponent {
    /// The type's Rust name.
    pub type_name: &'static str,
}

/// What the adapter checked of the world's component types (kept in the
/// [`BevyStore`](crate::BevyStore)).
#[derive(Default)]
pub(crate) struct TypeCheck {
    /// The world's counts of registered and queued component types at the last look.
    seen: (usize, usize),
    /// The types reported.
    reported: Vec<TypeId>,
}

/// Reports each unregistered `Replicated` type the world knows and that was not reported yet
/// (see the [module documentation](self)), if the world's component types changed since the
/// last look (`check`, kept in the store).
pub(crate) fn report_new_types(world: &mut World, check: &mut TypeCheck) {
    let components = world.components();
    let counts = (components.num_registered(), components.num_queued());
    if counts == check.seen {
        return;
    }
    check.seen = counts;
    let registered = world.get_resource::<ReplicatedComponents>();
    let missing: Vec<(TypeId, &'static str)> = components
        .iter_registered()
        .filter_map(ComponentInfo::type_id)
        .filter(|&ty| !registered.is_some_and(|r| r.contains(ty)))
        .filter(|ty| !check.reported.contains(ty))
        .filter_map(|ty| Some((ty, replicated_name(ty)?)))
        .collect();
    for (ty, type_name) in missing {
        check.reported.push(ty);
        warn!(
            type_name,
            "a component derives `Replicated` but is not replicated: call `app.replicate::<{type_name}>()`"
        );
        world.write_message(UnregisteredComponent { type_name });
    }
}

/// The Rust name of `ty`, if it derives `Replicated`.
fn replicated_name(ty: TypeId) -> Option<&'static str> {
    let registry = ReplicationRegistry::global();
    let id = registry.id_of_type_id(ty)?;
    registry.get(id).map(|t| t.rust_name())
}

/// The name of a component of `entity` whose type derives `Replicated` but was never
/// [registered](crate::ReplicateAppExt::replicate).
pub(crate) fn unregistered(world: &World, entity: Entity) -> Option<&'static str> {
    let entity = world.get_entity(entity).ok()?;
    let components = world.components();
    let registered = world.get_resource::<ReplicatedComponents>();
    entity.archetype().components().iter().find_map(|&id| {
        let ty = components.get_info(id)?.type_id()?;
        match registered.is_some_and(|r| r.contains(ty)) {
            true => None,
            false => replicated_name(ty),
        }
    })
}
