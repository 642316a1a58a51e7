//! [`BitEntries`]: the server's side of bit-packed snapshots: each node's recent values (what
//! entries are coded against), and the states coded this tick, once per node, baseline values
//! and audience, lent to every snapshot that carries them.
//!
//! A state is coded straight from the node's shadow state
//! ([`Capture::write_bits_since_for`](crate::replicated::Capture::write_bits_since_for), with
//! the since class of the baseline, which selects the members changed since), against the
//! node's values as of the baseline: the bits
//! [`state_bits::bytes_to_bits`](crate::codec::state_bits::bytes_to_bits) would make of its
//! byte entry. Clients that acknowledged the same tick for a node get the same bits, and so do
//! clients that hold the node as of different ticks with no change between them (each entry's
//! header names its client's own baseline tick).
//!
//! Before the snapshots, the tick's changed nodes are coded against the tick most clients
//! acknowledged, in the order of the capture ([`precode`](BitEntries::precode)), the order
//! their values were recorded in: the value history is read as a stream, not one cache miss a
//! node as the clients' walks ask for them. A walk codes what it finds no coding for.
//!
//! A node that changed at a tick's capture has its values recorded as of that tick. A coding
//! that leaves no member out (for [`Audience::All`], or for any audience of a type without
//! owner conditions) gives those values on the way, so the first such coding in the tick
//! records them. The nodes no snapshot coded that way are recorded after the tick's snapshots,
//! by a coding of their whole state.

use crate::codec::quantize::Buckets;
use crate::codec::state_bits::{
    write_entry_baseline, write_entry_id, write_short_entry, BodyCursor,
};
use crate::codec::state_coder::Coding;
use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{NetNode, NodeKey, NodeTable};
use crate::replication::server::slot_records::SlotRecords;
use crate::replication::server::slot_table::PREFETCH_AHEAD;
use crate::replication::server::value_history::ValueHistory;
use crate::replication::Audience;
use crate::tick::tick_after;
use crate::wire::{BitWriter, NetWriter};

/// A state coded this tick: the byte it starts at in the tick's coded states (the bits of
/// [`BitEntries::coding`]), and how many bits it has.
#[derive(Debug, Clone, Copy, Default)]
struct Coded {
    byte: u32,
    bits: u32,
}

/// One state coded this tick: what for (the audience; the baseline tick, `None`: from zero,
/// the whole state), what with (the ticks its values against held from and until, `None`:
/// still; the since class that chose its members), and where.
#[derive(Debug, Clone, Copy, Default)]
struct Record {
    audience: Audience,
    baseline: Option<u32>,
    from: u32,
    until: Option<u32>,
    since: Option<u32>,
    coded: Coded,
}

impl Record {
    /// Whether this is the state a snapshot of `tick` codes for `audience`, for a client whose
    /// `since` for the node is `acked`: it was coded for that baseline, or for another one
    /// with the same values (`acked` is in the span its values held) and the same members
    /// (`since_of(acked)`, the since class, is its own).
    fn serves(
        &self,
        (audience, acked, tick): (Audience, Option<u32>, u32),
        depth: usize,
        since_of: impl Fn(u32) -> Option<u32>,
    ) -> bool {
        if self.audience != audience {
            return false;
        }
        if self.baseline == acked {
            return true;
        }
        let (Some(_), Some(a)) = (self.baseline, acked) else {
            return false;
        };
        in_reach(a, tick, depth)
            && !tick_after(self.from, a)
            && self.until.map_or(true, |until| tick_after(until, a))
            && since_of(a) == self.since
    }
}

