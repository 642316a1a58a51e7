//! Networked entities whose parent changed: each keeps the entity it was networked under
//! ([`NetParent`], on the server), and an observer notes every entity whose `ChildOf` was
//! inserted, replaced or removed ([`Reparented`]). One whose network parent is no longer the
//! one it was networked under is networked again (see `renetwork`): clients hold it where it
//! was spawned, and would despawn it with that parent.

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::lifecycle::{Insert, Remove};
use bevy_ecs::observer::On;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::ResMut;
use bevy_ecs::world::World;

use crate::components::{NetworkId, Networked};

/// The entity a networked entity was networked under, on the server: its parent in its group,
/// or the networked parent its group's spawn named; `None` for a root.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NetParent(pub(crate) Option<Entity>);

/// The entities whose `ChildOf` changed since the last look (capacity kept).
#[derive(Resource, Default)]
pub(crate) struct Reparented(Vec<Entity>);

/// A `ChildOf` was inserted (or replaced).
pub(crate) fn note_insert(event: On<'_, '_, Insert, ChildOf>, mut moved: ResMut<'_, Reparented>) {
    moved.0.push(event.event().entity);
}

/// A `ChildOf` was removed (or its entity despawned).
pub(crate) fn note_remove(event: On<'_, '_, Remove, ChildOf>, mut moved: ResMut<'_, Reparented>) {
    moved.0.push(event.event().entity);
}

/// The networked entities whose parent is no longer the one they were networked under (the
/// parent a group's spawn would name now: a networked one, else none); forgets the notes.
pub(crate) fn moved(world: &mut World) -> Vec<Entity> {
    let Some(mut notes) = world.get_resource_mut::<Reparented>() else {
        return Vec::new();
    };
    let mut notes = std::mem::take(&mut notes.0);
    notes.sort_unstable();
    notes.dedup();
    let moved = notes
        .iter()
        .copied()
        .filter(|&e| {
            let Ok(entity) = world.get_entity(e) else {
                return false;
            };
            let Some(&NetParent(was)) = entity.get::<NetParent>() else {
                return false;
            };
            let parent = entity.get::<ChildOf>().map(ChildOf::parent);
            let networked = |p: Entity| {
                world
                    .get_entity(p)
                    .is_ok_and(|p| p.contains::<Networked>() && p.contains::<NetworkId>())
            };
            entity.contains::<Networked>() && parent.filter(|&p| networked(p)) != was
        })
        .collect();
    notes.clear();
    if let Some(mut kept) = world.get_resource_mut::<Reparented>() {
        kept.0 = notes;
    }
    moved
}

/// Forgets the notes (a client's: it networks nothing).
pub(crate) fn forget(world: &mut World) {
    if let Some(mut notes) = world.get_resource_mut::<Reparented>() {
        notes.0.clear();
    }
}
