//! Building a client's snapshot on the server: the walk over the nodes from the client's
//! cursor, each entry carrying what changed since the client's acknowledged tick for it, within
//! the byte budget.

use std::cell::Cell;
use std::time::Duration;

use crate::replication::server::client_slot::ClientSlot;
use crate::replication::server::entry_cache::EntryCache;
use crate::replication::server::known::Known;
use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{GroupKey, GroupTable, NetNode, NodeKey, NodeTable};
use crate::replication::server::send_state::{owes_whole, wants};
use crate::replication::server::slot_table::PREFETCH_AHEAD;
use crate::replication::server::vis_table::VisTable;
use crate::replication::shared::protocol::SNAPSHOT_TRUNCATED;
use crate::replication::Audience;
use crate::transport::PeerId;
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
/// pending nodes, [refreshed](crate::replication::server::send_state::SendState::refresh) for this tick, the only
/// ones it walks — and whose group is due this tick (its update period), in net id order
/// starting at the client's cursor (wrapping) and stopping before the byte budget (`budget`,
/// 0 = unlimited, counting the whole packet) would be exceeded, then the terminating 0.
/// Entries come from `entries`, this tick's shared cache, asked for with the client's since
/// class: each distinct one is encoded once (ahead, by [`prepare`] and, under interest,
/// [`prepare_changed`], or for the first client that needs it) and copied into every packet.
/// A resync that carries the node's `initial_only` members too (the client asked for the
/// state again:
/// [`SendState::owe_whole_resync`](crate::replication::server::send_state::SendState::owe_whole_resync))
/// is the spawn's state, written straight into this client's packet and never cached.
/// Records the carried
/// nodes in the ring entry of `tick`, after recording whether the snapshot that entry held left
/// the ring acknowledged (the client's unacknowledged window). Allocates nothing once the
/// ring's node lists, `w` and `entries` have grown.
pub(crate) fn write(
    w: &mut NetWriter,
    states: &impl NodeStates,
    nodes: &NodeTable,
    groups: &GroupTable,
    client: &mut ClientSlot,
    entries: &mut EntryCache,
    at: SnapshotAt,
) -> Written {
    let SnapshotAt { budget, tick, now } = at;
    let (left, mut out) = client.send.start_snapshot(tick, now, nodes);
    if let Some(acknowledged) = left {
        client.ack_window.record(acknowledged, &mut client.stats);
    }
    let flags_at = w.len();
    w.write_u8(0);
    // From the first pending node at or after the cursor (the first one if none is), wrapping.
    let keys = out.pending;
    let (before, after) = keys.split_at(keys.partition_point(|k| k.id() < *out.cursor));
    let mut truncated = false;
    let mut refused = false;
    let mut cursor = 0;
    let tiers = client.tiered.then_some(&client.vis);
    if budget == 0 {
        out.acks.prefetch_ids(keys.len());
    }
    let walk = Walk::new(
        (nodes, groups),
        (out.acks, out.whole),
        client.peer,
        tiers,
        tick,
    );
    let placing = out.placing();
    let mut ahead = after.iter().chain(before).skip(PREFETCH_AHEAD);
    for &key in after.iter().chain(before) {
        if let Some(&next) = ahead.next() {
            walk.prefetch(next);
        }
        let Some(Wanted {
            node,
            since,
            audience,
            acked,
            place,
            whole,
        }) = walk.entry(key)
        else {
            continue;
        };
        let so_far = (budget, out.carried.as_slice());
        let written = if whole {
            // The client's alone: written straight, never cached for another client.
            let state = |w: &mut NetWriter| states.write_full_for(node, audience, w);
            append_entry(w, entries, (key, since, audience, false), state, so_far)
        } else {
            let state = |w: &mut NetWriter| states.write_since_for(node, since, audience, w);
            let share = entries.sharing();
            append_entry(w, entries, (key, since, audience, share), state, so_far)
        };
        let Some(fits) = written else {
            entries.refuse(node, key);
            refused = true;
            continue;
        };
        if !fits {
            truncated = true;
            cursor = node.net_id;
            break;
        }
        EntryCache::accept(node);
        out.carry_one(key.id(), placing.then_some(place));
        if acked.is_none() {
            out.carried_resync();
        }
    }
    w.write_var_u32(0);
    if truncated {
        w.patch(flags_at, &[SNAPSHOT_TRUNCATED]);
    }
    *out.cursor = cursor;
    if !(truncated || refused || client.tiered) {
        client.send.walked_whole(tick);
    }
    Written { truncated }
}

