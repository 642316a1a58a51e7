//! [`NetworkStats`], [`PeerNetworkStats`], [`LinkQuality`] and the sliding windows behind them
//! (bandwidth, acknowledged snapshots, received snapshot ticks).

use std::time::Duration;

/// Replication and bandwidth counters of a [`Multiplayer`](crate::replication::multiplayer::Multiplayer), since it was
/// created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetworkStats {
    /// Bytes handed to the transport (headers included), every message.
    pub bytes_sent: u64,
    /// Bytes received, every message.
    pub bytes_received: u64,
    /// Bytes sent over the last second of passed-in time.
    pub bytes_sent_per_second: u64,
    /// Bytes received over the last second of passed-in time.
    pub bytes_received_per_second: u64,
    /// Server: snapshots the transport accepted (one per joined client per net tick; a refused
    /// one is only counted in the bus's [`send_failures`](crate::bus::BusStats::send_failures)).
    pub snapshots_sent: u64,
    /// Server: snapshots sent that did not carry every changed node (byte budget).
    pub snapshots_truncated: u64,
    /// Server: snapshots sent as a copy of their tick's shared snapshot that at least one other
    /// client's snapshot of the tick was a copy of too (clients that stand alike: the same
    /// unacknowledged nodes, each owed the same entry); bit-packed, snapshots whose body was
    /// written once for several clients. A snapshot written from a client that no other client
    /// stood like is not counted.
    pub snapshots_shared: u64,
    /// Server: snapshot entries encoded; each distinct entry of a tick is encoded once, however
    /// many snapshots carry it (bit-packed: each state coded against a distinct baseline; a
    /// server whose clients all take bit-packed snapshots writes no byte-format entry).
    pub entries_encoded: u64,
    /// Client: snapshots applied in full (and acknowledged).
    pub snapshots_applied: u64,
    /// Client: snapshots applied only in part (an entry for a spawn still in flight), not
    /// acknowledged.
    pub snapshots_partial: u64,
    /// Client: snapshot entries that did not read, skipped while the rest of their snapshot
    /// was applied ([`EntryRejected`](crate::replication::multiplayer::MultiplayerEvent::EntryRejected)).
    pub entries_rejected: u64,
    /// Client: stale or duplicate snapshots discarded (tick not newer than the newest applied,
    /// or captured before a server RPC it ran or a spawn it applied).
    pub snapshots_discarded: u64,
    /// Size in bytes of the last snapshot sent (server) or received (client), header included.
    pub last_snapshot_bytes: usize,
    /// Largest snapshot sent or received, header included.
    pub largest_snapshot_bytes: usize,
    /// Spawns sent (server, per spawned group, not per client) or applied (client), binds
    /// included.
    pub spawns: u64,
    /// Despawns sent (server) or applied (client).
    pub despawns: u64,
    /// Networked nodes right now.
    pub networked_nodes: usize,
    /// Control messages (welcome, spawn, despawn, authority) the transport refused; each
    /// disconnected its client.
    pub control_send_failures: u64,
    /// Replication messages dropped as malformed or unexpected (wrong direction, before the
    /// handshake, undecodable). Client: a snapshot whose framing is broken (an entry's length
    /// past the packet, trailing bytes) counts here; the entries before the break stay
    /// applied, but it is not acknowledged. (An entry that is framed but does not read is
    /// skipped instead: [`entries_rejected`](Self::entries_rejected).)
    pub control_dropped: u64,
    /// Client: spawns that could not be applied.
    pub spawn_failures: u64,
    /// Events discarded because nobody drained the event queue.
    pub events_lost: u64,
    /// RPC messages handed to the transport (one per receiving peer).
    pub rpcs_sent: u64,
    /// RPC messages received, before any check (each then runs or is counted below).
    pub rpcs_received: u64,
    /// RPCs refused: the mode does not allow the sender, or `validate` returned `false`
    /// ([`RpcRejected`](crate::replication::multiplayer::MultiplayerEvent::RpcRejected)).
    pub rpcs_rejected: u64,
    /// Server: times a node's state became unsendable, for holding a string longer than
    /// clients accept ([`StateOverLimit`](crate::replication::multiplayer::MultiplayerEvent::StateOverLimit)).
    pub states_over_limit: u64,
    /// RPC bodies that returned `Err` or panicked ([`RpcFailed`](crate::replication::multiplayer::MultiplayerEvent::RpcFailed)).
    pub rpcs_failed: u64,
    /// Server: RPCs dropped for going over their `rate_limit` (clients' calls, and the
    /// server's own calls to itself, which
    /// [`RpcSendError::RateLimited`](crate::rpc::RpcSendError::RateLimited) reports).
    pub rpcs_rate_limited: u64,
    /// RPCs dropped unrun: unknown node or RPC id, malformed header or arguments, a sender that
    /// has not joined, or the message that crossed the flood threshold.
    pub rpcs_dropped: u64,
    /// Server: clients kicked for an RPC flood or (with `kick_on_rpc_failure`) a failed RPC.
    pub rpc_kicks: u64,
    /// Server: clients kicked for an input flood (over
    /// [`input_flood_threshold`](crate::replication::multiplayer::MultiplayerConfig::input_flood_threshold)).
    pub input_kicks: u64,
    /// Server: groups sent to a client because they became relevant to it (interest
    /// management; late-join and new spawns are not counted).
    pub relevance_spawns: u64,
    /// Server: groups taken from a client because they stopped being relevant to it.
    pub relevance_despawns: u64,
    /// Server: RPC messages not sent to a client because it does not have the node (a call
    /// to that one client is dropped; a call to everyone skips it), and RPCs from a client on
    /// a node it does not have, or whose spawn has not gone out (dropped unrun, also counted
    /// in `rpcs_dropped`).
    pub rpcs_not_relevant: u64,
    /// Calls dropped unrun because an argument named a node the receiver refuses: one whose
    /// value is of another type than the reference's, or, on the server, one the calling client
    /// may not name (it does not exist, or it is not relevant to that client). Also counted in
    /// `rpcs_dropped`.
    pub references_refused: u64,
    /// Client: replicated members that kept their value because the value received named a
    /// node this client did not have yet (its spawn still on the way, or not relevant to this
    /// client). When that node arrives, the client asks the server for the state again, and the
    /// member takes its value then (see [`NetRef`](crate::scene::NetRef)).
    pub references_held: u64,
    /// Client: times the interpolation clock was over one second of ticks off the newest
    /// snapshot of a frame (a stall), snapped to it and cut every interpolation buffer to its
    /// newest sample.
    pub clock_snaps: u64,
    /// Client: prediction counters (rollbacks, re-simulated ticks, input lead), while a
    /// [`Simulation`](crate::prediction::Simulation) runs.
    pub prediction: crate::replication::shared::prediction_stats::PredictionStats,
}

