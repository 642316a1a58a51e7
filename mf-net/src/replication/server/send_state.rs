//! What the server sent one client and what the client acknowledged: per node it has (in net
//! id order, [`Known`]) the newest acknowledged tick and any resync owed; the nodes with
//! something to send (changed and not acknowledged since, or owed a resync), so that a snapshot
//! walks only those; and the ring of the last snapshots sent
//! ([`snapshot_memory`](crate::replication::shared::protocol::snapshot_memory)), each with the
//! keys of the nodes it carried, which an ack advances: all at once
//! ([`Known::acknowledge_all`]) if it carried every node with state the client had, or every
//! node it had something to send (the nodes it did not carry had nothing new since their
//! acknowledged ticks), else node by node.
//!
//! Ticks wrap: they are compared by serial-number arithmetic ([`crate::tick`]), and
//! [`age`](SendState::age) keeps every stored tick within [`HORIZON`](crate::tick::HORIZON) of
//! the server's.

use std::time::Duration;

use crate::replication::server::alike::Alike;
use crate::replication::server::kept_stand::ClientStand;
use crate::replication::server::known::{Known, NodeSend, NOT_PLACED};
use crate::replication::server::node_table::{NetNode, NodeKey, NodeTable};
use crate::replication::shared::protocol::MIN_SNAPSHOT_MEMORY;
use crate::replication::Audience;
use crate::tick::{clamp_to, tick_after, tick_max};
use crate::transport::PeerId;

/// A ring entry's place of a node not in the client list's array ([`NOT_PLACED`], in two
/// bytes).
const NOT_PLACED_SHORT: u16 = u16::MAX;

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
    /// Net ids of the nodes it carried (an id names one node while a snapshot that carried it
    /// can still be acknowledged: [`NetIds`](crate::replication::server::net_ids::NetIds));
    /// the capacity is kept between uses.
    pub(crate) nodes: Vec<u32>,
    /// Where each node of `nodes` stood in the client's list ([`Known::seek_placed`]), if the
    /// writer noted every one (else fewer): an ack finds them there without a search while
    /// the list's layout stands as it was (`layout`). Two bytes each ([`NOT_PLACED_SHORT`]
    /// for a node not in the list's array): places are noted only for lists shorter than
    /// that.
    pub(crate) places: Vec<u16>,
    /// The client list's [`layout`](Known::layout) when the snapshot was written.
    pub(crate) layout: u32,
    /// How many nodes with state the client had when it was written: if it carried as many
    /// (it carries each at most once, and only nodes with state the client has), it carried
    /// them all.
    pub(crate) listed: usize,
    /// It carried every node with state the client had, and `nodes` was left empty.
    pub(crate) carried_all: bool,
    /// It carried every node the client had something to send of
    /// ([`walked_whole`](SendState::walked_whole)).
    pub(crate) whole: bool,
    /// A node it carried was owed a resync ([`Outgoing::carried_resync`]).
    pub(crate) resyncs: bool,
}

/// A snapshot being written (see [`SendState::start_snapshot`]).
pub(crate) struct Outgoing<'a> {
    /// The nodes with something to send, in net id order (while the client is behind, every
    /// node: the writer passes over those with nothing to send).
    pub(crate) pending: &'a [NodeKey],
    /// Where the client stands with each node.
    pub(crate) acks: &'a Known,
    /// The nodes whose resync owed carries their `initial_only` members too (see
    /// [`SendState::owe_whole_resync`]), sorted by net id: almost always none.
    pub(crate) whole: &'a [NodeKey],
    /// The ring entry's list of the net ids of the nodes the snapshot carries (empty to begin
    /// with).
    pub(crate) carried: &'a mut Vec<u32>,
    /// Where the nodes of `carried` stand in the client's list, noted by
    /// [`carry_one`](Self::carry_one) (a writer that lists ids alone notes none).
    places: &'a mut Vec<u16>,
    /// See [`placing`](Self::placing).
    placing: bool,
    /// Where the client stands, for a copy of a kept body ([`stand`](Self::stand)).
    stand: Option<ClientStand<'a>>,
    /// How many nodes with state the client has, and where to note that the snapshot carried
    /// them all instead of listing them ([`carry`](Self::carry)).
    listed: usize,
    all: &'a mut bool,
    /// Where to note that a node carried was owed a resync.
    resyncs: &'a mut bool,
    /// Net id the snapshot starts at; set to where the next one starts (0: the first node).
    pub(crate) cursor: &'a mut u32,
}

impl Outgoing<'_> {
    /// Where the client stands, if its snapshot can be a copy of a kept body: not behind, and
    /// no node arrived since the last settle.
    pub(crate) fn stand(&self) -> Option<ClientStand<'_>> {
        self.stand
    }

    /// The snapshot carries the nodes `ids` (each once, each one the client has, none carried
    /// yet): noted as carrying every node with state the client has if they are as many,
    /// without their ids, else listed in [`carried`](Self::carried).
    pub(crate) fn carry(&mut self, ids: impl ExactSizeIterator<Item = u32>) {
        *self.all = ids.len() == self.listed && self.carried.is_empty();
        if !*self.all {
            self.carried.extend(ids);
        }
    }

    /// Whether the snapshot was noted as carrying every node with state the client has (see
    /// [`carry`](Self::carry)).
    pub(crate) fn carries_all(&self) -> bool {
        *self.all
    }

    /// The snapshot carries the node `id`, with `place`, where it was found in the client's
    /// list ([`Known::seek_placed`]), if the writer notes places ([`placing`](Self::placing)):
    /// its ack then marks it there, without a search.
    #[inline(always)]
    pub(crate) fn carry_one(&mut self, id: u32, place: Option<u32>) {
        self.carried.push(id);
        if let Some(place) = place {
            debug_assert!(self.placing, "a place noted where places are not kept");
            let place = u16::try_from(place).unwrap_or(NOT_PLACED_SHORT);
            self.places.push(place);
        }
    }

    /// Notes that a node the snapshot carries was owed a resync (its entry carries all the
    /// client receives): the ack marks the carried nodes one by one, so that a resync still
    /// owed after it goes back to the pending list.
    pub(crate) fn carried_resync(&mut self) {
        *self.resyncs = true;
    }

    /// Whether the writer notes where each carried node stands
    /// ([`carry_one`](Self::carry_one)): not while every node with state is pending, when a
    /// whole snapshot carries them all and its ack marks none of them, nor for a list too long
    /// for its places to fit two bytes (it lists their ids alone then).
    pub(crate) fn placing(&self) -> bool {
        self.placing
    }
}

