//! The adapter's systems: the core receives in `PreUpdate`, ticks in `FixedPostUpdate` (or on
//! its own clock), and networks new entities and sends in `PostUpdate`; its events become
//! [`NetEvent`] messages.

use std::time::Duration;

use bevy_ecs::entity::Entity;
use bevy_ecs::message::Message;
use bevy_ecs::query::{With, Without};
use bevy_ecs::world::World;
use bevy_time::Time;
use mf_net::replication::MultiplayerEvent;
use mf_net::transport::PeerId;
use tracing::warn;

use crate::components::{NetOwner, NetworkId, Networked};
use crate::net::{NetMultiplayer, NetWorldExt};
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
    });
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
    let world = mp.store_mut().world_mut();
    let mut query = world
        .query_filtered::<(Entity, Option<&NetOwner>), (With<Networked>, Without<NetworkId>)>();
    let new: Vec<(Entity, PeerId)> = query
        .iter(world)
        .map(|(e, owner)| (e, owner.map_or(PeerId::SERVER, |o| o.0)))
        .collect();
    for (entity, authority) in new {
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
}

/// Every event of the core, as a [`NetEvent`]; a spawned entity gets its [`NetworkId`].
fn forward_events(mp: &mut NetMultiplayer) {
    while let Some(event) = mp.next_event() {
        let world = mp.store_mut().world_mut();
        if let MultiplayerEvent::NodeSpawned { node, net_id } = &event {
            if let Some(mut entity) = entity_of(*node).and_then(|e| world.get_entity_mut(e).ok()) {
                entity.insert(NetworkId(*net_id));
            }
        }
        world.write_message(NetEvent(event));
    }
}