/// What the server knows about one client (see
/// [`Multiplayer::peer_stats`](crate::replication::multiplayer::Multiplayer::peer_stats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerNetworkStats {
    /// Whether the client completed the handshake (and receives snapshots).
    pub ready: bool,
    /// The newest snapshot tick it acknowledged (serial-number order: ticks wrap after 2³²).
    pub acknowledged_tick: u32,
    /// Bytes sent to it by the replication layer (control messages and snapshots).
    pub bytes_sent: u64,
    /// Snapshots sent to it.
    pub snapshots_sent: u64,
    /// Size of the last snapshot sent to it, header included.
    pub last_snapshot_bytes: usize,
    /// Smoothed round-trip time from its acks (zero until the first ack): RFC 6298's `SRTT`,
    /// `7/8 * SRTT + 1/8 * sample`. A sample is the time from sending a snapshot to its ack, so
    /// it includes up to a frame of each side's frame time.
    pub round_trip_time: Duration,
    /// Round-trip variation (jitter) from its acks: RFC 6298's `RTTVAR`, the smoothed mean
    /// deviation of the samples from `round_trip_time` (`3/4 * RTTVAR + 1/4 * |SRTT - sample|`,
    /// half the first sample to begin with). Zero until the first ack.
    pub round_trip_variance: Duration,
    /// Snapshots that left the server's ring of the last ones sent to it (about two seconds'
    /// worth: 64 at 30 Hz, 256 at 128 Hz) without being acknowledged, since it joined. *Unacknowledged*, not strictly lost: the snapshot or its ack was lost, or the
    /// client did not acknowledge it (it acknowledges only snapshots it applied in full; a
    /// stale, reordered one or one with an entry for a spawn still in flight is not).
    pub snapshots_unacknowledged: u64,
    /// Of the last (at most 64) snapshots that left the ring, how many there were
    /// (see [`unacknowledged_ratio`](Self::unacknowledged_ratio)).
    pub recent_snapshots: u32,
    /// Of the last `recent_snapshots` that left the ring, how many were unacknowledged.
    pub recent_unacknowledged: u32,
    /// RPC messages sent to it.
    pub rpcs_sent: u64,
    /// RPC messages received from it (after the handshake).
    pub rpcs_received: u64,
    /// Its RPCs refused by mode or `validate`.
    pub rpcs_rejected: u64,
    /// Its RPCs whose bodies returned `Err` or panicked.
    pub rpcs_failed: u64,
    /// Its RPCs dropped for going over their `rate_limit`.
    pub rpcs_rate_limited: u64,
    /// Its RPCs dropped unrun (unknown node or RPC id, malformed, or on a node it does not
    /// have).
    pub rpcs_dropped: u64,
    /// Spawn groups it has now (interest management).
    pub visible_groups: usize,
    /// Networked nodes it has now.
    pub visible_nodes: usize,
    /// Groups sent to it because they became relevant.
    pub relevance_spawns: u64,
    /// Groups taken from it because they stopped being relevant.
    pub relevance_despawns: u64,
    /// Its inputs: on time, missing, late, dropped, and how many are buffered (while a
    /// [`Simulation`](crate::prediction::Simulation) runs).
    pub inputs: crate::replication::shared::prediction_stats::InputStats,
    /// Input messages received from it, before any check (what
    /// [`input_flood_threshold`](crate::replication::multiplayer::MultiplayerConfig::input_flood_threshold) counts).
    pub input_messages: u64,
}

