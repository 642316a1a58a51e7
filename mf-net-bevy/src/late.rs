//! Replicated components inserted into entities the server networked already: at the next
//! networking of new entities, each is networked as a group of its own beside the entity's
//! node (see [`Store::beside_parent`](mf_net::store::Store::beside_parent)), with the node's
//! authority. Clients insert it into their copy of the entity, and remove it when the server's
//! is removed; it goes with the entity (despawned with it, handed over with it by a recursive
//! `set_authority`).

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::lifecycle::Insert;
use bevy_ecs::observer::On;
use bevy_ecs::query::With;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Query, ResMut};
use bevy_ecs::world::World;
use mf_net::store::NodeId;
use tracing::warn;

use crate::components::{NetworkId, Networked};
use crate::node::node_at;
use crate::owner::networked_entity;
use crate::store::NetMultiplayer;
use crate::types::ReplicatedComponents;

/// The networked entities a replicated component was inserted into since the last look
/// (capacity kept).
#[derive(Resource, Default)]
pub(crate) struct Inserted {
    entities: Vec<Entity>,
}

/// A `C` was inserted (or replaced): noted if its entity is networked.
pub(crate) fn note_insert<C: Component>(
    event: On<'_, '_, Insert, C>,
    networked: Query<'_, '_, (), With<NetworkId>>,
    mut inserted: ResMut<'_, Inserted>,
) {
    let entity = event.event().entity;
    if networked.contains(entity) {
        inserted.entities.push(entity);
    }
}

/// The server, when it networks new entities: the replicated components inserted since into
/// networked entities are networked, each beside its entity's node.
pub(crate) fn network_inserted(mp: &mut NetMultiplayer) {
    let world = mp.store_mut().world_mut();
    let Some(mut inserted) = world.get_resource_mut::<Inserted>() else {
        return;
    };
    if inserted.entities.is_empty() {
        return;
    }
    let mut entities = std::mem::take(&mut inserted.entities);
    entities.sort_unstable();
    entities.dedup();
    for &e in &entities {
        network_components(mp, e);
    }
    // The list goes back for the next notes, its capacity kept.
    entities.clear();
    let world = mp.store_mut().world_mut();
    if let Some(mut inserted) = world.get_resource_mut::<Inserted>() {
        if inserted.entities.is_empty() {
            inserted.entities = entities;
        }
    }
}

/// Networks the replicated components of the networked entity `e` that are not networked,
/// with the authority of its node.
fn network_components(mp: &mut NetMultiplayer, e: Entity) {
    let Some(own) = networked_entity(mp, e) else {
        return;
    };
    let world = mp.store().world();
    let (Ok(entity), Some(types)) = (
        world.get_entity(e),
        world.get_resource::<ReplicatedComponents>(),
    ) else {
        return;
    };
    if !entity.contains::<Networked>() {
        return;
    }
    let held = types.iter().filter(|t| entity.contains_type_id(t.type_id));
    let nodes: Vec<NodeId> = held
        .filter_map(|t| node_at(e, t.slot))
        .filter(|&node| mp.net_id(node).is_none())
        .collect();
    let authority = mp.authority(own);
    for node in nodes {
        if let Err(error) = mp.replicate(node, authority) {
            warn!(?e, %error, "a component inserted into a networked entity cannot be replicated");
        }
    }
}

/// Forgets the notes (a client's: it networks nothing).
pub(crate) fn forget(world: &mut World) {
    if let Some(mut inserted) = world.get_resource_mut::<Inserted>() {
        inserted.entities.clear();
    }
}
