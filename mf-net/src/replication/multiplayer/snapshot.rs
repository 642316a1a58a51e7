//! Building a client's snapshot on the server, and the ring of the last 64 snapshots sent to
//! it, whose node lists acks advance.

use std::time::Duration;

use super::interest::{GroupVis, HIDDEN};
use super::server::{ClientSlot, Group, NetNode, Resync};
use crate::replication::protocol::SNAPSHOT_TRUNCATED;
use crate::replication::Audience;
use crate::scene::Scene;
use crate::wire::NetWriter;

/// How many sent snapshots the server remembers per client.
pub(crate) const RING: usize = 64;

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
    /// Net ids of the nodes it carried; the capacity is kept between uses.
    pub(crate) nodes: Vec<u32>,
}

/// A fresh ring: every entry acknowledged already, so no ack matches it before it is used.
pub(crate) fn new_ring() -> Vec<SentSnapshot> {
    (0..RING)
        .map(|_| SentSnapshot {
            acked: true,
            ..SentSnapshot::default()
        })
        .collect()
}

/// What one snapshot came to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Written {
    pub(crate) truncated: bool,
}

/// When and under which budget a snapshot is written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SnapshotAt {
    /// The byte budget for the whole packet (0 = unlimited).
    pub(crate) budget: usize,
    /// The network tick the snapshot carries.
    pub(crate) tick: u32,
    /// When it leaves, for round-trip times.
    pub(crate) now: Duration,
}

/// Appends a snapshot payload for `client` to `w` (which holds the header already): flags, an
/// entry for every node with a member changed after the client's acknowledged tick for it that
/// the client receives (its owner condition allows it, and it is not `initial_only`: a node
/// whose only changes are excluded for this client gets no entry, and stays unacknowledged
/// without being owed anything), or waiting for a resync (all it receives), and whose group is
/// due this tick (its update period; `groups` are the server's, parallel to the client's
/// visibility), starting at the client's cursor and stopping before the byte budget (`budget`,
/// 0 = unlimited, counting the whole packet) would be exceeded, then the terminating 0.
/// Records the carried nodes in the ring entry of `tick`, after recording whether the snapshot
/// that entry held left the ring acknowledged (the client's unacknowledged window). Allocates
/// nothing once the ring's node lists, `w` and `scratch` (used only for states of 128 bytes or
/// more) have grown.
pub(crate) fn write(
    w: &mut NetWriter,
    scene: &Scene,
    nodes: &[NetNode],
    groups: &[Group],
    client: &mut ClientSlot,
    scratch: &mut NetWriter,
    at: SnapshotAt,
) -> Written {
    let SnapshotAt { budget, tick, now } = at;
    let entry = &mut client.ring[tick as usize % RING];
    if entry.used {
        client.ack_window.record(entry.acked, &mut client.stats);
    }
    entry.tick = tick;
    entry.sent_at = now;
    entry.acked = false;
    entry.used = true;
    entry.nodes.clear();

    let flags_at = w.len();
    w.write_u8(0);
    let count = nodes.len();
    let start = match nodes.partition_point(|n| n.net_id < client.cursor) {
        s if s >= count => 0,
        s => s,
    };
    let mut truncated = false;
    let mut cursor = 0;
    // The net id range of the group last looked up, and whether it is due this tick.
    let mut span = (0u32, 0u32, true);
    for k in 0..count {
        let i = (start + k) % count;
        let node = &nodes[i];
        let since = client.acked.get(i).copied().unwrap_or(0);
        if since == HIDDEN {
            // In a group the client does not have (interest management).
            continue;
        }
        if client.tiered {
            if node.net_id < span.0 || node.net_id >= span.1 {
                span = due_span(groups, &client.vis, node.net_id, tick);
            }
            if !span.2 {
                // Its group's update period skips this tick: its changes wait for a later one.
                continue;
            }
        }
        let audience = Audience::of(node.authority == client.peer);
        let resync = Resync::is_owed(&client.resync, node.net_id);
        if !resync && node.last_changed_for(audience) <= since {
            continue;
        }
        if !node.has_state {
            continue;
        }
        // The entry goes straight into the packet: net id, a 1-byte length placeholder (a
        // state under 128 bytes, the common case), the state, then the length patched in.
        let entry_at = w.len();
        w.write_var_u32(node.net_id);
        let len_at = w.len();
        w.write_u8(0);
        scene.write_since_for(node.node, (!resync).then_some(since), audience, w);
        let len = w.len() - len_at - 1;
        if len < 0x80 {
            w.patch(len_at, &[len as u8]);
        } else {
            // A longer state needs a longer varint: move it through `scratch` to make room.
            scratch.clear();
            scratch.write_bytes(&w.as_slice()[len_at + 1..]);
            w.truncate(len_at);
            w.write_len(len);
            w.write_bytes(scratch.as_slice());
        }
        // + 1 for the terminator. An entry larger than the whole budget still goes out alone,
        // or it would never be sent.
        if budget > 0 && w.len() + 1 > budget && !entry.nodes.is_empty() {
            w.truncate(entry_at);
            truncated = true;
            cursor = node.net_id;
            break;
        }
        entry.nodes.push(node.net_id);
    }
    w.write_var_u32(0);
    if truncated {
        w.patch(flags_at, &[SNAPSHOT_TRUNCATED]);
    }
    client.cursor = cursor;
    Written { truncated }
}