impl PeerNetworkStats {
    /// The share of the last (at most 64) snapshots that left the ring unacknowledged, 0 to 1
    /// (0 before any left it). It estimates the loss of the round trip (snapshot *and* ack: a
    /// lost ack looks like a lost snapshot) plus the snapshots the client chose not to
    /// acknowledge, so read it as "unacknowledged" rather than "lost". It trails by the
    /// ring's length (64 ticks: about two seconds at 30 ticks a second).
    pub fn unacknowledged_ratio(&self) -> f32 {
        if self.recent_snapshots == 0 {
            0.0
        } else {
            self.recent_unacknowledged as f32 / self.recent_snapshots as f32
        }
    }

    /// Folds a round-trip sample into `round_trip_time` and `round_trip_variance` (RFC 6298).
    pub(crate) fn add_round_trip(&mut self, sample: Duration) {
        if self.round_trip_time.is_zero() && self.round_trip_variance.is_zero() {
            self.round_trip_time = sample;
            self.round_trip_variance = sample / 2;
        } else {
            let deviation = abs_diff(self.round_trip_time, sample);
            self.round_trip_variance = (self.round_trip_variance * 3 + deviation) / 4;
            self.round_trip_time = (self.round_trip_time * 7 + sample) / 8;
        }
    }
}

/// `|a - b|` (`Duration::abs_diff` is newer than the MSRV).
fn abs_diff(a: Duration, b: Duration) -> Duration {
    if a > b {
        a - b
    } else {
        b - a
    }
}

/// The outcomes of the last 64 snapshots that left a client's ring (bit set: unacknowledged),
/// newest in bit 0.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct AckWindow {
    unacked: u64,
    len: u32,
}

impl AckWindow {
    /// Records a snapshot leaving the ring, acknowledged or not, in the window and `stats`.
    pub(crate) fn record(&mut self, acknowledged: bool, stats: &mut PeerNetworkStats) {
        self.unacked = (self.unacked << 1) | u64::from(!acknowledged);
        self.len = (self.len + 1).min(WINDOW as u32);
        stats.snapshots_unacknowledged += u64::from(!acknowledged);
        stats.recent_snapshots = self.len;
        stats.recent_unacknowledged = self.unacked.count_ones();
    }
}

/// Snapshot ticks (and arrival times) the client's link estimates cover.
pub const LINK_WINDOW: usize = 64;
const WINDOW: usize = LINK_WINDOW;

