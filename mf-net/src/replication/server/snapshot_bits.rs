//! A client's snapshot in the bit-packed encoding
//! ([`SnapshotEncoding::Bits`](crate::replication::SnapshotEncoding::Bits)): the same walk and
//! the same entries as [`snapshot::write`](crate::replication::server::snapshot::write), each coded against the state the client
//! acknowledged for its node ([`BitEntries`]).
//!
//! After the flags byte, a bit body: the default baseline (how many ticks before the
//! snapshot's, gamma coded), the entries ([`state_bits::write_entry`]), the end bit, zero bits
//! to the byte.

use std::iter::{Chain, Skip};
use std::slice::Iter;

use crate::codec::state_bits::{self, BodyCursor};
use crate::replication::server::bit_entries::BitEntries;
use crate::replication::server::client_slot::ClientSlot;
use crate::replication::server::entry_cache::EntryCache;
use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{GroupTable, NodeKey, NodeTable};
use crate::replication::server::send_state::{owes_whole, Outgoing};
use crate::replication::server::shared_body::{BodyEntry, SharedBody};
use crate::replication::server::shared_snapshot::copy;
use crate::replication::server::slot_table::PREFETCH_AHEAD;
use crate::replication::server::snapshot::{fits, SnapshotAt, Walk, Written};
use crate::replication::shared::protocol::SNAPSHOT_TRUNCATED;
use crate::transport::PeerId;
use crate::wire::{BitWriter, NetWriter};

/// Appends `client`'s snapshot of `at.tick` in the bit-packed encoding to `w` (which holds the
/// header already): what [`snapshot::write`](crate::replication::server::snapshot::write)
/// would carry, in the same order and under the same budget, with `body` as the scratch bit
/// buffer; a copy of the body `shared` kept, when the client is owed the same one (see
/// [`SharedBody`]), unless it is `alone` (no other client sees what it sees: it walks its
/// nodes once, coding as it goes); `scattered` where interest restricts what clients see (a
/// walk's nodes are then scattered over the table, and their coded states are asked for a few
/// entries ahead). Allocates nothing once the buffers have grown.
pub(crate) fn write(
    w: &mut NetWriter,
    (body, shared): (&mut BitWriter, &mut SharedBody),
    (states, nodes, groups): (&impl NodeStates, &NodeTable, &GroupTable),
    client: &mut ClientSlot,
    entries: &mut EntryCache,
    bits: &mut BitEntries,
    (at, alone, scattered): (SnapshotAt, bool, bool),
) -> Written {
    let SnapshotAt { budget, tick, now } = at;
    // Entries carrying `initial_only` members are this client's alone: its body is not
    // another client's, nor kept for one.
    let alone = alone || client.send.owes_whole();
    // Most entries are coded against the newest snapshot the client acknowledged.
    let default_back = tick.wrapping_sub(client.stats.acknowledged_tick);
    let (left, mut out) = client.send.start_snapshot(tick, now, nodes);
    if let Some(acknowledged) = left {
        client.ack_window.record(acknowledged, &mut client.stats);
    }
    let flags_at = w.len();
    w.write_u8(0);
    let keys = out.pending;
    // Whole snapshots walked from the first node can be another client's.
    let whole = budget == 0 && *out.cursor == 0 && !client.tiered && !alone;
    if whole {
        if let Some((bytes, list)) = shared.copy_standing((tick, default_back), out.stand()) {
            copy(w, bytes);
            carry(&mut out, list);
            client.send.walked_whole(tick);
            return Written { truncated: false };
        }
    }
    let (before, after) = keys.split_at(keys.partition_point(|k| k.id() < *out.cursor));
    let tiers = client.tiered.then_some(&client.vis);
    let walk = Walk::new(
        (nodes, groups),
        (out.acks, out.whole),
        client.peer,
        tiers,
        tick,
    );
    let order = Order {
        keys: after.iter().chain(before),
        ahead: after.iter().chain(before).skip(PREFETCH_AHEAD),
        walk: &walk,
    };
    let coder = Coder {
        states,
        nodes,
        whole: out.whole,
        tick,
        default_back,
        budget,
        scattered,
        // The flags byte, then the body.
        before: w.len(),
    };
    let (truncated, refused, cursor);
    if budget == 0 && !alone {
        // Whole snapshots: the entries first, to find a body written for another client, if
        // one for this tick and default baseline is kept; else listed as they are coded.
        let mut list = shared.take_list();
        if shared.holds(tick, default_back) {
            list.extend(order.map(|(e, ..)| e));
            if let Some(bytes) = shared.copy(tick, default_back, &list) {
                copy(w, bytes);
                carry(&mut out, &list);
                shared.give_back(list);
                *out.cursor = 0;
                if !client.tiered {
                    client.send.walked_whole(tick);
                }
                return Written { truncated: false };
            }
            // (Where each node stands in the client's list is not kept with the list: its
            // ack searches.)
            let ahead = list.iter().skip(PREFETCH_AHEAD).map(|e| Some(e.key));
            let ahead = ahead.chain(std::iter::repeat(None));
            let listed = list.iter().zip(ahead).map(|(&e, ahead)| (e, None, ahead));
            (truncated, refused, cursor) = coder.code(listed, body, (entries, bits), &mut out);
        } else {
            let listing = order.map(|(e, _, ahead)| {
                list.push(e);
                (e, None, ahead)
            });
            (truncated, refused, cursor) = coder.code(listing, body, (entries, bits), &mut out);
        }
        match refused {
            false => {
                shared.keep((tick, default_back), list, body.finish());
                let any_client = whole && !keys.iter().any(|&k| owned_by_a_client(nodes, k));
                shared.keep_stand(out.stand(), any_client);
            }
            true => shared.give_back(list),
        }
    } else {
        let placing = out.placing();
        let placed = order.map(|(e, place, ahead)| (e, placing.then_some(place), ahead));
        (truncated, refused, cursor) = coder.code(placed, body, (entries, bits), &mut out);
    }
    copy(w, body.finish());
    if truncated {
        w.patch(flags_at, &[SNAPSHOT_TRUNCATED]);
    }
    *out.cursor = cursor;
    if !(truncated || refused || client.tiered) {
        client.send.walked_whole(tick);
    }
    Written { truncated }
}

