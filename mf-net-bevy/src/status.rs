//! [`NetStatus`]: what the app's replication is, for systems.

use bevy_ecs::resource::Resource;
use mf_net::transport::PeerId;

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
