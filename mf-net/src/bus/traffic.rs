//! Per-client packet accounting on a server bus, so that a client whose packets are mostly
//! garbage (malformed, of unknown ids, of another protocol version) is disconnected instead of
//! costing the server a decode attempt per packet forever.

use std::collections::HashMap;

use crate::transport::PeerId;

/// How many dropped packets a client may send before the server may disconnect it: once its
/// dropped packets exceed this and outnumber the packets it had accepted, it is disconnected
/// with [`MalformedTraffic`](crate::transport::DisconnectReason::MalformedTraffic). Loss,
/// duplication and reordering never make a packet malformed, so an honest client never gets
/// near it.
pub const MALFORMED_PACKET_LIMIT: u32 = 64;

/// One client's counts.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    received: u32,
    dropped: u32,
}

/// Every connected client's counts (server buses only).
#[derive(Debug, Default)]
pub(super) struct Traffic {
    by_peer: HashMap<PeerId, Counts>,
}

impl Traffic {
    /// A client connected.
    pub(super) fn connected(&mut self, peer: PeerId) {
        self.by_peer.insert(peer, Counts::default());
    }

    /// A client left.
    pub(super) fn left(&mut self, peer: PeerId) {
        self.by_peer.remove(&peer);
    }

    /// A packet arrived from `peer`.
    #[inline]
    pub(super) fn received(&mut self, peer: PeerId) {
        if let Some(c) = self.by_peer.get_mut(&peer) {
            c.received = c.received.saturating_add(1);
        }
    }

    /// A packet from `peer` was dropped as garbage; returns whether the client is now over
    /// the limit ([`MALFORMED_PACKET_LIMIT`]).
    pub(super) fn dropped(&mut self, peer: PeerId) -> bool {
        let Some(c) = self.by_peer.get_mut(&peer) else {
            return false;
        };
        c.dropped = c.dropped.saturating_add(1);
        c.dropped > MALFORMED_PACKET_LIMIT && u64::from(c.dropped) * 2 > u64::from(c.received)
    }
}

#[cfg(test)]
mod tests {
    use super::{Traffic, MALFORMED_PACKET_LIMIT};
    use crate::transport::PeerId;

    #[test]
    fn only_a_client_whose_packets_are_mostly_garbage_goes_over_the_limit() {
        let (honest, hostile) = (PeerId(2), PeerId(3));
        let mut t = Traffic::default();
        t.connected(honest);
        t.connected(hostile);
        // The honest client: 10 000 packets, 100 of them garbage.
        for i in 0..10_000 {
            t.received(honest);
            if i % 100 == 0 {
                assert!(!t.dropped(honest));
            }
        }
        // The hostile one: garbage only, over the limit on the packet after it.
        for _ in 0..MALFORMED_PACKET_LIMIT {
            t.received(hostile);
            assert!(!t.dropped(hostile));
        }
        t.received(hostile);
        assert!(t.dropped(hostile));
        // A peer that left (or never connected) is not counted.
        t.left(hostile);
        assert!(!t.dropped(hostile));
    }
}