/// Records in `out` the entries of a body copied from another client's snapshot, and whether
/// one of them was a resync (coded from zero), as the walk would have.
fn carry(out: &mut Outgoing<'_>, list: &[BodyEntry]) {
    let mut resync = false;
    out.carry(list.iter().map(|e| {
        resync |= e.acked.is_none();
        e.key.id()
    }));
    if resync {
        out.carried_resync();
    }
}

/// Whether node `key`'s entries depend on the client they go to: it has owner conditions and
/// a client has authority over it.
fn owned_by_a_client(nodes: &NodeTable, key: NodeKey) -> bool {
    nodes
        .get(key)
        .is_some_and(|n| n.owner_conditions && n.authority != PeerId::SERVER)
}

/// The entries of a snapshot's walk, each with where the node stands in the client's list
/// ([`Known::seek_placed`](crate::replication::server::known::Known::seek_placed)) and the
/// key a few pending keys ahead (whose coded states the coding asks for): each
/// pending key, from the cursor on (wrapping), that the client is owed an entry for; as the
/// byte writer does, each node's record is asked for a few
/// keys before it is read. A type of its own rather than a closure, so that the walk's every
/// step is inlined where the body is coded.
struct Order<'w, 'a> {
    keys: Chain<Iter<'w, NodeKey>, Iter<'w, NodeKey>>,
    ahead: Skip<Chain<Iter<'w, NodeKey>, Iter<'w, NodeKey>>>,
    walk: &'w Walk<'a>,
}

impl Iterator for Order<'_, '_> {
    type Item = (BodyEntry, u32, Option<NodeKey>);

    #[inline(always)]
    fn next(&mut self) -> Option<(BodyEntry, u32, Option<NodeKey>)> {
        let mut ahead = None;
        for &key in self.keys.by_ref() {
            if let Some(&next) = self.ahead.next() {
                self.walk.prefetch(next);
                ahead = Some(next);
            }
            if let Some(wanted) = self.walk.entry(key) {
                let entry = BodyEntry {
                    key,
                    acked: wanted.acked,
                    audience: wanted.audience,
                };
                return Some((entry, wanted.place, ahead));
            }
        }
        None
    }
}

/// What codes one snapshot's body.
struct Coder<'a, S> {
    states: &'a S,
    nodes: &'a NodeTable,
    /// The nodes whose resync owed carries their `initial_only` members too (sorted by net
    /// id: [`Outgoing::whole`]).
    whole: &'a [NodeKey],
    tick: u32,
    default_back: u32,
    budget: usize,
    /// Whether the walk's nodes are scattered over the table (see [`write()`]).
    scattered: bool,
    /// The packet's length before the body.
    before: usize,
}

impl<S: NodeStates> Coder<'_, S> {
    /// Codes into `body` (the default baseline, each entry of `order` as far as the budget
    /// reaches, the end bit), recording each entry carried in `out` (with where the node
    /// stands in the client's list, where `order` gives it), asking for the coded states of the
    /// node a few entries ahead, where `order` gives one and the walk is scattered (the head of
    /// each node's coded states was then the walk's costliest wait; a walk in order reads them
    /// in order, which the processor brings in by itself). Returns whether the budget cut it
    /// short, whether an entry was refused (too large for any client), and the net id to
    /// continue from (0: none).
    fn code(
        &self,
        order: impl Iterator<Item = (BodyEntry, Option<u32>, Option<NodeKey>)>,
        body: &mut BitWriter,
        (entries, bits): (&mut EntryCache, &mut BitEntries),
        out: &mut Outgoing<'_>,
    ) -> (bool, bool, u32) {
        body.clear();
        body.write_gamma(self.default_back);
        let (mut truncated, mut refused, mut cursor) = (false, false, 0);
        let mut so_far = BodyCursor::default();
        for (e, place, ahead) in order {
            if let Some(ahead) = ahead.filter(|_| self.scattered) {
                bits.prefetch_coded(ahead);
            }
            let Some(node) = self.nodes.get(e.key) else {
                continue;
            };
            // Where the entry starts, for a budget to cut it (none: no cut).
            let mark = (self.budget != 0).then(|| body.bit_len());
            let which = (e.key, node, e.audience);
            let appended = match e.acked.is_none() && owes_whole(self.whole, e.key) {
                false => {
                    let at = (self.tick, self.default_back);
                    bits.append(body, self.states, which, e.acked, &so_far, at)
                }
                true => bits.append_whole(body, self.states, which, &so_far, self.default_back),
            };
            if !appended {
                entries.refuse(node, e.key);
                refused = true;
                continue;
            }
            // The packet so far, the body so far, its end bit and padding.
            if let Some(mark) = mark.filter(|_| {
                let len = self.before + (body.bit_len() + 8) / 8;
                !fits(self.budget, len, out.carried)
            }) {
                let _ = body.truncate_bits(mark);
                truncated = true;
                cursor = node.net_id;
                break;
            }
            so_far.advance(e.key.id(), node.type_number());
            EntryCache::accept(node);
            out.carry_one(e.key.id(), place);
            if e.acked.is_none() {
                out.carried_resync();
            }
        }
        state_bits::end_entries(body);
        (truncated, refused, cursor)
    }
}
