//! [`NetOwner`]: an entity's is the authority of its own node, on every peer.

use bevy_ecs::entity::Entity;

use mf_net::store::NodeId;

use crate::components::NetOwner;
use crate::node::networked_node;
use crate::store::NetMultiplayer;

/// Every networked entity's [`NetOwner`] (see [`set_owner`]), once a frame's authorities
/// changed: a recursive hand-over may have changed any of them, and a walk down from the entity
/// handed over would miss what moved elsewhere since the hand-over was made (in that frame on
/// the server, or in the same messages on a client).
pub(crate) fn owners_of_all(mp: &mut NetMultiplayer) {
    let store = mp.store_mut();
    let query = store
        .networked
        .get_or_insert_with(|| store.world.query_filtered());
    let mut all = std::mem::take(&mut store.entities);
    all.clear();
    all.extend(query.iter(&store.world));
    for &e in &all {
        set_owner(mp, e);
    }
    mp.store_mut().entities = all;
}

/// `entity`'s [`NetOwner`]: the authority of its own node, while that is networked.
pub(crate) fn set_owner(mp: &mut NetMultiplayer, entity: Entity) {
    let Some(node) = networked_entity(mp, entity) else {
        return;
    };
    let owner = NetOwner(mp.authority(node));
    let world = mp.store_mut().world_mut();
    if let Ok(mut e) = world.get_entity_mut(entity) {
        if e.get::<NetOwner>() != Some(&owner) {
            e.insert(owner);
        }
    }
}

/// The node of `entity`, while it is networked.
pub(crate) fn networked_entity(mp: &NetMultiplayer, entity: Entity) -> Option<NodeId> {
    let entity = mp.store().world().get_entity(entity).ok()?;
    networked_node(&entity).filter(|&node| mp.net_id(node).is_some())
}