/// The server's bit-packed snapshot state (see the [module documentation](self)). Allocates
/// nothing once its buffers have grown, but for a node's first value record.
#[derive(Default)]
pub(crate) struct BitEntries {
    history: ValueHistory,
    /// This tick's coded states, by node slot.
    records: SlotRecords<Record>,
    /// How many states were coded this tick.
    encoded: usize,
    /// Each coding's values; its bits are this tick's coded states, one after another, each
    /// from a byte boundary, coded in place.
    coding: Coding,
    /// By node slot, a bit per node whose values changed at this tick's capture and are not
    /// recorded yet.
    owed: Vec<u64>,
    /// A whole state's byte form, coded into bits by [`append_whole`](Self::append_whole).
    scratch: NetWriter,
}

impl BitEntries {
    /// How many ticks back a baseline may be
    /// ([`baseline_depth`](crate::replication::shared::protocol::baseline_depth)), before
    /// anything is recorded.
    pub(crate) fn set_depth(&mut self, depth: usize) {
        self.history.set_depth(depth);
    }

    /// A new tick, of a node table of `slots` slots: forgets the states coded in the last one.
    pub(crate) fn begin(&mut self, slots: usize) {
        self.records.begin(slots);
        self.coding.bits.clear();
        self.encoded = 0;
    }

    /// The state of `node` (the node `key`) coded this tick (`tick`) for `audience` that
    /// serves a client whose `since` for it is `acked`, if one was (see [`Record::serves`]).
    #[inline]
    fn find(
        &self,
        (key, node): (NodeKey, &NetNode),
        audience: Audience,
        acked: Option<u32>,
        tick: u32,
    ) -> Option<Coded> {
        let since_of = |a| node.since_class(Some(a), audience);
        let depth = self.history.depth();
        self.records
            .find(key, |r| r.serves((audience, acked, tick), depth, since_of))
            .map(|r| r.coded)
    }

    /// Hints the processor to bring in the head of the node `key`'s coded states, a few
    /// entries before a walk looks for one there.
    #[inline]
    pub(crate) fn prefetch_coded(&self, key: NodeKey) {
        self.records.prefetch_for_find(key);
    }

    /// How many states were coded this tick.
    pub(crate) fn encoded(&self) -> usize {
        self.encoded
    }

    /// Notes that the values of the nodes `changed` at this tick's capture are owed: each is
    /// recorded by the first coding of its whole state for every client this tick, else by
    /// [`record_owed`](Self::record_owed).
    pub(crate) fn owe_all(&mut self, changed: &[NodeKey]) {
        let Some(last) = changed.iter().map(|k| k.slot()).max() else {
            return;
        };
        if last / 64 >= self.owed.len() {
            self.owed.resize(last / 64 + 1, 0);
        }
        for &key in changed {
            let (word, bit) = owed_bit(key);
            if let Some(w) = self.owed.get_mut(word) {
                *w |= bit;
            }
        }
    }

    /// Takes the note [`owe_all`](Self::owe_all) left for the node `key`: whether it was there.
    fn take_owed(&mut self, key: NodeKey) -> bool {
        let (word, bit) = owed_bit(key);
        let Some(w) = self.owed.get_mut(word) else {
            return false;
        };
        let owed = *w & bit != 0;
        *w &= !bit;
        owed
    }

    /// After the tick's snapshots: records the values of the nodes `changed` at its capture
    /// (`tick`) that no snapshot recorded.
    pub(crate) fn record_owed(
        &mut self,
        states: &impl NodeStates,
        nodes: &NodeTable,
        changed: &[NodeKey],
        tick: u32,
    ) {
        // Most ticks, the snapshots recorded every one: a word per 64 slots says so.
        if self.owed.iter().all(|&w| w == 0) {
            return;
        }
        for &key in changed {
            if self.take_owed(key) {
                if let Some(n) = nodes.get(key) {
                    self.record(states, key, n, tick);
                }
            }
        }
    }