/// A client's send state (see the [module documentation](self)).
pub(crate) struct SendState {
    /// The nodes the client has, in net id order (once it is ready).
    nodes: Known,
    /// The last snapshots sent, by tick modulo the ring's length (a power of two).
    ring: Vec<SentSnapshot>,
    /// Net id the next snapshot starts at (0: the first node).
    cursor: u32,
    /// After [`refresh`](Self::refresh): every node with something to send the client, sorted
    /// by net id (see [`wants`]). Between refreshes it may hold nodes that were acknowledged
    /// or went away since; nodes added since are in `incoming`.
    pending: Vec<NodeKey>,
    /// Nodes that may have become pending other than by changing (resyncs owed), unsorted,
    /// merged into `pending` at the next refresh.
    incoming: Vec<NodeKey>,
    /// The nodes whose resync owed carries their `initial_only` members too, sorted by net id,
    /// each once (see [`owe_whole_resync`](Self::owe_whole_resync)); a node leaves it once
    /// it owes no resync (or the client no longer has it).
    whole: Vec<NodeKey>,
    /// The other buffer of `pending`'s rebuild (its capacity is kept).
    spare: Vec<NodeKey>,
    /// `pending`'s changes, and the copy it was last found equal to.
    pending_alike: Alike,
    /// The node table's [`version`](crate::replication::server::slot_table::SlotTable::version) when `pending`
    /// was last found to hold every node of it (`None`: not then).
    full_at: Option<u64>,
    /// The version of the server's list of changed nodes that `pending` is a copy of, if it is
    /// one (see [`refresh_seen`](Self::refresh_seen)).
    pending_from: Option<u64>,
    /// Whether the byte budget keeps the client behind: `pending` is not kept up, and
    /// snapshots walk the node table (see [`refresh`](Self::refresh)).
    scanning: bool,
    /// The tick of the last snapshot, if it carried every pending node that had something to
    /// send (see [`walked_whole`](Self::walked_whole)).
    whole_at: Option<u32>,
    /// That snapshot was acknowledged: every node pending then has nothing left to send but
    /// those in `incoming`, and the next refresh starts its list afresh.
    settled: bool,
    /// Acknowledged ticks whose snapshots' nodes are not marked yet (see
    /// [`receive_ack`](Self::receive_ack)).
    deferred: Vec<u32>,
    /// How many nodes the lists have room for (see [`fit`](Self::fit)).
    room: usize,
    /// How many nodes each ring entry's lists have room for, and the entry of the last
    /// snapshot started (see [`fit_carried`](Self::fit_carried)).
    carried_room: usize,
    last: usize,
}

impl Default for SendState {
    fn default() -> Self {
        Self::new(MIN_SNAPSHOT_MEMORY)
    }
}

impl SendState {
    /// A fresh send state remembering the last `ring` snapshots (a power of two: see
    /// [`snapshot_memory`](crate::replication::shared::protocol::snapshot_memory)).
    pub(crate) fn new(ring: usize) -> Self {
        debug_assert!(ring.is_power_of_two());
        Self {
            nodes: Known::default(),
            // A fresh ring: every entry acknowledged already, so no ack matches it before it
            // is used.
            ring: (0..ring)
                .map(|_| SentSnapshot {
                    acked: true,
                    ..SentSnapshot::default()
                })
                .collect(),
            cursor: 0,
            pending: Vec::new(),
            incoming: Vec::new(),
            whole: Vec::new(),
            spare: Vec::new(),
            pending_alike: Alike::default(),
            full_at: None,
            pending_from: None,
            scanning: false,
            whole_at: None,
            settled: false,
            deferred: Vec::new(),
            room: 0,
            carried_room: 0,
            last: 0,
        }
    }

    /// The ring entry of the snapshot of `tick`.
    #[inline]
    fn slot_of(&self, tick: u32) -> usize {
        tick as usize & (self.ring.len() - 1)
    }

    /// The client joins at `tick`: it has the nodes `keys` (in net id order, of `nodes`) as
    /// of `tick` (the spawns it was just sent, which are its baselines too), owing nothing: a
    /// node that does not change costs no entry (nor does one without state, which no
    /// snapshot carries).
    pub(crate) fn join(
        &mut self,
        keys: impl IntoIterator<Item = NodeKey>,
        tick: u32,
        nodes: &NodeTable,
    ) {
        let joined = NodeSend::new(tick, None);
        let stateless = |key| !nodes.get(key).is_some_and(|n| n.carries_state());
        self.nodes.fill(keys, joined, stateless);
        self.pending.clear();
        self.pending_from = None;
        self.pending_alike.changed();
        self.incoming.clear();
        self.whole.clear();
        self.full_at = None;
        self.scanning = false;
        self.whole_at = None;
        self.settled = false;
        self.deferred.clear();
    }

    /// A node the client has from `acked` on (a spawn just sent: the server's tick), owing
    /// nothing; `stateful` if it has state (a snapshot can carry it).
    pub(crate) fn add(&mut self, key: NodeKey, acked: u32, stateful: bool) {
        let n = NodeSend::new(acked, None);
        self.nodes.set(key, n, !stateful);
    }

    /// Makes room in the per-node state and the pending lists for half as many nodes again as
    /// the client has, once it has more than they have room for, so that refreshes and acks
    /// allocate nothing while its view stays within what it has been. Sized by what the
    /// client has, not by the world: a client that sees a few of many nodes costs the server
    /// memory for those few. (The ring's lists are sized by what snapshots carry:
    /// [`fit_carried`](Self::fit_carried).)
    fn fit(&mut self) {
        let n = self.nodes.len();
        if n <= self.room {
            return;
        }
        let room = n + n / 2 + 16;
        self.room = room;
        self.nodes.reserve(room);
        for list in [&mut self.pending, &mut self.spare] {
            list.reserve_exact(room.saturating_sub(list.len()));
        }
        // Resyncs owed, and those a settling ack hands on (see `ack`).
        self.incoming
            .reserve_exact((2 * room).saturating_sub(self.incoming.len()));
    }

    /// Makes room in each ring entry's lists for half as many nodes again as the last
    /// snapshot carried, once it carried more than they have room for, so that snapshots
    /// allocate nothing while they carry no more than snapshots have carried. Sized by what snapshots
    /// carry, not by what the client has: a ring entry's lists are as many as the snapshots
    /// remembered (64), and a node that does not change is in none of them (a snapshot that
    /// carries every node lists none).
    fn fit_carried(&mut self) {
        let last = &self.ring[self.last];
        let n = last.nodes.len().max(last.places.len());
        if n <= self.carried_room {
            return;
        }
        let room = n + n / 2 + 16;
        self.carried_room = room;
        for entry in &mut self.ring {
            let (nodes, places) = (&mut entry.nodes, &mut entry.places);
            nodes.reserve_exact(room.saturating_sub(nodes.len()));
            places.reserve_exact(room.saturating_sub(places.len()));
        }
    }

    /// The client does not have the node (any more): no entries, no resync.
    pub(crate) fn hide(&mut self, key: NodeKey) {
        self.nodes.remove(key);
        if let Ok(at) = self.whole.binary_search_by_key(&key.id(), |k| k.id()) {
            self.whole.remove(at);
        }
    }

    /// Forgets the nodes with the net ids `gone` (sorted), which left the node table.
    pub(crate) fn forget(&mut self, gone: &[u32]) {
        self.nodes.forget(gone);
    }

    /// The client has the node from `tick` on, but a copy of it older than `tick` (a dormant
    /// group come back, without a spawn): owing a resync if it has a state, which the next
    /// snapshot carries and only an ack of one after `tick` completes.
    pub(crate) fn show(&mut self, key: NodeKey, tick: u32, stateful: bool) {
        let n = NodeSend::new(tick, stateful.then_some(tick));
        self.nodes.set(key, n, !stateful);
        if stateful {
            self.incoming.push(key);
        }
    }

    /// Owes the node a resync, completed only by an ack of a snapshot after `after` (a node
    /// owed one already moves its tick there), in the next snapshot.
    pub(crate) fn owe_resync(&mut self, key: NodeKey, after: u32) {
        let had = self.nodes.update(key, |n| {
            let after = n.resync().map_or(after, |old| tick_max(old, after));
            n.set_resync(Some(after));
        });
        if had.is_some() {
            // Even if it owed one already: an ack that settles the list keeps only what is in
            // `incoming`.
            self.incoming.push(key);
        }
    }

