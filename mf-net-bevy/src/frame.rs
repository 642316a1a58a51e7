//! The adapter's systems: the core receives in `PreUpdate`, ticks in `FixedPostUpdate` (or on
//! its own clock), and networks new entities and sends in `PostUpdate`; its events become
//! [`NetEvent`] messages.

use std::time::Duration;

use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::Children;
use bevy_ecs::message::Message;
use bevy_ecs::world::World;
use bevy_time::Time;
use mf_net::replication::MultiplayerEvent;
use mf_net::store::{NodeId, Store};
use mf_net::transport::PeerId;
use tracing::warn;

use crate::client_kept;
use crate::components::{NetOwner, NetworkId, Networked};
use crate::interest::sync_focus;
use crate::late;
use crate::messages;
use crate::net::NetWorldExt;
use crate::node::{entity_node, entity_of, networked_node, EntityNode};
use crate::not_replicated::NotReplicated;
use crate::owner;
use crate::queue;
use crate::reparent::{self, NetParent};
use crate::restarts;
use crate::status::NetStatus;
use crate::store::NetMultiplayer;
use crate::unregistered;
use crate::world_changes;

/// A [`MultiplayerEvent`] of the app's replication, as a Bevy message: read them with
/// `MessageReader<NetEvent>`.
#[derive(Message, Debug, Clone)]
pub struct NetEvent(pub MultiplayerEvent);

/// The core's frame starts: what the transport received is applied to the world.
pub(crate) fn receive(world: &mut World) {
    let dt = world
        .get_resource::<Time>()
        .map_or(Duration::ZERO, Time::delta);
    world.net(|mp| {
        messages::subscribe_new_bus(mp);
        mp.begin_frame(dt);
        restarts::forget_stale_tags(mp);
        if !mp.is_server() {
            tag_spawned(mp);
        }
        forward_events(mp);
        messages::deliver_received(mp);
        let status = NetStatus {
            local_peer: mp.local_peer_id(),
            is_server: mp.is_server(),
            is_running: mp.is_running(),
        };
        let world = mp.store_mut().world_mut();
        if world.get_resource::<NetStatus>() != Some(&status) {
            world.insert_resource(status);
        }
        // Calls queued since the last send (by systems in `Last` or `First`) go now, the
        // server's new entities networked first (see `send`); then the queue is bound to the
        // core as it is this frame (a client that connected, one that went offline).
        if let Some(mut ctx) = queue::take(mp) {
            if !ctx.commands().is_empty() {
                if mp.is_server() {
                    network_pending(mp);
                }
                queue::apply(mp, &mut ctx);
            }
            mp.bind_queue(&mut ctx);
            queue::put_back(mp, ctx);
        }
    });
}

/// One of Bevy's fixed steps: with [`TickSource::External`](mf_net::replication::TickSource),
/// one network tick of the server (capture, one snapshot per client). The new [`Networked`]
/// entities are networked first, so that a reference set to one in the same frame is
/// captured naming it (captured before, it went out as none, and the value, unchanged since,
/// was never sent again). (Lending the world took the world's changes: see [`world_changes`].)
pub(crate) fn fixed_tick(world: &mut World) {
    world.net(|mp| {
        if mp.is_server() {
            network_new(mp);
            world_changes::take_deferred(mp);
        }
        mp.tick_now();
    });
}

