//! [`Misconfiguration`]: mistakes in how game code drives the runtime that would otherwise fail
//! silently, each reported once as [`MultiplayerEvent::Misconfigured`]; and the watch that
//! notices them.

use std::time::Duration;

use super::misconfiguration::{Misconfiguration, PLAIN_WRITE_FRAMES, ZERO_DT_FRAMES};
use crate::replication::shared::events::EventQueue;
use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::net_id::NetId;
use crate::transport::PeerId;

/// How long a condition must hold before it is reported: a game that starts its simulation a
/// little after its first spawn, or sends a first input before its server's first run, is fine.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

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
