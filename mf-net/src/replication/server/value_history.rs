//! [`ValueHistory`]: the recent member values of each node, by tick, as bit-packed snapshot
//! entries are coded against them (see [`state_bits`](crate::codec::state_bits)).
//!
//! The server records a node's values at every tick it changes and asks for its values
//! [as of](ValueHistory::as_of) a client's acknowledged tick. A baseline more than the
//! [depth](baseline_depth) − 1 ticks back is not coded against (the server sends the whole
//! state, from zero), so a node keeps the records that some tick in that reach reads: its
//! newest, and each older one until the record after it is that far back — up to the depth for
//! a node that changes every tick, one for a node that changed once. The client keeps the
//! values of the ticks it decoded in its own form, a record per tick modulo the depth
//! (`client::baselines`).

use crate::cache_hint::prefetch;
use crate::codec::quantize::Buckets;
use crate::replication::server::node_table::NodeKey;
use crate::replication::server::region_pool::RegionPool;
#[cfg(doc)]
use crate::replication::shared::protocol::baseline_depth;
use crate::replication::shared::protocol::{MAX_BASELINE_DEPTH, MIN_BASELINE_DEPTH};
use crate::tick::tick_after;

/// No region.
const NONE: u32 = u32::MAX;

/// One node slot's records: a ring of `cap` records (a power of two up to the depth,
/// as the node needs more) in its region of [`ValueHistory::regions`], each its tick (in the
/// first word of a `Buckets`) then its `slots` values, side by side, so that reading the
/// newest record (the usual baseline) reads one or two cache lines.
#[derive(Debug, Clone, Copy)]
struct Ring {
    /// The net id of the node whose records these are.
    id: u32,
    /// Where its region starts ([`NONE`]: it has none yet).
    start: u32,
    /// Values per record, and the most its region has room for.
    slots: u32,
    room: u32,
    /// How many records its region has room for, how many it holds, and where the next one
    /// goes.
    cap: u8,
    len: u8,
    next: u8,
}

impl Ring {
    const EMPTY: Self = Self {
        id: 0,
        start: NONE,
        slots: 0,
        room: 0,
        cap: 0,
        len: 0,
        next: 0,
    };

    /// The length of a region of `cap` records of `room` values.
    fn region(room: u32, cap: u8) -> usize {
        (1 + room as usize) * usize::from(cap)
    }

    /// The length of its region.
    fn len_of_region(&self) -> usize {
        Self::region(self.room, self.cap)
    }

    /// Where the record at ring position `at` starts in its region, and its length.
    fn record(&self, at: usize) -> (usize, usize) {
        let stride = 1 + self.slots as usize;
        (at * stride, stride)
    }

    /// Ring position `at` modulo its capacity (a power of two: a mask, not a division).
    fn wrap(&self, at: usize) -> usize {
        debug_assert!(self.cap.is_power_of_two());
        at & (usize::from(self.cap) - 1)
    }

    /// The ring position `back` records before the next one.
    fn back(&self, back: usize) -> usize {
        debug_assert!(back <= usize::from(self.cap));
        self.wrap(usize::from(self.next) + usize::from(self.cap) - back)
    }

    /// Moves past a record written at the next position: the one after it is next, and the
    /// ring holds one more, up to its capacity.
    fn advance(&mut self) {
        // Below the depth, at most `MAX_BASELINE_DEPTH`, which fits a byte.
        #[allow(clippy::cast_possible_truncation)]
        {
            self.next = self.wrap(usize::from(self.next) + 1) as u8;
        }
        self.len = (self.len + 1).min(self.cap);
    }

    /// Ring positions of its records, newest first.
    fn newest_first(&self) -> impl Iterator<Item = usize> + '_ {
        (1..=usize::from(self.len)).map(|back| self.back(back))
    }

    /// The ring position of its oldest record.
    fn oldest(&self) -> usize {
        self.back(usize::from(self.len))
    }
}

/// Writes a record: its tick (in the first word of a `Buckets`), then its values (`record` is
/// one longer than `values`).
fn fill(record: &mut [Buckets], tick: u32, values: &[Buckets]) {
    record[0] = Buckets::from_words([tick, 0, 0, 0]);
    record[1..].copy_from_slice(values);
}

