//! What the server sent one client and what the client acknowledged: per node (by node slot)
//! the newest acknowledged tick and any resync owed, and the ring of the last [`RING`]
//! snapshots sent, each with the keys of the nodes it carried, which an ack advances.

use std::time::Duration;

use super::node_table::{NetNode, NodeKey, NodeTable};
use super::per_slot::PerSlot;

/// How many sent snapshots the server remembers per client.
pub(crate) const RING: usize = 64;

/// The acknowledged tick of a node the client does not have (never reached by a real tick).
pub(crate) const HIDDEN: u32 = u32::MAX;

/// One node as one client stands with it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NodeSend {
    /// The newest tick of an acknowledged snapshot that carried it (or from which the client
    /// has its state otherwise: its join, the group's spawn); [`HIDDEN`] while the client does
    /// not have it.
    pub(crate) acked: u32,
    /// A resync owed (its next entries carry everything the client receives): its authority
    /// moved to or from this client, so members of another owner condition became visible to
    /// it, or its group became relevant to the client again. Completed by an ack of a snapshot
    /// after this tick that carried it (a snapshot from before the group left the client may
    /// still arrive after the spawn and be applied; a full entry repairs that).
    pub(crate) resync: Option<u32>,
}

impl NodeSend {
    /// Whether the client does not have the node (interest management).
    #[inline]
    pub(crate) fn hidden(&self) -> bool {
        self.acked == HIDDEN
    }

    /// The `since` its next entry is written with: `None` (everything) while a resync is owed.
    #[inline]
    pub(crate) fn since(&self) -> Option<u32> {
        match self.resync {
            Some(_) => None,
            None => Some(self.acked),
        }
    }
}

/// One snapshot sent to a client: its tick, when it left, and which nodes it carried.
#[derive(Debug, Default)]
pub(crate) struct SentSnapshot {
    pub(crate) tick: u32,
    pub(crate) sent_at: Duration,
    /// Whether an ack for it was already processed (a duplicate ack changes nothing).
    pub(crate) acked: bool,
    /// Whether a snapshot was sent in this entry (a fresh ring's entries were not), so that its
    /// leaving the ring counts in the client's unacknowledged window.
    pub(crate) used: bool,
    /// Keys of the nodes it carried; the capacity is kept between uses.
    pub(crate) nodes: Vec<NodeKey>,
}

/// A client's send state (see the [module documentation](self)).
pub(crate) struct SendState {
    /// Per node slot (once the client is ready).
    pub(crate) nodes: PerSlot<NetNode, NodeSend>,
    /// The last [`RING`] snapshots, by tick modulo [`RING`].
    pub(crate) ring: Vec<SentSnapshot>,
    /// Net id the next snapshot starts at (0: the first node).
    pub(crate) cursor: u32,
}

impl Default for SendState {
    fn default() -> Self {
        Self {
            nodes: PerSlot::default(),
            // A fresh ring: every entry acknowledged already, so no ack matches it before it
            // is used.
            ring: (0..RING)
                .map(|_| SentSnapshot {
                    acked: true,
                    ..SentSnapshot::default()
                })
                .collect(),
            cursor: 0,
        }
    }
}

impl SendState {
    /// The client joins at `tick`: it has every node in `nodes` as of `tick` (the spawns it was
    /// just sent), owing nothing.
    pub(crate) fn join(&mut self, nodes: &NodeTable, tick: u32) {
        self.nodes.clear();
        for &key in nodes.keys() {
            self.add(key, tick);
        }
        self.reserve(nodes);
    }

    /// A node the client has from `acked` on (a spawn just sent: 0), owing nothing.
    pub(crate) fn add(&mut self, key: NodeKey, acked: u32) {
        self.nodes.set(
            key,
            NodeSend {
                acked,
                resync: None,
            },
        );
    }

    /// Makes room for every node of `nodes` in the per-node state and each ring entry's list,
    /// so that snapshots and acks allocate nothing.
    pub(crate) fn reserve(&mut self, nodes: &NodeTable) {
        self.nodes.reserve_slots(nodes.slot_count());
        let n = nodes.len();
        for entry in &mut self.ring {
            entry.nodes.reserve(n.saturating_sub(entry.nodes.len()));
        }
    }

    /// The client does not have the node (any more): no entries, no resync.
    pub(crate) fn hide(&mut self, key: NodeKey) {
        if let Some(n) = self.nodes.get_mut(key) {
            *n = NodeSend {
                acked: HIDDEN,
                resync: None,
            };
        }
    }

    /// The client has the node again from `tick` (its group was just sent): it owes a resync
    /// if it has a state.
    pub(crate) fn show(&mut self, key: NodeKey, tick: u32, stateful: bool) {
        self.add(key, tick);
        if stateful {
            self.owe_resync(key, tick);
        }
    }

    /// Owes the node a resync, completed only by an ack of a snapshot after `after` (a node
    /// owed one already moves its tick there).
    pub(crate) fn owe_resync(&mut self, key: NodeKey, after: u32) {
        if let Some(n) = self.nodes.get_mut(key) {
            n.resync = Some(n.resync.map_or(after, |old| old.max(after)));
        }
    }

