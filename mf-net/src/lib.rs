//! mf-net: server-authoritative replication, typed RPCs and typed messages for multiplayer
//! games.
//!
//! The core is sans-IO: nothing here reads a clock, sleeps, spawns a thread or opens a socket.
//! Time is passed in and packets move through a [`Transport`](transport::Transport), so a
//! server and many clients can run in one test, frame by frame, with the same result every run.
//! Real UDP lives in the `mf-net-enet` crate.
//!
//! Layers, bottom to top:
//!
//! - [`wire`]: [`NetWriter`](wire::NetWriter) / [`NetReader`](wire::NetReader), the strict
//!   byte format, and [`BitWriter`](wire::BitWriter) / [`BitReader`](wire::BitReader) for
//!   bit-packed ones;
//! - [`codec`]: [`NetCodec`](codec::NetCodec), typed values with stable schema hashes,
//!   `#[derive(NetCodec)]`, and quantization;
//! - [`transport`]: the [`Transport`](transport::Transport) trait, in-process loopback, a
//!   seeded bad-network simulator, network addresses and the connect-string selector;
//! - [`bus`]: [`MessageRegistry`](bus::MessageRegistry) and [`MessageBus`](bus::MessageBus),
//!   typed messages with a 7-byte header, dispatch, peers, events and stats;
//! - [`store`]: the storage seam, through which an engine lends its values and nodes to the
//!   runtime (a game's own storage runs the whole runtime:
//!   [`Multiplayer::with_store`](replication::Multiplayer::with_store));
//! - [`scene`]: the built-in engine storage: a node tree, typed [`NetRef`](scene::NetRef)
//!   handles and spawnable scenes;
//! - [`replication`]: `#[derive(Replicated)]` game structs, the link-time registry, and
//!   [`Multiplayer`](replication::Multiplayer), the runtime: handshake, spawns, delta snapshots
//!   with acknowledgements, interest management, timeouts and stats;
//! - [`rpc`]: `#[rpcs]` / `#[rpc(..)]` methods, their dispatch tables and typed senders;
//! - [`interpolation`]: what clients use to show interpolated members smoothly;
//! - [`prediction`]: fixed-tick simulation with tick-stamped inputs, client-side prediction
//!   with rollback ([`Simulation`](prediction::Simulation)), and the server's
//!   [`LagHistory`](prediction::LagHistory) for hit checks as a client saw the world.
//!
//! The book (`book/` in the repository) walks through every layer with code that is compiled and
//! run by the test suite.

pub mod bus;
mod cache_hint;
pub mod codec;
mod int_hasher;
pub mod interpolation;
mod member_proxy;
pub mod prediction;
pub mod refs;
mod replicated;
pub mod replication;
pub mod rpc;
pub mod scene;
pub mod schema;
pub mod store;
mod tick;
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
    // The sides of `Replicated`, in scope for their methods (`value.capture(..)`,
    // `T::write_since(..)`) without taking their names.
    pub use crate::replication::{Apply as _, Capture as _, Interpolated as _, Predicted as _};
    pub use crate::rpc::{rpc, rpcs, RpcContext, RpcSendError};
    pub use crate::scene::{NetRef, NodeId, Scene, SceneIndex, SceneLibrary};
    pub use crate::transport::{Channel, DisconnectReason, PeerId, Transport};
    pub use crate::wire::{DecodeError, NetReader, NetWriter};
}

/// What macro-generated code calls. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::codec::quantize::{Buckets, Quantization, Quantize, QuantizeRotation};
    pub use crate::codec::skipped::SkippedField;
    pub use crate::codec::state_bits::{MemberBits, StateLayout};
    pub use crate::codec::state_coder::{Coding, StateCoder};
    pub use crate::codec::{all_same, NetCodec};
    pub use crate::interpolation::member::MemberInterpolate;
    pub use crate::interpolation::InterpolationBuffer;
    pub use crate::member_proxy::{
        Base, BaseFallback, Member, MemberFallback, Quantized, QuantizedFallback, Rotation,
    };
    pub use crate::replicated::member::{MemberClone, MemberCodec, MemberEq};
    pub use crate::replication::runtime_parts::runtime_part;
    /// The runtime's snapshot entry framing, for the benchmarks that time it.
    pub use crate::replication::shared::protocol::{read_entry, write_entry};
    pub use crate::replication::{
        Apply, Audience, Capture, Interpolated, MemberCondition, MemberInfo, Predicted,
        RegisteredType, Replicated, MAX_MEMBERS,
    };
    pub use crate::rpc::support::*;
    pub use crate::schema::{hash_name, hash_str, hash_u64, strip_crate};
    pub use crate::tick::{newest_before, tick_after, tick_max};
    pub use crate::wire::{DecodeError, NetReader, NetWriter};
    pub use core::result::Result;
    pub use inventory;
}