/// A node's values as of a tick ([`ValueHistory::as_of`]).
#[derive(Clone, Copy)]
pub(crate) struct AsOf<'a> {
    /// The tick of the record that holds them.
    pub(crate) recorded: u32,
    /// The tick of the next record, if there is one: they hold until then.
    pub(crate) until: Option<u32>,
    /// The values.
    pub(crate) values: &'a [Buckets],
}

/// The recent values of many nodes, by node slot (see the [module documentation](self)).
/// Allocates for a node slot the first time a node in it records, and again as its node needs
/// room for more records (or wider ones), a region given back going to the next ring of its
/// size; a new node in the slot starts again from one record.
///
/// Rings grow by at most [`GROWTH_PER_TICK`] values a tick in all. When many nodes start
/// changing at once (an explosion sets ten thousand idle bodies moving), every ring would
/// grow to its full size in the same tick: tens of megabytes written in one tick (37 ms for
/// ten thousand bodies of three members). A ring that finds the tick's growth spent stays as
/// it is and drops its oldest record, as a full ring at its largest does; it grows in a later
/// tick. Until then, a client whose baseline for the node read the dropped record is sent the
/// node's state from zero, as it is for a baseline out of reach.
///
/// Each slot's ring (20 bytes) sits in one table in slot order, and every ring's records in
/// one pool of pages: finding a node's newest record reads its ring and then the record, with
/// nothing between. A ring knows its node's id: a record of a node gone from the slot is
/// never read for the node after it.
pub(crate) struct ValueHistory {
    /// Each node slot's ring.
    rings: Vec<Ring>,
    /// Every ring's records.
    regions: RegionPool<Buckets>,
    /// The tick the rings last grew at, and by how many values in all then.
    grown: (u32, usize),
    /// How many ticks back a baseline may be ([`baseline_depth`]): the most records a ring
    /// holds.
    depth: usize,
}

impl Default for ValueHistory {
    fn default() -> Self {
        Self {
            rings: Vec::new(),
            regions: RegionPool::default(),
            grown: (0, 0),
            depth: MIN_BASELINE_DEPTH,
        }
    }
}

const _: () = assert!(MAX_BASELINE_DEPTH <= u8::MAX as usize);

/// The most values the rings grow by in one tick (a mebibyte of them; see [`ValueHistory`]).
const GROWTH_PER_TICK: usize = (1 << 20) / size_of::<Buckets>();

impl ValueHistory {
    /// How many ticks back a baseline may be ([`baseline_depth`]; a power of two from
    /// [`MIN_BASELINE_DEPTH`] to [`MAX_BASELINE_DEPTH`]): rings hold at most that many records.
    /// Another depth forgets every record.
    pub(crate) fn set_depth(&mut self, depth: usize) {
        debug_assert!(depth.is_power_of_two());
        let depth = depth.clamp(MIN_BASELINE_DEPTH, MAX_BASELINE_DEPTH);
        if depth != self.depth {
            self.clear();
            self.depth = depth;
        }
    }

    /// How many ticks back a baseline may be.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Records `values` as node `key`'s at `tick`, replacing a record of the same tick; the
    /// oldest record goes once no tick within reach of `tick` reads it. Ticks are recorded in
    /// increasing order: a tick not after the newest record's starts the node's records over.
    #[inline]
    pub(crate) fn record(&mut self, key: NodeKey, tick: u32, values: &[Buckets]) {
        if !self.record_next(key, tick, values) {
            self.record_anew(key, tick, values);
        }
    }

    /// [`record`](Self::record) beyond [`record_next`](Self::record_next)'s case: a node's
    /// first record, a ring to grow, a tick recorded again or recorded out of order. Out of
    /// line: a node changing at a steady pace comes here until its ring has grown.
    #[inline(never)]
    fn record_anew(&mut self, key: NodeKey, tick: u32, values: &[Buckets]) {
        let Some(mut ring) = self.ring_for(key, values.len()) else {
            return self.forget(key);
        };
        let newest = ring.newest_first().next();
        let newest = newest.map(|at| (at, self.tick_at(&ring, at)));
        let at = match newest {
            Some((at, t)) if t == tick => at,
            Some((_, t)) if !tick_after(tick, t) => {
                (ring.len, ring.next) = (0, 0);
                0
            }
            _ => {
                let full = ring.len == ring.cap;
                if full && usize::from(ring.cap) < self.depth && self.oldest_read(&ring, tick) {
                    // The ticks since the newest record (older ones may be far older: a
                    // spawn's values, recorded before the node first moved).
                    let pace = newest.map_or(1, |(_, t)| tick.wrapping_sub(t));
                    match self.grow(ring, pace, tick) {
                        Some(Some(grown)) => ring = grown,
                        // The tick's growth is spent: the oldest record goes.
                        Some(None) => {}
                        None => return self.forget(key),
                    }
                }
                usize::from(ring.next)
            }
        };
        if at == usize::from(ring.next) {
            ring.advance();
        }
        self.rings[key.slot()] = ring;
        let (start, stride) = ring.record(at);
        let region = self.regions.region_mut(ring.start, ring.len_of_region());
        debug_assert!(
            start + stride <= region.len(),
            "a record lies in its ring's region"
        );
        if let Some(record) = region.get_mut(start..start + stride) {
            fill(record, tick, values);
        }
    }

