//! One snapshot written once per tick and sent to every client that stands where it was
//! written from.
//!
//! Clients that acknowledged the same snapshots, as clients at the same distance from the
//! server mostly do, are owed the same entries: the same pending nodes, each written with the
//! same `since`. Their snapshots are then the same bytes, but for the nodes with owner
//! conditions that one of them has authority over. [`SharedSnapshot`] writes those bytes once,
//! from one client's send state, as a client that owns nothing receives them, remembering
//! where each pending node stands. A client whose pending nodes and stands are the same gets a
//! copy, with its own entry in place of each node it owns that has owner conditions; any other
//! client's snapshot is [written](crate::replication::server::snapshot::write) for it alone.
//!
//! Only snapshots without a byte budget and without update tiers are shared: under a budget,
//! a snapshot carries a few dozen entries, which the tick's [`EntryCache`] shares already.

use crate::replication::server::client_slot::ClientSlot;
use crate::replication::server::entry_cache::EntryCache;
use crate::replication::server::kept_stand::KeptStand;
use crate::replication::server::known::NodeSend;
use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{since_class, NetNode, NodeKey, NodeTable};
use crate::replication::server::send_state::{wants, wants_as};
use crate::replication::server::snapshot::{SnapshotAt, Written};
use crate::replication::Audience;
use crate::transport::PeerId;
use crate::wire::NetWriter;

/// How a client stands with a pending node, as far as its entry goes: `None` for no entry
/// (the client does not have the node, or it is gone), else the `since` its entry shares its
/// bytes with ([`NetNode::since_class`](crate::replication::server::node_table::NetNode::since_class)).
type Stand = Option<Option<u32>>;

/// The node's change ticks for clients that do not own it: the newest, and how far before it
/// the one before is (see [`since_class`]).
type Changes = (u32, u16);

fn stand(ack: Option<NodeSend>, (last, gap): Changes) -> Stand {
    ack.map(|a| since_class(a.since(), last, gap))
}

/// This tick's shared snapshot (see the [module documentation](self)). Allocates nothing
/// once its buffers have grown.
#[derive(Default)]
pub(crate) struct SharedSnapshot {
    /// Whether it holds this tick's snapshot.
    ready: bool,
    /// How many snapshots it was written as since it was built.
    uses: u32,
    /// How many of those the transport accepted.
    sent: u32,
    /// The pending nodes it was written from, and how the client stood with each.
    pending: Vec<NodeKey>,
    /// That client's lists, if it had a stand to keep: a client whose lists equal them
    /// stands alike without a look at each node.
    stand: KeptStand,
    stands: Vec<Stand>,
    changes: Vec<Changes>,
    /// After each pending node: how far `entries` and `carried` reach.
    ends: Vec<(u32, u32)>,
    /// The pending nodes with owner conditions that a client has authority over: their
    /// position and owner.
    owned: Vec<(u32, PeerId)>,
    /// Whether it carries an entry for every pending node with something to send (none was
    /// refused), and whether one of them was owed a resync (written with no `since`).
    whole: bool,
    resyncs: bool,
    /// The entries, back to back, and the nodes they are for.
    entries: NetWriter,
    /// Their net ids.
    carried: Vec<u32>,
}

impl SharedSnapshot {
    /// A new tick: holds nothing.
    pub(crate) fn clear(&mut self) {
        self.ready = false;
        self.sent = 0;
    }

    /// A snapshot written as a copy of it was sent.
    pub(crate) fn note_sent(&mut self) {
        self.sent += 1;
    }

    /// How many snapshots sent as copies of it count as shared: those sent, if it was written
    /// as at least two snapshots (a snapshot built from one client and used by that client
    /// alone was not shared); then forgets them. Call it before building it anew and after
    /// the tick's last snapshot.
    pub(crate) fn take_shared(&mut self) -> u64 {
        let shared = if self.uses >= 2 { self.sent } else { 0 };
        self.sent = 0;
        u64::from(shared)
    }

    /// Whether to write it (anew) from `client` (which [`fits`](Self::fits)): it holds nothing
    /// yet this tick, or it was written from a client that stands where no other one did (used
    /// at most once) and `client` stands elsewhere. A first client that stands apart (a group it
    /// does not see, a resync) does not keep the others from sharing theirs.
    pub(crate) fn rewrite_for(&self, client: &ClientSlot, nodes: &NodeTable) -> bool {
        !self.ready || (self.uses < 2 && !self.stands_as(client, nodes))
    }

