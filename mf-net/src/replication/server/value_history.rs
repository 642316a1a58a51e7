//! [`ValueHistory`]: the recent member values of each node, by tick, as bit-packed snapshot
//! entries are coded against them (see [`state_bits`](crate::codec::state_bits)).
//!
//! The server records a node's values at every tick it changes and asks for its values
//! [as of](ValueHistory::as_of) a client's acknowledged tick. Each node keeps its last
//! [`BASELINE_DEPTH`] records: a baseline older than that is not coded against (the server
//! sends the whole state, from zero). The client keeps the values of the ticks it decoded in its own
//! form, a record per tick modulo [`BASELINE_DEPTH`] (`client::baselines`).

use crate::codec::quantize::Buckets;
use crate::replication::server::node_table::NodeKey;
use crate::replication::shared::protocol::BASELINE_DEPTH;
use crate::tick::tick_after;

/// One node's records: a ring of records, each its tick (in the first word of a `Buckets`)
/// then its `slots` values, side by side, so that reading the newest record (the usual
/// baseline) reads one or two cache lines.
#[derive(Debug, Default)]
pub(crate) struct NodeHistory {
    /// The net id of the node whose records these are.
    id: u32,
    /// How many records it holds (up to [`BASELINE_DEPTH`]).
    len: usize,
    /// Where the next record goes.
    next: usize,
    /// Values per record.
    slots: usize,
    records: Vec<Buckets>,
}

impl NodeHistory {
    /// Starts over as node `id`'s, with records of `slots` values.
    fn reset(&mut self, id: u32, slots: usize) {
        self.id = id;
        self.len = 0;
        self.next = 0;
        self.slots = slots;
        self.records.clear();
        self.records
            .resize((1 + slots) * BASELINE_DEPTH, Buckets::default());
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
        (1..=self.len).map(move |back| (self.next + BASELINE_DEPTH - back) % BASELINE_DEPTH)
    }

    /// Records `values` (as many as its width) at `tick`, replacing a record of the same
    /// tick; the oldest record goes once there are [`BASELINE_DEPTH`]. Ticks are recorded in
    /// increasing order: a tick not after the newest record's starts it over.
    pub(crate) fn push(&mut self, tick: u32, values: &[Buckets]) {
        let newest = self.newest_first().next().map(|at| (at, self.tick_at(at)));
        let at = match newest {
            Some((at, t)) if t == tick => at,
            Some((_, t)) if !tick_after(tick, t) => {
                self.reset(self.id, self.slots);
                0
            }
            _ => self.next,
        };
        if at == self.next {
            self.next = (self.next + 1) % BASELINE_DEPTH;
            self.len = (self.len + 1).min(BASELINE_DEPTH);
        }
        let stride = 1 + self.slots;
        let record = &mut self.records[at * stride..(at + 1) * stride];
        record[0] = Buckets::from_words([tick, 0, 0, 0]);
        let n = self.slots.min(values.len());
        record[1..1 + n].copy_from_slice(&values[..n]);
    }

    /// Its values as of `tick`: its newest record at or before `tick`.
    fn as_of(&self, tick: u32) -> Option<&[Buckets]> {
        let at = self
            .newest_first()
            .find(|&at| !tick_after(self.tick_at(at), tick))?;
        Some(self.values_at(at))
    }

    /// Its values recorded at exactly `tick`.
    #[cfg(test)]
    fn exact(&self, tick: u32) -> Option<&[Buckets]> {
        let at = self.newest_first().find(|&at| self.tick_at(at) == tick)?;
        Some(self.values_at(at))
    }
}

/// No place in [`ValueHistory::records`].
const NONE: u32 = u32::MAX;

/// The recent values of many nodes, by node slot (see the [module documentation](self)).
/// Allocates for a node slot the first time a node in it records, and never again for it but
/// to make a record wider.
///
/// Each slot keeps only its place among the records (4 bytes a slot), not the records
/// themselves (some hundred bytes each), and the records know their node's id: a record of a
/// node gone from the slot is never read for the node after it.
#[derive(Default)]
pub(crate) struct ValueHistory {
    /// Each node slot's place in `records` ([`NONE`]: none).
    places: Vec<u32>,
    records: Vec<NodeHistory>,
}

impl ValueHistory {
    /// Records `values` as node `key`'s at `tick` (see [`NodeHistory::push`]).
    pub(crate) fn record(&mut self, key: NodeKey, tick: u32, values: &[Buckets]) {
        self.node(key, values.len()).push(tick, values);
    }

    /// Node `key`'s records (of `slots` values each: made empty if it has none, or records of
    /// another node or another width).
    fn node(&mut self, key: NodeKey, slots: usize) -> &mut NodeHistory {
        if key.slot() >= self.places.len() {
            self.places.resize(key.slot() + 1, NONE);
        }
        let place = &mut self.places[key.slot()];
        if *place == NONE {
            *place = u32::try_from(self.records.len()).unwrap_or(NONE);
            let mut fresh = NodeHistory::default();
            fresh.reset(key.id(), slots);
            self.records.push(fresh);
        }
        let node = &mut self.records[*place as usize];
        if node.id != key.id() || node.slots != slots {
            node.reset(key.id(), slots);
        }
        node
    }

