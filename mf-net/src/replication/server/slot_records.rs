//! [`SlotRecords`]: what was made this tick for each node, found by the node's slot in the
//! node table: a head per slot (stamped with the tick's epoch, so that a new tick forgets every
//! record without touching the heads) holding the slot's first record, and the later ones
//! linked in the order made. The tick's entry cache and its bit-packed states keep theirs this
//! way: most nodes have one record a tick, read with their head rather than after it, and the
//! first is made for the most clients (coded ahead for the tick most of them acknowledged), so
//! a node's later records, made for fewer, are read after it.
//!
//! A copy of a record can also go in a *lane*: another table by slot, stamped as the heads
//! are, one record a slot. The bit-packed states serving the other ticks clients acknowledged
//! are copied each in the lane of its tick, so that a client who acknowledged that tick finds
//! its node's state where the slot says, one read that can be asked for ahead, rather than
//! after the head and each record before it in the list (under interest at scale, a cache
//! miss each).

use crate::replication::server::node_table::NodeKey;

/// No record (the end of a slot's list).
const NONE: u32 = u32::MAX;

/// A node slot's records of this tick: the first, and where the later ones are.
#[derive(Debug, Clone, Copy)]
struct Head<R> {
    /// The tick's epoch when it was set (another epoch: no records).
    epoch: u32,
    /// The node's net id (its key's check).
    id: u32,
    /// Its first record (meaningless in a head of another epoch).
    first: R,
    /// The record after it in [`SlotRecords::later`] ([`NONE`]: none).
    next: u32,
}

/// A record in a lane, stamped as a head is.
#[derive(Debug, Clone, Copy)]
struct Laned<R> {
    /// The tick's epoch when it was set (another epoch: no record).
    epoch: u32,
    /// The node's net id (its key's check).
    id: u32,
    record: R,
}

/// This tick's records of type `R`, by node slot (see the [module documentation](self)).
/// Allocates nothing once its buffers have grown.
#[derive(Debug)]
pub(crate) struct SlotRecords<R> {
    /// Counts ticks (from 1; heads of another epoch are empty).
    epoch: u32,
    heads: Vec<Head<R>>,
    /// Each record made after its slot's first, and the one after it in its slot.
    later: Vec<(R, u32)>,
    /// The lanes, each a record a slot (grown as records go in).
    lanes: Vec<Vec<Laned<R>>>,
    /// How many records this tick holds.
    len: usize,
}

impl<R> Default for SlotRecords<R> {
    fn default() -> Self {
        Self {
            epoch: 1,
            heads: Vec::new(),
            later: Vec::new(),
            lanes: Vec::new(),
            len: 0,
        }
    }
}

impl<R: Copy + Default> SlotRecords<R> {
    /// A head of no epoch.
    fn empty() -> Head<R> {
        Head {
            epoch: 0,
            id: 0,
            first: R::default(),
            next: NONE,
        }
    }

    /// A lane's record of no epoch.
    fn vacant() -> Laned<R> {
        Laned {
            epoch: 0,
            id: 0,
            record: R::default(),
        }
    }

