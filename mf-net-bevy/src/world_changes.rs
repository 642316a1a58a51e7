//! What the server's world changed that the network follows before it networks new entities:
//! networked entities given another parent move there on clients (see `reparent`), and the
//! networked children of an entity no longer [`Networked`] are made roots on clients, the same
//! entities. After the frame's end (the core despawned it on clients), an entity no longer
//! `Networked` loses its [`NetworkId`] and its node, so that no two entities show one id; made
//! `Networked` again, it is networked anew.

use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::Children;
use bevy_ecs::query::{QueryState, With, Without};
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use tracing::warn;

use crate::components::{NetworkId, Networked};
use crate::late;
use crate::node::EntityNode;
use crate::removals::Removals;
use crate::reparent;
use crate::store::NetMultiplayer;

/// The entities no longer `Networked` that still carry a `NetworkId` (capacity kept), a
/// resource of the app's world.
#[derive(Resource, Default)]
pub(crate) struct Unnetworked {
    /// The removal stamp at the last look, before and after a frame's end.
    seen: u64,
    cleared: u64,
    entities: Vec<Entity>,
    /// Their query, made once.
    query: Option<UnnetworkedQuery>,
}

/// The entities no longer `Networked` that carry a `NetworkId`.
type UnnetworkedQuery = QueryState<Entity, (With<NetworkId>, Without<Networked>)>;

/// The server's [`Unnetworked`], out of the world while it is used, if something was removed
/// since `last` says.
fn take_notes(mp: &mut NetMultiplayer, last: fn(&Unnetworked) -> u64) -> Option<Unnetworked> {
    let world = mp.store_mut().world_mut();
    let stamp = world.get_resource::<Removals>().map_or(0, Removals::stamp);
    let notes = world.get_resource::<Unnetworked>();
    if notes.map_or(0, last) == stamp {
        return None;
    }
    Some(world.remove_resource::<Unnetworked>().unwrap_or_default())
}

/// The removal stamp now.
fn stamp(mp: &NetMultiplayer) -> u64 {
    let removals = mp.store().world().get_resource::<Removals>();
    removals.map_or(0, Removals::stamp)
}

/// Before new entities are networked (whenever the world is lent, and before the frame ends):
/// moves on clients what was given another parent; after removals, makes roots of the
/// children of entities no longer networked.
pub(crate) fn take(mp: &mut NetMultiplayer) {
    for e in reparent::follow(mp) {
        refused(e);
    }
    let Some(mut u) = take_notes(mp, |u| u.seen) else {
        return;
    };
    collect(mp, &mut u);
    let world = mp.store().world();
    let children: Vec<Entity> = u
        .entities
        .iter()
        .flat_map(|&e| networked_children(world, e))
        .collect();
    for c in children {
        if !reparent::make_root(mp, c) {
            refused(c);
        }
    }
    u.seen = stamp(mp);
    mp.store_mut().world_mut().insert_resource(u);
}

/// After new entities are networked: the entities given a parent networked just now move
/// under it on clients (see [`reparent::follow_deferred`]).
pub(crate) fn take_deferred(mp: &mut NetMultiplayer) {
    for e in reparent::follow_deferred(mp) {
        refused(e);
    }
}

/// After the frame's end: the entities no longer `Networked` lose their `NetworkId` and node.
pub(crate) fn after_frame(mp: &mut NetMultiplayer) {
    let Some(mut u) = take_notes(mp, |u| u.cleared) else {
        return;
    };
    collect(mp, &mut u);
    let world = mp.store_mut().world_mut();
    for &e in &u.entities {
        world.entity_mut(e).remove::<(NetworkId, EntityNode)>();
    }
    u.entities.clear();
    u.cleared = stamp(mp);
    mp.store_mut().world_mut().insert_resource(u);
}

/// A client's frame: forgets the notes of new parents and inserted components (it networks
/// nothing).
pub(crate) fn forget_notes(world: &mut World) {
    reparent::forget(world);
    late::forget(world);
}

/// The entities no longer `Networked` that carry a `NetworkId`, into `u`.
fn collect(mp: &mut NetMultiplayer, u: &mut Unnetworked) {
    let world = mp.store_mut().world_mut();
    let query = u.query.get_or_insert_with(|| world.query_filtered());
    u.entities.clear();
    u.entities.extend(query.iter(world));
}

/// The core refused to move networked entity `e` where its parent now is: clients keep it
/// where it was. (The core refuses only a parent inside `e`'s own subtree, which a Bevy
/// hierarchy without cycles does not make once the frame's other moves are made.)
pub(crate) fn refused(e: Entity) {
    warn!(
        ?e,
        "a networked entity cannot move under its new parent; clients keep it where it was"
    );
}

/// `e`'s children that are networked.
fn networked_children(world: &World, e: Entity) -> Vec<Entity> {
    let Some(children) = world.get::<Children>(e) else {
        return Vec::new();
    };
    children
        .iter()
        .copied()
        .filter(|&c| world.get::<NetworkId>(c).is_some() && world.get::<Networked>(c).is_some())
        .collect()
}