    /// Records the values of `node` (the node `key`: the state captured at `tick`) as its
    /// values from `tick` on.
    pub(crate) fn record(
        &mut self,
        states: &impl NodeStates,
        key: NodeKey,
        node: &NetNode,
        tick: u32,
    ) {
        if !node.carries_state() {
            return;
        }
        // A state holding a string over the limit is not sent (see `StateOverLimit`): its
        // values are forgotten, and the entries after it coded from zero.
        let whole = (None, Audience::All);
        // Coded after the tick's states for its values alone.
        let end = self.coding.bits.bit_len();
        match states.write_bits_since_for(node, whole, &[], &mut self.coding) {
            Some(true) => self.history.record(key, tick, &self.coding.values),
            _ => self.history.forget(key),
        }
        let cut = self.coding.bits.truncate_bits(end);
        debug_assert!(cut, "the bits only grew");
    }

    /// Forgets node `key` (despawned).
    pub(crate) fn forget(&mut self, key: NodeKey) {
        self.history.forget(key);
    }

    /// Forgets every node (the server stopped).
    pub(crate) fn clear(&mut self) {
        self.history.clear();
        self.owed.fill(0);
        self.begin(0);
    }

    /// Before a tick's snapshots: codes the state of each node `changed` at its capture that
    /// `seen` says a client sees, for a client whose `since` for it is `acked` (a tick clients
    /// acknowledged), as [`append`](Self::append) would code it the first time a snapshot
    /// asks; `first` for the tick's first call (no node has a coded state yet), else a node
    /// whose coded state serves `acked` already is not coded again. In the order of the
    /// capture, the order their values were recorded in, so that the baselines' values are
    /// read in a stream rather than one cache miss each as the clients' walks ask for them.
    /// Nodes whose entries depend on the client (owner conditions) are left to the walks.
    /// Each node's value records (the baseline read, the record written) and the head its
    /// coded state's record goes in are asked for a few nodes ahead: written cold, the
    /// records stalled the loop for most of its time, and the heads took 3 to 4 % of a
    /// 64-client tick.
    pub(crate) fn precode(
        &mut self,
        states: &impl NodeStates,
        (nodes, changed): (&NodeTable, &[NodeKey]),
        (acked, tick): (u32, u32),
        (seen, first): (&impl Fn(&NetNode) -> bool, bool),
    ) {
        let tables = (nodes, changed);
        // Two loops, each with `find` a constant: the first coding of a node this tick has
        // nothing to look for (`changed` lists each node once); a later one's may find a coded
        // state that serves this baseline too (its values were recorded before either).
        match first {
            true => self.precode_all(states, tables, (acked, tick), seen, false),
            false => self.precode_all(states, tables, (acked, tick), seen, true),
        }
    }

    /// [`precode`](Self::precode), looking for a coded state first if `find`.
    #[inline(always)]
    fn precode_all(
        &mut self,
        states: &impl NodeStates,
        (nodes, changed): (&NodeTable, &[NodeKey]),
        (acked, tick): (u32, u32),
        seen: &impl Fn(&NetNode) -> bool,
        find: bool,
    ) {
        // A later call's baseline record, so many back (this tick's is written by the first).
        let back = tick.wrapping_sub(acked).saturating_add(1);
        for (at, &key) in changed.iter().enumerate() {
            if let Some(&ahead) = changed.get(at + 2 * PREFETCH_AHEAD) {
                self.history.prefetch_ring(ahead);
            }
            if let Some(&ahead) = changed.get(at + PREFETCH_AHEAD) {
                match find {
                    false => self.history.prefetch_next(ahead),
                    true => self.history.prefetch_back(ahead, back),
                }
                self.records.prefetch(ahead);
            }
            let Some(node) = nodes.get(key) else {
                continue;
            };
            if node.has_state() && !node.owner_conditions && seen(node) {
                let which = ((key, node), Audience::NonOwner);
                let _ = self.code(states, which, (Some(acked), tick), find);
            }
        }
    }

