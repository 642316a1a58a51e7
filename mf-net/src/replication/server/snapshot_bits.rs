//! A client's snapshot in the bit-packed encoding
//! ([`SnapshotEncoding::Bits`](crate::replication::SnapshotEncoding::Bits)): the same walk and
//! the same entries as [`snapshot::write`](crate::replication::server::snapshot::write), each coded against the state the client
//! acknowledged for its node ([`BitEntries`]).
//!
//! After the flags byte, a bit body: the default baseline (how many ticks before the
//! snapshot's, gamma coded), the entries ([`state_bits::write_entry`]), the end bit, zero bits
//! to the byte.

use crate::codec::state_bits;
use crate::replication::server::bit_entries::BitEntries;
use crate::replication::server::client_slot::ClientSlot;
use crate::replication::server::entry_cache::EntryCache;
use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{GroupTable, NodeTable};
use crate::replication::server::snapshot::{fits, SnapshotAt, Walk, Written};
use crate::replication::shared::protocol::SNAPSHOT_TRUNCATED;
use crate::wire::{BitWriter, NetWriter};

/// Appends `client`'s snapshot of `at.tick` in the bit-packed encoding to `w` (which holds the
/// header already): what [`snapshot::write`](crate::replication::server::snapshot::write) would carry, in the same order and under the same
/// budget, with `body` as the scratch bit buffer. Allocates nothing once the buffers have
/// grown.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write(
    w: &mut NetWriter,
    body: &mut BitWriter,
    (states, nodes, groups): (&impl NodeStates, &NodeTable, &GroupTable),
    client: &mut ClientSlot,
    entries: &mut EntryCache,
    bits: &mut BitEntries,
    at: SnapshotAt,
) -> Written {
    let SnapshotAt { budget, tick, now } = at;
    // Most entries are coded against the newest snapshot the client acknowledged.
    let default_back = tick.wrapping_sub(client.stats.acknowledged_tick);
    let (left, out) = client.send.start_snapshot(tick, now, nodes);
    if let Some(acknowledged) = left {
        client.ack_window.record(acknowledged, &mut client.stats);
    }
    let flags_at = w.len();
    w.write_u8(0);
    body.clear();
    body.write_gamma(default_back);
    let keys = out.pending;
    let (before, after) = keys.split_at(keys.partition_point(|k| k.id() < *out.cursor));
    let (mut truncated, mut refused) = (false, false);
    let mut cursor = 0;
    let mut previous = None;
    let tiers = client.tiered.then_some(&client.vis);
    let walk = Walk::new((nodes, groups), out.acks, client.peer, tiers, tick);
    for &key in after.iter().chain(before) {
        let Some(wanted) = walk.entry(key) else {
            continue;
        };
        let node = wanted.node;
        let mark = body.bit_len();
        let which = (key, node, wanted.audience);
        let at = (tick, default_back);
        if !bits.append(body, (states, entries), which, wanted.acked, previous, at) {
            entries.refuse(node, key);
            refused = true;
            continue;
        }
        // The flags, the body so far, its end bit and padding.
        if !fits(budget, w.len() + (body.bit_len() + 8) / 8, out.carried) {
            let _ = body.truncate_bits(mark);
            truncated = true;
            cursor = node.net_id;
            break;
        }
        previous = Some(key.id());
        EntryCache::accept(node);
        out.carried.push(key);
    }
    state_bits::end_entries(body);
    w.write_bytes(body.finish());
    if truncated {
        w.patch(flags_at, &[SNAPSHOT_TRUNCATED]);
    }
    *out.cursor = cursor;
    if !(truncated || refused || client.tiered) {
        client.send.walked_whole(tick);
    }
    Written { truncated }
}