    /// [`record`](Self::record)'s common case, in one look at the ring: the ring is the
    /// node's, of records of this width, its newest record is before `tick`, and the next
    /// record goes where no growth is due (the ring has room, or it is at its largest); the
    /// record is written there. Returns `false`, changing nothing, in any other case.
    #[inline(always)]
    fn record_next(&mut self, key: NodeKey, tick: u32, values: &[Buckets]) -> bool {
        let Some(ring) = self.rings.get_mut(key.slot()) else {
            return false;
        };
        let fits = ring.id == key.id() && ring.slots as usize == values.len();
        let room = ring.len < ring.cap || usize::from(ring.cap) == self.depth;
        if !(fits && room && ring.len > 0 && ring.start != NONE) {
            return false;
        }
        let (newest, _) = ring.record(ring.back(1));
        let (next, stride) = ring.record(usize::from(ring.next));
        let region = self.regions.region_mut(ring.start, ring.len_of_region());
        let Some(&newest) = region.get(newest) else {
            return false;
        };
        let Some(record) = region.get_mut(next..next + stride) else {
            return false;
        };
        if !tick_after(tick, newest.words()[0]) {
            return false;
        }
        fill(record, tick, values);
        ring.advance();
        true
    }

    /// Whether a snapshot of `tick` (or later) may read `ring`'s oldest record: a baseline
    /// within reach lies before the record after it (or there is none after it).
    fn oldest_read(&self, ring: &Ring, tick: u32) -> bool {
        let after = ring.wrap(ring.oldest() + 1);
        let after = match ring.len > 1 {
            true => self.tick_at(ring, after),
            false => tick,
        };
        // Baselines within reach are 1 to `depth - 1` ticks back.
        (tick.wrapping_sub(after) as usize) < self.depth - 1
    }

    /// `ring`, full, moved to a region of more records (its records kept, oldest first) for a
    /// record `pace` ticks after its newest, at `tick`: one grows to two; two or more to as
    /// many as a node changing at that pace keeps within reach (rounded up to a power of two,
    /// at least twice as many, at most the depth). Sized by the pace rather than
    /// doubled step by step: nodes that move in step grow together, and the regions each step
    /// left behind would serve no one. `Some(None)` if the rings grew by
    /// [`GROWTH_PER_TICK`] values at `tick` already; `None` if the pool cannot name more pages.
    fn grow(&mut self, ring: Ring, pace: u32, tick: u32) -> Option<Option<Ring>> {
        let cap = match ring.cap {
            0 | 1 => 2,
            cap => {
                let pace = pace.max(1);
                // The records a baseline 1 to `depth - 1` ticks back reads, and the newest.
                let most = u32::try_from(self.depth).unwrap_or(u32::MAX);
                let need = (most - 1).div_ceil(pace) + 1;
                let cap = need.next_power_of_two().clamp(2 * u32::from(cap), most);
                // At most `MAX_BASELINE_DEPTH`, which fits a byte.
                u8::try_from(cap).unwrap_or(u8::MAX)
            }
        };
        let len = Ring::region(ring.room, cap);
        if self.grown.0 != tick {
            self.grown = (tick, 0);
        }
        // The first ring to grow in a tick always may (a record wider than the budget would
        // otherwise never have room for more than one).
        if self.grown.1 > 0 && self.grown.1 + len > GROWTH_PER_TICK {
            return Some(None);
        }
        self.grown.1 += len;
        let start = self.regions.take(len)?;
        let mut grown = Ring { start, cap, ..ring };
        grown.next = grown.wrap(usize::from(ring.len)) as u8;
        let stride = 1 + ring.slots as usize;
        for i in 0..usize::from(ring.len) {
            let from = ring.record(ring.wrap(ring.oldest() + i)).0;
            let to = grown.record(i).0;
            self.regions.copy((ring.start, from), (start, to), stride);
        }
        self.regions.give(ring.start, ring.len_of_region());
        Some(Some(grown))
    }

