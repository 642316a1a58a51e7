//! Starts and stops: the core forgets the nodes it networked when a server stops (they become
//! plain nodes, but for what its clients owned, which goes as when each leaves) and when a
//! client starts (what the app networked offline becomes plain; a client that stops despawns
//! the server's entities itself). The entities it forgot lose their [`NetworkId`] and node and
//! keep [`Networked`](crate::Networked), so that the server, or the app offline, networks them
//! anew at the frame's end: a server started again serves them. One still showing a client's
//! [`NetOwner`] is the server's now (the core despawned or handed over what clients owned).
//! The foci set for clients are forgotten with them.

use bevy_ecs::entity::Entity;

use crate::components::{NetOwner, NetworkId};
use crate::node::{entity_node, EntityNode};
use crate::owner;
use crate::store::NetMultiplayer;
use mf_net::transport::PeerId;

/// Untags the entities whose node the core no longer networks, if it started or stopped since
/// the last look (see the [module documentation](self)).
pub(crate) fn forget_stale_tags(mp: &mut NetMultiplayer) {
    let run = (mp.starts(), mp.is_running());
    if mp.store().run == run {
        return;
    }
    mp.store_mut().run = run;
    // The clients' foci went with the core's clients: a client of the next run may take the
    // id of one of this run's.
    mp.store_mut().focused.clear();
    let world = mp.store_mut().world_mut();
    let mut tagged = world.query::<(Entity, &NetworkId, Option<&NetOwner>)>();
    let tagged: Vec<(Entity, NetworkId, Option<PeerId>)> = tagged
        .iter(world)
        .map(|(e, id, owner)| (e, *id, owner.map(|o| o.0)))
        .collect();
    for (entity, id, owner) in tagged {
        if entity_node(entity).and_then(|n| mp.net_id(n)) == Some(id.0) {
            continue;
        }
        let world = mp.store_mut().world_mut();
        let Ok(mut e) = world.get_entity_mut(entity) else {
            continue;
        };
        e.remove::<(NetworkId, EntityNode)>();
        if owner.is_some_and(|o| o != PeerId::SERVER) {
            owner::show(&mut e, PeerId::SERVER);
        }
    }
}