    /// A new tick, of a node table of `slots` slots: forgets every record.
    pub(crate) fn begin(&mut self, slots: usize) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Wrapped: old heads could pass for this epoch's.
            self.heads.fill_with(Self::empty);
            for lane in &mut self.lanes {
                lane.fill_with(Self::vacant);
            }
            self.epoch = 1;
        }
        if self.heads.len() < slots {
            self.heads.resize_with(slots, Self::empty);
        }
        self.later.clear();
        self.len = 0;
    }

    /// How many records this tick holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// A record of the node `key` this tick that `matches` accepts: the copy in `lane`, if
    /// one is named and holds one that does; else the first in the order made (always in
    /// line: the snapshot walks ask it once an entry).
    #[inline(always)]
    pub(crate) fn find(
        &self,
        key: NodeKey,
        lane: Option<usize>,
        matches: impl Fn(&R) -> bool,
    ) -> Option<R> {
        if let Some(record) = lane.and_then(|l| self.in_lane(l, key)) {
            if matches(&record) {
                return Some(record);
            }
        }
        let head = self.head(key)?;
        if matches(&head.first) {
            return Some(head.first);
        }
        let mut at = head.next;
        while let Some(&(record, next)) = self.later.get(at as usize) {
            if matches(&record) {
                return Some(record);
            }
            at = next;
        }
        None
    }

    /// The copy in `lane` of a record of the node `key` this tick, if it holds one.
    #[inline(always)]
    fn in_lane(&self, lane: usize, key: NodeKey) -> Option<R> {
        self.lanes
            .get(lane)
            .and_then(|l| l.get(key.slot()))
            .filter(|r| r.epoch == self.epoch && r.id == key.id())
            .map(|r| r.record)
    }

    /// Puts a copy of `record`, one of the node `key`'s this tick (made with
    /// [`push`](Self::push)), in `lane`, where the lookups that name the lane find it first;
    /// nothing if the lane holds one of the node's already.
    #[inline(always)]
    pub(crate) fn copy_in(&mut self, lane: usize, key: NodeKey, record: R) {
        if self.in_lane(lane, key).is_some() {
            return;
        }
        let slot = key.slot();
        let copy = Laned {
            epoch: self.epoch,
            id: key.id(),
            record,
        };
        match self.lanes.get_mut(lane).and_then(|l| l.get_mut(slot)) {
            Some(laned) => *laned = copy,
            None => self.grow_lane(lane, slot, copy),
        }
    }

    /// Makes room in `lane` for `slot` (and as many as there are heads), and puts `copy` there.
    #[cold]
    #[inline(never)]
    fn grow_lane(&mut self, lane: usize, slot: usize, copy: Laned<R>) {
        if lane >= self.lanes.len() {
            self.lanes.resize_with(lane + 1, Vec::new);
        }
        let laned = &mut self.lanes[lane];
        if slot >= laned.len() {
            laned.resize_with((slot + 1).max(self.heads.len()), Self::vacant);
        }
        laned[slot] = copy;
    }

    /// Adds `record` as the last of the node `key`'s this tick. In line: a record handed
    /// over through memory, written a field at a time and read back in other widths, stalls
    /// the reads on the writes.
    #[inline(always)]
    pub(crate) fn push(&mut self, key: NodeKey, record: R) {
        let slot = key.slot();
        if self.head(key).is_some() {
            let at = u32::try_from(self.later.len()).unwrap_or(NONE);
            match last_of(&self.later, self.heads[slot].next) {
                Some(last) => self.later[last].1 = at,
                None => self.heads[slot].next = at,
            }
            self.later.push((record, NONE));
            self.len += 1;
            return;
        }
        if slot >= self.heads.len() {
            self.heads.resize_with(slot + 1, Self::empty);
        }
        self.heads[slot] = Head {
            epoch: self.epoch,
            id: key.id(),
            first: record,
            next: NONE,
        };
        self.len += 1;
    }

    /// Hints the processor to bring the head of `key`'s slot into the cache (the line it
    /// starts in).
    #[inline]
    pub(crate) fn prefetch(&self, key: NodeKey) {
        crate::cache_hint::prefetch(&self.heads, key.slot());
    }

    /// Hints the processor to bring in what a lookup ([`find`](Self::find)) in `lane` reads
    /// first: the node `key`'s record there, else its slot's head (both lines, where a
    /// record straddles two: the check is read with the record).
    #[inline]
    pub(crate) fn prefetch_for_find(&self, key: NodeKey, lane: Option<usize>) {
        let slot = key.slot();
        if let Some(laned) = lane.and_then(|l| self.lanes.get(l)?.get(slot)) {
            crate::cache_hint::prefetch_ref(&laned.epoch);
            crate::cache_hint::prefetch_ref(&laned.record);
        } else if let Some(head) = self.heads.get(slot) {
            crate::cache_hint::prefetch_ref(&head.epoch);
            crate::cache_hint::prefetch_ref(&head.first);
        }
    }

    /// Hints the processor to bring in the node `key`'s copy in `lane`, ahead of a
    /// [`copy_in`](Self::copy_in) there.
    #[inline]
    pub(crate) fn prefetch_lane(&self, lane: usize, key: NodeKey) {
        if let Some(laned) = self.lanes.get(lane).and_then(|l| l.get(key.slot())) {
            crate::cache_hint::prefetch_ref(&laned.epoch);
        }
    }

    /// The head of `key`'s slot, if it holds records of the node this tick.
    #[inline(always)]
    fn head(&self, key: NodeKey) -> Option<&Head<R>> {
        self.heads
            .get(key.slot())
            .filter(|head| head.epoch == self.epoch && head.id == key.id())
    }
}

