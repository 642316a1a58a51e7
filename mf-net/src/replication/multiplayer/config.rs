//! [`MultiplayerConfig`] and [`MultiplayerError`].

use std::fmt;
use std::time::Duration;

use crate::bus::RegistryError;
use crate::scene::{NodeId, SceneError};
use crate::transport::PeerId;

/// Settings of a [`Multiplayer`](super::Multiplayer); set them before starting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiplayerConfig {
    /// Network ticks per second (1–255; 0 reads as 1): how often the server captures changes
    /// and sends snapshots, and how often clients send their ack heartbeat. Clients learn the
    /// server's rate in the handshake. Default 30.
    pub tick_rate: u8,
    /// Largest snapshot packet in bytes, header included (0 = unlimited, the default; about
    /// 1200 for internet play). Nodes that do not fit go out in the next ticks.
    pub max_snapshot_bytes: usize,
    /// A client that has not said hello this long after connecting is disconnected
    /// ([`Timeout`](crate::transport::DisconnectReason::Timeout)); a client that has not been
    /// welcomed this long after starting disconnects itself. Default 5 s.
    pub handshake_timeout: Duration,
    /// A client that sends no ack, or whose acks stop advancing, for this long is disconnected;
    /// a client that receives no snapshot for this long disconnects itself (both
    /// [`Timeout`](crate::transport::DisconnectReason::Timeout)). Default 10 s.
    pub peer_timeout: Duration,
    /// Whether the nodes a leaving client had authority over are despawned (the default) or
    /// handed to the server.
    pub despawn_owned_on_disconnect: bool,
}

impl Default for MultiplayerConfig {
    fn default() -> Self {
        Self {
            tick_rate: 30,
            max_snapshot_bytes: 0,
            handshake_timeout: Duration::from_secs(5),
            peer_timeout: Duration::from_secs(10),
            despawn_owned_on_disconnect: true,
        }
    }
}

/// Why a [`Multiplayer`](super::Multiplayer) call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MultiplayerError {
    /// A server or client is running already; [`stop`](super::Multiplayer::stop) it first.
    AlreadyStarted,
    /// Only the server (or an offline instance) may do this.
    NotServer,
    /// The node is not networked.
    NotNetworked(NodeId),
    /// The node is networked already.
    AlreadyNetworked(NodeId),
    /// The node holds no replicated value (bind needs one).
    NoValue(NodeId),
    /// The peer is neither the server nor a client that joined.
    UnknownPeer(PeerId),
    /// A scene operation failed (unknown scene, missing parent, duplicate name, builder error).
    Scene(SceneError),
    /// The replication messages could not be registered.
    Registry(RegistryError),
}

impl fmt::Display for MultiplayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyStarted => f.write_str("multiplayer is already running; stop it first"),
            Self::NotServer => f.write_str("only the server can do this"),
            Self::NotNetworked(node) => write!(f, "node {node} is not networked"),
            Self::AlreadyNetworked(node) => write!(f, "node {node} is already networked"),
            Self::NoValue(node) => write!(f, "node {node} holds no replicated value"),
            Self::UnknownPeer(peer) => {
                write!(f, "{peer} is neither the server nor a joined client")
            }
            Self::Scene(e) => write!(f, "scene error: {e}"),
            Self::Registry(e) => write!(f, "message registry error: {e}"),
        }
    }
}

impl std::error::Error for MultiplayerError {}

impl From<SceneError> for MultiplayerError {
    fn from(e: SceneError) -> Self {
        Self::Scene(e)
    }
}

impl From<RegistryError> for MultiplayerError {
    fn from(e: RegistryError) -> Self {
        Self::Registry(e)
    }
}