/// The core's frame ends: the server networks what is new (see [`network_pending`]), so that
/// the calls systems queued (see [`NetRpc`](crate::NetRpc)), applied next, find the entities
/// spawned or made [`Networked`] in the frame networked (the core holds a call on one until its
/// spawn goes out, and sends it after); then networks what their bodies changed, captures and
/// sends, and forgets the net ids of the entities no longer networked. Component types that
/// derive `Replicated` but were never registered are reported (see [`unregistered`]).
pub(crate) fn send(world: &mut World) {
    world.net(|mp| {
        restarts::forget_stale_tags(mp);
        if mp.is_server() {
            network_pending(mp);
        }
        let mut called = false;
        if let Some(mut ctx) = queue::take(mp) {
            called = !ctx.commands().is_empty();
            queue::apply(mp, &mut ctx);
            queue::put_back(mp, ctx);
        }
        let store = mp.store_mut();
        unregistered::report_new_types(&mut store.world, &mut store.type_check);
        if mp.is_server() {
            // Again if the queue's calls ran game code since the first pass.
            if called {
                network_pending(mp);
            }
            sync_focus(mp);
        } else {
            owner::take_owner_writes(mp);
            world_changes::forget_notes(mp.store_mut().world_mut());
        }
        messages::send_written(mp);
        mp.end_frame();
        if mp.is_server() {
            world_changes::after_frame(mp);
        }
        forward_events(mp);
    });
}

/// The server, before it applies queued calls and before it sends: takes the world's changes
/// (see [`world_changes`]: moves are followed before new entities are networked), hands over
/// the entities whose [`NetOwner`] the game changed (see [`owner`]), networks the new
/// [`Networked`] entities, then moves under their new parents the entities given one networked
/// just now.
fn network_pending(mp: &mut NetMultiplayer) {
    world_changes::take(mp);
    owner::take_owner_writes(mp);
    network_new(mp);
    world_changes::take_deferred(mp);
}

/// Networks every [`Networked`] entity without a [`NetworkId`] as a group of its own (its
/// replicated components), with its [`NetOwner`]'s authority, under its parent if that is
/// networked (see [`BevyStore::parent`](mf_net::store::Store::parent)); then tags it. A child
/// whose parent is to be networked now is networked right after it, under it, with its own
/// `NetOwner`'s authority or else its parent's.
fn network_new(mp: &mut NetMultiplayer) {
    let store = mp.store_mut();
    let query = store
        .new_entities
        .get_or_insert_with(|| store.world.query_filtered());
    let mut roots = std::mem::take(&mut store.to_network);
    roots.clear();
    for (entity, owner, child_of) in query.iter(&store.world) {
        let parent = child_of.and_then(|c| store.world.get_entity(c.parent()).ok());
        if !parent.is_some_and(|p| reparent::to_be_networked(&p)) {
            roots.push((entity, owner.map_or(PeerId::SERVER, |o| o.0)));
        }
    }
    let mut below = Vec::new();
    for &root in &roots {
        below.push(root);
        while let Some((entity, authority)) = below.pop() {
            if network_one(mp, entity, authority) {
                push_waiting_children(mp.store().world(), (entity, authority), &mut below);
            }
        }
    }
    mp.store_mut().to_network = roots;
    late::network_inserted(mp);
}

/// Networks `entity` with `authority` (its own node, with its replicated components beside)
/// and tags it, or refuses it; whether it was networked. An entity networked before (it kept
/// the [`NetParent`] its first networking gave it) has the states that name it sent again:
/// their references named its old net id. Its networked children go under it on clients.
fn network_one(mp: &mut NetMultiplayer, entity: Entity, authority: PeerId) -> bool {
    let root = entity_node(entity).filter(|_| mp.store().holds_replicated(entity));
    let Some(root) = root else {
        let why = match unregistered::unregistered(mp.store().world(), entity) {
            Some(name) => format!(
                "its component `{name}` is `Replicated` but not registered: call \
                 `app.replicate::<{name}>()`"
            ),
            None => "it holds no replicated component".to_owned(),
        };
        refuse(mp, entity, &why);
        return false;
    };
    let world = mp.store_mut().world_mut();
    let mut tagged = world.entity_mut(entity);
    let again = tagged.contains::<NetParent>();
    tagged.insert(EntityNode {});
    match mp.replicate(root, authority) {
        Ok(_) => {
            tag_group(mp, root);
            if again {
                mp.resend_states_naming(root);
            }
            for child in reparent::adopt(mp, entity) {
                world_changes::refused(child);
            }
            true
        }
        Err(error) => {
            let world = mp.store_mut().world_mut();
            world.entity_mut(entity).remove::<EntityNode>();
            refuse(mp, entity, &error);
            false
        }
    }
}