    /// Starts the ring entry of a snapshot of `tick` leaving at `now`. Returns, if the entry
    /// held a sent snapshot, whether that one was acknowledged (it leaves the ring now).
    pub(crate) fn start_snapshot(&mut self, tick: u32, now: Duration) -> Option<bool> {
        let entry = &mut self.ring[tick as usize % RING];
        let left = entry.used.then_some(entry.acked);
        entry.tick = tick;
        entry.sent_at = now;
        entry.acked = false;
        entry.used = true;
        entry.nodes.clear();
        left
    }

    /// Applies an ack of `tick`: every node the snapshot of that tick carried is acknowledged
    /// up to `tick` (a hidden node stays hidden), and a resync it carried (sent after the
    /// resync was asked for) is done, each found by its key without a search. Returns the
    /// round-trip sample, or `None` if the tick is no longer (or never was) in the ring, or was
    /// acknowledged already.
    pub(crate) fn ack(&mut self, tick: u32, now: Duration) -> Option<Duration> {
        let entry = &mut self.ring[tick as usize % RING];
        if entry.tick != tick || entry.acked {
            return None;
        }
        entry.acked = true;
        for &key in &entry.nodes {
            // A node gone since (or a later node in its slot) does not answer to the key.
            if let Some(n) = self.nodes.get_mut(key) {
                n.acked = n.acked.max(tick);
                if n.resync.is_some_and(|after| tick > after) {
                    n.resync = None;
                }
            }
        }
        Some(now.saturating_sub(entry.sent_at))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{SendState, HIDDEN, RING};
    use crate::replication::multiplayer::node_table::{NetNode, NodeKey, NodeTable};
    use crate::replication::multiplayer::slot_table::Key;
    use crate::scene::Scene;
    use crate::transport::PeerId;

    fn node(net_id: u32) -> NetNode {
        NetNode {
            net_id,
            node: Scene::new().root(),
            state: None,
            last_changed: [0; 2],
            authority: PeerId::SERVER,
            net_parent: 0,
            group: Key::new(0, 1),
        }
    }

    /// Sends a snapshot of `tick` carrying `keys`.
    fn sent(send: &mut SendState, tick: u32, keys: &[NodeKey]) {
        send.start_snapshot(tick, Duration::from_millis(u64::from(tick)));
        send.ring[tick as usize % RING]
            .nodes
            .extend_from_slice(keys);
    }

    fn acked(send: &SendState, key: NodeKey) -> Option<u32> {
        send.nodes.get(key).map(|n| n.acked)
    }

    #[test]
    fn an_ack_never_advances_a_later_node_in_a_reused_slot() {
        let mut table = NodeTable::default();
        let a = table.push(1, node(1));
        let b = table.push(2, node(2));
        let mut send = SendState::default();
        send.join(&table, 5);
        sent(&mut send, 6, &[a, b]);
        // `b` is despawned and its slot taken by `c` (spawned at 0) before the ack arrives.
        table.retain(|n| n.net_id != 2);
        let c = table.push(3, node(3));
        assert_eq!(c.slot(), b.slot());
        send.add(c, 0);
        assert_eq!(
            send.ack(6, Duration::from_millis(56)),
            Some(Duration::from_millis(50))
        );
        assert_eq!(acked(&send, a), Some(6));
        assert_eq!(acked(&send, c), Some(0));
        assert_eq!(acked(&send, b), None);
        // A duplicate ack, and an ack of a tick never sent, change nothing.
        assert_eq!(send.ack(6, Duration::from_millis(60)), None);
        assert_eq!(send.ack(7, Duration::from_millis(60)), None);
    }

    #[test]
    fn a_resync_completes_only_with_an_ack_of_a_later_snapshot_that_carried_it() {
        let mut table = NodeTable::default();
        let a = table.push(1, node(1));
        let b = table.push(2, node(2));
        let mut send = SendState::default();
        send.join(&table, 5);
        send.owe_resync(a, 8);
        // Owing again moves the tick forward, never back.
        send.owe_resync(a, 7);
        assert_eq!(send.nodes.get(a).unwrap().since(), None);
        sent(&mut send, 8, &[a]);
        sent(&mut send, 9, &[b]);
        sent(&mut send, 10, &[a]);
        // Sent at the ask: not enough. Not carried: not enough.
        send.ack(8, Duration::ZERO);
        send.ack(9, Duration::ZERO);
        assert_eq!(send.nodes.get(a).unwrap().resync, Some(8));
        send.ack(10, Duration::ZERO);
        assert_eq!(send.nodes.get(a).unwrap().since(), Some(10));
        assert_eq!(acked(&send, b), Some(9));
    }

    #[test]
    fn a_hidden_node_stays_hidden_through_acks_until_shown() {
        let mut table = NodeTable::default();
        let a = table.push(1, node(1));
        let mut send = SendState::default();
        send.join(&table, 5);
        sent(&mut send, 6, &[a]);
        send.owe_resync(a, 5);
        send.hide(a);
        send.ack(6, Duration::ZERO);
        let n = *send.nodes.get(a).unwrap();
        assert!(n.hidden() && n.resync.is_none() && n.acked == HIDDEN);
        send.show(a, 7, true);
        let n = *send.nodes.get(a).unwrap();
        assert_eq!((n.acked, n.resync), (7, Some(7)));
        // A snapshot from before the group came back does not complete the resync.
        sent(&mut send, 7, &[a]);
        send.ack(7, Duration::ZERO);
        assert_eq!(send.nodes.get(a).unwrap().resync, Some(7));
    }
}
