//! mf-net: typed messages, server-authoritative replication and RPCs for multiplayer games.
//!
//! The core is sans-IO: nothing here reads a clock, sleeps, spawns a thread or opens a socket.
//! Time is passed in and packets move through a [`Transport`](transport::Transport), so a
//! server and many clients can run in one test, frame by frame, with the same result every run.
//!
//! Layers, bottom to top:
//!
//! - [`wire`]: [`NetWriter`](wire::NetWriter) / [`NetReader`](wire::NetReader), the strict
//!   byte format;
//! - [`codec`]: [`NetCodec`](codec::NetCodec), typed values with stable schema hashes, and
//!   `#[derive(NetCodec)]`;
//! - [`transport`]: the [`Transport`](transport::Transport) trait, in-process loopback and a
//!   seeded bad-network simulator;
//! - [`bus`]: [`MessageRegistry`](bus::MessageRegistry) and [`MessageBus`](bus::MessageBus),
//!   typed messages with a 7-byte header, dispatch, peers, events and stats;
//! - [`replication`]: [`Replicated`](replication::Replicated) game structs
//!   (`#[derive(Replicated)]`) and the link-time
//!   [`ReplicationRegistry`](replication::ReplicationRegistry) of them.

pub mod bus;
pub mod codec;
pub mod interpolation;
pub mod replication;
pub mod rpc;
pub mod scene;
pub mod schema;
pub mod transport;
pub mod wire;

pub use mf_net_derive::NetCodec;
pub use mf_net_derive::Replicated;

/// The names most programs need.
pub mod prelude {
    pub use crate::codec::NetCodec;
    pub use crate::interpolation::Interpolate;
    pub use crate::replication::{
        Multiplayer, MultiplayerConfig, MultiplayerEvent, NetId, Replicated,
    };
    pub use crate::rpc::{rpc, rpcs, RpcContext, RpcSendError};
    pub use crate::scene::{NetRef, NodeId, Scene, SceneIndex, SceneLibrary};
    pub use crate::transport::{Channel, DisconnectReason, PeerId, Transport};
    pub use crate::wire::{DecodeError, NetReader, NetWriter};
}

/// What macro-generated code calls. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::codec::quantize::{Quantization, Quantize};
    pub use crate::codec::skipped::SkippedField;
    pub use crate::codec::NetCodec;
    pub use crate::interpolation::member::MemberInterpolate;
    pub use crate::interpolation::InterpolationBuffer;
    pub use crate::replication::member::{MemberClone, MemberCodec, MemberEq};
    pub use crate::replication::{
        Audience, MemberCondition, MemberInfo, RegisteredType, Replicated, MAX_MEMBERS,
    };
    pub use crate::rpc::support::*;
    pub use crate::schema::{hash_name, hash_str, hash_u64, strip_crate};
    pub use crate::wire::{DecodeError, NetReader, NetWriter};
    pub use core::result::Result;
    pub use inventory;
}