    /// [`owe_resync`](Self::owe_resync), with the node's entries until it is done carrying its
    /// `initial_only` members too, as the server holds them now: the client asked for the
    /// state again because a member named a node it lacked ([`RESEND`]), or a node the state
    /// names is named otherwise now (networked after a reference to it went as none, or
    /// [renamed](crate::replication::Multiplayer::resend_states_naming)), and an
    /// `initial_only` member may be that member. Nothing if the client does not have the node.
    ///
    /// [`RESEND`]: crate::replication::shared::protocol::RESEND
    pub(crate) fn owe_whole_resync(&mut self, key: NodeKey, after: u32) {
        self.owe_resync(key, after);
        if self.nodes.get(key).is_none() {
            return;
        }
        if let Err(at) = self.whole.binary_search_by_key(&key.id(), |k| k.id()) {
            self.whole.insert(at, key);
        }
    }

    /// Whether a resync owed carries a node's `initial_only` members (see
    /// [`owe_whole_resync`](Self::owe_whole_resync)): its entries are the client's alone, so
    /// its snapshot is neither shared with other clients nor a copy of one of theirs.
    pub(crate) fn owes_whole(&self) -> bool {
        !self.whole.is_empty()
    }

    /// The nodes whose resync owed carries their `initial_only` members (see
    /// [`owe_whole_resync`](Self::owe_whole_resync)), sorted by net id.
    pub(crate) fn whole_resyncs(&self) -> &[NodeKey] {
        &self.whole
    }

    /// Drops from [`whole`](Self::whole) the nodes that owe no resync any more (one carried
    /// was acknowledged) or that the client no longer has.
    fn drop_done_whole(&mut self) {
        if self.whole.is_empty() {
            return;
        }
        let nodes = &self.nodes;
        self.whole
            .retain(|&key| nodes.get(key).is_some_and(|n| n.resync().is_some()));
    }

    /// Appends to `out`, in net id order, the nodes the client has that `changed` accepts.
    pub(crate) fn changed_known(
        &mut self,
        changed: impl Fn(NodeKey) -> bool,
        out: &mut Vec<NodeKey>,
    ) {
        self.nodes.settle();
        out.extend(self.nodes.keys().filter(|&key| changed(key)));
    }

