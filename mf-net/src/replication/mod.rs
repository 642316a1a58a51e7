//! Server-authoritative replication: the [`Replicated`] trait that `#[derive(Replicated)]`
//! implements, and the link-time [`registry`] of replicated types.
//!
//! The runtime that drives it (spawns, delta snapshots with acks, late join) is built on these
//! pieces; see the book's replication chapter for the protocol.

pub(crate) mod member;
pub mod registry;
mod replicated;

pub use mf_net_derive::Replicated;
pub use registry::{
    RegisteredType, ReplicatedTypeId, ReplicationRegistry, ReplicationRegistryError,
};
pub use replicated::{MemberInfo, Replicated, MAX_MEMBERS};