/// A client's estimate of its link from the snapshots it receives (see
/// [`Multiplayer::link_quality`](crate::replication::multiplayer::Multiplayer::link_quality)). The server sends one
/// snapshot per net tick, so a tick that never arrives was lost, one that arrives twice was
/// doubled, and the spacing of arrivals should be the tick interval. No message is added for
/// it: it is measured from the snapshots alone, over the last [`LINK_WINDOW`] ticks.
///
/// The server sends one snapshot per tick only while its frames are no longer than a tick: a
/// frame spanning several ticks sends one snapshot for all of them, and the skipped ticks count
/// as missing here. Arrival times are those of the client's frames, so they are only as fine
/// as its frame time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkQuality {
    /// Estimated share of snapshots lost, 0 to 1: the ticks of the window (the last
    /// [`LINK_WINDOW`] up to the newest received, or fewer since the first) whose snapshot has
    /// not arrived. A snapshot still on its way (reordered) counts as missing until it arrives.
    pub loss: f32,
    /// Ticks the window covers now (at most [`LINK_WINDOW`]).
    pub window_ticks: u32,
    /// Of those, ticks whose snapshot has not arrived.
    pub window_missing: u32,
    /// Arrival jitter: the mean absolute deviation, over the last (at most [`LINK_WINDOW`])
    /// in-order arrivals, of the time since the previous arrival from what the ticks predict
    /// (the tick interval times the tick difference, so a lost snapshot does not count as
    /// jitter).
    pub jitter: Duration,
    /// Distinct snapshots received (new ticks, in order or not), since the welcome.
    pub snapshots_received: u64,
    /// Ticks that left the window without their snapshot, since the welcome.
    pub snapshots_missed: u64,
    /// Snapshots received again (a tick that had arrived already).
    pub duplicates: u64,
    /// Snapshots that arrived after a newer one (filling a gap of the window, or older than
    /// it); the client discards them as stale.
    pub out_of_order: u64,
}

/// The fixed-size state behind [`LinkQuality`].
#[derive(Debug)]
pub(crate) struct LinkTracker {
    started: bool,
    /// Newest tick received.
    newest: u32,
    /// Bit `i`: tick `newest - i` arrived.
    received: u64,
    /// Ticks from the first received to the newest, capped at the window.
    span: u32,
    /// When the newest tick arrived.
    newest_at: Duration,
    /// The last deviations, in nanoseconds, and their running sum (boxed once, at creation,
    /// to keep the client's state small).
    deviations: Box<[u64; WINDOW]>,
    next: usize,
    count: usize,
    sum: u64,
    pub(crate) quality: LinkQuality,
}

impl Default for LinkTracker {
    fn default() -> Self {
        Self {
            started: false,
            newest: 0,
            received: 0,
            span: 0,
            newest_at: Duration::ZERO,
            deviations: Box::new([0; WINDOW]),
            next: 0,
            count: 0,
            sum: 0,
            quality: LinkQuality::default(),
        }
    }
}

impl LinkTracker {
    /// A snapshot of `tick` arrived at `now`; `interval` is the server's tick interval.
    pub(crate) fn arrival(&mut self, tick: u32, now: Duration, interval: Duration) {
        let q = &mut self.quality;
        if !self.started {
            self.started = true;
            self.newest = tick;
            self.received = 1;
            self.span = 1;
            self.newest_at = now;
            q.snapshots_received += 1;
        } else if crate::tick::tick_after(tick, self.newest) {
            let shift = tick.wrapping_sub(self.newest);
            let w = WINDOW as u32;
            // Ticks of the window that leave it (bit `i` leaves once `i + shift >= 64`), and
            // the new ticks skipped past it entirely: those not received are missed.
            let leaving = self.span.saturating_sub(w.saturating_sub(shift));
            let (kept, left_received) = if shift >= w {
                (0, self.received.count_ones())
            } else {
                (
                    self.received << shift,
                    (self.received >> (w - shift)).count_ones(),
                )
            };
            q.snapshots_missed += u64::from(leaving - left_received.min(leaving))
                + u64::from(shift.saturating_sub(w));
            self.received = kept | 1;
            self.span = self.span.saturating_add(shift).min(w);
            q.snapshots_received += 1;
            // Jitter: the spacing of arrivals against what the ticks predict.
            let expected = interval.saturating_mul(shift);
            let deviation = abs_diff(now.saturating_sub(self.newest_at), expected);
            let nanos = u64::try_from(deviation.as_nanos()).unwrap_or(u64::MAX);
            self.sum = self.sum - self.deviations[self.next] + nanos;
            self.deviations[self.next] = nanos;
            self.next = (self.next + 1) % WINDOW;
            self.count = (self.count + 1).min(WINDOW);
            q.jitter = Duration::from_nanos(self.sum / self.count as u64);
            self.newest = tick;
            self.newest_at = now;
        } else {
            let behind = self.newest.wrapping_sub(tick);
            if behind < WINDOW as u32 && self.received & (1 << behind) != 0 {
                q.duplicates += 1;
            } else {
                q.out_of_order += 1;
                if behind < WINDOW as u32 {
                    self.received |= 1 << behind;
                    q.snapshots_received += 1;
                    // Within the window's ticks but before the first received: widen it.
                    self.span = self.span.max(behind + 1);
                }
            }
        }
        let mask = if self.span >= WINDOW as u32 {
            u64::MAX
        } else {
            (1u64 << self.span) - 1
        };
        q.window_ticks = self.span;
        q.window_missing = self.span - (self.received & mask).count_ones();
        q.loss = q.window_missing as f32 / self.span as f32;
    }
}

