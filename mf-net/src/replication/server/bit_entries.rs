//! [`BitEntries`]: the server's side of bit-packed snapshots: each node's recent values (what
//! entries are coded against), and the states coded this tick, once per node, baseline and
//! audience, lent to every snapshot that carries them.
//!
//! A state is coded straight from the node's shadow state
//! ([`Capture::write_bits_since_for`](crate::replicated::Capture::write_bits_since_for), with
//! the since class of the baseline, which selects the members changed since), against the
//! node's values as of the baseline: the bits [`state_bits::bytes_to_bits`] would make of its
//! byte entry. Clients that acknowledged the same tick for a node get the same bits.
//!
//! A node that changed at a tick's capture has its values recorded as of that tick. A coding
//! that leaves no member out (for [`Audience::All`], or for any audience of a type without
//! owner conditions) gives those values on the way, so the first such coding in the tick
//! records them. The nodes no snapshot coded that way are recorded after the tick's snapshots,
//! from their whole byte form.

use crate::codec::quantize::Buckets;
use crate::codec::state_bits::{self, write_entry_baseline, write_entry_id};
use crate::codec::state_coder::Coding;
use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{NetNode, NodeKey, NodeTable};
use crate::replication::server::slot_records::SlotRecords;
use crate::replication::server::value_history::ValueHistory;
use crate::replication::shared::protocol::BASELINE_DEPTH;
use crate::replication::Audience;
use crate::wire::{BitWriter, NetReader, NetWriter};

/// A state coded this tick: where it lies in [`BitEntries::states`], behind the rest of its
/// entry header for the default baseline (a `1` and the state's length, `head` bits), which
/// starts on a byte boundary; and how many bits the state has. An entry whose baseline is the
/// snapshot's default copies header and state at once.
#[derive(Debug, Clone, Copy)]
struct Coded {
    byte: u32,
    head: u32,
    bits: u32,
}

/// One state coded this tick: what for (the baseline tick, `None`: from zero, the whole state;
/// the audience), and where.
#[derive(Debug, Clone, Copy)]
struct Record {
    baseline: Option<u32>,
    audience: Audience,
    coded: Coded,
}

/// The server's bit-packed snapshot state (see the [module documentation](self)). Allocates
/// nothing once its buffers have grown, but for a node's first value record.
#[derive(Default)]
pub(crate) struct BitEntries {
    history: ValueHistory,
    /// This tick's coded states, by node slot.
    records: SlotRecords<Record>,
    /// This tick's coded states, each from a byte boundary.
    states: BitWriter,
    /// How many states were coded this tick.
    encoded: usize,
    /// Scratch: a whole state's bytes and its values; one coding.
    scratch: NetWriter,
    values: Vec<Buckets>,
    coding: Coding,
    /// By node slot, a bit per node whose values changed at this tick's capture and are not
    /// recorded yet.
    owed: Vec<u64>,
}

impl BitEntries {
    /// A new tick, of a node table of `slots` slots: forgets the states coded in the last one.
    pub(crate) fn begin(&mut self, slots: usize) {
        self.records.begin(slots);
        self.states.clear();
        self.encoded = 0;
    }

    /// The state of the node `key` coded this tick against `baseline` for `audience`, if it
    /// was.
    fn find(&self, key: NodeKey, baseline: Option<u32>, audience: Audience) -> Option<Coded> {
        self.records
            .find(key, |r| r.baseline == baseline && r.audience == audience)
            .map(|r| r.coded)
    }

    /// How many states were coded this tick.
    pub(crate) fn encoded(&self) -> usize {
        self.encoded
    }

    /// Notes that the values of the node `key` changed at this tick's capture: they are
    /// recorded by the first coding of its whole state for every client this tick, else by
    /// [`record_owed`](Self::record_owed).
    pub(crate) fn owe(&mut self, key: NodeKey) {
        let (word, bit) = (key.slot() / 64, key.slot() % 64);
        if word >= self.owed.len() {
            self.owed.resize(word + 1, 0);
        }
        self.owed[word] |= 1 << bit;
    }

