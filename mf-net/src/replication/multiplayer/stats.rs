//! [`NetworkStats`], [`PeerNetworkStats`] and the sliding bandwidth window.

use std::time::Duration;

/// Replication and bandwidth counters of a [`Multiplayer`](super::Multiplayer), since it was
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
    /// Client: snapshots applied in full (and acknowledged).
    pub snapshots_applied: u64,
    /// Client: snapshots applied only in part (an entry for a spawn still in flight), not
    /// acknowledged.
    pub snapshots_partial: u64,
    /// Client: stale or duplicate snapshots discarded (tick not newer than the newest applied).
    pub snapshots_discarded: u64,
    /// Size in bytes of the last snapshot sent (server) or received (client), header included.
    pub last_snapshot_bytes: usize,
    /// Largest snapshot sent or received, header included.
    pub largest_snapshot_bytes: usize,
    /// Spawn messages sent (server, per spawn, not per client) or applied (client), binds
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
    /// handshake, undecodable). Client: a snapshot with a malformed entry counts here; the
    /// entries before it stay applied, but it is not acknowledged.
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
    /// ([`RpcRejected`](super::MultiplayerEvent::RpcRejected)).
    pub rpcs_rejected: u64,
    /// RPC bodies that returned `Err` or panicked ([`RpcFailed`](super::MultiplayerEvent::RpcFailed)).
    pub rpcs_failed: u64,
    /// Server: RPCs dropped for going over their `rate_limit`.
    pub rpcs_rate_limited: u64,
    /// RPCs dropped unrun: unknown node or RPC id, malformed header or arguments, a sender that
    /// has not joined, or the message that crossed the flood threshold.
    pub rpcs_dropped: u64,
    /// Server: clients kicked for an RPC flood or (with `kick_on_rpc_failure`) a failed RPC.
    pub rpc_kicks: u64,
    /// Server: groups sent to a client because they became relevant to it (interest
    /// management; late-join and new spawns are not counted).
    pub relevance_spawns: u64,
    /// Server: groups taken from a client because they stopped being relevant to it.
    pub relevance_despawns: u64,
    /// Server: RPC messages not sent to a client because it does not have the node (a call
    /// to that one client is dropped; a call to everyone skips it), and RPCs from a client on
    /// a node it does not have (dropped unrun, also counted in `rpcs_dropped`).
    pub rpcs_not_relevant: u64,
    /// Client: times the interpolation clock was over one second of ticks off a snapshot's
    /// tick, snapped to it and cleared every interpolation buffer.
    pub clock_snaps: u64,
}

/// What the server knows about one client (see
/// [`Multiplayer::peer_stats`](super::Multiplayer::peer_stats)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerNetworkStats {
    /// Whether the client completed the handshake (and receives snapshots).
    pub ready: bool,
    /// The newest snapshot tick it acknowledged.
    pub acknowledged_tick: u32,
    /// Bytes sent to it by the replication layer (control messages and snapshots).
    pub bytes_sent: u64,
    /// Snapshots sent to it.
    pub snapshots_sent: u64,
    /// Size of the last snapshot sent to it, header included.
    pub last_snapshot_bytes: usize,
    /// Smoothed round-trip time from its acks (zero until the first ack).
    pub round_trip_time: Duration,
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
