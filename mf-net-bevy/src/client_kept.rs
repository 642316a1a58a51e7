//! A client's own [`Networked`] entities: only a server networks, so each stays local while
//! the app is a client, and is reported once, as a warning and a [`NotReplicated`] message.

use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::world::World;
use tracing::warn;

#[cfg(doc)]
use crate::components::Networked;
use crate::not_replicated::NotReplicated;

/// Marks an entity a client reported as its own [`Networked`] one.
#[derive(Component)]
pub(crate) struct Reported;

/// What the report says.
const REASON: &str = "a client networks nothing of its own: the entity stays local while this \
    app is a client (spawn it on the server, or ask the server for it with an RPC); it is \
    networked once this app serves";

/// Reports `entity`, a [`Networked`] entity of the client's own, unless it was reported.
pub(crate) fn report(world: &mut World, entity: Entity) {
    let Ok(mut e) = world.get_entity_mut(entity) else {
        return;
    };
    if e.contains::<Reported>() {
        return;
    }
    e.insert(Reported);
    warn!(
        ?entity,
        "a client's Networked entity is not networked: {REASON}"
    );
    world.write_message(NotReplicated {
        entity,
        reason: REASON.to_owned(),
    });
}
