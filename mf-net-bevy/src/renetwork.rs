//! Entities the server networks again, because clients would lose them while the server keeps
//! them: an entity given another parent that the core would not move there (see `reparent`).
//!
//! Before new entities are networked, each such entity is marked [`Renetwork`]: the store
//! reports its nodes gone, so the core despawns them on clients at the frame's end. Its
//! networked children are made roots on clients first, and follow it once it is networked
//! again (so clients keep them); so are those of an entity that is no longer [`Networked`],
//! which loses its [`NetworkId`] and its [`EntityNode`], so that no two entities show the same
//! one. After the frame's end, the marked entities lose their `NetworkId` and are networked
//! anew, as new entities on clients: each component keeps its authority, each client the relevance
//! `set_relevant` set for it, and the states that name them are sent again. What a client
//! that left at that frame's end owned goes as a leaving client's nodes go at any other time.

use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::Children;
use bevy_ecs::query::{QueryState, With, Without};
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use mf_net::store::{NodeId, Store};
use mf_net::transport::PeerId;

use crate::components::{NetOwner, NetworkId, Networked, Renetwork};
use crate::late;
use crate::node::{entity_of, node_at, EntityNode};
use crate::owner::{networked_entity, set_owner};
use crate::removals::Removals;
use crate::reparent;
use crate::store::NetMultiplayer;
use crate::types::ReplicatedComponents;

/// What the server networks again this frame (capacity kept), a resource of the app's world.
#[derive(Resource, Default)]
pub(crate) struct Renetworking {
    /// The removal stamp at the last look.
    seen: u64,
    /// Children made `Networked` under a marked entity in the frame it is networked again:
    /// they are networked right after it, then take their own [`NetOwner`]'s authority (the
    /// server's without one), as a child added later under a networked entity does.
    joining: Vec<(Entity, PeerId)>,
    /// The marked entities, each root before its descendants.
    entities: Vec<Entity>,
    /// The authority of each of their networked nodes, to give back once it is networked
    /// again.
    authorities: Vec<(NodeId, PeerId)>,
    /// The relevance each peer was set for each of them (`set_relevant`, for its group), to
    /// set again once it is networked again.
    relevance: Vec<(Entity, PeerId, bool)>,
    /// Their nodes (see [`entity_nodes`]).
    nodes: Vec<NodeId>,
    /// Entities no longer `Networked` that still carry a `NetworkId`: they lose it (and are
    /// networked anew if they are made `Networked` again).
    unnetworked: Vec<Entity>,
    /// The query for those, made once.
    unnetworked_query: Option<Unnetworked>,
}

/// Entities no longer `Networked` that carry a `NetworkId`.
type Unnetworked = QueryState<Entity, (With<NetworkId>, Without<Networked>)>;

/// The server's [`Renetworking`], out of the world while it is used.
fn take(mp: &mut NetMultiplayer) -> Renetworking {
    let world = mp.store_mut().world_mut();
    world.remove_resource::<Renetworking>().unwrap_or_default()
}

/// Puts `r` back into the world.
fn put_back(mp: &mut NetMultiplayer, r: Renetworking) {
    mp.store_mut().world_mut().insert_resource(r);
}

/// Before new entities are networked (in the fixed step, and before the frame ends): marks
/// what is to be networked again at the frame's end (what was given another parent; after
/// removals, the children of entities no longer networked that the core would not make
/// roots).
pub(crate) fn mark(mp: &mut NetMultiplayer) {
    let stamp = |mp: &NetMultiplayer| {
        let removals = mp.store().world().get_resource::<Removals>();
        removals.map_or(0, Removals::stamp)
    };
    let mut r = take(mp);
    for e in reparent::follow(mp) {
        mark_subtree(mp, e, &mut r);
    }
    if stamp(mp) != r.seen {
        for root in lost_with_unnetworked(mp, &mut r) {
            mark_subtree(mp, root, &mut r);
        }
        r.seen = stamp(mp);
    }
    note_settings(mp, &mut r);
    put_back(mp, r);
}

