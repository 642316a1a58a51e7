//! [`NetOwner`]: an entity's is the authority of its own node, on every peer. On the server, a
//! `NetOwner` the game changes on a networked entity hands the entity over; on a client, it
//! is undone.

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::query::Changed;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Query, ResMut};
use bevy_ecs::world::EntityWorldMut;
use mf_net::store::{NodeId, Store};
use mf_net::transport::PeerId;
use tracing::warn;

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
    let owner = mp.authority(node);
    let world = mp.store_mut().world_mut();
    if let Ok(mut e) = world.get_entity_mut(entity) {
        let shown = e.get::<NetOwner>() == Some(&NetOwner(owner));
        if !shown || e.get::<OwnerShown>() != Some(&OwnerShown(owner)) {
            show(&mut e, owner);
        }
    }
}

/// What the adapter last showed as an entity's [`NetOwner`]: a `NetOwner` that differs was
/// written by the game.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OwnerShown(PeerId);

/// Shows `owner` as the entity's [`NetOwner`] (the adapter's write, not the game's).
pub(crate) fn show(entity: &mut EntityWorldMut<'_>, owner: PeerId) {
    entity.insert((NetOwner(owner), OwnerShown(owner)));
}

/// The node of `entity`, while it is networked.
pub(crate) fn networked_entity(mp: &NetMultiplayer, entity: Entity) -> Option<NodeId> {
    let entity = mp.store().world().get_entity(entity).ok()?;
    networked_node(&entity).filter(|&node| mp.net_id(node).is_some())
}

/// The networked entities whose [`NetOwner`] the game changed since the adapter last looked,
/// with the peer it wrote, a resource (capacity kept).
#[derive(Resource, Default)]
pub(crate) struct OwnerWrites(Vec<(Entity, PeerId)>);

/// Notes the networked entities whose [`NetOwner`] the game changed (it no longer shows what
/// the adapter did). Runs before the frame's receive, which may show an authority over it, and
/// before its send, which takes them (see [`take_owner_writes`]).
pub(crate) fn note_owner_writes(
    changed: Query<'_, '_, (Entity, &NetOwner, &OwnerShown), Changed<NetOwner>>,
    mut writes: ResMut<'_, OwnerWrites>,
) {
    let written = changed
        .iter()
        .filter(|(_, owner, shown)| owner.0 != shown.0);
    writes.0.extend(written.map(|(e, owner, _)| (e, owner.0)));
}

/// Takes the game's [`NetOwner`] writes. The server hands over each entity: its node and its
/// replicated components, each as
/// [`set_authority`](mf_net::replication::Multiplayer::set_authority) without `recursive`
/// (its networked children keep theirs); a peer that is not joined is refused with a warning,
/// and the `NetOwner` shows the authority again. A client undoes them, with a warning: the
/// server sets authorities.
pub(crate) fn take_owner_writes(mp: &mut NetMultiplayer) {
    let world = mp.store_mut().world_mut();
    let Some(mut writes) = world.get_resource_mut::<OwnerWrites>() else {
        return;
    };
    if writes.0.is_empty() {
        return;
    }
    let mut entities = std::mem::take(&mut writes.0);
    for &(e, owner) in &entities {
        match mp.is_server() {
            true => hand_over(mp, e, owner),
            false => {
                warn!(entity = ?e, "a client's NetOwner write is undone: the server sets authorities");
                set_owner(mp, e);
            }
        }
    }
    entities.clear();
    if let Some(mut writes) = mp.store_mut().world_mut().get_resource_mut::<OwnerWrites>() {
        writes.0 = entities;
    }
}

/// [`take_owner_writes`] on the server, for `entity`, to `owner`.
fn hand_over(mp: &mut NetMultiplayer, entity: Entity, owner: PeerId) {
    let Some(node) = networked_entity(mp, entity) else {
        return;
    };
    let mut group = Vec::new();
    mp.store().group(node, &mut group);
    let components = group.into_iter().map(|(n, _)| n);
    let nodes: Vec<NodeId> = std::iter::once(node)
        .chain(components.filter(|&n| mp.net_id(n).is_some()))
        .filter(|&n| mp.authority(n) != owner)
        .collect();
    for n in nodes {
        if let Err(error) = mp.set_authority(n, owner, false) {
            warn!(?entity, %error, "a NetOwner set on a networked entity cannot hand it over");
            break;
        }
    }
    set_owner(mp, entity);
}