    /// Appends to `body` the entry of `node` (the node `key`) for `audience`, for a client
    /// whose `since` for it is `acked` (coded against the [`baseline`] that
    /// gives), at `at` (the body's entries before it), in a snapshot of `tick` whose default
    /// baseline is `default_back` ticks back. The state is coded on the first request this
    /// tick, found on every later one (with its baseline checked once). Returns `false`,
    /// writing nothing, if no client could read the node's state (a member over a limit: see
    /// [`EntryCache::refuse`](crate::replication::server::entry_cache::EntryCache::refuse)).
    #[inline(always)]
    pub(crate) fn append(
        &mut self,
        body: &mut BitWriter,
        states: &impl NodeStates,
        (key, node, audience): (NodeKey, &NetNode, Audience),
        acked: Option<u32>,
        at: &BodyCursor,
        (tick, default_back): (u32, u32),
    ) -> bool {
        // The node and its audience go on apart: a tuple of them copied whole would read the
        // audience's byte back in a wider load, which waits for the write.
        let which = (key, node);
        let found = match acked {
            Some(a) => self
                .find(which, audience, acked, tick)
                .map(|c| (Some(a), c)),
            None => None,
        };
        let (baseline, coded) = match found {
            Some(found) => found,
            None => match self.coded(states, (which, audience), (acked, tick), true) {
                Some(found) => found,
                None => return false,
            },
        };
        let back = baseline.map_or(0, |b| tick.wrapping_sub(b));
        let (from, bits) = (coded.byte as usize * 8, coded.bits as usize);
        let state = self.coding.bits.flushed().get(coded.byte as usize..);
        let entry = (key.id(), node.type_number());
        let baseline = (back, default_back);
        if write_short_entry(
            body,
            (at, entry),
            baseline,
            (state.unwrap_or_default(), bits),
        ) {
            return true;
        }
        write_entry_id(body, at, entry);
        write_entry_baseline(body, back, default_back);
        let appended = body.append_bits(self.coding.bits.flushed(), from, bits);
        debug_assert!(appended, "a coded state lies in the coded states");
        true
    }

    /// Appends to `body` the entry of `node` (the node `key`) for `audience` that a resync
    /// carrying its `initial_only` members too carries
    /// ([`SendState::owe_whole_resync`](crate::replication::server::send_state::SendState::owe_whole_resync)):
    /// its whole state as a spawn has it, coded from zero, at `at`, in a snapshot whose
    /// default baseline is `default_back` ticks back. Coded for this entry alone: neither
    /// kept for another snapshot nor recorded as the node's values (the values a client
    /// receives in its snapshots leave `initial_only` members out). Returns `false`, writing
    /// nothing, if no client could read it.
    pub(crate) fn append_whole(
        &mut self,
        body: &mut BitWriter,
        states: &impl NodeStates,
        (key, node, audience): (NodeKey, &NetNode, Audience),
        at: &BodyCursor,
        default_back: u32,
    ) -> bool {
        // Coded after the tick's states, and cut off again once copied.
        let start = self.coding.bits.bit_len();
        let coding = &mut self.coding;
        let sent = states.write_bits_full_for(node, audience, &mut self.scratch, coding);
        let bits = self.coding.bits.bit_len() - start;
        self.coding.bits.finish();
        if sent == Some(true) {
            write_entry_id(body, at, (key.id(), node.type_number()));
            write_entry_baseline(body, 0, default_back);
            let appended = body.append_bits(self.coding.bits.flushed(), start, bits);
            debug_assert!(appended, "a coded state lies in the coded states");
            self.encoded += 1;
        }
        let cut = self.coding.bits.truncate_bits(start);
        debug_assert!(cut, "the bits only grew");
        sent == Some(true)
    }

    /// The state of `node` for `audience`, for a client whose `since` for it is `acked`, coded
    /// against the [`baseline`] that gives, with that baseline: found if this tick (of `tick`)
    /// coded it so, else coded now, straight from the node's shadow state (recording the
    /// node's values if they are owed and this is its whole state); `None` if no client could
    /// read it (a member over a limit). With `find` false, no state coded this tick is looked
    /// for (the tick's first coding of the node). Out of line: most appends find their state
    /// coded, and stay small without it.
    #[inline(never)]
    fn coded(
        &mut self,
        states: &impl NodeStates,
        which: ((NodeKey, &NetNode), Audience),
        (acked, tick): (Option<u32>, u32),
        find: bool,
    ) -> Option<(Option<u32>, Coded)> {
        self.code(states, which, (acked, tick), find)
    }

