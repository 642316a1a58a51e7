//! Networked entities whose parent changed: each keeps the entity it hangs under on clients
//! ([`NetParent`], on the server), and an observer notes every entity whose `ChildOf` was
//! inserted, replaced or removed ([`Reparented`]). One whose network parent is no longer that
//! one is moved there on clients (clients would hold it where it was, and despawn it with that
//! parent); so are the networked children of an entity networked after them ([`adopt`]).

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::{ChildOf, Children};
use bevy_ecs::lifecycle::{Insert, Remove};
use bevy_ecs::observer::On;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::ResMut;
use bevy_ecs::world::{EntityRef, World};
use mf_net::store::Store;

use crate::components::{NetworkId, Networked};
use crate::node::entity_of;
use crate::owner::networked_entity;
use crate::store::NetMultiplayer;

/// The entity a networked entity hangs under on clients, kept by the server: the networked
/// parent its spawn named or it was moved under since; `None` for a root.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NetParent(pub(crate) Option<Entity>);

/// The entities whose `ChildOf` changed since the last look (capacity kept), and those made
/// roots until their new parent is networked (see [`follow`]; rare, capacity not kept).
#[derive(Resource, Default)]
pub(crate) struct Reparented {
    noted: Vec<Entity>,
    deferred: Vec<Entity>,
}

/// A `ChildOf` was inserted (or replaced).
pub(crate) fn note_insert(event: On<'_, '_, Insert, ChildOf>, mut moved: ResMut<'_, Reparented>) {
    moved.noted.push(event.event().entity);
}

/// A `ChildOf` was removed (or its entity despawned).
pub(crate) fn note_remove(event: On<'_, '_, Remove, ChildOf>, mut moved: ResMut<'_, Reparented>) {
    moved.noted.push(event.event().entity);
}

/// The networked entities whose parent changed since the last look; forgets the notes.
fn noted(world: &mut World) -> Vec<Entity> {
    let Some(mut notes) = world.get_resource_mut::<Reparented>() else {
        return Vec::new();
    };
    let mut noted = std::mem::take(&mut notes.noted);
    noted.sort_unstable();
    noted.dedup();
    noted.retain(|&e| {
        world
            .get_entity(e)
            .is_ok_and(|e| e.contains::<Networked>() && e.contains::<NetParent>())
    });
    noted
}

/// The server: each networked entity whose network parent (the parent a spawn of it would
/// name, see [`BevyStore::parent`](mf_net::store::Store::parent)) is no longer the one it
/// hangs under on clients follows it there
/// ([`set_parent`](mf_net::replication::Multiplayer::set_parent)). One under a parent about to
/// be networked (`Networked` and not networked yet) is made a root at once, so that its old
/// parent's despawn in this frame leaves it, and follows the parent once that is networked
/// ([`follow_deferred`]). Returns those the core will not move.
pub(crate) fn follow(mp: &mut NetMultiplayer) -> Vec<Entity> {
    let mut noted = noted(mp.store_mut().world_mut());
    let again = follow_these(mp, &noted);
    // The list goes back for the next notes, its capacity kept.
    noted.clear();
    if let Some(mut notes) = mp.store_mut().world_mut().get_resource_mut::<Reparented>() {
        if notes.noted.is_empty() {
            notes.noted = noted;
        }
    }
    again
}

/// After new entities are networked: the entities [`follow`] made roots until their parent
/// was networked follow it now. Returns those the core cannot move.
pub(crate) fn follow_deferred(mp: &mut NetMultiplayer) -> Vec<Entity> {
    let world = mp.store_mut().world_mut();
    let deferred = world
        .get_resource_mut::<Reparented>()
        .map(|mut r| std::mem::take(&mut r.deferred))
        .unwrap_or_default();
    if deferred.is_empty() {
        return Vec::new();
    }
    follow_these(mp, &deferred)
}

/// The server: the networked entity `e`, whose parent's nodes go at the frame's end (the
/// parent is no longer networked), becomes a root on clients
/// ([`set_parent`](mf_net::replication::Multiplayer::set_parent) to none) before they go, and
/// follows its parent again once that is networked ([`follow_deferred`]). Returns whether it
/// did (`false` if the core will not move it).
pub(crate) fn make_root(mp: &mut NetMultiplayer, e: Entity) -> bool {
    let Some(own) = networked_entity(mp, e) else {
        return false;
    };
    if mp.set_parent(own, None).is_err() {
        return false;
    }
    let world = mp.store_mut().world_mut();
    world.entity_mut(e).insert(NetParent(None));
    if let Some(mut r) = world.get_resource_mut::<Reparented>() {
        r.deferred.push(e);
    }
    true
}

/// The server just networked `entity`: its children networked before it (roots on clients,
/// since it was not networked then: it had stopped being networked, or never was) follow it
/// there. Returns those the core will not move.
pub(crate) fn adopt(mp: &mut NetMultiplayer, entity: Entity) -> Vec<Entity> {
    let world = mp.store().world();
    let networked = |c: &&Entity| {
        world
            .get_entity(**c)
            .is_ok_and(|c| c.contains::<Networked>() && c.contains::<NetParent>())
    };
    let children = world.get::<Children>(entity).into_iter().flatten();
    let children: Vec<Entity> = children.filter(networked).copied().collect();
    follow_these(mp, &children)
}

/// [`follow`] for the entities `these`. A move the core refuses is tried again once the
/// others have been made (in one frame, an entity may go under what was its child, which is
/// inside its subtree until that child's own move is made); those it still refuses are
/// returned.
fn follow_these(mp: &mut NetMultiplayer, these: &[Entity]) -> Vec<Entity> {
    let mut refused: Vec<Entity> = these
        .iter()
        .copied()
        .filter(|&e| !follow_one(mp, e))
        .collect();
    while !refused.is_empty() {
        let before = refused.len();
        refused.retain(|&e| !follow_one(mp, e));
        if refused.len() == before {
            break;
        }
    }
    refused
}

/// [`follow`] for the entity `e`; `false` if the core refuses the move.
fn follow_one(mp: &mut NetMultiplayer, e: Entity) -> bool {
    let Some(own) = networked_entity(mp, e) else {
        return true;
    };
    let world = mp.store().world();
    let under = world
        .get_entity(e)
        .ok()
        .and_then(|e| e.get::<ChildOf>().map(ChildOf::parent));
    let under = under.and_then(|p| world.get_entity(p).ok());
    // A parent about to be networked (anew, at the frame's end): a root until it is.
    let waits = under.is_some_and(|p| to_be_networked(&p));
    let parent = if waits { None } else { mp.store().parent(own) };
    let now = parent.and_then(entity_of);
    if world.get::<NetParent>(e) != Some(&NetParent(now)) {
        if mp.set_parent(own, parent).is_err() {
            return false;
        }
        let world = mp.store_mut().world_mut();
        world.entity_mut(e).insert(NetParent(now));
    }
    if waits {
        let world = mp.store_mut().world_mut();
        if let Some(mut r) = world.get_resource_mut::<Reparented>() {
            r.deferred.push(e);
        }
    }
    true
}

/// Whether `entity` is to be networked: it is [`Networked`], and not networked yet. Its
/// children wait for it.
pub(crate) fn to_be_networked(entity: &EntityRef<'_>) -> bool {
    entity.contains::<Networked>() && !entity.contains::<NetworkId>()
}

/// Forgets the notes (a client's: it networks nothing).
pub(crate) fn forget(world: &mut World) {
    if let Some(mut notes) = world.get_resource_mut::<Reparented>() {
        notes.noted.clear();
        notes.deferred.clear();
    }
}
