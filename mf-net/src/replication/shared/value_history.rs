//! [`ValueHistory`]: the recent member values of each node, by tick, as bit-packed snapshot
//! entries are coded against them (see [`state_bits`](crate::codec::state_bits)).
//!
//! The server records a node's values at every tick it changes and asks for its values
//! [as of](ValueHistory::as_of) a client's acknowledged tick. Each node keeps its last
//! [`DEPTH`] records: a baseline older than that is not coded against (the server sends the
//! whole state, from zero). The client keeps the values of the ticks it decoded in its own
//! form, a record per tick modulo [`DEPTH`] (`client::baselines`).

use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::codec::quantize::Buckets;
use crate::tick::tick_after;

/// How many records each node keeps, and how many ticks back a baseline may be: a client holds
/// a record for each of its last `DEPTH` ticks that carried the node, so one at most `DEPTH - 1`
/// ticks before a snapshot is still there when the snapshot arrives.
pub(crate) const DEPTH: usize = 32;

/// One node's records: a ring of records, each its tick (in the first word of a `Buckets`)
/// then its `slots` values, side by side, so that reading the newest record (the usual
/// baseline) reads one or two cache lines.
#[derive(Debug, Default)]
pub(crate) struct NodeHistory {
    /// How many records it holds (up to [`DEPTH`]).
    len: usize,
    /// Where the next record goes.
    next: usize,
    /// Values per record.
    slots: usize,
    records: Vec<Buckets>,
}

impl NodeHistory {
    /// Starts over with records of `slots` values.
    fn reset(&mut self, slots: usize) {
        self.len = 0;
        self.next = 0;
        self.slots = slots;
        self.records.clear();
        self.records.resize((1 + slots) * DEPTH, Buckets::default());
    }

    /// The record at ring position `at`: its tick and its values.
    fn record_at(&self, at: usize) -> (u32, &[Buckets]) {
        let stride = 1 + self.slots;
        let record = &self.records[at * stride..(at + 1) * stride];
        (record[0].words()[0], &record[1..])
    }

    /// The tick of the record at ring position `at`.
    fn tick_at(&self, at: usize) -> u32 {
        self.record_at(at).0
    }

    /// The values of the record at ring position `at`.
    fn values_at(&self, at: usize) -> &[Buckets] {
        self.record_at(at).1
    }

    /// Ring positions of its records, newest first.
    fn newest_first(&self) -> impl Iterator<Item = usize> + '_ {
        (1..=self.len).map(move |back| (self.next + DEPTH - back) % DEPTH)
    }

    /// Records `values` (as many as its width) at `tick`, replacing a record of the same
    /// tick; the oldest record goes once there are [`DEPTH`]. Ticks are recorded in increasing
    /// order: a tick not after the newest record's starts it over.
    pub(crate) fn push(&mut self, tick: u32, values: &[Buckets]) {
        let newest = self.newest_first().next().map(|at| (at, self.tick_at(at)));
        let at = match newest {
            Some((at, t)) if t == tick => at,
            Some((_, t)) if !tick_after(tick, t) => {
                self.reset(self.slots);
                0
            }
            _ => self.next,
        };
        if at == self.next {
            self.next = (self.next + 1) % DEPTH;
            self.len = (self.len + 1).min(DEPTH);
        }
        let stride = 1 + self.slots;
        let record = &mut self.records[at * stride..(at + 1) * stride];
        record[0] = Buckets::from_words([tick, 0, 0, 0]);
        let n = self.slots.min(values.len());
        record[1..1 + n].copy_from_slice(&values[..n]);
    }

    /// Its values recorded at exactly `tick`.
    #[cfg(test)]
    fn exact(&self, tick: u32) -> Option<&[Buckets]> {
        let at = self.newest_first().find(|&at| self.tick_at(at) == tick)?;
        Some(self.values_at(at))
    }
}

/// The recent values of many nodes, by net id (see the [module documentation](self)).
/// Allocates for a node the first time it records, and never again for it; a forgotten node's
/// buffers are kept for the next.
///
/// The map holds only each node's place among the records (8 bytes a node), not the records
/// themselves (some hundred bytes each): it is read once per entry, and spawn churn that makes
/// it grow (tombstones filling its spare room) moves little memory.
pub(crate) struct ValueHistory<S> {
    /// Each node's place in `records`.
    index: HashMap<u32, u32, S>,
    records: Vec<NodeHistory>,
    /// Places in `records` of forgotten nodes, kept for the next.
    spare: Vec<u32>,
}

impl<S: Default> Default for ValueHistory<S> {
    fn default() -> Self {
        Self {
            index: HashMap::default(),
            records: Vec::new(),
            spare: Vec::new(),
        }
    }
}

impl<S: BuildHasher> ValueHistory<S> {
    /// Records `values` as node `id`'s at `tick` (see [`NodeHistory::push`]).
    pub(crate) fn record(&mut self, id: u32, tick: u32, values: &[Buckets]) {
        self.node(id, values.len()).push(tick, values);
    }