    /// Whether `client`'s snapshot can be shared: no update tiers, and a walk from the first
    /// pending node (after its [refresh](crate::replication::server::send_state::SendState::refresh)).
    pub(crate) fn fits(client: &ClientSlot) -> bool {
        !client.tiered && client.send.walks_from_start()
    }

    /// Writes this tick's shared snapshot from `client`'s send state (which
    /// [`fits`](Self::fits)), each entry taken from `cache`.
    pub(crate) fn build(
        &mut self,
        states: &impl NodeStates,
        nodes: &NodeTable,
        client: &ClientSlot,
        cache: &mut EntryCache,
    ) {
        self.pending.clear();
        self.stands.clear();
        self.changes.clear();
        self.ends.clear();
        self.owned.clear();
        self.entries.clear();
        self.carried.clear();
        self.uses = 0;
        (self.whole, self.resyncs) = (true, false);
        let (pending, acks, _) = client.send.pending_for(nodes);
        self.pending.extend_from_slice(pending);
        self.stand.keep(client.send.stand());
        let mut at = 0;
        for (position, &key) in (0u32..).zip(pending) {
            let (ack, node) = (acks.seek(&mut at, key), nodes.get(key));
            let changes = node.map_or((0, 0), |n| (n.last_changed.last[1], n.last_changed.gap[1]));
            self.changes.push(changes);
            self.stands.push(stand(ack, changes));
            if let (Some(node), Some(ack)) = (node, ack) {
                if node.owner_conditions && node.authority != PeerId::SERVER {
                    self.owned.push((position, node.authority));
                }
                let audience = Audience::NonOwner;
                if wants_as(node, &ack, audience) {
                    let since = node.since_class(ack.since(), audience);
                    let (w, carried) = (&mut self.entries, &mut self.carried);
                    self.whole &= append(states, cache, (key, node, since, audience), w, carried);
                    self.resyncs |= ack.since().is_none();
                }
            }
            self.ends
                .push((len_u32(self.entries.len()), len_u32(self.carried.len())));
        }
        self.ready = true;
    }

    /// Writes `client`'s snapshot of `at.tick` to `w` (which holds the header already) as a
    /// copy of the shared one, if the client stands where it was written from (see the
    /// [module documentation](self)); returns `None`, writing nothing, if not.
    pub(crate) fn write(
        &mut self,
        w: &mut NetWriter,
        states: &impl NodeStates,
        nodes: &NodeTable,
        client: &mut ClientSlot,
        cache: &mut EntryCache,
        at: SnapshotAt,
    ) -> Option<Written> {
        if !(self.ready && at.budget == 0 && Self::fits(client) && self.stands_as(client, nodes)) {
            return None;
        }
        let peer = client.peer;
        let (left, mut out) = client.send.start_snapshot(at.tick, at.now, nodes);
        if let Some(acknowledged) = left {
            client.ack_window.record(acknowledged, &mut client.stats);
        }
        w.write_u8(0);
        let (mut whole, mut resyncs) = (self.whole, self.resyncs);
        let (mut entries_at, mut carried_at) = (0, 0);
        for &(position, owner) in &self.owned {
            if owner != peer {
                continue;
            }
            let (entries_end, carried_end) = self.ends_before(position);
            copy(w, &self.entries.as_slice()[entries_at..entries_end]);
            out.carried
                .extend_from_slice(&self.carried[carried_at..carried_end]);
            // The client's own node: its entry for its owner.
            let key = self.pending[position as usize];
            if let (Some(node), Some(ack)) = (nodes.get(key), out.acks.get(key)) {
                if wants(node, &ack, peer) {
                    let audience = Audience::Owner;
                    let since = node.since_class(ack.since(), audience);
                    whole &= append(states, cache, (key, node, since, audience), w, out.carried);
                    resyncs |= ack.since().is_none();
                }
            }
            let (entries_end, carried_end) = self.ends[position as usize];
            (entries_at, carried_at) = (entries_end as usize, carried_end as usize);
        }
        copy(w, &self.entries.as_slice()[entries_at..]);
        // Noted as carrying every node with state the client has, if it did (and nothing
        // was listed before), without its ids.
        let rest = &self.carried[carried_at..];
        match out.carried.is_empty() {
            true => out.carry(rest.iter().copied()),
            false => out.carried.extend_from_slice(rest),
        }
        w.write_var_u32(0);
        *out.cursor = 0;
        if resyncs {
            out.carried_resync();
        }
        // What a walk of the client's own would have carried, noted so, that its ack marks no
        // node; but for a snapshot that carried every node, whose ack marks none anyway, and
        // whose pending list (every node) stays as it is rather than settle and be made again.
        if whole && !out.carries_all() {
            client.send.walked_whole(at.tick);
        }
        self.uses += 1;
        Some(Written { truncated: false })
    }