/// Appends to `w` the snapshot entry of the node `key` whose state `state` writes, for a
/// client whose `since` class is `since` and who receives it as `audience`: copied from this
/// tick's cache `entries` (encoded there on the first request) if `share`, else written
/// straight. Returns `None`, writing nothing, if no client could read the entry (see
/// [`EntryCache::refuse`]); else whether it fits the budget with the entries `carried` so far
/// (see [`fits`]), written only if it does.
#[inline(always)]
fn append_entry(
    w: &mut NetWriter,
    entries: &mut EntryCache,
    (key, since, audience, share): (NodeKey, Option<u32>, Audience, bool),
    state: impl FnOnce(&mut NetWriter),
    (budget, carried): (usize, &[u32]),
) -> Option<bool> {
    if share {
        let range = entries.range(key, since, audience, state);
        if range.is_empty() {
            return None;
        }
        let fits = fits(budget, w.len() + range.len(), carried);
        if fits {
            w.write_bytes(entries.bytes(range));
        }
        return Some(fits);
    }
    let entry_at = w.len();
    if !entries.write_direct(w, key, state) {
        return None;
    }
    let fits = fits(budget, w.len(), carried);
    if !fits {
        w.truncate(entry_at);
    }
    Some(fits)
}

/// How many entries [`prepare`] and [`prepare_changed`] encode in one pass per column; under
/// a byte budget, which a snapshot reaches after a few dozen entries, [`prepare`] encodes
/// [`PREPARED_PER_BUDGETED_PASS`], checking the budget after each pass.
const PREPARED_PER_PASS: usize = 256;
const PREPARED_PER_BUDGETED_PASS: usize = 32;

/// Encodes into `entries`, in passes of one dynamic call per column (of up to
/// [`PREPARED_PER_PASS`] entries), the
/// entries `client`'s snapshot of `at.tick` will carry (after its
/// [refresh](crate::replication::server::send_state::SendState::refresh)), as far as the byte budget reaches, so
/// that its snapshot, and those of the clients that acknowledged what it did, find them
/// encoded. Call it once per tick, after [`EntryCache::begin`]; an entry no prepared
/// snapshot carries is encoded on its own when a snapshot needs it.
pub(crate) fn prepare(
    states: &impl NodeStates,
    nodes: &NodeTable,
    groups: &GroupTable,
    client: &ClientSlot,
    entries: &mut EntryCache,
    at: SnapshotAt,
) {
    let (pending, acks, cursor) = client.send.pending_for(nodes);
    let tiers = client.tiered.then_some(&client.vis);
    let whole = client.send.whole_resyncs();
    let walk = Walk::new((nodes, groups), (acks, whole), client.peer, tiers, at.tick);
    let (before, after) = pending.split_at(pending.partition_point(|k| k.id() < cursor));
    let per_pass = match at.budget {
        0 => PREPARED_PER_PASS,
        _ => PREPARED_PER_BUDGETED_PASS,
    };
    let mut batch = entries.batch();
    for &key in after.iter().chain(before) {
        // An entry with `initial_only` members is written for its snapshot alone.
        let Some(wanted) = walk.entry(key).filter(|w| !w.whole) else {
            continue;
        };
        batch.push(key, wanted.node, wanted.since, wanted.audience);
        if batch.len() == per_pass {
            batch.write(states);
            if at.budget != 0 && batch.bytes() >= at.budget {
                return;
            }
        }
    }
    batch.write(states);
}

/// Encodes into `entries`, in passes of one dynamic call per column, the entries of the nodes
/// `changed` at this tick's capture that `seen` says a client sees, for a client whose `since`
/// for each is `acked` (the tick most clients acknowledged), as a snapshot's walk would ask
/// for them: in the order of the capture, the shadow states are read in a stream rather than
/// one cache miss each as the clients' walks ask. Nodes whose entries depend on the client
/// (owner conditions) are left to the walks.
pub(crate) fn prepare_changed(
    states: &impl NodeStates,
    (nodes, changed): (&NodeTable, &[NodeKey]),
    acked: u32,
    entries: &mut EntryCache,
    seen: impl Fn(&NetNode) -> bool,
) {
    let mut batch = entries.batch();
    for &key in changed {
        let Some(node) = nodes.get(key) else {
            continue;
        };
        if node.has_state() && !node.owner_conditions && seen(node) {
            let audience = Audience::NonOwner;
            batch.push(key, node, node.since_class(Some(acked), audience), audience);
            if batch.len() == PREPARED_PER_PASS {
                batch.write(states);
            }
        }
    }
    batch.write(states);
}