    /// Node `key`'s ring, made its own (with no records, room for one) if it held another
    /// node's or records of another width, with a region of room for `slots` values a
    /// record; `None` if the pool cannot name more pages.
    fn ring_for(&mut self, key: NodeKey, slots: usize) -> Option<Ring> {
        if key.slot() >= self.rings.len() {
            self.rings.resize(key.slot() + 1, Ring::EMPTY);
        }
        let slots = u32::try_from(slots).ok()?;
        let mut ring = self.rings[key.slot()];
        let fresh = ring.id != key.id() || ring.slots != slots;
        if ring.start == NONE || slots > ring.room || (fresh && ring.cap > 1) {
            if ring.start != NONE {
                self.regions.give(ring.start, ring.len_of_region());
                ring.start = NONE;
                self.rings[key.slot()] = ring;
            }
            let room = slots.max(ring.room);
            ring.start = self.regions.take(Ring::region(room, 1))?;
            (ring.room, ring.cap, ring.len, ring.next) = (room, 1, 0, 0);
        }
        if fresh {
            (ring.id, ring.slots, ring.len, ring.next) = (key.id(), slots, 0, 0);
        }
        self.rings[key.slot()] = ring;
        Some(ring)
    }

    /// Hints the processor to bring `key`'s ring into the cache, ahead of
    /// [`prefetch_next`](Self::prefetch_next).
    #[inline]
    pub(crate) fn prefetch_ring(&self, key: NodeKey) {
        prefetch(&self.rings, key.slot());
    }

    /// Hints the processor to bring the record `key`'s next [`record`](Self::record) writes
    /// into the cache (its first and last values), and the newest one it holds.
    #[inline]
    pub(crate) fn prefetch_next(&self, key: NodeKey) {
        let Some(ring) = self.rings.get(key.slot()) else {
            return;
        };
        if ring.start == NONE {
            return;
        }
        let region = self.records(ring);
        for at in [usize::from(ring.next), ring.back(1)] {
            let (start, stride) = ring.record(at);
            prefetch(region, start);
            prefetch(region, start + stride - 1);
        }
    }

    /// Hints the processor to bring `key`'s newest `back` records into the cache: those
    /// [`as_of`](Self::as_of) reads for a baseline `back` records back (for a node recorded
    /// every tick, this tick's among them, `back - 1` ticks back).
    #[inline]
    pub(crate) fn prefetch_back(&self, key: NodeKey, back: u32) {
        let Some(ring) = self.rings.get(key.slot()) else {
            return;
        };
        if ring.start == NONE {
            return;
        }
        let region = self.records(ring);
        for back in 1..=(back as usize).min(usize::from(ring.len)) {
            let (start, stride) = ring.record(ring.back(back));
            prefetch(region, start);
            prefetch(region, start + stride - 1);
        }
    }

    /// Node `key`'s ring, if it holds records of it.
    fn get(&self, key: NodeKey) -> Option<&Ring> {
        self.rings
            .get(key.slot())
            .filter(|ring| ring.id == key.id() && ring.len > 0)
    }

    /// `ring`'s region.
    #[inline]
    fn records(&self, ring: &Ring) -> &[Buckets] {
        let region = self.regions.region(ring.start, ring.len_of_region());
        debug_assert_eq!(
            region.len(),
            ring.len_of_region(),
            "a ring's region is in the pool"
        );
        region
    }

    /// The tick of `ring`'s record at ring position `at`.
    fn tick_at(&self, ring: &Ring, at: usize) -> u32 {
        self.records(ring)
            .get(ring.record(at).0)
            .map_or(0, |b| b.words()[0])
    }

    /// The values of `ring`'s record at ring position `at`.
    #[cfg(test)]
    fn values_at(&self, ring: &Ring, at: usize) -> &[Buckets] {
        let (start, stride) = ring.record(at);
        self.records(ring)
            .get(start + 1..start + stride)
            .unwrap_or(&[])
    }

