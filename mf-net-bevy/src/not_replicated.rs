//! [`NotReplicated`]: a `Networked` entity that is not networked, and why.

use bevy_ecs::entity::Entity;
use bevy_ecs::message::Message;

#[cfg(doc)]
use crate::components::Networked;

/// The server could not network a [`Networked`] entity (it holds no registered replicated
/// component, or the core refused it); it is no longer `Networked`. The reason says what to do
/// (for a `Replicated` component that was never registered: the `replicate` call to add).
///
/// A client reports each of its own `Networked` entities once, too: only a server networks.
/// Such an entity keeps `Networked` and stays local while the app is a client; it is
/// networked once the app serves (offline, or as a server).
#[derive(Message, Debug, Clone)]
pub struct NotReplicated {
    /// The entity.
    pub entity: Entity,
    /// Why.
    pub reason: String,
}