/// The net id range of the group holding `net_id` and whether it is due at `tick` (a node
/// outside every group stands alone, and is).
fn due_span(groups: &[Group], vis: &[GroupVis], net_id: u32, tick: u32) -> (u32, u32, bool) {
    let alone = (net_id, net_id.saturating_add(1), true);
    let Some(g) = groups.partition_point(|g| g.first <= net_id).checked_sub(1) else {
        return alone;
    };
    let group = &groups[g];
    let end = group.first.saturating_add(group.count);
    if net_id >= end {
        return alone;
    }
    let due = vis.get(g).map_or(true, |v| v.due(tick));
    (group.first, end, due)
}

/// Applies an ack of `tick` from `client`: every node the snapshot of that tick carried is
/// acknowledged up to `tick`, and a resync it carried (sent after the resync was asked for)
/// is done. Returns the round-trip sample, or `None` if the tick is no longer
/// (or never was) in the ring, or was acknowledged already.
pub(crate) fn ack(
    nodes: &[NetNode],
    client: &mut ClientSlot,
    tick: u32,
    now: Duration,
) -> Option<Duration> {
    let entry = &mut client.ring[tick as usize % RING];
    if entry.tick != tick || entry.acked {
        return None;
    }
    entry.acked = true;
    for &id in &entry.nodes {
        if let Ok(i) = nodes.binary_search_by_key(&id, |n| n.net_id) {
            if let Some(acked) = client.acked.get_mut(i) {
                *acked = (*acked).max(tick);
            }
        }
        Resync::complete(&mut client.resync, id, tick);
    }
    Some(now.saturating_sub(entry.sent_at))
}

#[cfg(test)]
mod tests {
    use super::Resync;

    #[test]
    fn resyncs_stay_sorted_and_complete_only_after_they_were_asked() {
        let mut list = Vec::new();
        for (id, after) in [(9, 5), (3, 5), (6, 5), (3, 8)] {
            Resync::owe(&mut list, id, after);
        }
        // One entry per node, sorted; owing again moves the tick forward, never back.
        Resync::owe(&mut list, 6, 2);
        let entries: Vec<(u32, u32)> = list.iter().map(|r| (r.net_id, r.after)).collect();
        assert_eq!(entries, [(3, 8), (6, 5), (9, 5)]);
        assert!(Resync::is_owed(&list, 6) && !Resync::is_owed(&list, 7));
        // An ack of a snapshot sent before (or at) the ask completes nothing.
        Resync::complete(&mut list, 3, 8);
        Resync::complete(&mut list, 7, 100);
        assert_eq!(list.len(), 3);
        Resync::complete(&mut list, 3, 9);
        Resync::complete(&mut list, 9, 6);
        assert!(!Resync::is_owed(&list, 3) && !Resync::is_owed(&list, 9));
        assert!(Resync::is_owed(&list, 6));
        assert!(!Resync::is_owed(&[], 6));
    }
}