const BUCKETS: usize = 10;
const BUCKET: Duration = Duration::from_millis(100);

/// Bytes per bucket of 100 ms over the last second.
#[derive(Debug, Default)]
pub(crate) struct Bandwidth {
    sent: [u64; BUCKETS],
    received: [u64; BUCKETS],
    index: usize,
    bucket_start: Duration,
    seen_sent: u64,
    seen_received: u64,
}

impl Bandwidth {
    /// Folds the totals at time `now` into the window and returns the sums over the last
    /// second (sent, received).
    pub(crate) fn update(&mut self, now: Duration, sent: u64, received: u64) -> (u64, u64) {
        let mut steps = 0;
        while now >= self.bucket_start + BUCKET {
            self.bucket_start += BUCKET;
            self.index = (self.index + 1) % BUCKETS;
            self.sent[self.index] = 0;
            self.received[self.index] = 0;
            steps += 1;
            if steps > BUCKETS {
                // A long gap: everything in the window is old; jump to now.
                let behind = now.saturating_sub(self.bucket_start).as_nanos() / BUCKET.as_nanos();
                self.bucket_start += BUCKET * u32::try_from(behind).unwrap_or(u32::MAX);
            }
        }
        self.sent[self.index] += sent.saturating_sub(self.seen_sent);
        self.received[self.index] += received.saturating_sub(self.seen_received);
        self.seen_sent = sent;
        self.seen_received = received;
        (self.sent.iter().sum(), self.received.iter().sum())
    }

    /// Forgets the totals seen (a new bus starts counting at zero).
    pub(crate) fn reset_totals(&mut self) {
        self.seen_sent = 0;
        self.seen_received = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(10);

    fn at(tick: u32) -> Duration {
        TICK * tick
    }

    #[test]
    fn link_tracker_counts_gaps_duplicates_and_reordering() {
        let mut t = LinkTracker::default();
        for tick in [10, 11, 13, 13, 12, 14] {
            t.arrival(tick, at(tick), TICK);
        }
        let q = t.quality;
        assert_eq!((q.window_ticks, q.window_missing), (5, 0));
        assert_eq!(
            (q.duplicates, q.out_of_order, q.snapshots_received),
            (1, 1, 5)
        );
        assert_eq!(q.jitter, Duration::ZERO);
        // A gap of 9 ticks: 9 missing of the 15 the window covers.
        t.arrival(24, at(24), TICK);
        assert_eq!((t.quality.window_ticks, t.quality.window_missing), (15, 9));
        // A jump past the window: every tick of the old window and the skipped ones missed.
        t.arrival(200, at(200), TICK);
        let q = t.quality;
        assert_eq!((q.window_ticks, q.window_missing), (64, 63));
        assert_eq!(q.snapshots_missed, 9 + (199 - 24 - 63));
        assert_eq!(q.snapshots_received, 7);
        // Late by 5 ms, then on time again: deviations of 5 ms twice over the 7 in-order
        // arrivals after the first (11, 13, 14, 24, 200, 201, 202).
        t.arrival(201, at(201) + Duration::from_millis(5), TICK);
        t.arrival(202, at(202), TICK);
        assert_eq!(t.quality.jitter, Duration::from_nanos(10_000_000 / 7));
    }

    #[test]
    fn round_trip_follows_rfc_6298() {
        let mut s = PeerNetworkStats::default();
        s.add_round_trip(Duration::from_millis(100));
        assert_eq!(s.round_trip_time, Duration::from_millis(100));
        assert_eq!(s.round_trip_variance, Duration::from_millis(50));
        s.add_round_trip(Duration::from_millis(180));
        assert_eq!(s.round_trip_variance, Duration::from_millis(57_500) / 1000);
        assert_eq!(s.round_trip_time, Duration::from_millis(110));
    }

    #[test]
    fn ack_window_keeps_the_last_64() {
        let (mut w, mut s) = (AckWindow::default(), PeerNetworkStats::default());
        for i in 0..100 {
            w.record(i % 4 != 0, &mut s);
        }
        assert_eq!((s.recent_snapshots, s.recent_unacknowledged), (64, 16));
        assert_eq!(s.snapshots_unacknowledged, 25);
        assert_eq!(s.unacknowledged_ratio(), 0.25);
    }
}