    /// [`coded`](Self::coded), in line: [`precode`](Self::precode) codes every changed node
    /// through it, with its arguments' constants folded in.
    #[inline(always)]
    fn code(
        &mut self,
        states: &impl NodeStates,
        ((key, node), audience): ((NodeKey, &NetNode), Audience),
        (acked, tick): (Option<u32>, u32),
        find: bool,
    ) -> Option<(Option<u32>, Coded)> {
        let base = baseline(&self.history, key, acked, tick);
        let baseline = base.map(|b| b.tick);
        let found = find.then(|| self.find((key, node), audience, baseline, tick));
        if let Some(coded) = found.flatten() {
            return Some((baseline, coded));
        }
        // The since class selects the members changed since the baseline, as for the byte
        // form's entry.
        let since = baseline.and_then(|b| node.since_class(Some(b), audience));
        // The values now, if the state leaves no member out for its audience: every member
        // changed since the baseline is in the state, and every other one has the baseline's
        // value (none: the state is whole).
        let every_member = audience == Audience::All || !node.owner_conditions;
        let whole = every_member && (since.is_none() || base.is_some());
        let (from, until) = base.map_or((0, None), |b| (b.from, b.until));
        let base = base.map_or(&[][..], |b| b.values);
        // Every coding ends flushed (and a tick begins empty): the state starts at a byte.
        let start = self.coding.bits.bit_len();
        debug_assert_eq!(start, self.coding.bits.flushed().len() * 8);
        let sent = states.write_bits_since_for(node, (since, audience), base, &mut self.coding);
        if sent != Some(true) {
            let cut = self.coding.bits.truncate_bits(start);
            debug_assert!(cut, "the bits only grew");
            return None;
        }
        let bits = self.coding.bits.bit_len() - start;
        // Flushed whole, so that every coded state lies in the flushed bytes.
        self.coding.bits.finish();
        if whole && self.take_owed(key) {
            self.history.record(key, tick, &self.coding.values);
        }
        let coded = Coded {
            byte: u32::try_from(start / 8).unwrap_or(u32::MAX),
            bits: u32::try_from(bits).unwrap_or(u32::MAX),
        };
        let record = Record {
            audience,
            baseline,
            from,
            until,
            since,
            coded,
        };
        self.records.push(key, record);
        self.encoded += 1;
        Some((baseline, coded))
    }
}

/// A baseline: the tick a client acknowledged, and the node's values then (recorded at
/// `from`, the newest record at or before it, and holding until the next record, if any).
#[derive(Clone, Copy)]
struct Baseline<'a> {
    tick: u32,
    from: u32,
    until: Option<u32>,
    values: &'a [Buckets],
}

/// Where the node `key`'s note in [`BitEntries::owed`] is: the word, and its bit in it.
#[inline]
fn owed_bit(key: NodeKey) -> (usize, u64) {
    (key.slot() / 64, 1 << (key.slot() % 64))
}

/// Whether a snapshot of `tick` can code against the values of tick `acked`: it is less than
/// `depth` ticks back ([`baseline_depth`](crate::replication::shared::protocol::baseline_depth):
/// the client still holds them), and not `tick` itself.
fn in_reach(acked: u32, tick: u32, depth: usize) -> bool {
    let back = tick.wrapping_sub(acked);
    back != 0 && (back as usize) < depth
}

