//! Building a client's snapshot on the server: the walk over the nodes from the client's
//! cursor, each entry carrying what changed since the client's acknowledged tick for it, within
//! the byte budget.

use std::time::Duration;

use super::client_slot::ClientSlot;
use super::entry_cache::EntryCache;
use super::group_vis::GroupVis;
use super::node_table::{Group, GroupKey, GroupTable, NodeTable};
use super::per_slot::PerSlot;
use crate::replication::protocol::SNAPSHOT_TRUNCATED;
use crate::scene::Scene;
use crate::wire::NetWriter;

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
/// without being owed anything), or waiting for a resync (all it receives) — the client's
/// pending nodes, [refreshed](super::send_state::SendState::refresh) for this tick, the only
/// ones it walks — and whose group is due this tick (its update period), in net id order
/// starting at the client's cursor (wrapping) and stopping before the byte budget (`budget`,
/// 0 = unlimited, counting the whole packet) would be exceeded, then the terminating 0.
/// Entries come from `entries`, this tick's shared cache: each distinct one is encoded
/// once, for the first client that needs it, and copied into every packet. Records the carried
/// nodes in the ring entry of `tick`, after recording whether the snapshot that entry held left
/// the ring acknowledged (the client's unacknowledged window). Allocates nothing once the
/// ring's node lists, `w` and `entries` have grown.
pub(crate) fn write(
    w: &mut NetWriter,
    scene: &Scene,
    nodes: &NodeTable,
    groups: &GroupTable,
    client: &mut ClientSlot,
    entries: &mut EntryCache,
    at: SnapshotAt,
) -> Written {
    let SnapshotAt { budget, tick, now } = at;
    let (left, out) = client.send.start_snapshot(tick, now);
    if let Some(acknowledged) = left {
        client.ack_window.record(acknowledged, &mut client.stats);
    }
    let flags_at = w.len();
    w.write_u8(0);
    // From the first pending node at or after the cursor (the first one if none is), wrapping.
    let keys = out.pending;
    let (before, after) = keys.split_at(keys.partition_point(|k| k.id() < *out.cursor));
    let mut truncated = false;
    let mut cursor = 0;
    for &key in after.iter().chain(before) {
        let (Some(node), Some(ack)) = (nodes.get(key), out.acks.get(key)) else {
            continue;
        };
        if client.tiered && !due(groups, &client.vis, node.group, tick) {
            // Its group's update period skips this tick: its changes wait for a later one.
            continue;
        }
        if !node.has_state {
            continue;
        }
        let (since, audience) = (ack.since(), node.audience_of(client.peer));
        let bytes = entries.entry(key, since, audience, |w| {
            scene.write_since_for(node.node, since, audience, w);
        });
        // + 1 for the terminator. An entry larger than the whole budget still goes out alone,
        // or it would never be sent.
        if budget > 0 && w.len() + bytes.len() + 1 > budget && !out.carried.is_empty() {
            truncated = true;
            cursor = node.net_id;
            break;
        }
        w.write_bytes(bytes);
        out.carried.push(key);
    }
    w.write_var_u32(0);
    if truncated {
        w.patch(flags_at, &[SNAPSHOT_TRUNCATED]);
    }
    *out.cursor = cursor;
    Written { truncated }
}

/// Whether the nodes of group `g` go into a snapshot of `tick` (its update period; a node whose
/// group is gone stands alone, and is due).
fn due(groups: &GroupTable, vis: &PerSlot<Group, GroupVis>, g: GroupKey, tick: u32) -> bool {
    groups.get(g).is_none() || vis.get(g).map_or(true, |v| v.due(tick))
}