    /// How many nodes with state the client has.
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len_with_state()
    }

    /// The nodes with something to send, in net id order (as of the last
    /// [`refresh`](Self::refresh)).
    #[cfg(test)]
    pub(crate) fn pending(&self) -> &[NodeKey] {
        &self.pending
    }

    /// Brings [`pending`](Self::pending) up to date before a snapshot: adds the nodes that
    /// `changed` on this tick's capture (in net id order) and those owed a resync since, and
    /// drops those with nothing to send any more (acknowledged, hidden, gone). Costs the
    /// length of those lists, not the number of nodes: nothing when nothing is pending or new,
    /// and nothing when every node changed and every node is pending already.
    ///
    /// A client the byte budget keeps behind (its last snapshot was cut short) is not kept up:
    /// its snapshots walk the node table from the cursor to the budget instead, as far as the
    /// budget reaches, passing over the nodes with nothing to send ([`wants`]), so that a
    /// tick costs what that client is sent, not every pending node. The first refresh after
    /// a snapshot goes out whole rebuilds the list from the table, once.
    pub(crate) fn refresh(&mut self, changed: &[NodeKey], nodes: &NodeTable, peer: PeerId) {
        self.refresh_with((changed, None), nodes, peer, false);
    }

    /// [`refresh`](Self::refresh) with `changed` holding only nodes the client has (those of
    /// the groups it sees, or every changed node for a client that has every node: see
    /// [`has_every`](Self::has_every)): they join the pending list unasked (the snapshot's walk
    /// passes over any with nothing for the client), so that a node that changes every tick
    /// costs no look at the node table here. `version`, if given, names `changed`'s content:
    /// a pending list copied from the same version is kept without a look.
    pub(crate) fn refresh_seen(
        &mut self,
        (changed, version): (&[NodeKey], Option<u64>),
        nodes: &NodeTable,
        peer: PeerId,
    ) {
        self.refresh_with((changed, version), nodes, peer, true);
    }

    /// Whether the client has as many nodes as `nodes` holds: every one of them, once the
    /// nodes that left the table are forgotten (one it lacks in the meantime is passed over
    /// by the snapshot's walk).
    pub(crate) fn has_every(&self, nodes: &NodeTable) -> bool {
        self.nodes.len() == nodes.len()
    }

    fn refresh_with(
        &mut self,
        (changed, version): (&[NodeKey], Option<u64>),
        nodes: &NodeTable,
        peer: PeerId,
        seen: bool,
    ) {
        // Whatever changes the list below leaves it a copy of no version.
        let from = self.pending_from.take();
        self.fit();
        self.nodes.settle();
        self.apply_acks();
        self.drop_done_whole();
        if self.cursor != 0 {
            self.scanning = true;
            // The walk over the table meets the nodes owed a resync by itself.
            self.incoming.clear();
            return;
        }
        if self.scanning {
            self.scanning = false;
            self.settled = false;
            self.incoming.clear();
            let acks = &self.nodes;
            self.pending.clear();
            self.pending_alike.changed();
            let wanted = nodes.keys().iter().copied();
            let mut at = 0;
            self.pending
                .extend(wanted.filter(|&key| wants_key(nodes, acks, &mut at, key, peer)));
            self.full_at = (self.pending.len() == nodes.len()).then(|| nodes.version());
            return;
        }
        let settled = std::mem::take(&mut self.settled);
        let everything = changed.len() == nodes.len();
        let full = self.full_at == Some(nodes.version());
        if everything && full && self.incoming.is_empty() {
            self.pending_from = from;
            return;
        }
        if seen && self.incoming.is_empty() && (settled || self.pending.is_empty()) {
            // What is left to send is what changed, every node of it the client has: the list
            // is `changed`, kept as it is while the same nodes go on changing.
            if version.is_none() || from != version {
                self.pending.clear();
                self.pending.extend_from_slice(changed);
                self.pending_alike.changed();
            }
            self.pending_from = version;
            self.full_at = (self.pending.len() == nodes.len()).then(|| nodes.version());
            return;
        }
        if settled {
            // Everything pending went out in a snapshot now acknowledged: what is left to send
            // is what changed since and what is owed (in `incoming`), found without a look at
            // each node that was pending.
            self.pending.clear();
            self.pending_alike.changed();
            self.full_at = None;
        }
        if !self.incoming.is_empty() {
            self.incoming.sort_unstable_by_key(|k| k.id());
            self.incoming.dedup();
            merge(&self.pending, &self.incoming, &mut self.spare, |_, _| true);
            std::mem::swap(&mut self.pending, &mut self.spare);
            self.pending_alike.changed();
            self.incoming.clear();
        }
        if self.pending.is_empty() && changed.is_empty() {
            return;
        }
        let acks = &self.nodes;
        let mut at = 0;
        merge(
            &self.pending,
            changed,
            &mut self.spare,
            |key, in_changed| (seen && in_changed) || wants_key(nodes, acks, &mut at, key, peer),
        );
        std::mem::swap(&mut self.pending, &mut self.spare);
        self.pending_alike.changed();
        self.full_at = (self.pending.len() == nodes.len()).then(|| nodes.version());
    }

    /// What the next snapshot walks, as [`start_snapshot`](Self::start_snapshot) gives it
    /// (after a [`refresh`](Self::refresh)), without starting one: the pending nodes (every
    /// node of `nodes` while the client is behind), where the client stands with each, and
    /// the net id the snapshot starts at.
    pub(crate) fn pending_for<'a>(
        &'a self,
        nodes: &'a NodeTable,
    ) -> (&'a [NodeKey], &'a Known, u32) {
        let pending = match self.scanning {
            true => nodes.keys(),
            false => &self.pending,
        };
        (pending, &self.nodes, self.cursor)
    }

    /// Where the client stands (its pending nodes and per-node states), if it is not behind
    /// and no node arrived since the last settle: what a shared snapshot compares.
    pub(crate) fn stand(&self) -> Option<ClientStand<'_>> {
        let pending = (!self.scanning).then_some(self.pending.as_slice());
        ClientStand::of(pending, &self.pending_alike, &self.nodes)
    }

    /// Whether the next snapshot walks the pending nodes from the first (the byte budget does
    /// not keep the client behind).
    pub(crate) fn walks_from_start(&self) -> bool {
        !self.scanning && self.cursor == 0
    }

    /// The net ids the snapshot of `tick` listed as carried, and whether it was noted as
    /// carrying every node with state the client had instead; `None` if the ring does not
    /// hold it.
    #[cfg(test)]
    pub(crate) fn carried(&self, tick: u32) -> Option<(&[u32], bool)> {
        let entry = &self.ring[self.slot_of(tick)];
        (entry.used && entry.tick == tick).then_some((entry.nodes.as_slice(), entry.carried_all))
    }

    /// Where the client stands with the node `key`.
    #[cfg(test)]
    pub(crate) fn node(&self, key: NodeKey) -> Option<NodeSend> {
        self.nodes.get(key)
    }

    /// Starts a snapshot of `tick` leaving at `now` in its ring entry (after a
    /// [`refresh`](Self::refresh) on this tick). Returns, if the entry held a sent snapshot,
    /// whether that one was acknowledged (it leaves the ring now), and what the writer works
    /// with: the pending nodes, or every node of `nodes` while the client is behind.
    pub(crate) fn start_snapshot<'a>(
        &'a mut self,
        tick: u32,
        now: Duration,
        nodes: &'a NodeTable,
    ) -> (Option<bool>, Outgoing<'a>) {
        self.whole_at = None;
        self.fit_carried();
        self.last = self.slot_of(tick);
        let entry = &mut self.ring[self.last];
        let left = entry.used.then_some(entry.acked);
        entry.tick = tick;
        entry.sent_at = now;
        entry.acked = false;
        entry.used = true;
        entry.nodes.clear();
        entry.places.clear();
        entry.layout = self.nodes.layout();
        entry.listed = self.nodes.len_with_state();
        entry.carried_all = false;
        entry.whole = false;
        entry.resyncs = false;
        let pending = (!self.scanning).then_some(self.pending.as_slice());
        let outgoing = Outgoing {
            pending: pending.unwrap_or(nodes.keys()),
            acks: &self.nodes,
            whole: &self.whole,
            carried: &mut entry.nodes,
            places: &mut entry.places,
            placing: pending.is_some_and(|p| p.len() < entry.listed) && self.nodes.places_fit(),
            cursor: &mut self.cursor,
            stand: ClientStand::of(pending, &self.pending_alike, &self.nodes),
            listed: entry.listed,
            all: &mut entry.carried_all,
            resyncs: &mut entry.resyncs,
        };
        (left, outgoing)
    }

    /// Applies an ack of `tick`: every node the snapshot of that tick carried is acknowledged
    /// up to `tick`, and a resync it carried (sent after the resync was asked for) is done.
    /// Returns the round-trip sample, or `None` if the tick is no longer (or never was) in the
    /// ring, or was acknowledged already. ([`receive_ack`](Self::receive_ack), then
    /// [`apply_acks`](Self::apply_acks).)
    #[cfg(test)]
    pub(crate) fn ack(&mut self, tick: u32, now: Duration) -> Option<Duration> {
        let rtt = self.receive_ack(tick, now);
        self.apply_acks();
        rtt
    }

    /// Takes an ack of `tick`: the round-trip sample, or `None` if the tick is no longer (or
    /// never was) in the ring, or was acknowledged already. The nodes the snapshot carried are
    /// marked at the client's next refresh ([`apply_acks`](Self::apply_acks)), right before
    /// its next snapshot reads the same list: one walk over the client's nodes while they are
    /// in the cache, where marking them on arrival read them cold, among every other client's
    /// acks, a whole frame before.
    pub(crate) fn receive_ack(&mut self, tick: u32, now: Duration) -> Option<Duration> {
        let slot = self.slot_of(tick);
        let entry = &mut self.ring[slot];
        if entry.tick != tick || entry.acked {
            return None;
        }
        entry.acked = true;
        self.deferred.push(tick);
        Some(now.saturating_sub(entry.sent_at))
    }

    /// Marks the nodes of every snapshot acknowledged since the last call: each is
    /// acknowledged up to the snapshot's tick, and a resync it carried is done. The snapshot
    /// whose nodes were all that was pending settles the pending list (the next refresh starts
    /// afresh, with the nodes still owed a resync).
    pub(crate) fn apply_acks(&mut self) {
        for i in 0..self.deferred.len() {
            let tick = self.deferred[i];
            self.apply_ack(tick);
        }
        self.deferred.clear();
    }

    /// Marks the nodes the snapshot of `tick` (acknowledged) carried: one by one, or all at
    /// once ([`Known::acknowledge_all`]) if it carried every node with state the client had,
    /// or every node it had something to send (it was [walked whole](Self::walked_whole)) and
    /// none owing a resync. If it was the last one written and walked whole, it settles the
    /// pending list.
    ///
    /// A bit-packed client then holds a node the snapshot did not carry as of its tick too:
    /// its newest entry then is one before, which it keeps (as an older table's, or as the
    /// node's floor once no table holds it: see the client's `Baselines`), so that the node's
    /// next entry can be coded against the tick acknowledged whole.
    fn apply_ack(&mut self, tick: u32) {
        let entry = &self.ring[self.slot_of(tick)];
        if entry.tick != tick {
            return;
        }
        let settles = self.whole_at == Some(tick);
        self.settled |= settles;
        if entry.carried_all || entry.nodes.len() == entry.listed {
            // Every resync it carried is done; one owed since is in `incoming`.
            self.nodes.acknowledge_all(tick);
            return;
        }
        if entry.whole && !entry.resyncs {
            // Every node it did not carry had nothing to send when it was written: nothing
            // changed since its acknowledged tick (nor was a resync owed, which would have
            // made it pending), so the client holds it as of `tick` too; and none it carried
            // owed a resync.
            self.nodes.acknowledge_all(tick);
            return;
        }
        let mut mark = |(key, n): (NodeKey, &mut NodeSend)| {
            *n = n.with_all_acked(Some(tick));
            if settles && n.resync().is_some() {
                self.incoming.push(key);
            }
        };
        // A node gone since, or lost to the client, does not answer to its id.
        if entry.places.len() == entry.nodes.len() && entry.layout == self.nodes.layout() {
            // Where the writer found each node: its entry has not moved since.
            for (&id, &place) in entry.nodes.iter().zip(&entry.places) {
                let place = match place {
                    NOT_PLACED_SHORT => NOT_PLACED,
                    place => u32::from(place),
                };
                if let Some(found) = self.nodes.placed_mut(place, id) {
                    mark(found);
                }
            }
            return;
        }
        // The carried keys are in net id order (from the snapshot's cursor, wrapping once):
        // one walk along the client's nodes.
        let mut at = 0;
        for &id in &entry.nodes {
            if let Some(found) = self.nodes.seek_id_mut(&mut at, id) {
                mark(found);
            }
        }
    }

    /// The snapshot of `tick` just written walked every pending node and carried each that had
    /// something to send (it was not cut short, none was refused and no update tier held one
    /// back): if it is acknowledged before the next one is written, nothing pending then is
    /// left to send but resyncs.
    pub(crate) fn walked_whole(&mut self, tick: u32) {
        self.whole_at = Some(tick);
        let slot = self.slot_of(tick);
        let entry = &mut self.ring[slot];
        entry.whole |= entry.tick == tick;
    }
}

