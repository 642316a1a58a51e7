//! [`BitEntries`]: the server's side of bit-packed snapshots: each node's recent values (what
//! entries are coded against), and the states coded this tick, once per node, baseline and
//! audience, lent to every snapshot that carries them.
//!
//! A state's bit form is a transcoding of its byte form ([`state_bits`]): the byte entry comes
//! from the tick's [`EntryCache`] (written with the since class of the baseline, which selects
//! the same members), and is coded against the node's values as of the baseline. Clients that
//! acknowledged the same tick for a node get the same bits.

use std::hash::BuildHasherDefault;

use crate::codec::quantize::Buckets;
use crate::codec::state_bits::{self, write_entry_header};
use crate::replication::server::entry_cache::EntryCache;
use crate::replication::server::int_hasher::IntHasher;
use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{NetNode, NodeKey};
use crate::replication::server::slot_records::SlotRecords;
use crate::replication::shared::protocol;
use crate::replication::shared::value_history::{ValueHistory, DEPTH};
use crate::replication::Audience;
use crate::wire::{BitWriter, NetReader, NetWriter};

type Hashed = BuildHasherDefault<IntHasher>;

/// A state coded this tick: where its bits start in [`BitEntries::states`] (a byte boundary)
/// and how many there are.
#[derive(Debug, Clone, Copy)]
struct Coded {
    byte: u32,
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
    history: ValueHistory<Hashed>,
    /// This tick's coded states, by node slot.
    records: SlotRecords<Record>,
    /// This tick's coded states, each from a byte boundary.
    states: BitWriter,
    /// How many states were coded this tick.
    encoded: usize,
    /// Scratch: a whole state's bytes, and its values.
    scratch: NetWriter,
    values: Vec<Buckets>,
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

    /// Records `node`'s values (the state captured at `tick`) as its values from `tick` on.
    pub(crate) fn record(&mut self, states: &impl NodeStates, node: &NetNode, tick: u32) {
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
            self.history.record(node.net_id, tick, &self.values);
        } else {
            self.history.forget(node.net_id);
        }
    }

    /// Forgets node `id` (despawned).
    pub(crate) fn forget(&mut self, id: u32) {
        self.history.forget(id);
    }

    /// Forgets every node (the server stopped).
    pub(crate) fn clear(&mut self) {
        self.history.clear();
        self.begin(0);
    }

    /// The baseline a snapshot of `tick` codes the node `id` against, for a client whose
    /// `since` for it is `acked`: that tick, if it is less than [`DEPTH`] ticks back (the
    /// client still holds its values) and the node's values then are known; else none.
    fn baseline(&self, id: u32, acked: Option<u32>, tick: u32) -> Option<u32> {
        let a = acked?;
        let back = tick.wrapping_sub(a);
        (back > 0 && (back as usize) < DEPTH && self.history.as_of(id, a).is_some()).then_some(a)
    }

    /// Appends to `body` the entry of `node` (the node `key`) for `audience`, for a client
    /// whose `since` for it is `acked` (coded against the [`baseline`](Self::baseline) that
    /// gives), after the entry of net id `previous`, in a snapshot of `tick` whose default
    /// baseline is `default_back` ticks back. The state is coded on the first request this
    /// tick, found on every later one (with its baseline checked once). Returns `false`,
    /// writing nothing, if the node's state is too large for any client (see
    /// [`EntryCache::refuse`]).
    pub(crate) fn append(
        &mut self,
        body: &mut BitWriter,
        (states, entries): (&impl NodeStates, &mut EntryCache),
        (key, node, audience): (NodeKey, &NetNode, Audience),
        acked: Option<u32>,
        previous: Option<u32>,
        (tick, default_back): (u32, u32),
    ) -> bool {
        let id = key.id();
        let found = acked.and_then(|a| Some((Some(a), self.find(key, Some(a), audience)?)));
        let (baseline, coded) = match found {
            Some(found) => found,
            None => {
                let baseline = self.baseline(id, acked, tick);
                let which = (key, node, audience);
                match self.coded(states, entries, which, baseline) {
                    Some(coded) => (baseline, coded),
                    None => return false,
                }
            }
        };
        let back = baseline.map_or(0, |b| tick.wrapping_sub(b));
        let bits = coded.bits as usize;
        write_entry_header(body, previous, id, back, default_back, bits);
        let bytes = self.states_bytes();
        let appended = body.append_bits(bytes, coded.byte as usize * 8, bits);
        debug_assert!(appended, "a coded state lies in the coded states");
        true
    }

    /// The coded states' bytes (each state starts on a byte boundary, and is flushed whole).
    fn states_bytes(&mut self) -> &[u8] {
        self.states.finish()
    }

    /// The state of `node` for `audience` coded against `baseline`, coded now if it was not
    /// this tick; `None` if its byte entry was refused.
    fn coded(
        &mut self,
        states: &impl NodeStates,
        entries: &mut EntryCache,
        (key, node, audience): (NodeKey, &NetNode, Audience),
        baseline: Option<u32>,
    ) -> Option<Coded> {
        let id = key.id();
        if let Some(coded) = self.find(key, baseline, audience) {
            return Some(coded);
        }
        let since = baseline.and_then(|b| node.since_class(Some(b), audience));
        let state = |w: &mut NetWriter| states.write_since_for(node, since, audience, w);
        let range = entries.range(key, since, audience, state);
        if range.is_empty() {
            return None;
        }
        let mut entry = NetReader::new(entries.bytes(range));
        let Ok(Some((_, state))) = protocol::read_entry(&mut entry) else {
            debug_assert!(false, "an entry just written reads");
            return None;
        };
        let base = match baseline {
            Some(b) => self.history.as_of(id, b).unwrap_or_default(),
            None => &[],
        };
        let start = self.states.finish().len();
        let layout = states.layout_of(node);
        if state_bits::bytes_to_bits(layout, &mut NetReader::new(state), base, &mut self.states)
            .is_err()
        {
            debug_assert!(false, "a state just written reads");
            let _ = self.states.truncate_bits(start * 8);
            return None;
        }
        let coded = Coded {
            byte: u32::try_from(start).unwrap_or(u32::MAX),
            bits: u32::try_from(self.states.bit_len() - start * 8).unwrap_or(u32::MAX),
        };
        let record = Record {
            baseline,
            audience,
            coded,
        };
        self.records.push(key, record);
        self.encoded += 1;
        Some(coded)
    }
}

#[cfg(test)]
mod tests {
    use super::BitEntries;
    use crate::codec::quantize::Buckets;
    use crate::replication::shared::value_history::DEPTH;

    #[test]
    fn a_baseline_is_coded_against_only_while_the_client_still_holds_it_and_its_values_are_known() {
        let mut bits = BitEntries::default();
        bits.history.record(3, 100, &[Buckets::default()]);
        let depth = DEPTH as u32;
        assert_eq!(bits.baseline(3, Some(100), 101), Some(100));
        assert_eq!(bits.baseline(3, Some(100), 100 + depth - 1), Some(100));
        assert_eq!(bits.baseline(3, Some(100), 100 + depth), None, "too old");
        assert_eq!(bits.baseline(3, Some(99), 101), None, "values unknown then");
        assert_eq!(bits.baseline(3, None, 101), None, "a resync");
        assert_eq!(bits.baseline(4, Some(100), 101), None, "no values");
        bits.forget(3);
        assert_eq!(bits.baseline(3, Some(100), 101), None);
    }
}