/// Where in `later` the last record of the list from `next` on is (`None`: the list is empty).
#[inline(always)]
fn last_of<R>(later: &[(R, u32)], next: u32) -> Option<usize> {
    let mut last = None;
    let mut at = next as usize;
    while let Some(&(_, after)) = later.get(at) {
        last = Some(at);
        at = after as usize;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::SlotRecords;
    use crate::replication::server::node_table::NodeKey;

    #[test]
    fn records_are_found_by_slot_and_id_in_the_order_made_until_the_next_tick() {
        let mut r = SlotRecords::<(u8, u32)>::default();
        r.begin(4);
        let (a, b) = (NodeKey::new(1, 10), NodeKey::new(2, 20));
        r.push(a, (1, 100));
        r.push(b, (1, 200));
        r.push(a, (2, 101));
        assert_eq!(r.find(a, None, |x| x.0 == 1), Some((1, 100)));
        assert_eq!(
            r.find(a, None, |_| true),
            Some((1, 100)),
            "in the order made"
        );
        assert_eq!(r.find(a, None, |x| x.0 == 2), Some((2, 101)));
        r.push(a, (3, 102));
        r.push(a, (2, 103));
        assert_eq!(
            r.find(a, None, |x| x.0 == 3),
            Some((3, 102)),
            "after the head's"
        );
        assert_eq!(
            r.find(a, None, |x| x.0 == 2),
            Some((2, 101)),
            "the first of two"
        );
        assert_eq!(r.find(b, None, |x| x.0 == 2), None);
        assert_eq!(
            r.find(NodeKey::new(1, 11), None, |_| true),
            None,
            "another id in the slot"
        );
        assert_eq!(
            r.find(NodeKey::new(9, 90), None, |_| true),
            None,
            "past the heads"
        );
        r.push(NodeKey::new(9, 90), (3, 900));
        assert_eq!(r.len(), 6);
        r.begin(4);
        assert_eq!(r.find(a, None, |_| true), None, "a new tick forgets");
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn a_record_copied_in_a_lane_is_found_there_first_when_the_lane_is_named() {
        let mut r = SlotRecords::<(u8, u32)>::default();
        r.begin(4);
        let (a, b) = (NodeKey::new(1, 10), NodeKey::new(6, 60));
        r.push(a, (1, 100));
        r.push(a, (2, 101));
        r.copy_in(1, a, (2, 101));
        r.copy_in(0, b, (3, 600));
        assert_eq!(r.len(), 2, "copies are not counted");
        assert_eq!(r.find(a, Some(1), |x| x.0 == 2), Some((2, 101)), "its lane");
        assert_eq!(
            r.find(a, Some(1), |x| x.0 == 1),
            Some((1, 100)),
            "then the list"
        );
        assert_eq!(
            r.find(a, Some(0), |_| true),
            Some((1, 100)),
            "no copy there"
        );
        assert_eq!(
            r.find(b, Some(0), |_| true),
            Some((3, 600)),
            "past the heads"
        );
        assert_eq!(r.find(b, None, |_| true), None, "a lane only when named");
        assert_eq!(
            r.find(NodeKey::new(6, 61), Some(0), |_| true),
            None,
            "another id"
        );
        r.copy_in(1, a, (5, 104));
        assert_eq!(
            r.find(a, Some(1), |_| true),
            Some((2, 101)),
            "the first copy kept"
        );
        r.begin(4);
        assert_eq!(r.find(a, Some(1), |_| true), None, "a new tick forgets");
        assert_eq!(r.find(b, Some(0), |_| true), None);
    }
}