    /// Whether `client` has the same pending nodes as the shared snapshot was written from,
    /// standing the same with each.
    fn stands_as(&self, client: &ClientSlot, nodes: &NodeTable) -> bool {
        if self.stand.matches(client.send.stand()) {
            return true;
        }
        let (pending, acks, _) = client.send.pending_for(nodes);
        let mut at = 0;
        pending == self.pending.as_slice()
            && pending
                .iter()
                .zip(self.stands.iter().zip(&self.changes))
                .all(|(&key, (&s, &changes))| stand(acks.seek(&mut at, key), changes) == s)
    }

    /// How far the entries and carried nodes reach before the pending node at `position`.
    fn ends_before(&self, position: u32) -> (usize, usize) {
        match position.checked_sub(1) {
            Some(p) => {
                let (e, c) = self.ends[p as usize];
                (e as usize, c as usize)
            }
            None => (0, 0),
        }
    }
}

/// Appends the entry of the node `key` (`node`) written with `since` for `audience`, taken
/// from `cache` (encoded there if it is not yet), to `w`, and the node to `carried`; an entry
/// no client could read is refused instead ([`EntryCache::refuse`]). Returns whether it was
/// appended.
fn append(
    states: &impl NodeStates,
    cache: &mut EntryCache,
    (key, node, since, audience): (NodeKey, &NetNode, Option<u32>, Audience),
    w: &mut NetWriter,
    carried: &mut Vec<u32>,
) -> bool {
    let state = |w: &mut NetWriter| states.write_since_for(node, since, audience, w);
    let range = cache.range(key, since, audience, state);
    if range.is_empty() {
        cache.refuse(node, key);
        return false;
    }
    EntryCache::accept(node);
    w.write_bytes(cache.bytes(range));
    carried.push(key.id());
    true
}

/// The largest piece [`copy`] copies at once.
const PIECE: usize = 2048;

/// Appends `bytes` to `w` in pieces of at most [`PIECE`] bytes. One long copy is made with
/// `rep movsb`, which some processors run several times slower than vector moves when the
/// source and destination are differently aligned (as a packet's entries, after its header,
/// are to this buffer's); pieces this size are copied with vector moves.
pub(crate) fn copy(w: &mut NetWriter, bytes: &[u8]) {
    for piece in bytes.chunks(PIECE) {
        w.write_bytes(piece);
    }
}