    /// Takes the note [`owe`](Self::owe) left for the node `key`: whether it was there.
    fn take_owed(&mut self, key: NodeKey) -> bool {
        let (word, bit) = (key.slot() / 64, key.slot() % 64);
        let Some(w) = self.owed.get_mut(word) else {
            return false;
        };
        let owed = *w >> bit & 1 == 1;
        *w &= !(1 << bit);
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
        if !node.has_state {
            return;
        }
        self.scratch.clear();
        states.write_since_for(node, None, Audience::All, &mut self.scratch);
        let layout = states.layout_of(node);
        self.values.clear();
        self.values.resize(layout.slots(), Buckets::default());
        let mut r = NetReader::new(self.scratch.as_slice());
        // A state holding a string over the limit does not read back (and is not sent: see
        // `StateOverLimit`): its values are forgotten, and the entries after it coded from
        // zero.
        let read = !self.scratch.over_limit()
            && state_bits::state_values(layout, &mut r, &mut self.values).is_ok();
        if read {
            self.history.record(key, tick, &self.values);
        } else {
            self.history.forget(key);
        }
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

    /// Appends to `body` the entry of `node` (the node `key`) for `audience`, for a client
    /// whose `since` for it is `acked` (coded against the [`baseline`] that
    /// gives), after the entry of net id `previous`, in a snapshot of `tick` whose default
    /// baseline is `default_back` ticks back. The state is coded on the first request this
    /// tick, found on every later one (with its baseline checked once). Returns `false`,
    /// writing nothing, if no client could read the node's state (a member over a limit: see
    /// [`EntryCache::refuse`](crate::replication::server::entry_cache::EntryCache::refuse)).
    pub(crate) fn append(
        &mut self,
        body: &mut BitWriter,
        states: &impl NodeStates,
        (key, node, audience): (NodeKey, &NetNode, Audience),
        acked: Option<u32>,
        previous: Option<u32>,
        (tick, default_back): (u32, u32),
    ) -> bool {
        let found = acked.and_then(|a| Some((Some(a), self.find(key, Some(a), audience)?)));
        let (baseline, coded) = match found {
            Some(found) => found,
            None => match self.coded(states, (key, node, audience), (acked, tick)) {
                Some(found) => found,
                None => return false,
            },
        };
        let back = baseline.map_or(0, |b| tick.wrapping_sub(b));
        let (from, head, bits) = (
            coded.byte as usize * 8,
            coded.head as usize,
            coded.bits as usize,
        );
        write_entry_id(body, previous, key.id());
        let (from, bits) = match back == default_back {
            true => (from, head + bits),
            false => {
                write_entry_baseline(body, back, default_back, bits);
                (from + head, bits)
            }
        };
        let appended = body.append_bits(self.states.flushed(), from, bits);
        debug_assert!(appended, "a coded state lies in the coded states");
        true
    }

    /// The state of `node` for `audience`, for a client whose `since` for it is `acked`, coded
    /// against the [`baseline`] that gives, with that baseline: found if this tick (of `tick`)
    /// coded it so, else coded now, straight from the node's shadow state (recording the
    /// node's values if they are owed and this is its whole state); `None` if no client could
    /// read it (a member over a limit). Out of line: most appends find their state coded, and
    /// stay small without it.
    #[inline(never)]
    fn coded(
        &mut self,
        states: &impl NodeStates,
        (key, node, audience): (NodeKey, &NetNode, Audience),
        (acked, tick): (Option<u32>, u32),
    ) -> Option<(Option<u32>, Coded)> {
        let base = baseline(&self.history, key, acked, tick);
        let baseline = base.map(|(b, _)| b);
        if let Some(coded) = self.find(key, baseline, audience) {
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
        let base = base.map_or(&[][..], |(_, values)| values);
        if !states.write_bits_since_for(node, (since, audience), base, &mut self.coding)? {
            return None;
        }
        if whole && self.take_owed(key) {
            self.history.record(key, tick, &self.coding.values);
        }
        let coded = self.keep_coded();
        let record = Record {
            baseline,
            audience,
            coded,
        };
        self.records.push(key, record);
        self.encoded += 1;
        Some((baseline, coded))
    }

    /// Appends the state just coded to this tick's coded states, behind the rest of its entry
    /// header for the snapshot's default baseline; returns where it lies.
    fn keep_coded(&mut self) -> Coded {
        // Every coding ends flushed (and a tick begins empty): the state starts at a byte.
        debug_assert_eq!(self.states.bit_len(), self.states.flushed().len() * 8);
        let start = self.states.flushed().len();
        let bits = self.coding.bits.bit_len();
        // The header's rest as an entry coded against the snapshot's default baseline has it.
        write_entry_baseline(&mut self.states, 1, 1, bits);
        let head = self.states.bit_len() - start * 8;
        self.states.append(&self.coding.bits);
        // Flushed whole, so that every coded state lies in the flushed bytes.
        self.states.finish();
        Coded {
            byte: u32::try_from(start).unwrap_or(u32::MAX),
            head: u32::try_from(head).unwrap_or(u32::MAX),
            bits: u32::try_from(bits).unwrap_or(u32::MAX),
        }
    }
}

/// The baseline a snapshot of `tick` codes the node `key` against, for a client whose `since`
/// for it is `acked`: that tick, if it is less than [`BASELINE_DEPTH`] ticks back (the client
/// still holds its values) and the node's values then are known in `history`; else none. With
/// the node's values then.
fn baseline(
    history: &ValueHistory,
    key: NodeKey,
    acked: Option<u32>,
    tick: u32,
) -> Option<(u32, &[Buckets])> {
    let a = acked?;
    let back = tick.wrapping_sub(a);
    if back == 0 || back as usize >= BASELINE_DEPTH {
        return None;
    }
    Some((a, history.as_of(key, a)?))
}

#[cfg(test)]
mod tests {
    use super::{baseline, BitEntries};
    use crate::codec::quantize::Buckets;
    use crate::replication::server::node_table::NodeKey;
    use crate::replication::shared::protocol::BASELINE_DEPTH;

    #[test]
    fn a_baseline_is_coded_against_only_while_the_client_still_holds_it_and_its_values_are_known() {
        let mut bits = BitEntries::default();
        let (node, other) = (NodeKey::new(0, 3), NodeKey::new(1, 4));
        bits.history.record(node, 100, &[Buckets::default()]);
        let depth = BASELINE_DEPTH as u32;
        let at = |bits: &BitEntries, key, acked, tick| {
            baseline(&bits.history, key, acked, tick).map(|(b, _)| b)
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
}