    /// Node `id`'s records (of `slots` values each: made empty if it has none, or records of
    /// another width).
    fn node(&mut self, id: u32, slots: usize) -> &mut NodeHistory {
        let (records, spare) = (&mut self.records, &mut self.spare);
        let at = *self.index.entry(id).or_insert_with(|| {
            let at = spare.pop().unwrap_or_else(|| {
                records.push(NodeHistory::default());
                u32::try_from(records.len() - 1).unwrap_or(u32::MAX)
            });
            if let Some(fresh) = records.get_mut(at as usize) {
                fresh.reset(slots);
            }
            at
        });
        let node = &mut self.records[at as usize];
        if node.slots != slots {
            node.reset(slots);
        }
        node
    }

    /// Node `id`'s records, if it has any.
    fn get(&self, id: u32) -> Option<&NodeHistory> {
        self.records.get(*self.index.get(&id)? as usize)
    }

    /// Node `id`'s values as of `tick`: its newest record at or before `tick`, if it still
    /// holds one (the server records every change, so that record is the value then).
    pub(crate) fn as_of(&self, id: u32, tick: u32) -> Option<&[Buckets]> {
        let node = self.get(id)?;
        let at = node
            .newest_first()
            .find(|&at| !tick_after(node.tick_at(at), tick))?;
        Some(node.values_at(at))
    }

    /// Node `id`'s values recorded at exactly `tick`.
    #[cfg(test)]
    pub(crate) fn exact(&self, id: u32, tick: u32) -> Option<&[Buckets]> {
        self.get(id)?.exact(tick)
    }

    /// Forgets node `id` (despawned).
    pub(crate) fn forget(&mut self, id: u32) {
        if let Some(at) = self.index.remove(&id) {
            self.spare.push(at);
        }
    }

    /// Forgets every node.
    pub(crate) fn clear(&mut self) {
        let spare = &mut self.spare;
        spare.extend(self.index.drain().map(|(_, at)| at));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::RandomState;

    use super::{ValueHistory, DEPTH};
    use crate::codec::quantize::Buckets;

    fn value(v: u64) -> [Buckets; 2] {
        [Buckets::from_low_u64(v), Buckets::from_low_u64(v + 1)]
    }

    #[test]
    fn a_tick_between_two_records_reads_the_older_and_only_a_recorded_tick_reads_exactly() {
        let mut h = ValueHistory::<RandomState>::default();
        h.record(7, 10, &value(1));
        h.record(7, 14, &value(2));
        assert_eq!(h.as_of(7, 9), None);
        assert_eq!(h.as_of(7, 10), Some(&value(1)[..]));
        assert_eq!(h.as_of(7, 13), Some(&value(1)[..]));
        assert_eq!(h.as_of(7, 20), Some(&value(2)[..]));
        assert_eq!(h.exact(7, 14), Some(&value(2)[..]));
        assert_eq!(h.exact(7, 13), None);
        assert_eq!(h.exact(8, 14), None);
    }

    #[test]
    fn ticks_in_a_row_and_across_gaps_read_the_newest_record_at_or_before_them() {
        let mut h = ValueHistory::<RandomState>::default();
        for t in [10, 11, 12, 20, 21, 22] {
            h.record(3, t, &value(u64::from(t)));
        }
        assert_eq!(h.as_of(3, 21), Some(&value(21)[..]));
        assert_eq!(h.as_of(3, 22), Some(&value(22)[..]));
        assert_eq!(h.as_of(3, 12), Some(&value(12)[..]));
        assert_eq!(
            h.as_of(3, 19),
            Some(&value(12)[..]),
            "the newest before a gap"
        );
        assert_eq!(h.as_of(3, 11), Some(&value(11)[..]));
        assert_eq!(h.as_of(3, 9), None);
        assert_eq!(h.as_of(3, 30), Some(&value(22)[..]), "after the newest");
    }

    #[test]
    fn the_oldest_record_goes_after_depth_and_a_same_tick_record_replaces() {
        let mut h = ValueHistory::<RandomState>::default();
        for t in 0..DEPTH as u32 + 3 {
            h.record(1, 100 + t, &value(u64::from(t)));
        }
        assert_eq!(h.exact(1, 102), None);
        assert_eq!(h.as_of(1, 102), None);
        assert_eq!(h.exact(1, 103), Some(&value(3)[..]));
        h.record(1, 134, &value(9));
        assert_eq!(h.exact(1, 134), Some(&value(9)[..]));
        assert_eq!(h.exact(1, 103), Some(&value(3)[..]), "nothing pushed out");
    }

    #[test]
    fn a_tick_going_back_or_another_width_starts_over_and_forgotten_nodes_read_nothing() {
        let mut h = ValueHistory::<RandomState>::default();
        h.record(1, 50, &value(1));
        h.record(1, 40, &value(2));
        assert_eq!(h.exact(1, 50), None);
        assert_eq!(h.exact(1, 40), Some(&value(2)[..]));
        h.record(1, 41, &[Buckets::from_low_u64(5)]);
        assert_eq!(h.exact(1, 40), None);
        assert_eq!(h.exact(1, 41), Some(&[Buckets::from_low_u64(5)][..]));
        h.forget(1);
        assert_eq!(h.as_of(1, 41), None);
        h.record(2, 1, &value(3));
        assert_eq!(h.exact(2, 1), Some(&value(3)[..]));
    }
}
