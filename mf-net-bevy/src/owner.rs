//! [`NetOwner`]: an entity's is the authority of its first networked component, on every peer.

use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::Children;

use mf_net::store::NodeId;

use crate::components::{NetOwner, NetworkId};
use crate::net::NetMultiplayer;
use crate::node::first_networked;

/// The [`NetOwner`] of `entity` and of its networked descendants (see [`set_owner`]).
pub(crate) fn owners_under(mp: &mut NetMultiplayer, entity: Entity) {
    let mut stack = vec![entity];
    while let Some(e) = stack.pop() {
        set_owner(mp, e);
        let world = mp.store().world();
        if let Some(children) = world.get::<Children>(e) {
            stack.extend(
                children
                    .iter()
                    .filter(|&c| world.get::<NetworkId>(*c).is_some()),
            );
        }
    }
}

/// `entity`'s [`NetOwner`]: the authority of its first networked component (a component
/// inserted since the entity was networked is not), while that is networked.
pub(crate) fn set_owner(mp: &mut NetMultiplayer, entity: Entity) {
    let Some(node) = networked_first(mp, entity) else {
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

/// The node of `entity`'s first networked component, while that is networked.
pub(crate) fn networked_first(mp: &NetMultiplayer, entity: Entity) -> Option<NodeId> {
    let entity = mp.store().world().get_entity(entity).ok()?;
    first_networked(&entity).filter(|&node| mp.net_id(node).is_some())
}