/// Pushes onto `below` the children of `parent`, just networked with `authority`, that are
/// [`Networked`] and not networked yet, each with its own [`NetOwner`]'s authority or else
/// `authority` (last child first, so that they are networked in order).
fn push_waiting_children(
    world: &World,
    (parent, authority): (Entity, PeerId),
    below: &mut Vec<(Entity, PeerId)>,
) {
    let children = world.get::<Children>(parent).into_iter().flatten();
    for &child in children.rev() {
        let Ok(c) = world.get_entity(child) else {
            continue;
        };
        if c.contains::<Networked>() && !c.contains::<NetworkId>() {
            below.push((child, c.get::<NetOwner>().map_or(authority, |o| o.0)));
        }
    }
}

/// An entity that cannot be networked: warned about, reported as [`NotReplicated`], and no
/// longer [`Networked`].
fn refuse(mp: &mut NetMultiplayer, entity: Entity, error: &dyn std::fmt::Display) {
    warn!(?entity, %error, "a Networked entity cannot be replicated");
    let world = mp.store_mut().world_mut();
    world.entity_mut(entity).remove::<Networked>();
    world.write_message(NotReplicated {
        entity,
        reason: error.to_string(),
    });
}

/// Gives the entity whose node is `root` its [`NetworkId`], [`NetOwner`] and [`NetParent`]
/// (the parent its spawn names, if any).
fn tag_group(mp: &mut NetMultiplayer, root: NodeId) {
    tag(mp, root);
    let under = mp.store().parent(root).and_then(entity_of);
    let world = mp.store_mut().world_mut();
    if let Some(mut entity) = entity_of(root).and_then(|e| world.get_entity_mut(e).ok()) {
        entity.insert(NetParent(under));
    }
}

/// Tags the entity whose node is `node` with its [`NetworkId`] and [`NetOwner`].
fn tag(mp: &mut NetMultiplayer, node: NodeId) {
    let (Some(id), Some(entity)) = (mp.net_id(node), entity_of(node)) else {
        return;
    };
    let owner = mp.authority(node);
    if let Ok(mut entity) = mp.store_mut().world_mut().get_entity_mut(entity) {
        entity.insert(NetworkId(id));
        owner::show(&mut entity, owner);
    }
}

/// A client tags the entities the core made for the server's with their [`NetworkId`] and
/// [`NetOwner`]; the game's own [`Networked`] entities are reported once (see
/// [`client_kept`]).
fn tag_spawned(mp: &mut NetMultiplayer) {
    let store = mp.store_mut();
    let query = store
        .new_entities
        .get_or_insert_with(|| store.world.query_filtered());
    let mut new = std::mem::take(&mut store.to_network);
    new.clear();
    new.extend(
        query
            .iter(&store.world)
            .map(|(e, _, _)| (e, PeerId::SERVER)),
    );
    for &(entity, _) in &new {
        let world = mp.store().world();
        let node = world
            .get_entity(entity)
            .ok()
            .and_then(|e| networked_node(&e));
        match node {
            Some(node) => tag(mp, node),
            None => client_kept::report(mp.store_mut().world_mut(), entity),
        }
    }
    mp.store_mut().to_network = new;
}

/// Every event of the core, as a [`NetEvent`]. If an authority changed, or the core's event
/// queue overflowed (an `AuthorityChanged` may be among the events lost), every networked
/// entity gets its [`NetOwner`] again (see [`owner::owners_of_all`]).
fn forward_events(mp: &mut NetMultiplayer) {
    let mut changed = false;
    while let Some(event) = mp.next_event() {
        changed |= matches!(event, MultiplayerEvent::AuthorityChanged { .. });
        mp.store_mut().world_mut().write_message(NetEvent(event));
    }
    let lost = mp.stats().events_lost;
    if lost != mp.store().events_lost {
        mp.store_mut().events_lost = lost;
        changed = true;
    }
    if changed {
        owner::owners_of_all(mp);
    }
}
