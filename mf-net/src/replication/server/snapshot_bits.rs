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
use crate::replication::server::shared_body::{BodyEntry, SharedBody};
use crate::replication::server::snapshot::{fits, SnapshotAt, Walk, Written};
use crate::replication::shared::protocol::SNAPSHOT_TRUNCATED;
use crate::wire::{BitWriter, NetWriter};

/// Appends `client`'s snapshot of `at.tick` in the bit-packed encoding to `w` (which holds the
/// header already): what [`snapshot::write`](crate::replication::server::snapshot::write)
/// would carry, in the same order and under the same budget, with `body` as the scratch bit
/// buffer; a copy of the body `shared` kept, when the client is owed the same one (see
/// [`SharedBody`]). Allocates nothing once the buffers have grown.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write(
    w: &mut NetWriter,
    (body, shared): (&mut BitWriter, &mut SharedBody),
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
    let keys = out.pending;
    let (before, after) = keys.split_at(keys.partition_point(|k| k.id() < *out.cursor));
    let tiers = client.tiered.then_some(&client.vis);
    let walk = Walk::new((nodes, groups), out.acks, client.peer, tiers, tick);
    let mut list = shared.take_list();
    list.extend(after.iter().chain(before).filter_map(|&key| {
        let wanted = walk.entry(key)?;
        Some(BodyEntry {
            key,
            acked: wanted.acked,
            audience: wanted.audience,
        })
    }));
    let copied = match budget {
        0 => shared.copy(tick, default_back, &list),
        _ => None,
    };
    if let Some(bytes) = copied {
        w.write_bytes(bytes);
        out.carried.extend(list.iter().map(|e| e.key));
        shared.give_back(list);
        *out.cursor = 0;
        if !client.tiered {
            client.send.walked_whole(tick);
        }
        return Written { truncated: false };
    }
    body.clear();
    body.write_gamma(default_back);
    let (mut truncated, mut refused) = (false, false);
    let mut cursor = 0;
    let mut previous = None;
    for e in &list {
        let Some(node) = nodes.get(e.key) else {
            continue;
        };
        let mark = body.bit_len();
        let which = (e.key, node, e.audience);
        let at = (tick, default_back);
        if !bits.append(body, (states, entries), which, e.acked, previous, at) {
            entries.refuse(node, e.key);
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
        previous = Some(e.key.id());
        EntryCache::accept(node);
        out.carried.push(e.key);
    }
    state_bits::end_entries(body);
    let bytes = body.finish();
    w.write_bytes(bytes);
    match budget == 0 && !refused {
        true => shared.keep((tick, default_back), list, bytes),
        false => shared.give_back(list),
    }
    if truncated {
        w.patch(flags_at, &[SNAPSHOT_TRUNCATED]);
    }
    *out.cursor = cursor;
    if !(truncated || refused || client.tiered) {
        client.send.walked_whole(tick);
    }
    Written { truncated }
}
