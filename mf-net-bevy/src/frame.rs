//! The adapter's systems: the core receives in `PreUpdate`, ticks in `FixedPostUpdate` (or on
//! its own clock), and networks new entities and sends in `PostUpdate`; its events become
//! [`NetEvent`] messages.

use std::time::Duration;

use bevy_ecs::message::Message;
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use bevy_time::Time;
use mf_net::replication::MultiplayerEvent;
use mf_net::rpc::RpcContext;
use mf_net::transport::PeerId;
use tracing::warn;

use crate::components::{NetOwner, NetworkId, Networked};
use crate::net::{NetMultiplayer, NetWorldExt};
use crate::queue::NetQueue;
use crate::store::{entity_of, node_of};

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
        mp.begin_frame(dt);
        forward_events(mp);
        let status = NetStatus {
            local_peer: mp.local_peer_id(),
            is_server: mp.is_server(),
            is_running: mp.is_running(),
        };
        let world = mp.store_mut().world_mut();
        world.insert_resource(status);
        let queue = world
            .get_non_send_mut::<NetQueue>()
            .and_then(|mut q| q.ctx.take());
        if let Some(mut ctx) = queue {
            mp.bind_queue(&mut ctx);
            put_back(mp, ctx);
        }
    });
}

/// The queue's context, back in its resource.
fn put_back(mp: &mut NetMultiplayer, ctx: RpcContext) {
    if let Some(mut queue) = mp.store_mut().world_mut().get_non_send_mut::<NetQueue>() {
        queue.ctx = Some(ctx);
    }
}

/// One of Bevy's fixed steps: with [`TickSource::External`](mf_net::replication::TickSource),
/// one network tick of the server (capture, one snapshot per client).
pub(crate) fn fixed_tick(world: &mut World) {
    world.net(NetMultiplayer::tick_now);
}

/// The core's frame ends: the server networks the new [`Networked`] entities, captures and
/// sends.
pub(crate) fn send(world: &mut World) {
    world.net(|mp| {
        let world = mp.store_mut().world_mut();
        let queue = world
            .get_non_send_mut::<NetQueue>()
            .and_then(|mut q| q.ctx.take());
        if let Some(mut ctx) = queue {
            mp.apply_queue(&mut ctx);
            put_back(mp, ctx);
        }
        if mp.is_server() {
            network_new(mp);
        }
        mp.end_frame();
        forward_events(mp);
    });
}

/// Networks every [`Networked`] entity without a [`NetworkId`], with its [`NetOwner`]'s
/// authority.
fn network_new(mp: &mut NetMultiplayer) {
    let store = mp.store_mut();
    let query = store
        .new_entities
        .get_or_insert_with(|| store.world.query_filtered());
    let mut new = std::mem::take(&mut store.to_network);
    new.clear();
    new.extend(
        query
            .iter(&store.world)
            .map(|(e, owner)| (e, owner.map_or(PeerId::SERVER, |o| o.0))),
    );
    for &(entity, authority) in &new {
        match mp.replicate(node_of(entity), authority) {
            Ok(id) => {
                mp.store_mut()
                    .world_mut()
                    .entity_mut(entity)
                    .insert(NetworkId(id));
            }
            Err(error) => {
                warn!(?entity, %error, "a Networked entity cannot be replicated");
                mp.store_mut()
                    .world_mut()
                    .entity_mut(entity)
                    .remove::<Networked>();
            }
        }
    }
    mp.store_mut().to_network = new;
}

/// Every event of the core, as a [`NetEvent`]; a spawned entity gets its [`NetworkId`] and
/// [`NetOwner`], and an entity whose authority changed its new [`NetOwner`].
fn forward_events(mp: &mut NetMultiplayer) {
    while let Some(event) = mp.next_event() {
        let inserted = match &event {
            MultiplayerEvent::NodeSpawned { node, net_id } => {
                Some((*node, Some(NetworkId(*net_id)), mp.authority(*node)))
            }
            MultiplayerEvent::AuthorityChanged { node, peer } => Some((*node, None, *peer)),
            _ => None,
        };
        let world = mp.store_mut().world_mut();
        if let Some((node, id, owner)) = inserted {
            if let Some(mut entity) = entity_of(node).and_then(|e| world.get_entity_mut(e).ok()) {
                entity.insert(NetOwner(owner));
                if let Some(id) = id {
                    entity.insert(id);
                }
            }
        }
        world.write_message(NetEvent(event));
    }
}

/// What the app's replication is, as of this frame's receive.
#[derive(Resource, Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetStatus {
    /// This peer's id ([`PeerId::SERVER`] on the server and offline).
    pub local_peer: PeerId,
    /// Whether this is the server (or offline).
    pub is_server: bool,
    /// Whether it is started.
    pub is_running: bool,
}