    /// Node `key`'s values as of `tick`: its newest record at or before `tick`, if it still
    /// holds one (the server records every change, so that record is the value then), with
    /// the tick of that record and that of the next (`None`: it is the newest).
    pub(crate) fn as_of(&self, key: NodeKey, tick: u32) -> Option<AsOf<'_>> {
        let ring = self.get(key)?;
        let region = self.records(ring);
        let mut until = None;
        for at in ring.newest_first() {
            let (start, stride) = ring.record(at);
            let recorded = region.get(start)?.words()[0];
            if !tick_after(recorded, tick) {
                let values = region.get(start + 1..start + stride)?;
                return Some(AsOf {
                    recorded,
                    until,
                    values,
                });
            }
            until = Some(recorded);
        }
        None
    }

    /// Node `key`'s values recorded at exactly `tick`.
    #[cfg(test)]
    pub(crate) fn exact(&self, key: NodeKey, tick: u32) -> Option<&[Buckets]> {
        let ring = self.get(key)?;
        let at = ring
            .newest_first()
            .find(|&at| self.tick_at(ring, at) == tick)?;
        Some(self.values_at(ring, at))
    }

    /// How many records node `key`'s ring has room for.
    #[cfg(test)]
    fn capacity(&self, key: NodeKey) -> u8 {
        self.get(key).map_or(0, |ring| ring.cap)
    }

    /// Forgets node `key` (despawned).
    pub(crate) fn forget(&mut self, key: NodeKey) {
        if let Some(ring) = self.rings.get_mut(key.slot()) {
            if ring.id == key.id() {
                ring.len = 0;
            }
        }
    }

    /// Forgets every node.
    pub(crate) fn clear(&mut self) {
        for ring in &mut self.rings {
            ring.len = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ValueHistory, GROWTH_PER_TICK};
    use crate::codec::quantize::Buckets;
    use crate::replication::server::node_table::NodeKey;
    use crate::replication::shared::protocol::MIN_BASELINE_DEPTH as BASELINE_DEPTH;

    /// The key of node `id` in slot `id`.
    fn key(id: u32) -> NodeKey {
        NodeKey::new(id, id)
    }

    /// The values `as_of` gives.
    fn as_of(h: &ValueHistory, key: NodeKey, tick: u32) -> Option<&[Buckets]> {
        h.as_of(key, tick).map(|v| v.values)
    }

    fn value(v: u64) -> [Buckets; 2] {
        [Buckets::from_low_u64(v), Buckets::from_low_u64(v + 1)]
    }

    #[test]
    fn a_tick_between_two_records_reads_the_older_and_only_a_recorded_tick_reads_exactly() {
        let mut h = ValueHistory::default();
        h.record(key(7), 10, &value(1));
        h.record(key(7), 14, &value(2));
        assert_eq!(as_of(&h, key(7), 9), None);
        assert_eq!(as_of(&h, key(7), 10), Some(&value(1)[..]));
        assert_eq!(as_of(&h, key(7), 13), Some(&value(1)[..]));
        assert_eq!(as_of(&h, key(7), 20), Some(&value(2)[..]));
        assert_eq!(
            h.as_of(key(7), 13).map(|v| (v.recorded, v.until)),
            Some((10, Some(14))),
            "the record's tick, and the next's"
        );
        assert_eq!(
            h.as_of(key(7), 20).map(|v| v.until),
            Some(None),
            "the newest"
        );
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
        assert_eq!(as_of(&h, key(3), 21), Some(&value(21)[..]));
        assert_eq!(as_of(&h, key(3), 22), Some(&value(22)[..]));
        assert_eq!(as_of(&h, key(3), 12), Some(&value(12)[..]));
        assert_eq!(
            as_of(&h, key(3), 19),
            Some(&value(12)[..]),
            "the newest before a gap"
        );
        assert_eq!(as_of(&h, key(3), 11), Some(&value(11)[..]));
        assert_eq!(as_of(&h, key(3), 9), None);
        assert_eq!(
            as_of(&h, key(3), 30),
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
        assert_eq!(as_of(&h, key(1), 102), None);
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
        assert_eq!(as_of(&h, key(1), 41), None);
        h.record(key(2), 1, &value(3));
        assert_eq!(h.exact(key(2), 1), Some(&value(3)[..]));
    }

    #[test]
    fn rings_grow_by_at_most_the_budget_a_tick_and_a_ring_left_waiting_reads_nothing_it_dropped() {
        // Records of 2000 values: a ring of 32 of them is about the whole budget of a tick.
        let wide = |v: u32| vec![Buckets::from_low_u64(u64::from(v)); 2000];
        let region_of_32 = 32 * 2001;
        assert!(region_of_32 <= GROWTH_PER_TICK && 2 * region_of_32 > GROWTH_PER_TICK);
        let mut h = ValueHistory::default();
        let nodes: Vec<NodeKey> = (0..4).map(key).collect();
        // Still since tick 1, then moving every tick from 40: at 40 each ring grows to two
        // records (the spawn's, kept for baselines before 40), at 41 to 32.
        for t in [1, 40, 41, 42, 43, 44] {
            for (i, &node) in nodes.iter().enumerate() {
                h.record(node, t, &wide(t * 10 + i as u32));
            }
            let grown = nodes.iter().filter(|&&n| h.capacity(n) == 32).count();
            let expected = match t {
                1 | 40 => 0,
                // One ring grows each tick; the others drop their oldest record.
                t => (t - 40) as usize,
            };
            assert_eq!(grown, expected, "rings of 32 after tick {t}");
        }
        // The first ring grew at 41 and keeps the spawn's record; the last waited until 44,
        // a ring of two dropping its oldest record at 41, 42 and 43.
        let first = |h: &ValueHistory, node, tick| as_of(h, node, tick).map(|v| v[0]);
        let of = |v: u32| Some(Buckets::from_low_u64(u64::from(v)));
        assert_eq!(first(&h, nodes[0], 39), of(10));
        assert_eq!(first(&h, nodes[0], 41), of(410));
        assert_eq!(first(&h, nodes[3], 39), None, "dropped: sent from zero");
        assert_eq!(first(&h, nodes[3], 41), None, "dropped: sent from zero");
        assert_eq!(first(&h, nodes[3], 42), of(423));
        assert_eq!(first(&h, nodes[3], 44), of(443));
        // Grown, it keeps what a baseline within reach reads again.
        for t in 45..80 {
            h.record(nodes[3], t, &wide(t * 10 + 3));
        }
        assert_eq!(first(&h, nodes[3], 79 - 31), of(483));
    }

    #[test]
    fn a_ring_wider_than_a_tick_s_growth_grows_when_it_is_the_first_to_grow_in_its_tick() {
        let wide = |v: u32| vec![Buckets::from_low_u64(u64::from(v)); 3000];
        const { assert!(32 * 3001 > GROWTH_PER_TICK) };
        let mut h = ValueHistory::default();
        let (a, b) = (key(1), key(2));
        for t in 1..=3 {
            h.record(a, t, &wide(t));
            h.record(b, t, &wide(t));
        }
        assert_eq!(
            (h.capacity(a), h.capacity(b)),
            (32, 2),
            "one grows at tick 3"
        );
        h.record(b, 4, &wide(4));
        assert_eq!(h.capacity(b), 32, "the other at tick 4");
    }

    #[test]
    fn a_ring_has_room_for_the_records_a_baseline_within_reach_reads() {
        let mut h = ValueHistory::default();
        let (idle, busy, tenth, rare) = (key(1), key(2), key(3), key(4));
        let (third, quicker) = (key(5), key(6));
        for t in 0..200 {
            if t % 3 == 0 {
                h.record(third, t, &value(u64::from(t)));
            }
            if t % 10 == 0 || t > 150 {
                h.record(quicker, t, &value(u64::from(t)));
            }
            if t == 0 {
                h.record(idle, t, &value(0));
            }
            if t % 32 == 0 {
                h.record(rare, t, &value(u64::from(t)));
            }
            h.record(busy, t, &value(u64::from(t)));
            if t % 10 == 0 {
                h.record(tenth, t, &value(u64::from(t)));
            }
        }
        assert_eq!(h.capacity(idle), 1, "a node that changed once");
        assert_eq!(
            h.capacity(rare),
            2,
            "every 32nd tick: the newest, and the one a baseline 31 back reads"
        );
        assert_eq!(h.capacity(busy), BASELINE_DEPTH as u8, "every tick");
        // Every tenth tick: a baseline 1 to 31 ticks back reads one of the last four records
        // or the one before them (five), in a ring sized by that pace.
        assert_eq!(h.capacity(tenth), 8, "every tenth tick (5 read)");
        assert_eq!(h.capacity(third), 16, "every third tick (12 read)");
        assert_eq!(
            h.capacity(quicker),
            BASELINE_DEPTH as u8,
            "every tenth, then every tick"
        );
        assert_eq!(as_of(&h, idle, 199), Some(&value(0)[..]));
        assert_eq!(as_of(&h, rare, 169), Some(&value(160)[..]));
        assert_eq!(as_of(&h, tenth, 169), Some(&value(160)[..]));
        assert_eq!(as_of(&h, busy, 169), Some(&value(169)[..]));
        assert_eq!(as_of(&h, third, 169), Some(&value(168)[..]));
        assert_eq!(as_of(&h, quicker, 169), Some(&value(169)[..]));
    }

    #[test]
    fn at_a_deeper_reach_rings_hold_more_records() {
        let mut h = ValueHistory::default();
        h.set_depth(64);
        let (busy, tenth) = (key(1), key(2));
        for t in 0..300 {
            h.record(busy, t, &value(u64::from(t)));
            if t % 10 == 0 {
                h.record(tenth, t, &value(u64::from(t)));
            }
        }
        assert_eq!(h.capacity(busy), 64, "every tick");
        assert_eq!(h.capacity(tenth), 8, "every tenth tick (7 read)");
        assert_eq!(as_of(&h, busy, 299 - 63), Some(&value(236)[..]));
        assert_eq!(as_of(&h, tenth, 299 - 63), Some(&value(230)[..]));
    }

    #[test]
    fn records_kept_by_need_read_as_records_kept_whole_for_every_baseline_within_reach() {
        // A model: every record of every node, against the history, after each record, for
        // every baseline within reach of it; nodes changing at random rates, despawned and
        // replaced in their slots; at each depth (30, 128 and 255 ticks a second).
        for depth in [32, 64, 128] {
            records_kept_by_need_read_as_records_kept_whole_at(depth);
        }
    }

    fn records_kept_by_need_read_as_records_kept_whole_at(depth: usize) {
        let mut h = ValueHistory::default();
        h.set_depth(depth);
        let mut all: Vec<Vec<(u32, [Buckets; 2])>> = vec![Vec::new(); 8];
        let mut ids = [0u32; 8];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        // How often each slot's node changes: every tick to once in forty, now and then
        // another rate.
        let mut rates = [1, 1, 2, 3, 10, 40, 1, 5];
        let mut tick = 1000u32;
        for _ in 0..1500 {
            tick += 1 + u32::from(rnd(8) == 0) * rnd(40) as u32;
            for slot in 0..8 {
                if rnd(300) == 0 {
                    h.forget(NodeKey::new(slot as u32, ids[slot]));
                    ids[slot] += 8;
                    all[slot].clear();
                    rates[slot] = 1 + rnd(20);
                }
                if rnd(rates[slot]) != 0 {
                    continue;
                }
                let node = NodeKey::new(slot as u32, ids[slot]);
                let v = value(rnd(1 << 40));
                h.record(node, tick, &v);
                all[slot].push((tick, v));
                for back in 1..depth as u32 {
                    let a = tick - back;
                    let want = all[slot].iter().rposition(|&(t, _)| t <= a).map(|i| {
                        let until = all[slot].get(i + 1).map(|&(t, _)| t);
                        (all[slot][i].0, until, all[slot][i].1)
                    });
                    let got = h
                        .as_of(node, a)
                        .map(|v| (v.recorded, v.until, [v.values[0], v.values[1]]));
                    assert_eq!(
                        got, want,
                        "depth {depth}: node {node:?} as of {a} at {tick}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_node_taking_a_slot_reads_only_its_own_records_at_any_width() {
        let mut h = ValueHistory::default();
        let (old, new) = (NodeKey::new(1, 4), NodeKey::new(1, 9));
        h.record(old, 10, &value(1));
        h.record(new, 11, &[Buckets::from_low_u64(7)]);
        assert_eq!(as_of(&h, old, 10), None, "the slot's old node");
        assert_eq!(as_of(&h, new, 11), Some(&[Buckets::from_low_u64(7)][..]));
        // Wider than the slot's room: a new region, the other slots' records untouched.
        h.record(key(2), 11, &value(5));
        let wide = [Buckets::from_low_u64(1); 5];
        h.record(new, 12, &wide);
        assert_eq!(as_of(&h, new, 12), Some(&wide[..]));
        assert_eq!(as_of(&h, new, 11), None, "records of the narrower width");
        assert_eq!(as_of(&h, key(2), 11), Some(&value(5)[..]));
    }
}