    /// Node `key`'s records, if it has any.
    fn get(&self, key: NodeKey) -> Option<&NodeHistory> {
        let place = *self.places.get(key.slot())?;
        self.records
            .get(place as usize)
            .filter(|node| node.id == key.id() && node.len > 0)
    }

    /// Node `key`'s values as of `tick`: its newest record at or before `tick`, if it still
    /// holds one (the server records every change, so that record is the value then).
    pub(crate) fn as_of(&self, key: NodeKey, tick: u32) -> Option<&[Buckets]> {
        self.get(key)?.as_of(tick)
    }

    /// Node `key`'s values recorded at exactly `tick`.
    #[cfg(test)]
    pub(crate) fn exact(&self, key: NodeKey, tick: u32) -> Option<&[Buckets]> {
        self.get(key)?.exact(tick)
    }

    /// Forgets node `key` (despawned).
    pub(crate) fn forget(&mut self, key: NodeKey) {
        let place = self.places.get(key.slot()).copied().unwrap_or(NONE);
        if let Some(node) = self.records.get_mut(place as usize) {
            if node.id == key.id() {
                node.len = 0;
            }
        }
    }

    /// Forgets every node.
    pub(crate) fn clear(&mut self) {
        for node in &mut self.records {
            node.len = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ValueHistory, BASELINE_DEPTH};
    use crate::codec::quantize::Buckets;
    use crate::replication::server::node_table::NodeKey;

    /// The key of node `id` in slot `id`.
    fn key(id: u32) -> NodeKey {
        NodeKey::new(id, id)
    }

    fn value(v: u64) -> [Buckets; 2] {
        [Buckets::from_low_u64(v), Buckets::from_low_u64(v + 1)]
    }

    #[test]
    fn a_tick_between_two_records_reads_the_older_and_only_a_recorded_tick_reads_exactly() {
        let mut h = ValueHistory::default();
        h.record(key(7), 10, &value(1));
        h.record(key(7), 14, &value(2));
        assert_eq!(h.as_of(key(7), 9), None);
        assert_eq!(h.as_of(key(7), 10), Some(&value(1)[..]));
        assert_eq!(h.as_of(key(7), 13), Some(&value(1)[..]));
        assert_eq!(h.as_of(key(7), 20), Some(&value(2)[..]));
        assert_eq!(h.exact(key(7), 14), Some(&value(2)[..]));
        assert_eq!(h.exact(key(7), 13), None);
        assert_eq!(h.exact(key(8), 14), None);
    }

    #[test]
    fn ticks_in_a_row_and_across_gaps_read_the_newest_record_at_or_before_them() {
        let mut h = ValueHistory::default();
        for t in [10, 11, 12, 20, 21, 22] {
            h.record(key(3), t, &value(u64::from(t)));
        }
        assert_eq!(h.as_of(key(3), 21), Some(&value(21)[..]));
        assert_eq!(h.as_of(key(3), 22), Some(&value(22)[..]));
        assert_eq!(h.as_of(key(3), 12), Some(&value(12)[..]));
        assert_eq!(
            h.as_of(key(3), 19),
            Some(&value(12)[..]),
            "the newest before a gap"
        );
        assert_eq!(h.as_of(key(3), 11), Some(&value(11)[..]));
        assert_eq!(h.as_of(key(3), 9), None);
        assert_eq!(
            h.as_of(key(3), 30),
            Some(&value(22)[..]),
            "after the newest"
        );
    }

    #[test]
    fn the_oldest_record_goes_after_depth_and_a_same_tick_record_replaces() {
        let mut h = ValueHistory::default();
        for t in 0..BASELINE_DEPTH as u32 + 3 {
            h.record(key(1), 100 + t, &value(u64::from(t)));
        }
        assert_eq!(h.exact(key(1), 102), None);
        assert_eq!(h.as_of(key(1), 102), None);
        assert_eq!(h.exact(key(1), 103), Some(&value(3)[..]));
        h.record(key(1), 134, &value(9));
        assert_eq!(h.exact(key(1), 134), Some(&value(9)[..]));
        assert_eq!(
            h.exact(key(1), 103),
            Some(&value(3)[..]),
            "nothing pushed out"
        );
    }

    #[test]
    fn a_tick_going_back_or_another_width_starts_over_and_forgotten_nodes_read_nothing() {
        let mut h = ValueHistory::default();
        h.record(key(1), 50, &value(1));
        h.record(key(1), 40, &value(2));
        assert_eq!(h.exact(key(1), 50), None);
        assert_eq!(h.exact(key(1), 40), Some(&value(2)[..]));
        h.record(key(1), 41, &[Buckets::from_low_u64(5)]);
        assert_eq!(h.exact(key(1), 40), None);
        assert_eq!(h.exact(key(1), 41), Some(&[Buckets::from_low_u64(5)][..]));
        h.forget(key(1));
        assert_eq!(h.as_of(key(1), 41), None);
        h.record(key(2), 1, &value(3));
        assert_eq!(h.exact(key(2), 1), Some(&value(3)[..]));
    }
}