/// The authority of each marked node and the relevance set for each marked entity, as they
/// are now: a hand-over or `set_relevant` made after an entity was marked (marking runs
/// whenever the world is lent) holds when it is networked again.
fn note_settings(mp: &NetMultiplayer, r: &mut Renetworking) {
    for (node, peer) in &mut r.authorities {
        if mp.net_id(*node).is_some() {
            *peer = mp.authority(*node);
        }
    }
    r.relevance.clear();
    for &e in &r.entities {
        if let Some(first) = networked_entity(mp, e) {
            for &peer in mp.peers() {
                if let Some(relevant) = mp.relevance_set(first, peer) {
                    r.relevance.push((e, peer, relevant));
                }
            }
        }
    }
}

/// After new entities are networked (in the fixed step, and before the frame ends): the
/// entities given a parent networked just now move under it on clients, or are marked to be
/// networked again (see [`reparent::follow_deferred`]).
pub(crate) fn mark_deferred(mp: &mut NetMultiplayer) {
    let again = reparent::follow_deferred(mp);
    if again.is_empty() {
        return;
    }
    let mut r = take(mp);
    for e in again {
        mark_subtree(mp, e, &mut r);
    }
    put_back(mp, r);
}

/// A client's frame: forgets the notes of new parents and inserted components (it networks
/// nothing).
pub(crate) fn forget_notes(world: &mut World) {
    reparent::forget(world);
    late::forget(world);
}

/// After removals: the networked children of entities no longer networked are made roots on
/// clients; returns those the core would not move (clients would lose them: they are networked
/// again).
fn lost_with_unnetworked(mp: &mut NetMultiplayer, r: &mut Renetworking) -> Vec<Entity> {
    let store = mp.store_mut();
    let query = r
        .unnetworked_query
        .get_or_insert_with(|| store.world.query_filtered());
    r.unnetworked.clear();
    r.unnetworked.extend(query.iter(&store.world));
    let mut children = Vec::new();
    for &e in &r.unnetworked {
        children.extend(networked_children(&store.world, e));
    }
    children.retain(|&c| !reparent::make_root(mp, c));
    children
}

/// After the frame's end (the core despawned the marked entities' nodes): the marked entities
/// are networked anew, their authorities given back, and the states that named them sent again.
pub(crate) fn network_again(mp: &mut NetMultiplayer, network_new: fn(&mut NetMultiplayer)) {
    let mut r = take(mp);
    drop_what_leavers_owned(mp, &mut r);
    note_joining(mp.store().world(), &mut r);
    let world = mp.store_mut().world_mut();
    for &e in r.entities.iter().chain(&r.unnetworked) {
        if let Ok(mut entity) = world.get_entity_mut(e) {
            entity.remove::<(Renetwork, NetworkId, EntityNode)>();
        }
    }
    r.unnetworked.clear();
    if !r.entities.is_empty() {
        network_new(mp);
    }
    // An entity whose group was refused (net ids ran out) is not `Networked` any more: its
    // children are networked on their own at a later frame, and get their authorities then.
    r.authorities
        .retain(|&(node, peer)| give_back(mp, node, peer));
    for &e in &r.entities {
        set_owner(mp, e);
    }
    set_relevance_again(mp, r.relevance.drain(..));
    give_joiners_their_own(mp, r.joining.drain(..));
    for &node in &r.nodes {
        mp.resend_states_naming(node);
    }
    r.entities.clear();
    r.nodes.clear();
    put_back(mp, r);
}

/// Each entity networked again gets the relevance `set_relevant` set for each peer before.
fn set_relevance_again(mp: &mut NetMultiplayer, set: impl Iterator<Item = (Entity, PeerId, bool)>) {
    for (e, peer, relevant) in set {
        if let Some(node) = networked_entity(mp, e) {
            // Refused (not networked again) or the peer gone: nothing to set.
            let _ = mp.set_relevant(node, peer, relevant);
        }
    }
}

/// Each child networked right after its parent was networked again takes its own owner's
/// authority (see [`Renetworking::joining`]); the frame's events give the entities their
/// [`NetOwner`]s.
fn give_joiners_their_own(
    mp: &mut NetMultiplayer,
    joining: impl Iterator<Item = (Entity, PeerId)>,
) {
    for (e, owner) in joining {
        let node = networked_entity(mp, e);
        if let Some(node) = node.filter(|&n| mp.authority(n) != owner) {
            // Refused only for a node no longer networked.
            let _ = mp.set_authority(node, owner, true);
        }
    }
}

