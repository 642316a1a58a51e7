//! [`Misconfiguration`]: a mistake in how game code drives the runtime, reported once per
//! kind instead of failing silently.

use std::fmt;

use crate::replication::shared::net_id::NetId;
use crate::transport::PeerId;

/// Frames in a row with a zero `dt` before [`Misconfiguration::ZeroFrameTime`] (two seconds at
/// 60 frames per second).
pub const ZERO_DT_FRAMES: u32 = 120;

/// Frames in a row an owned predicted node's plain member is written before
/// [`Misconfiguration::PlainMemberWritten`] (half a second at 60 frames per second).
pub const PLAIN_WRITE_FRAMES: u32 = 30;

/// A mistake in how game code drives [`Multiplayer`](crate::replication::multiplayer::Multiplayer) that would otherwise
/// fail silently (reported once per kind, as [`MultiplayerEvent::Misconfigured`](crate::replication::MultiplayerEvent::Misconfigured)). Its
/// `Display` says what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Misconfiguration {
    /// Client: it owns a node with `#[replicated(predict)]` members, but no
    /// [`Simulation`](crate::prediction::Simulation) has run for a second: the node is not
    /// predicted, and the server gets no input from this client.
    PredictedNodeNotSimulated {
        /// The node.
        net_id: NetId,
        /// Its replicated type.
        type_name: &'static str,
    },
    /// Server: a client has been sending inputs for a second, but
    /// [`Simulation::run`](crate::prediction::Simulation::run) never ran on the server: the
    /// inputs are not applied.
    InputsNotSimulated {
        /// The first client that sent one.
        peer: PeerId,
    },
    /// [`Simulation::run`](crate::prediction::Simulation::run) was called before any
    /// [`begin_frame`](crate::replication::multiplayer::Multiplayer::begin_frame): it simulates nothing (a client is not
    /// even connected until its frames run).
    SimulationWithoutFrames,
    /// [`begin_frame`](crate::replication::multiplayer::Multiplayer::begin_frame) was called with a zero `dt`
    /// [`ZERO_DT_FRAMES`] times in a row: no time passes for the runtime (no tick, no resend,
    /// and the peer times out).
    ZeroFrameTime,
    /// Client: a member of an owned, predicted node that is not `#[replicated(predict)]` was
    /// written on this client [`PLAIN_WRITE_FRAMES`] frames in a row (by game code or the
    /// step): every snapshot overwrites it with the server's value, so it moves a round trip
    /// late. (Not watched for types with `skip_owner`, `owner_only` or `initial_only` members,
    /// whose owner may write what no snapshot overwrites.)
    PlainMemberWritten {
        /// The node.
        net_id: NetId,
        /// Its replicated type.
        type_name: &'static str,
    },
}

impl fmt::Display for Misconfiguration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PredictedNodeNotSimulated { net_id, type_name } => write!(
                f,
                "this client owns `{type_name}` {net_id}, which has predicted members, \
                 but no Simulation runs: call `Simulation::run` every frame between \
                 `begin_frame` and `end_frame`"
            ),
            Self::InputsNotSimulated { peer } => write!(
                f,
                "client {peer} sends inputs, but `Simulation::run` never runs on the server: \
                 call it every frame between `begin_frame` and `end_frame`, with the clients' \
                 step function"
            ),
            Self::SimulationWithoutFrames => f.write_str(
                "`Simulation::run` was called before any `begin_frame`: call \
                 `begin_frame(dt)` first every frame, then `run`, then `end_frame`",
            ),
            Self::ZeroFrameTime => write!(
                f,
                "`begin_frame` got a zero `dt` {ZERO_DT_FRAMES} frames in a row: pass the time \
                 since the last frame (the runtime's only clock; without it the connection \
                 times out)"
            ),
            Self::PlainMemberWritten { net_id, type_name } => write!(
                f,
                "a member of `{type_name}` {net_id} that is not predicted is written \
                 on its owning client every frame: each snapshot overwrites it, so it moves a \
                 round trip late; mark it `#[replicated(predict)]` and change it in the step"
            ),
        }
    }
}

impl Misconfiguration {
    /// A bit per kind, for reporting each once.
    pub(crate) fn bit(&self) -> u8 {
        match self {
            Self::PredictedNodeNotSimulated { .. } => 1,
            Self::InputsNotSimulated { .. } => 1 << 1,
            Self::SimulationWithoutFrames => 1 << 2,
            Self::ZeroFrameTime => 1 << 3,
            Self::PlainMemberWritten { .. } => 1 << 4,
        }
    }
}
