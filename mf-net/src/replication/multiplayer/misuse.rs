//! [`Misconfiguration`]: mistakes in how game code drives the runtime that would otherwise fail
//! silently, each reported once as [`MultiplayerEvent::Misconfigured`]; and the watch that
//! notices them.

use std::fmt;
use std::time::Duration;

use super::events::EventQueue;
use super::{MultiplayerEvent, NetId};
use crate::transport::PeerId;

/// How long a condition must hold before it is reported: a game that starts its simulation a
/// little after its first spawn, or sends a first input before its server's first run, is fine.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// Frames in a row with a zero `dt` before [`Misconfiguration::ZeroFrameTime`] (two seconds at
/// 60 frames per second).
pub const ZERO_DT_FRAMES: u32 = 120;

/// Frames in a row an owned predicted node's plain member is written before
/// [`Misconfiguration::PlainMemberWritten`] (half a second at 60 frames per second).
pub const PLAIN_WRITE_FRAMES: u32 = 30;

/// A mistake in how game code drives [`Multiplayer`](super::Multiplayer) that would otherwise
/// fail silently (reported once per kind, as [`MultiplayerEvent::Misconfigured`]). Its
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
    /// [`begin_frame`](super::Multiplayer::begin_frame): it simulates nothing (a client is not
    /// even connected until its frames run).
    SimulationWithoutFrames,
    /// [`begin_frame`](super::Multiplayer::begin_frame) was called with a zero `dt`
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
    fn bit(&self) -> u8 {
        match self {
            Self::PredictedNodeNotSimulated { .. } => 1,
            Self::InputsNotSimulated { .. } => 1 << 1,
            Self::SimulationWithoutFrames => 1 << 2,
            Self::ZeroFrameTime => 1 << 3,
            Self::PlainMemberWritten { .. } => 1 << 4,
        }
    }
}

/// What the runtime watches for [`Misconfiguration`]s (see the [module docs](self)).
#[derive(Debug, Default)]
pub(crate) struct MisuseWatch {
    /// The kinds reported.
    reported: u8,
    /// Whether `begin_frame` was ever called.
    pub(crate) began: bool,
    zero_dt_frames: u32,
    /// Whether `Simulation::run` ran on this server.
    pub(crate) server_simulated: bool,
    /// When the first input arrived (while no simulation had run), and from whom.
    first_input: Option<(Duration, PeerId)>,
    /// When this client first owned a predicted node while not simulating, and which.
    unsimulated: Option<(Duration, NetId, &'static str)>,
    plain_writes: u32,
}

impl MisuseWatch {
    /// Reports `found` unless its kind was.
    pub(crate) fn report(&mut self, events: &mut EventQueue, found: Misconfiguration) {
        if self.reported & found.bit() == 0 {
            self.reported |= found.bit();
            events.push(MultiplayerEvent::Misconfigured(found));
        }
    }

    /// `begin_frame(dt)`.
    pub(crate) fn frame(&mut self, dt: Duration, events: &mut EventQueue) {
        self.began = true;
        if !dt.is_zero() {
            self.zero_dt_frames = 0;
            return;
        }
        self.zero_dt_frames += 1;
        if self.zero_dt_frames >= ZERO_DT_FRAMES {
            self.report(events, Misconfiguration::ZeroFrameTime);
        }
    }

    /// Server: an input from `peer` arrived at `now`.
    pub(crate) fn input(&mut self, now: Duration, peer: PeerId) {
        if !self.server_simulated && self.first_input.is_none() {
            self.first_input = Some((now, peer));
        }
    }

    /// Client: it owns `net_id`, of a type with predicted members, at `now`, and no simulation
    /// runs yet.
    pub(crate) fn owned_predicted(
        &mut self,
        now: Duration,
        net_id: NetId,
        type_name: &'static str,
    ) {
        if self.unsimulated.is_none() {
            self.unsimulated = Some((now, net_id, type_name));
        }
    }

    /// Client: an owned predicted node's plain member was (`Some`) or was not written since the
    /// last frame.
    pub(crate) fn plain_write(
        &mut self,
        written: Option<(NetId, &'static str)>,
        events: &mut EventQueue,
    ) {
        let Some((net_id, type_name)) = written else {
            self.plain_writes = 0;
            return;
        };
        self.plain_writes += 1;
        if self.plain_writes >= PLAIN_WRITE_FRAMES {
            self.report(
                events,
                Misconfiguration::PlainMemberWritten { net_id, type_name },
            );
        }
    }

    /// End of a frame at `now`: what held for [`GRACE`] is reported (`simulating`: a client's
    /// simulation runs).
    pub(crate) fn end_frame(&mut self, now: Duration, simulating: bool, events: &mut EventQueue) {
        if let Some((since, peer)) = self.first_input {
            if self.server_simulated {
                self.first_input = None;
            } else if now.saturating_sub(since) >= GRACE {
                self.report(events, Misconfiguration::InputsNotSimulated { peer });
            }
        }
        if let Some((since, net_id, type_name)) = self.unsimulated {
            if simulating {
                self.unsimulated = None;
            } else if now.saturating_sub(since) >= GRACE {
                let found = Misconfiguration::PredictedNodeNotSimulated { net_id, type_name };
                self.report(events, found);
            }
        }
    }
}