/// What a snapshot entry of one node is written with.
pub(super) struct Wanted<'a> {
    pub(super) node: &'a NetNode,
    /// The `since` of the client's class ([`NetNode::since_class`]).
    pub(super) since: Option<u32>,
    pub(super) audience: Audience,
    /// The client's own `since` for the node ([`NodeSend::since`](super::known::NodeSend::since)).
    pub(super) acked: Option<u32>,
    /// Where the node stands in the client's list ([`Known::seek_placed`]).
    pub(super) place: u32,
    /// Whether the entry is a resync that carries the node's `initial_only` members too
    /// ([`SendState::owe_whole_resync`](super::send_state::SendState::owe_whole_resync)):
    /// written for this client alone.
    pub(super) whole: bool,
}

/// What decides which nodes a client's snapshot of `tick` carries.
pub(super) struct Walk<'a> {
    nodes: &'a NodeTable,
    groups: &'a GroupTable,
    acks: &'a Known,
    /// The nodes whose resync owed carries their `initial_only` members too (sorted by net
    /// id: [`SendState::whole_resyncs`](super::send_state::SendState::whole_resyncs)).
    whole: &'a [NodeKey],
    /// Where the walk stands in `acks` (see [`Known::seek`]).
    at: Cell<usize>,
    peer: PeerId,
    /// The client's update tiers, if it has any.
    tiers: Option<&'a VisTable>,
    tick: u32,
}

impl<'a> Walk<'a> {
    /// A walk over `acks` (the client's nodes, and those of them whose resync owed carries
    /// their `initial_only` members too, `whole`) for `peer`, with its update `tiers` if it
    /// has any, for a snapshot of `tick`.
    pub(super) fn new(
        (nodes, groups): (&'a NodeTable, &'a GroupTable),
        (acks, whole): (&'a Known, &'a [NodeKey]),
        peer: PeerId,
        tiers: Option<&'a VisTable>,
        tick: u32,
    ) -> Self {
        Self {
            nodes,
            groups,
            acks,
            whole,
            at: Cell::new(0),
            peer,
            tiers,
            tick,
        }
    }

    /// Asks the processor for what [`entry`](Self::entry) will read of `key`.
    #[inline(always)]
    pub(super) fn prefetch(&self, key: NodeKey) {
        self.nodes.prefetch(key);
    }

    /// The entry the snapshot writes for the node `key`, or `None`: it is gone, its group's
    /// update period skips this tick (its changes wait for a later one), or it has nothing to
    /// send (a pending list the last refresh kept whole may hold it).
    #[inline(always)]
    pub(super) fn entry(&self, key: NodeKey) -> Option<Wanted<'a>> {
        let mut at = self.at.get();
        let found = self.acks.seek_placed(&mut at, key);
        self.at.set(at);
        let (node, (ack, place)) = (self.nodes.get(key)?, found?);
        if let Some(vis) = self.tiers {
            if !due(self.groups, vis, node.group, self.tick) {
                return None;
            }
        }
        if !wants(node, &ack, self.peer) {
            return None;
        }
        // A type without owner conditions writes the same bytes for every audience: one entry
        // serves owners and others alike.
        let audience = match node.owner_conditions {
            true => node.audience_of(self.peer),
            false => Audience::NonOwner,
        };
        let acked = ack.since();
        Some(Wanted {
            node,
            since: node.since_class(acked, audience),
            audience,
            acked,
            place,
            whole: acked.is_none() && owes_whole(self.whole, key),
        })
    }
}

/// Whether a packet of `len` bytes with the entries so far (`carried`), plus the terminator, fits
/// `budget` (0: unlimited). An entry larger than the whole budget still goes out alone, or it
/// would never be sent.
#[inline]
pub(super) fn fits(budget: usize, len: usize, carried: &[u32]) -> bool {
    budget == 0 || len < budget || carried.is_empty()
}