impl SendState {
    /// Keeps the tick of the last snapshot acknowledged whole within
    /// [`HORIZON`](crate::tick::HORIZON) of the server's, and notes when a floor first passes
    /// the oldest tick stored ([`Known::age_all_acked`]): call it once per capture, before
    /// [`stale`](Self::stale) and [`age`](Self::age).
    pub(crate) fn age_all_acked(&mut self, floor: u32) {
        self.nodes.age_all_acked(floor);
    }

    /// Whether a tick stored for the node `key` (its acknowledged tick, a resync's) is before
    /// `floor` (see [`age`](Self::age)).
    pub(crate) fn stale(&self, key: NodeKey, floor: u32) -> bool {
        if !self.nodes.may_hold_before(floor) {
            return false;
        }
        self.nodes.get_stored(key).is_some_and(|n| {
            tick_after(floor, n.acked) || n.resync().is_some_and(|t| tick_after(floor, t))
        })
    }

    /// Keeps the ticks stored for the node `key` (of `node`, whose shadow state is about to be
    /// [aged](crate::replication::Capture::age) to `floor`) from falling more than
    /// [`HORIZON`](crate::tick::HORIZON) behind the server: an acknowledged tick before
    /// `floor` moves up to it, and the node is owed a resync (completed by an ack after `tick`)
    /// if the client wanted something of it then, since aging merges every stamp before
    /// `floor` into `floor`; a resync asked for before `floor` moves up to it too. Call it
    /// before aging the shadow state (it asks [`wants`] with the stamps as they were).
    pub(crate) fn age(
        &mut self,
        key: NodeKey,
        node: &NetNode,
        floor: u32,
        tick: u32,
        peer: PeerId,
    ) {
        let wanted = self.nodes.update(key, |n| {
            n.set_resync(n.resync().map(|after| clamp_to(after, floor)));
            let wanted = tick_after(floor, n.acked) && wants(node, n, peer);
            n.acked = clamp_to(n.acked, floor);
            wanted
        });
        if wanted == Some(true) {
            self.owe_resync(key, tick);
        }
    }
}

/// Whether the node `key` has something to send the client `peer` whose per-node state is
/// `acks`: it is in the table and [`wants`] it. For walks in net id order (`at`: see
/// [`Known::seek`]).
fn wants_key(nodes: &NodeTable, acks: &Known, at: &mut usize, key: NodeKey, peer: PeerId) -> bool {
    let ack = acks.seek(at, key);
    matches!((nodes.get(key), ack), (Some(node), Some(ack)) if wants(node, &ack, peer))
}

/// Whether `node` has something to send the client `peer` that stands with it as `ack`: the
/// client has it, it has a state, and a resync is owed or a member the client receives changed
/// after its acknowledged tick (serial-number order). (Whether its group is due this tick is not asked: a node
/// skipped for its update period stays pending.)
#[inline]
pub(crate) fn wants(node: &NetNode, ack: &NodeSend, peer: PeerId) -> bool {
    wants_as(node, ack, node.audience_of(peer))
}

/// [`wants`], for a client receiving the node as `audience`.
#[inline]
pub(crate) fn wants_as(node: &NetNode, ack: &NodeSend, audience: Audience) -> bool {
    node.carries_state()
        && ack.since().map_or(true, |since| {
            tick_after(node.last_changed_for(audience), since)
        })
}

/// Whether the node `key` is one of `whole` (sorted by net id: a client's
/// [`whole_resyncs`](SendState::whole_resyncs)), whose resync owed carries its
/// `initial_only` members too. Almost always none are: one look at the length.
#[inline]
pub(crate) fn owes_whole(whole: &[NodeKey], key: NodeKey) -> bool {
    !whole.is_empty() && {
        let at = whole.binary_search_by_key(&key.id(), |k| k.id());
        at.ok().and_then(|at| whole.get(at)) == Some(&key)
    }
}