/// A length of a snapshot's entries or nodes (a packet's: far below 2³²).
fn len_u32(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::SharedSnapshot;
    use crate::replication::server::client_slot::ClientSlot;
    use crate::replication::server::entry_cache::EntryCache;
    use crate::replication::server::node_table::{GroupTable, NodeKey, NodeTable};
    use crate::replication::server::snapshot::{self, SnapshotAt};
    use crate::replication::server::test_support::{node, FakeState, FakeStates};
    use crate::transport::PeerId;
    use crate::wire::NetWriter;

    /// Nodes 1 to 12 changed at tick 6; nodes 4 and 9 have owner conditions and are owned by
    /// clients 2 and 3.
    fn world() -> (NodeTable, FakeStates, Vec<NodeKey>) {
        let (mut table, mut states) = (NodeTable::default(), FakeStates::default());
        let keys = (1..=12)
            .map(|id| {
                let (conditional, owner) = match id {
                    4 => (true, PeerId(2)),
                    9 => (true, PeerId(3)),
                    _ => (false, PeerId::SERVER),
                };
                let state = || FakeState::new(&[6, 6, 6], 3, conditional);
                states.0.insert(id, state());
                table.push(id, node(id, Some(state()), owner))
            })
            .collect();
        (table, states, keys)
    }

    /// Clients 2, 3 and 4, joined at tick 5, refreshed for the tick-6 changes `keys`.
    fn clients(table: &NodeTable, keys: &[NodeKey]) -> Vec<ClientSlot> {
        (2..=4)
            .map(|peer| {
                let mut c = ClientSlot::new(
                    PeerId(peer),
                    Duration::ZERO,
                    crate::replication::shared::protocol::MIN_SNAPSHOT_MEMORY,
                );
                c.ready = true;
                c.send.join(table.keys().iter().copied(), 5, table);
                c.send.refresh(keys, table, c.peer);
                c
            })
            .collect()
    }

    /// [`world`] and its [`clients`], with a tick's cache and the shared snapshot built from
    /// client 2's standing.
    fn built() -> (
        NodeTable,
        FakeStates,
        Vec<ClientSlot>,
        EntryCache,
        SharedSnapshot,
    ) {
        let (table, states, keys) = world();
        let c = clients(&table, &keys);
        let mut cache = EntryCache::default();
        let mut shared = SharedSnapshot::default();
        cache.begin(table.slot_count(), true);
        shared.build(&states, &table, &c[0], &mut cache);
        (table, states, c, cache, shared)
    }

    fn at(tick: u32, budget: usize) -> SnapshotAt {
        SnapshotAt {
            budget,
            tick,
            now: Duration::ZERO,
        }
    }

    /// `client`'s snapshot of `tick`, shared if it can be; and whether it was.
    fn shared_or_own(
        (table, states): (&NodeTable, &FakeStates),
        shared: &mut SharedSnapshot,
        client: &mut ClientSlot,
        cache: &mut EntryCache,
        at: SnapshotAt,
    ) -> (Vec<u8>, bool) {
        let mut w = NetWriter::with_capacity(64);
        let was = shared
            .write(&mut w, states, table, client, cache, at)
            .is_some();
        if !was {
            let groups = GroupTable::default();
            snapshot::write(&mut w, states, table, &groups, client, cache, at);
        }
        (w.into_vec(), was)
    }

    #[test]
    fn clients_standing_alike_get_what_their_own_snapshots_would_hold() {
        let (table, states, keys) = world();
        let (mut alone, mut together) = (clients(&table, &keys), clients(&table, &keys));
        let mut cache = EntryCache::default();
        let mut shared = SharedSnapshot::default();
        cache.begin(table.slot_count(), true);
        shared.build(&states, &table, &together[0], &mut cache);
        for (a, t) in alone.iter_mut().zip(&mut together) {
            let own = shared_or_own(
                (&table, &states),
                &mut SharedSnapshot::default(),
                a,
                &mut cache,
                at(6, 0),
            );
            let copy = shared_or_own((&table, &states), &mut shared, t, &mut cache, at(6, 0));
            assert!(copy.1 && !own.1);
            assert_eq!(copy.0, own.0, "client {:?}", t.peer);
        }
        // Owners get their node's members for owners: the three snapshots differ.
        let bytes: Vec<_> = together
            .iter_mut()
            .map(|c| shared_or_own((&table, &states), &mut shared, c, &mut cache, at(7, 0)).0)
            .collect();
        assert!(bytes[0] != bytes[1] && bytes[1] != bytes[2]);
        // The nodes each carried are acknowledged: nothing is pending any more.
        for c in alone.iter_mut().chain(&mut together) {
            assert!(c.send.ack(6, Duration::ZERO).is_some());
            c.send.refresh(&[], &table, c.peer);
            assert!(c.send.pending_for(&table).0.is_empty());
        }
    }

    #[test]
    fn a_copy_carrying_every_node_a_client_has_is_noted_so_without_its_ids() {
        let (table, states, mut c, mut cache, mut shared) = built();
        for client in &mut c {
            let copied =
                shared_or_own((&table, &states), &mut shared, client, &mut cache, at(6, 0));
            assert!(copied.1);
        }
        // Client 4 owns no node: its copy is the shared snapshot whole, noted as carrying all.
        assert_eq!(c[2].send.carried(6), Some((&[][..], true)));
        // Client 2 has its own entry for node 4 among the copied ones: listed.
        let all: Vec<u32> = (1..=12).collect();
        assert_eq!(c[0].send.carried(6), Some((&all[..], false)));
        for client in &mut c {
            assert!(client.send.ack(6, Duration::ZERO).is_some());
            client.send.refresh(&[], &table, client.peer);
            assert!(client.send.pending_for(&table).0.is_empty());
        }
    }

    #[test]
    fn clients_that_acknowledged_different_ticks_since_the_same_change_share_it() {
        // One member changed at 3, the other at 6: an entry since 3, 4 or 5 carries the second.
        let (mut table, mut states) = (NodeTable::default(), FakeStates::default());
        let keys: Vec<_> = (1..=5)
            .map(|id| {
                states.0.insert(id, FakeState::new(&[3, 6], 2, false));
                let state = FakeState::new(&[3, 6], 2, false);
                table.push(id, node(id, Some(state), PeerId::SERVER))
            })
            .collect();
        let mut c: Vec<ClientSlot> = [(2, 4), (3, 5), (4, 2)]
            .into_iter()
            .map(|(peer, joined)| {
                let mut c = ClientSlot::new(
                    PeerId(peer),
                    Duration::ZERO,
                    crate::replication::shared::protocol::MIN_SNAPSHOT_MEMORY,
                );
                c.ready = true;
                c.send.join(table.keys().iter().copied(), joined, &table);
                c.send.refresh(&keys, &table, c.peer);
                c
            })
            .collect();
        let mut cache = EntryCache::default();
        let mut shared = SharedSnapshot::default();
        cache.begin(table.slot_count(), true);
        shared.build(&states, &table, &c[0], &mut cache);
        let states_table = (&table, &states);
        let a = shared_or_own(states_table, &mut shared, &mut c[0], &mut cache, at(7, 0));
        let b = shared_or_own(states_table, &mut shared, &mut c[1], &mut cache, at(7, 0));
        let old = shared_or_own(states_table, &mut shared, &mut c[2], &mut cache, at(7, 0));
        assert!(a.1 && b.1 && !old.1);
        assert_eq!(a.0, b.0);
        // Each entry: id, length, mask, the second member's 2 bytes; the old client gets both.
        assert_eq!(a.0.len(), 2 + 5 * 5);
        assert_eq!(old.0.len(), 2 + 5 * 7);
        assert_eq!(cache.encoded(), 2 * 5);
    }

    #[test]
    fn a_client_standing_otherwise_or_under_a_budget_gets_its_own_snapshot() {
        let (table, states, keys) = world();
        let mut c = clients(&table, &keys);
        let mut cache = EntryCache::default();
        let mut shared = SharedSnapshot::default();
        cache.begin(table.slot_count(), true);
        // Client 3 acknowledged node 1 at tick 6 already: its entry would carry less.
        let (_, out) = c[1].send.start_snapshot(6, Duration::ZERO, &table);
        out.carried.push(keys[0].id());
        c[1].send.ack(6, Duration::ZERO);
        c[1].send.refresh(&keys, &table, PeerId(3));
        shared.build(&states, &table, &c[0], &mut cache);
        let own = shared_or_own(
            (&table, &states),
            &mut shared,
            &mut c[1],
            &mut cache,
            at(7, 0),
        );
        assert!(!own.1);
        let budgeted = shared_or_own(
            (&table, &states),
            &mut shared,
            &mut c[2],
            &mut cache,
            at(7, 900),
        );
        assert!(!budgeted.1);
        let unbudgeted = shared_or_own(
            (&table, &states),
            &mut shared,
            &mut c[0],
            &mut cache,
            at(7, 0),
        );
        assert!(unbudgeted.1);
    }

    #[test]
    fn a_client_found_alike_that_then_acknowledges_otherwise_gets_its_own_snapshot() {
        let (table, states, mut c, mut cache, mut shared) = built();
        let tables = (&table, &states);
        assert!(shared_or_own(tables, &mut shared, &mut c[1], &mut cache, at(6, 0)).1);
        // Client 3 acknowledges that snapshot (every node at tick 6), client 2 nothing.
        c[1].send.ack(6, Duration::ZERO);
        c[1].send.refresh(&[], &table, PeerId(3));
        shared.clear();
        cache.begin(table.slot_count(), true);
        shared.build(&states, &table, &c[0], &mut cache);
        assert!(!shared_or_own(tables, &mut shared, &mut c[1], &mut cache, at(7, 0)).1);
        // Client 4, whose lists have not changed, still stands alike.
        assert!(shared_or_own(tables, &mut shared, &mut c[2], &mut cache, at(7, 0)).1);
    }
}
