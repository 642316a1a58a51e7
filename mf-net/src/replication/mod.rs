//! Server-authoritative replication: the [`Replicated`] trait that `#[derive(Replicated)]`
//! implements, the link-time [`registry`] of replicated types, and the [`Multiplayer`] runtime
//! that spawns scenes on clients and keeps them in sync with delta snapshots.
//!
//! See [`multiplayer`] for the runtime and [`protocol`] for its wire format.

pub mod interest;
pub mod multiplayer;
pub mod protocol;
pub mod registry;

pub use crate::replicated::{
    Audience, MemberCondition, MemberInfo, RegisteredType, Replicated, MAX_MEMBERS,
};
pub use mf_net_derive::Replicated;
pub use multiplayer::{
    connect_data, Handles, IntoTransport, LinkQuality, Multiplayer, MultiplayerConfig,
    MultiplayerError, MultiplayerEvent, NetId, NetworkStats, PeerNetworkStats, Spawner,
    LINK_WINDOW,
};
pub use registry::{ReplicatedTypeId, ReplicationRegistry, ReplicationRegistryError};
