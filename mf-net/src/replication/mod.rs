//! Server-authoritative replication: the [`Replicated`] trait that `#[derive(Replicated)]`
//! implements (with its sub-traits by side: [`Capture`], [`Apply`], [`Interpolated`],
//! [`Predicted`]), the link-time [`registry`] of replicated types, and the [`Multiplayer`] runtime
//! that spawns scenes on clients and keeps them in sync with delta snapshots.
//!
//! See [`multiplayer`] for the runtime and [`message_ids`] for its wire format.
//!
//! Inside, the runtime is in halves that never import each other: `shared/` (net ids, the
//! protocol table and framing, the outbox, the state lent to both halves, events, stats, and
//! the per-type column table), `server/` (shadow states and capture, snapshots, interest,
//! acknowledgements, the input buffer) and `client/` (snapshot apply, interpolation,
//! prediction); `multiplayer/` is the facade over them. Values are reached only through the
//! [storage seam](crate::store).

pub(crate) mod client;
pub mod interest;
pub mod multiplayer;
pub(crate) mod runtime_parts;
pub(crate) mod server;
pub(crate) mod shared;
pub use crate::replicated::registry;

pub use crate::replicated::{
    Apply, Audience, Capture, Interpolated, MemberCondition, MemberInfo, Predicted, RegisteredType,
    Replicated, MAX_MEMBERS,
};
pub use mf_net_derive::Replicated;
pub use multiplayer::{
    connect_data, Handles, IntoTransport, LinkQuality, Misconfiguration, Multiplayer,
    MultiplayerConfig, MultiplayerError, MultiplayerEvent, NetId, NetworkStats, PeerNetworkStats,
    SnapshotEncoding, Spawner, TickSource, LINK_WINDOW, PLAIN_WRITE_FRAMES, ZERO_DT_FRAMES,
};
pub use registry::{ReplicatedTypeId, ReplicationRegistry, ReplicationRegistryError};
pub use shared::message_ids;
pub use shared::protocol::MAX_NAME_BYTES;