/// The baseline a snapshot of `tick` codes the node `key` against, for a client whose `since`
/// for it is `acked`: that tick, if it is [in reach](in_reach) and the node's values then are
/// known in `history`; else none.
fn baseline(
    history: &ValueHistory,
    key: NodeKey,
    acked: Option<u32>,
    tick: u32,
) -> Option<Baseline<'_>> {
    let a = acked.filter(|&a| in_reach(a, tick, history.depth()))?;
    let found = history.as_of(key, a)?;
    Some(Baseline {
        tick: a,
        from: found.recorded,
        until: found.until,
        values: found.values,
    })
}

#[cfg(test)]
mod tests {
    use super::{baseline, BitEntries, Coded, Record};
    use crate::codec::quantize::Buckets;
    use crate::replication::server::node_table::NodeKey;
    use crate::replication::shared::protocol::MIN_BASELINE_DEPTH as BASELINE_DEPTH;
    use crate::replication::Audience;

    #[test]
    fn a_baseline_is_coded_against_only_while_the_client_still_holds_it_and_its_values_are_known() {
        let mut bits = BitEntries::default();
        let (node, other) = (NodeKey::new(0, 3), NodeKey::new(1, 4));
        bits.history.record(node, 100, &[Buckets::default()]);
        let depth = BASELINE_DEPTH as u32;
        let at = |bits: &BitEntries, key, acked, tick| {
            baseline(&bits.history, key, acked, tick).map(|b| b.tick)
        };
        assert_eq!(at(&bits, node, Some(100), 101), Some(100));
        assert_eq!(at(&bits, node, Some(100), 100 + depth - 1), Some(100));
        assert_eq!(at(&bits, node, Some(100), 100 + depth), None, "too old");
        assert_eq!(at(&bits, node, Some(99), 101), None, "values unknown then");
        assert_eq!(at(&bits, node, None, 101), None, "a resync");
        assert_eq!(at(&bits, other, Some(100), 101), None, "no values");
        let later = NodeKey::new(0, 9);
        assert_eq!(
            at(&bits, later, Some(100), 101),
            None,
            "another node in its slot"
        );
        bits.forget(node);
        assert_eq!(at(&bits, node, Some(100), 101), None);
    }

    #[test]
    fn a_coded_state_serves_the_baselines_with_its_values_and_members_and_only_those() {
        let depth = BASELINE_DEPTH as u32;
        // Coded at tick 200 against tick 195, whose values were recorded at 190 (the node's
        // newest record), with the since class 190.
        let record = Record {
            audience: Audience::NonOwner,
            baseline: Some(195),
            from: 190,
            until: None,
            since: Some(190),
            coded: Coded { byte: 0, bits: 0 },
        };
        let class = |a: u32| Some(190).filter(|_| a >= 190);
        let d = BASELINE_DEPTH;
        let serves = |audience, acked, tick| record.serves((audience, acked, tick), d, class);
        let other = Audience::NonOwner;
        assert!(serves(other, Some(195), 200), "its own baseline");
        assert!(serves(other, Some(190), 200), "the values' own tick");
        assert!(serves(other, Some(192), 200), "a tick between");
        assert!(serves(other, Some(199), 200), "a later tick");
        let until = Record {
            until: Some(197),
            ..record
        };
        assert!(
            until.serves((other, Some(196), 200), d, class),
            "before the next record"
        );
        assert!(
            !until.serves((other, Some(197), 200), d, class),
            "the next record's"
        );
        assert!(!serves(other, Some(189), 200), "older values");
        assert!(!serves(other, Some(200), 200), "not a baseline");
        assert!(!serves(other, None, 200), "from zero");
        assert!(!serves(Audience::Owner, Some(199), 200), "another audience");
        assert!(!serves(other, Some(190), 190 + depth), "out of reach");
        let from_zero = Record {
            baseline: None,
            ..record
        };
        assert!(from_zero.serves((other, None, 200), d, class));
        assert!(!from_zero.serves((other, Some(199), 200), d, class));
        let other_class = |_| Some(180);
        assert!(!record.serves((other, Some(192), 200), d, other_class));
        assert!(
            record.serves((other, Some(195), 200), d, other_class),
            "coded so"
        );
    }
}