/// The children made `Networked` under the marked entities this frame, with their owners
/// (see [`Renetworking::joining`]).
fn note_joining(world: &World, r: &mut Renetworking) {
    for &e in &r.entities {
        let children = world.get::<Children>(e).into_iter().flatten();
        for &c in children {
            let Ok(child) = world.get_entity(c) else {
                continue;
            };
            if child.contains::<Networked>() && !child.contains::<NetworkId>() {
                let owner = child.get::<NetOwner>().map_or(PeerId::SERVER, |o| o.0);
                r.joining.push((c, owner));
            }
        }
    }
}

/// What a client that left at the frame's end (a timeout, after [`mark`]) owned among the
/// marked nodes goes as a leaving client's nodes go at any other time: despawned (as the
/// store despawns them: a component, or the entity with its children for the entity's own
/// node), or the server's with `despawn_owned_on_disconnect` off. The core no longer held
/// them when the client left.
fn drop_what_leavers_owned(mp: &mut NetMultiplayer, r: &mut Renetworking) {
    let left =
        |mp: &NetMultiplayer, peer: PeerId| peer != PeerId::SERVER && !mp.peers().contains(&peer);
    let despawn = mp.config().despawn_owned_on_disconnect;
    r.authorities.retain(|&(node, peer)| {
        if !left(mp, peer) {
            return true;
        }
        if despawn {
            mp.store_mut().despawn(node);
        }
        false
    });
    for &e in &r.entities {
        let owner = mp.store().world().get::<NetOwner>(e).map(|o| o.0);
        if owner.is_some_and(|peer| left(mp, peer)) {
            let world = mp.store_mut().world_mut();
            world.entity_mut(e).insert(NetOwner(PeerId::SERVER));
        }
    }
}

/// Gives `node` the authority `peer` back if it is networked again; whether to wait for that
/// (its entity is `Networked` but not networked yet).
fn give_back(mp: &mut NetMultiplayer, node: NodeId, peer: PeerId) -> bool {
    if mp.net_id(node).is_some() {
        if mp.authority(node) != peer && mp.set_authority(node, peer, false).is_ok() {
            if let Some(e) = entity_of(node) {
                set_owner(mp, e);
            }
        }
        return false;
    }
    let entity = entity_of(node).and_then(|e| mp.store().world().get_entity(e).ok());
    entity.is_some_and(|e| e.contains::<Networked>() && !e.contains::<NetworkId>())
}

/// The node of `e` and of every registered type's component of `e`, held or not.
fn entity_nodes(world: &World, e: Entity) -> impl Iterator<Item = NodeId> {
    let types = world.get_resource::<ReplicatedComponents>();
    let slots = types.map_or(0, ReplicatedComponents::slots);
    (0..slots).filter_map(move |slot| node_at(e, slot))
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

/// Marks `root`, noting its nodes (see [`note_settings`]). Its networked children are made
/// roots on clients until `root` is networked again, and keep their entities there (see
/// [`reparent::make_root`]); one the core would not move is marked with it, and so on down.
fn mark_subtree(mp: &mut NetMultiplayer, root: Entity, r: &mut Renetworking) {
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        if r.entities.contains(&e) {
            continue;
        }
        let world = mp.store().world();
        if world.get_entity(e).is_err() {
            continue;
        }
        for node in entity_nodes(world, e) {
            r.nodes.push(node);
            if mp.net_id(node).is_some() {
                r.authorities.push((node, mp.authority(node)));
            }
        }
        // Its children networked on their own stay so: roots until it is networked again.
        for c in networked_children(world, e) {
            if !reparent::make_root(mp, c) {
                stack.push(c);
            }
        }
        r.entities.push(e);
        let world = mp.store_mut().world_mut();
        if let Ok(mut entity) = world.get_entity_mut(e) {
            entity.insert(Renetwork);
        }
        if let Some(mut removals) = world.get_resource_mut::<Removals>() {
            removals.bump();
        }
    }
}