/// Replaces `out` with the keys of `a` and `b` (each sorted by id, without repeats) that `keep`
/// accepts (told whether the key is in `b`), sorted by id, each once.
fn merge(
    a: &[NodeKey],
    b: &[NodeKey],
    out: &mut Vec<NodeKey>,
    mut keep: impl FnMut(NodeKey, bool) -> bool,
) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    loop {
        let (next, in_b) = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x.id() == y.id() => {
                (i, j) = (i + 1, j + 1);
                (y, true)
            }
            (Some(&x), Some(&y)) if x.id() < y.id() => {
                i += 1;
                (x, false)
            }
            (_, Some(&y)) => {
                j += 1;
                (y, true)
            }
            (Some(&x), None) => {
                i += 1;
                (x, false)
            }
            (None, None) => break,
        };
        if keep(next, in_b) {
            out.push(next);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::SendState;
    use crate::replication::server::known::NodeSend;
    use crate::replication::server::node_table::{NodeKey, NodeTable, STILL};
    use crate::replication::server::test_support::{node, FakeState};
    use crate::transport::PeerId;

    /// A client's peer id in these tests.
    const PEER: PeerId = PeerId(7);

    /// A table of nodes 1 to `n`, unchanged since their spawn (their states stamped 0).
    fn table(n: u32) -> (NodeTable, Vec<NodeKey>) {
        let mut table = NodeTable::default();
        let keys = (1..=n)
            .map(|id| {
                let state = FakeState::new(&[0, 0, 0], 1, true);
                table.push(id, node(id, Some(state), PeerId::SERVER))
            })
            .collect();
        (table, keys)
    }

    /// The capture found `key` changed at `tick` (for the owner, others, or both).
    fn touch(table: &mut NodeTable, key: NodeKey, tick: u32, owner: bool, others: bool) {
        let n = table.get_mut(key).unwrap();
        if owner {
            n.last_changed.last[0] = tick;
        }
        if others {
            n.last_changed.last[1] = tick;
        }
    }

    /// Sends a snapshot of `tick` carrying `keys` of `table`, noting a resync any of them owed
    /// as a writer does.
    fn sent(send: &mut SendState, table: &NodeTable, tick: u32, keys: &[NodeKey]) {
        let at = Duration::from_millis(u64::from(tick));
        let owed = |k: &NodeKey| send.node(*k).is_some_and(|n| n.resync().is_some());
        let resync = keys.iter().any(owed);
        let mut out = send.start_snapshot(tick, at, table).1;
        out.carried.extend(keys.iter().map(|k| k.id()));
        if resync {
            out.carried_resync();
        }
    }

    fn acked(send: &SendState, key: NodeKey) -> Option<u32> {
        send.node(key).map(|n| n.acked)
    }

    #[test]
    fn an_ack_never_advances_a_later_node_in_a_reused_slot() {
        let (mut table, keys) = table(3);
        let (a, b) = (keys[0], keys[1]);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        // Not every node: the ack marks the nodes it carried one by one.
        sent(&mut send, &table, 6, &[a, b]);
        // `b` is despawned and its slot taken by `d` (spawned at 0) before the ack arrives.
        table.retain(|_, n| n.net_id != 2);
        send.forget(&[2]);
        let c = table.push(4, node(4, None, PeerId::SERVER));
        assert_eq!(c.slot(), b.slot());
        send.add(c, 0, false);
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
    fn an_ack_taken_in_marks_its_nodes_at_the_next_refresh() {
        let (table, keys) = table(2);
        let (a, b) = (keys[0], keys[1]);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        sent(&mut send, &table, 6, &[a]);
        sent(&mut send, &table, 7, &[a, b]);
        // Both acks are taken (their round trips counted) before any node is marked.
        assert!(send.receive_ack(6, Duration::from_millis(60)).is_some());
        assert!(send.receive_ack(7, Duration::from_millis(60)).is_some());
        assert_eq!((acked(&send, a), acked(&send, b)), (Some(5), Some(5)));
        assert_eq!(
            send.receive_ack(7, Duration::from_millis(61)),
            None,
            "taken once"
        );
        send.refresh(&[], &table, PEER);
        assert_eq!((acked(&send, a), acked(&send, b)), (Some(7), Some(7)));
    }

    #[test]
    fn a_resync_completes_only_with_an_ack_of_a_later_snapshot_that_carried_it() {
        let (table, keys) = table(2);
        let (a, b) = (keys[0], keys[1]);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        send.owe_resync(a, 8);
        // Owing again moves the tick forward, never back.
        send.owe_resync(a, 7);
        assert_eq!(send.node(a).unwrap().since(), None);
        sent(&mut send, &table, 8, &[a]);
        sent(&mut send, &table, 9, &[b]);
        sent(&mut send, &table, 10, &[a]);
        // Sent at the ask: not enough. Not carried: not enough.
        send.ack(8, Duration::ZERO);
        send.ack(9, Duration::ZERO);
        assert_eq!(send.node(a).unwrap().resync(), Some(8));
        send.ack(10, Duration::ZERO);
        assert_eq!(send.node(a).unwrap().since(), Some(10));
        assert_eq!(acked(&send, b), Some(9));
    }

    #[test]
    fn a_resync_owed_whole_stays_whole_until_it_is_done_or_the_node_is_hidden() {
        let (table, keys) = table(3);
        let (a, b, c) = (keys[0], keys[1], keys[2]);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        send.hide(c);
        send.owe_whole_resync(b, 6);
        send.owe_whole_resync(a, 6);
        send.owe_whole_resync(a, 6);
        // A node the client does not have owes nothing.
        send.owe_whole_resync(c, 6);
        assert_eq!(send.whole_resyncs(), [a, b]);
        assert!(super::owes_whole(send.whole_resyncs(), a));
        assert!(!super::owes_whole(send.whole_resyncs(), c));
        assert_eq!(send.node(a).unwrap().resync(), Some(6));
        // The snapshot of 7 carries `a`; its ack completes the resync, and `a` owes nothing
        // whole from the next refresh on.
        sent(&mut send, &table, 7, &[a]);
        send.ack(7, Duration::ZERO);
        send.refresh(&[], &table, PEER);
        assert_eq!(send.whole_resyncs(), [b]);
        assert!(send.owes_whole());
        send.hide(b);
        assert!(!send.owes_whole());
        // Shown again, it owes a resync, not a whole one.
        send.show(b, 8, true);
        assert!(!send.owes_whole());
    }

    #[test]
    fn a_hidden_node_stays_hidden_through_acks_until_shown() {
        let (table, keys) = table(1);
        let a = keys[0];
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        sent(&mut send, &table, 6, &[a]);
        send.owe_resync(a, 5);
        send.hide(a);
        send.ack(6, Duration::ZERO);
        assert!(send.node(a).is_none(), "hidden: no state, no resync");
        send.show(a, 7, true);
        let n = send.node(a).unwrap();
        assert_eq!((n.acked, n.resync()), (7, Some(7)));
        // A snapshot from before the group came back does not complete the resync.
        sent(&mut send, &table, 7, &[a]);
        send.ack(7, Duration::ZERO);
        assert_eq!(send.node(a).unwrap().resync(), Some(7));
    }

    #[test]
    fn acks_advance_across_the_wrap() {
        let (table, keys) = table(1);
        let a = keys[0];
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), u32::MAX - 2, &table);
        for tick in [u32::MAX - 1, u32::MAX, 0, 1] {
            sent(&mut send, &table, tick, &[a]);
        }
        send.owe_resync(a, u32::MAX);
        for tick in [u32::MAX, 1, 0, u32::MAX - 1] {
            assert!(send.ack(tick, Duration::ZERO).is_some(), "{tick}");
        }
        let n = send.node(a).unwrap();
        assert_eq!((n.acked, n.resync()), (1, None));
    }

    #[test]
    fn aging_moves_old_ticks_up_and_owes_a_resync_for_an_unacknowledged_change() {
        let (mut table, keys) = table(3);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 10, &table);
        // Node 1 has nothing to send; node 2 changed at 20, unacknowledged; node 3 is hidden.
        touch(&mut table, keys[1], 20, true, true);
        send.hide(keys[2]);
        let (floor, tick) = (100, 100 + crate::tick::HORIZON);
        for &key in &keys {
            assert_eq!(send.stale(key, floor), key != keys[2]);
            let node = table.get(key).unwrap();
            send.age(key, node, floor, tick, PEER);
            assert!(!send.stale(key, floor));
        }
        let n = |k: NodeKey| send.node(k).unwrap();
        assert_eq!((n(keys[0]).acked, n(keys[0]).resync()), (floor, None));
        assert_eq!((n(keys[1]).acked, n(keys[1]).resync()), (floor, Some(tick)));
        assert!(send.node(keys[2]).is_none(), "hidden");
        // A resync asked for before the floor moves up to it.
        send.owe_resync(keys[0], 50);
        send.age(keys[0], table.get(keys[0]).unwrap(), floor, tick, PEER);
        assert_eq!(send.node(keys[0]).unwrap().resync(), Some(floor));
    }

    /// A node of a type without members (its state travels with its spawn and never changes)
    /// is never pending, and is not one a snapshot waits for: one that carries every other
    /// node carries all there is to send, noted without listing their ids. (Counted as a node
    /// with state, it made every snapshot of an engine whose objects each have one list every
    /// id, and its ack mark them one by one.)
    #[test]
    fn a_node_without_members_is_never_waited_for() {
        let (mut table, keys) = table(3);
        table.get_mut(keys[2]).unwrap().ty |= STILL;
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        for &k in &keys {
            touch(&mut table, k, 6, true, true);
        }
        send.refresh(&keys, &table, PEER);
        assert_eq!(send.pending(), &keys[..2]);
        let mut out = send.start_snapshot(6, Duration::ZERO, &table).1;
        out.carry(keys[..2].iter().map(|k| k.id()));
        assert!(out.carries_all());
        assert!(out.carried.is_empty());
    }

    /// A pending list copied from a version of the server's list of changed nodes stays as it
    /// is while that version does, without a look at the list; another version replaces it.
    #[test]
    fn a_list_copied_from_the_changed_nodes_stays_while_they_do() {
        let (table, keys) = table(3);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        send.refresh_seen((&keys[..2], Some(1)), &table, PEER);
        assert_eq!(send.pending(), &keys[..2]);
        sent(&mut send, &table, 6, &keys[..2]);
        send.walked_whole(6);
        send.ack(6, Duration::ZERO);
        // The same version names the same list: (here another, to show it is not read).
        send.refresh_seen((&keys[1..], Some(1)), &table, PEER);
        assert_eq!(send.pending(), &keys[..2]);
        send.refresh_seen((&keys[1..], Some(2)), &table, PEER);
        assert_eq!(send.pending(), &keys[1..]);
    }

    #[test]
    fn a_snapshot_that_carried_all_there_was_to_send_acknowledges_every_node() {
        let (mut table, keys) = table(3);
        let (a, b, c) = (keys[0], keys[1], keys[2]);
        // Only `b` changed (at 6): the snapshot of 6 carries it alone, and all of what there
        // is to send. The client has `a` and `c` as of 6 too (nothing of them changed since
        // 5), whichever encoding it reads.
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        touch(&mut table, b, 6, true, true);
        send.refresh(&[b], &table, PEER);
        sent(&mut send, &table, 6, &[b]);
        send.walked_whole(6);
        send.ack(6, Duration::ZERO);
        assert_eq!([a, b, c].map(|k| acked(&send, k)), [Some(6); 3]);
        // A snapshot that was not walked whole (cut short, an update tier holding a node
        // back) is acknowledged node by node.
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        sent(&mut send, &table, 7, &[b]);
        send.ack(7, Duration::ZERO);
        assert_eq!((acked(&send, a), acked(&send, b)), (Some(5), Some(7)));
    }

    #[test]
    fn an_acknowledged_whole_snapshot_settles_the_list_but_for_resyncs_still_owed() {
        let (mut table, keys) = table(3);
        let (a, b, c) = (keys[0], keys[1], keys[2]);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        // `a` owes a resync that only a snapshot after tick 8 completes; `b` changed at 6.
        send.owe_resync(a, 8);
        touch(&mut table, b, 6, true, true);
        send.refresh(&[b], &table, PEER);
        assert_eq!(send.pending(), [a, b]);
        sent(&mut send, &table, 6, &[a, b]);
        send.walked_whole(6);
        send.ack(6, Duration::ZERO);
        // `c` changed at 7: the list is `c`, and `a` (still owed), not `b` (acknowledged).
        touch(&mut table, c, 7, true, true);
        send.refresh(&[c], &table, PEER);
        assert_eq!(send.pending(), [a, c]);
        // A snapshot acknowledged after a later one was written settles nothing.
        sent(&mut send, &table, 7, &[a, c]);
        send.walked_whole(7);
        sent(&mut send, &table, 8, &[a, c]);
        send.ack(7, Duration::ZERO);
        send.refresh(&[], &table, PEER);
        assert_eq!(send.pending(), [a], "c is acknowledged; a still owes");
    }

    #[test]
    fn an_ack_of_a_snapshot_that_carried_every_node_keeps_a_resync_owed_again_pending() {
        let (mut table, keys) = table(3);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        // `a` owes a resync from 5; every node changed at 6.
        send.owe_resync(keys[0], 5);
        for &k in &keys {
            touch(&mut table, k, 6, true, true);
        }
        send.refresh(&keys, &table, PEER);
        assert_eq!(send.pending(), keys);
        sent(&mut send, &table, 6, &keys);
        send.walked_whole(6);
        // Owed again after the snapshot was written: still owed once it is acknowledged.
        send.owe_resync(keys[0], 7);
        send.ack(6, Duration::ZERO);
        send.refresh(&[], &table, PEER);
        assert_eq!(send.pending(), [keys[0]]);
        assert_eq!(send.node(keys[1]).unwrap().acked, 6);
    }

    #[test]
    fn an_idle_tick_walks_nothing_and_a_change_is_pending_until_acknowledged() {
        let (mut table, keys) = table(1000);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        send.refresh(&[], &table, PEER);
        assert!(send.pending().is_empty());
        // Node 10 changed at tick 6: pending (alone) until an ack of a snapshot carrying it.
        touch(&mut table, keys[9], 6, true, true);
        send.refresh(&keys[9..10], &table, PEER);
        assert_eq!(send.pending(), &keys[9..10]);
        sent(&mut send, &table, 6, &keys[9..10]);
        send.refresh(&[], &table, PEER);
        assert_eq!(send.pending(), &keys[9..10]);
        send.ack(6, Duration::ZERO);
        send.refresh(&[], &table, PEER);
        assert!(send.pending().is_empty());
        send.refresh(&[], &table, PEER);
        assert!(send.pending().is_empty());
    }

    #[test]
    fn pending_nodes_stay_sorted_and_leave_when_nothing_is_left_to_send() {
        let (mut table, keys) = table(10);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        // Changed for others only (an `owner_only` member, say): not pending for the owner.
        for &k in &keys[2..4] {
            touch(&mut table, k, 6, false, true);
            table.get_mut(k).unwrap().authority = PEER;
        }
        for &k in &keys[5..8] {
            touch(&mut table, k, 6, true, true);
        }
        send.owe_resync(keys[8], 6);
        send.owe_resync(keys[0], 6);
        send.owe_resync(keys[8], 6);
        send.hide(keys[6]);
        let changed = [keys[2], keys[3], keys[5], keys[6], keys[7]];
        send.refresh(&changed, &table, PEER);
        assert_eq!(send.pending(), [keys[0], keys[5], keys[7], keys[8]]);
        // A node gone since is dropped; one whose slot a new node took is not confused with it.
        table.retain(|_, n| n.net_id != 6);
        let new = table.push(11, node(11, Some(FakeState::new(&[0], 1, false)), PEER));
        assert_eq!(new.slot(), keys[5].slot());
        send.add(new, 0, true);
        send.refresh(&[], &table, PEER);
        assert_eq!(send.pending(), [keys[0], keys[7], keys[8]]);
        // A shown node owes a resync: pending again.
        send.show(keys[6], 7, true);
        send.refresh(&[], &table, PEER);
        assert_eq!(send.pending(), [keys[0], keys[6], keys[7], keys[8]]);
    }

    /// Sends a snapshot of `tick` carrying `keys` of `table`, each noted with where the writer
    /// found it in the client's list.
    fn sent_placed(send: &mut SendState, table: &NodeTable, tick: u32, keys: &[NodeKey]) {
        let mut out = send.start_snapshot(tick, Duration::ZERO, table).1;
        let mut at = 0;
        for &key in keys {
            let (_, place) = out.acks.seek_placed(&mut at, key).unwrap();
            out.carry_one(key.id(), Some(place));
        }
    }

    #[test]
    fn an_ack_marks_the_nodes_where_the_writer_found_them_while_the_list_stands() {
        let (table, keys) = table(10);
        let mut send = SendState::default();
        // The client has every node but node 2.
        let had = keys.iter().copied().filter(|k| k.id() != 2);
        send.join(had, 5, &table);
        sent_placed(&mut send, &table, 6, &keys[3..6]);
        // Node 2 arrives after the snapshot, waiting apart: the list's entries stand.
        send.add(keys[1], 6, true);
        send.ack(6, Duration::ZERO);
        let acked = |send: &SendState| keys.iter().map(|&k| acked(send, k)).collect::<Vec<_>>();
        let five = Some(5);
        let (six, seven) = (Some(6), Some(7));
        let mut expected = vec![five, six, five, six, six, six, five, five, five, five];
        assert_eq!(acked(&send), expected);
        // The next snapshot: then node 2 settles into the list, moving the entries after it,
        // before the ack comes. The ack finds each carried node by its id instead.
        sent_placed(&mut send, &table, 7, &keys[3..6]);
        send.refresh(&[], &table, PEER);
        send.ack(7, Duration::ZERO);
        expected[3..6].fill(seven);
        assert_eq!(acked(&send), expected);
        // Node 4 leaves the client between a snapshot and its ack: not marked where it stood.
        sent_placed(&mut send, &table, 8, &keys[2..5]);
        send.hide(keys[3]);
        send.ack(8, Duration::ZERO);
        expected[2] = Some(8);
        expected[3] = None;
        expected[4] = Some(8);
        assert_eq!(acked(&send), expected);
    }

    #[test]
    fn places_are_noted_only_while_some_node_is_not_pending_and_they_fit_two_bytes() {
        for (n, fit) in [(65_534, true), (65_535, false)] {
            let (table, keys) = table(n);
            let mut send = SendState::default();
            send.join(keys.iter().copied(), 5, &table);
            let placing = send.start_snapshot(6, Duration::ZERO, &table).1.placing();
            assert_eq!(placing, fit, "{n} nodes");
        }
        // Every node pending: a whole snapshot carries them all, and is acknowledged at once.
        let (mut table, keys) = table(4);
        let mut send = SendState::default();
        send.join(keys.iter().copied(), 5, &table);
        for &key in &keys {
            touch(&mut table, key, 6, true, true);
        }
        send.refresh(&keys, &table, PEER);
        assert!(!send.start_snapshot(6, Duration::ZERO, &table).1.placing());
    }

    #[test]
    fn an_ack_of_a_snapshot_that_carried_every_node_marks_them_all_at_once() {
        let (table, keys) = table(4);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        send.owe_resync(keys[0], 4);
        send.owe_resync(keys[1], 6);
        sent(&mut send, &table, 6, &keys);
        // Shown after the snapshot was written (at the server's tick, 6 or later).
        send.hide(keys[3]);
        send.show(keys[3], 7, true);
        send.ack(6, Duration::from_millis(60));
        // No node was marked: the list reads every entry through the tick acknowledged whole.
        let stored = send.nodes.standing().unwrap().entries;
        assert!(stored[..3].iter().all(|e| e.1.acked == 5));
        let n = |k: NodeKey| send.node(k).unwrap();
        assert_eq!((n(keys[0]).acked, n(keys[0]).resync()), (6, None));
        // A resync asked for at the snapshot's tick needs a later one.
        assert_eq!((n(keys[1]).acked, n(keys[1]).resync()), (6, Some(6)));
        assert_eq!((n(keys[2]).acked, n(keys[2]).resync()), (6, None));
        assert_eq!((n(keys[3]).acked, n(keys[3]).resync()), (7, Some(7)));
        // What is left to send: the resyncs still owed.
        send.refresh(&[], &table, PEER);
        assert_eq!(send.pending(), [keys[1], keys[3]]);
        // The next snapshot carries three of four: marked one by one, read through both.
        sent(&mut send, &table, 7, &keys[1..]);
        send.ack(7, Duration::from_millis(70));
        let n = |k: NodeKey| send.node(k).unwrap();
        assert_eq!((n(keys[0]).acked, n(keys[0]).resync()), (6, None));
        assert_eq!((n(keys[1]).acked, n(keys[1]).resync()), (7, None));
        assert_eq!((n(keys[3]).acked, n(keys[3]).resync()), (7, Some(7)));
        // Another snapshot of every node, acknowledged before the one before it: the newest
        // counts.
        sent(&mut send, &table, 8, &keys);
        send.ack(8, Duration::from_millis(80));
        assert_eq!(send.node(keys[3]).unwrap(), NodeSend::new(8, None));
        assert_eq!(send.node(keys[0]).unwrap(), NodeSend::new(8, None));
    }

    #[test]
    fn a_tick_acknowledged_whole_goes_into_every_entry_before_it_grows_too_old() {
        let (table, keys) = table(2);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        sent(&mut send, &table, 6, &keys);
        send.ack(6, Duration::from_millis(60));
        let stored = |send: &SendState| {
            let standing = send.nodes.standing().unwrap();
            let acked: Vec<u32> = standing.entries.iter().map(|e| e.1.acked).collect();
            (acked, standing.all_acked)
        };
        // Within the horizon: kept apart from the entries.
        send.age_all_acked(6);
        assert_eq!(stored(&send), (vec![5, 5], Some(6)));
        // Before the floor: every entry takes it (then the sweep ages them as any other).
        send.age_all_acked(7);
        assert_eq!(stored(&send), (vec![6, 6], None));
        assert_eq!(send.node(keys[0]).unwrap(), NodeSend::new(6, None));
        assert!(send.stale(keys[1], 7) && !send.stale(keys[1], 6));
    }

    #[test]
    fn a_snapshot_noted_as_carrying_every_node_is_acknowledged_for_all_without_its_list() {
        let (table, keys) = table(3);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        let ids = |keys: &[NodeKey]| keys.iter().map(|k| k.id()).collect::<Vec<_>>();
        // Two of three is not all: listed.
        let (_, mut out) = send.start_snapshot(6, Duration::ZERO, &table);
        out.carry(ids(&keys[..2]).into_iter());
        assert_eq!(*out.carried, ids(&keys[..2]));
        let (_, mut out) = send.start_snapshot(7, Duration::ZERO, &table);
        out.carry(ids(&keys).into_iter());
        assert!(out.carried.is_empty());
        send.ack(7, Duration::ZERO);
        assert!(keys.iter().all(|&k| acked(&send, k) == Some(7)));
    }

    #[test]
    fn only_a_client_holding_a_tick_before_the_floor_is_searched_for_stale_ones() {
        let (table, keys) = table(3);
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 1000, &table);
        send.age_all_acked(500);
        assert!(!send.nodes.may_hold_before(500));
        assert!(!send.nodes.may_hold_before(1000));
        assert!(send.nodes.may_hold_before(1001));
        // A tick stored before the floor: found.
        send.owe_resync(keys[1], 400);
        assert!(send.stale(keys[1], 500) && !send.stale(keys[0], 500));
        send.age(keys[1], table.get(keys[1]).unwrap(), 500, 1000, PEER);
        assert!(!send.stale(keys[1], 500));
        // Once a floor passed the oldest tick, every later sweep searches.
        send.age_all_acked(450);
        assert!(send.nodes.may_hold_before(300));
    }

    #[test]
    fn a_node_without_state_does_not_keep_a_snapshot_from_carrying_every_node() {
        let (mut table, keys) = table(3);
        // Node 4 has no state: no snapshot carries it.
        let bare = table.push(4, node(4, None, PeerId::SERVER));
        let mut send = SendState::default();
        send.join(table.keys().iter().copied(), 5, &table);
        sent(&mut send, &table, 6, &keys);
        send.ack(6, Duration::from_millis(60));
        assert_eq!(send.nodes.standing().unwrap().all_acked, Some(6));
        assert!(keys.iter().all(|&k| acked(&send, k) == Some(6)));
        // Two of the three with state: one by one.
        let fresh = table.push(5, node(5, None, PeerId::SERVER));
        send.add(fresh, 7, true);
        sent(&mut send, &table, 7, &keys);
        send.ack(7, Duration::from_millis(70));
        assert_eq!(acked(&send, fresh), Some(7));
        assert!(keys.iter().all(|&k| acked(&send, k) == Some(7)));
        // (Acknowledged whole, it would read 7.)
        assert_eq!(acked(&send, bare), Some(6));
    }
}