/// Whether the nodes of group `g` go into a snapshot of `tick` (its update period; a node whose
/// group is gone stands alone, and is due).
fn due(groups: &GroupTable, vis: &VisTable, g: GroupKey, tick: u32) -> bool {
    groups.get(g).is_none() || vis.get(g).map_or(true, |v| v.due(tick))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{prepare, prepare_changed, write, SnapshotAt, PREPARED_PER_BUDGETED_PASS};
    use crate::replication::server::client_slot::ClientSlot;
    use crate::replication::server::entry_cache::EntryCache;
    use crate::replication::server::node_table::{GroupTable, NetNode, NodeKey, NodeTable};
    use crate::replication::server::test_support::{node, FakeState, FakeStates};
    use crate::replication::shared::protocol::SNAPSHOT_TRUNCATED;
    use crate::replication::Audience;
    use crate::transport::PeerId;
    use crate::wire::NetWriter;

    /// Nodes 1 to `n`, each one member of 4 bytes stamped `tick` (entries of 7 bytes).
    fn table(n: u32, tick: u32) -> (NodeTable, FakeStates, Vec<NodeKey>) {
        let mut table = NodeTable::default();
        let mut states = FakeStates::default();
        let keys = (1..=n)
            .map(|id| {
                let state = FakeState::new(&[tick], 4, false);
                let record = node(id, Some(FakeState::new(&[tick], 4, false)), PeerId::SERVER);
                states.0.insert(id, state);
                table.push(id, record)
            })
            .collect();
        (table, states, keys)
    }

    /// A client `peer` that joined at tick 5.
    fn client(peer: u64, table: &NodeTable) -> ClientSlot {
        let mut c = ClientSlot::new(
            PeerId(peer),
            Duration::ZERO,
            crate::replication::shared::protocol::MIN_SNAPSHOT_MEMORY,
        );
        c.ready = true;
        c.send.join(table.keys().iter().copied(), 5, table);
        c
    }

    /// Writes `client`'s snapshot of `tick` under `budget`; returns its bytes.
    fn snapshot(
        (table, states): (&NodeTable, &FakeStates),
        client: &mut ClientSlot,
        entries: &mut EntryCache,
        tick: u32,
        budget: usize,
    ) -> Vec<u8> {
        let mut w = NetWriter::with_capacity(64);
        let at = SnapshotAt {
            budget,
            tick,
            now: Duration::ZERO,
        };
        write(
            &mut w,
            states,
            table,
            &GroupTable::default(),
            client,
            entries,
            at,
        );
        w.into_vec()
    }

    /// The entry bytes of node `id` with its one member.
    fn entry(id: u8) -> [u8; 7] {
        [id, 5, 1, 0, 0, 0, 0]
    }

    /// The bytes of a snapshot with `flags` carrying the nodes `ids`, in that order.
    fn expected(flags: u8, ids: impl IntoIterator<Item = u8>) -> Vec<u8> {
        let mut bytes = vec![flags];
        ids.into_iter().for_each(|id| bytes.extend(entry(id)));
        bytes.push(0);
        bytes
    }

    /// What a budget fits: flags, three entries and the terminator.
    const THREE_ENTRIES: usize = 1 + 3 * 7 + 1;

    /// A client (writing straight into its packets) whose `pending` nodes changed at tick 6
    /// and who acknowledged the snapshot of tick 6, cut by the budget after nodes 1 to 3.
    fn kept_behind(
        (table, states): (&NodeTable, &FakeStates),
        pending: &[NodeKey],
    ) -> (ClientSlot, EntryCache) {
        let mut c = client(2, table);
        let mut entries = EntryCache::default();
        entries.begin(table.slot_count(), false);
        c.send.refresh(pending, table, c.peer);
        let cut = snapshot((table, states), &mut c, &mut entries, 6, THREE_ENTRIES);
        assert_eq!(cut, expected(SNAPSHOT_TRUNCATED, 1..=3));
        assert!(c.send.ack(6, Duration::ZERO).is_some());
        (c, entries)
    }

    /// The moment of a snapshot of `tick` under `budget`.
    fn at(tick: u32, budget: usize) -> SnapshotAt {
        SnapshotAt {
            budget,
            tick,
            now: Duration::ZERO,
        }
    }

    /// Clients 2 and 3, refreshed for `changed`, and a tick's shared entry cache.
    fn two_clients(table: &NodeTable, changed: &[NodeKey]) -> (ClientSlot, ClientSlot, EntryCache) {
        let (mut a, mut b) = (client(2, table), client(3, table));
        let mut entries = EntryCache::default();
        entries.begin(table.slot_count(), true);
        for c in [&mut a, &mut b] {
            c.send.refresh(changed, table, c.peer);
        }
        (a, b, entries)
    }

    #[test]
    fn the_first_snapshots_entries_are_encoded_ahead_and_every_snapshot_finds_them() {
        let (table, states, keys) = table(20, 6);
        let (mut a, mut b, mut entries) = two_clients(&table, &keys);
        let groups = GroupTable::default();
        prepare(&states, &table, &groups, &a, &mut entries, at(6, 0));
        assert_eq!(entries.encoded(), 20);
        let first = snapshot((&table, &states), &mut a, &mut entries, 6, 0);
        assert_eq!(first, expected(0, 1..=20));
        let second = snapshot((&table, &states), &mut b, &mut entries, 6, 0);
        assert_eq!(second, first);
        assert_eq!(entries.encoded(), 20, "nothing encoded twice");
    }

    #[test]
    fn changed_entries_some_client_sees_are_encoded_ahead_once_and_every_snapshot_finds_them() {
        let (table, states, keys) = table(20, 6);
        let (mut a, mut b, mut entries) = two_clients(&table, &keys);
        // Node 3 is seen by no client: left out.
        let seen = |n: &NetNode| n.net_id != 3;
        prepare_changed(&states, (&table, &keys), 5, &mut entries, seen);
        assert_eq!(entries.encoded(), 19);
        prepare_changed(&states, (&table, &keys), 5, &mut entries, seen);
        let groups = GroupTable::default();
        prepare(&states, &table, &groups, &a, &mut entries, at(6, 0));
        assert_eq!(entries.encoded(), 20, "only node 3 encoded again");
        let first = snapshot((&table, &states), &mut a, &mut entries, 6, 0);
        assert_eq!(first, expected(0, 1..=20));
        let second = snapshot((&table, &states), &mut b, &mut entries, 6, 0);
        assert_eq!(second, first);
        assert_eq!(entries.encoded(), 20, "nothing encoded twice");
    }

    #[test]
    fn encoding_ahead_stops_at_the_pass_that_reaches_the_budget() {
        let (table, states, keys) = table(1000, 6);
        let mut c = client(2, &table);
        let mut entries = EntryCache::default();
        entries.begin(table.slot_count(), true);
        c.send.refresh(&keys, &table, c.peer);
        let groups = GroupTable::default();
        // Entries of 7 or 8 bytes: six passes of 32 reach 1200 bytes.
        prepare(&states, &table, &groups, &c, &mut entries, at(6, 1200));
        assert_eq!(entries.encoded(), 6 * PREPARED_PER_BUDGETED_PASS);
        let cut = snapshot((&table, &states), &mut c, &mut entries, 6, 1200);
        assert!(cut.len() <= 1200 && cut[0] == SNAPSHOT_TRUNCATED);
        assert_eq!(entries.encoded(), 6 * PREPARED_PER_BUDGETED_PASS);
        entries.begin(table.slot_count(), true);
        prepare(&states, &table, &groups, &c, &mut entries, at(7, 0));
        assert_eq!(entries.encoded(), 1000);
    }

    #[test]
    fn an_idle_tick_writes_only_the_flags_and_the_terminator() {
        let (table, states, _) = table(100, 0);
        let mut c = client(2, &table);
        c.send.refresh(&[], &table, c.peer);
        let mut entries = EntryCache::default();
        entries.begin(table.slot_count(), true);
        assert_eq!(
            snapshot((&table, &states), &mut c, &mut entries, 6, 0),
            [0, 0]
        );
        assert_eq!(entries.encoded(), 0);
    }

    #[test]
    fn a_lone_client_gets_the_same_bytes_written_straight_into_its_packet() {
        let (table, states, keys) = table(20, 6);
        let (mut shared, mut lone) = (client(2, &table), client(2, &table));
        for c in [&mut shared, &mut lone] {
            c.send.refresh(&keys, &table, c.peer);
        }
        let mut entries = EntryCache::default();
        entries.begin(table.slot_count(), true);
        let expected = snapshot((&table, &states), &mut shared, &mut entries, 6, 0);
        entries.begin(table.slot_count(), false);
        let direct = snapshot((&table, &states), &mut lone, &mut entries, 6, 0);
        assert_eq!(direct, expected);
        // Each encoded once, straight into the packet: nothing cached to find again.
        assert_eq!(entries.encoded(), 20);
        let mut found = 0;
        let _ = entries.range(keys[0], Some(5), Audience::NonOwner, |_| found += 1);
        assert_eq!(found, 1, "not cached");
    }

    #[test]
    fn a_pending_list_kept_whole_still_writes_only_what_the_client_lacks() {
        let (table, states, keys) = table(20, 6);
        let mut c = client(2, &table);
        let mut entries = EntryCache::default();
        entries.begin(table.slot_count(), false);
        c.send.refresh(&keys, &table, c.peer);
        let first = snapshot((&table, &states), &mut c, &mut entries, 6, 0);
        assert_eq!(first.len(), 1 + 20 * 7 + 1);
        assert!(c.send.ack(6, Duration::ZERO).is_some());
        // Every node "changed" again, with the pending list holding every node: the refresh
        // keeps it whole, and the writer passes over the nodes acknowledged since.
        c.send.refresh(&keys, &table, c.peer);
        assert_eq!(c.send.pending().len(), 20);
        assert_eq!(
            snapshot((&table, &states), &mut c, &mut entries, 7, 0),
            [0, 0]
        );
    }

    #[test]
    fn a_client_the_budget_keeps_behind_walks_the_table_then_rebuilds_its_list() {
        let (table, states, keys) = table(20, 6);
        let (mut c, mut entries) = kept_behind((&table, &states), &keys);
        // Behind: the refresh leaves the list alone, and the snapshot walks the node table on
        // from node 4 (nodes 1 to 3, acknowledged, would be passed over).
        c.send.refresh(&[], &table, c.peer);
        let next = snapshot((&table, &states), &mut c, &mut entries, 7, THREE_ENTRIES);
        assert_eq!(next, expected(SNAPSHOT_TRUNCATED, 4..=6));
        // Caught up: everything fits (7 to 20, then 4 to 6 again, not yet acknowledged).
        c.send.refresh(&[], &table, c.peer);
        let rest = snapshot((&table, &states), &mut c, &mut entries, 8, 0);
        assert_eq!(rest, expected(0, (7..=20).chain(4..=6)));
        // The next refresh rebuilds the list from the table: what the unacknowledged
        // snapshot of tick 8 carried and the acknowledged one of tick 7 did not.
        assert!(c.send.ack(7, Duration::ZERO).is_some());
        c.send.refresh(&[], &table, c.peer);
        assert_eq!(c.send.pending(), &keys[6..]);
        assert!(c.send.ack(8, Duration::ZERO).is_some());
        c.send.refresh(&[], &table, c.peer);
        assert!(c.send.pending().is_empty());
    }

    #[test]
    fn clients_share_each_entry_and_a_cut_snapshot_continues_at_the_next_node() {
        let (table, states, keys) = table(20, 6);
        let (mut a, mut b, mut entries) = two_clients(&table, &keys);
        // Flags, three entries and the terminator fit: the fourth entry is cut.
        let cut = snapshot((&table, &states), &mut a, &mut entries, 6, THREE_ENTRIES);
        assert_eq!(cut, expected(SNAPSHOT_TRUNCATED, 1..=3));
        // The other client gets all twenty, sharing the four entries encoded for the first.
        let whole = snapshot((&table, &states), &mut b, &mut entries, 6, 0);
        assert_eq!(whole.len(), 1 + 20 * 7 + 1);
        assert_eq!(whole[1..8], entry(1));
        assert_eq!(entries.encoded(), 20);
        // The next snapshot of the first client starts where its last one stopped.
        entries.begin(table.slot_count(), true);
        a.send.refresh(&[], &table, a.peer);
        let next = snapshot((&table, &states), &mut a, &mut entries, 7, THREE_ENTRIES);
        assert_eq!(next[1..8], entry(4));
    }
}
