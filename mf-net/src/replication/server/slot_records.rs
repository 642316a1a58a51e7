//! [`SlotRecords`]: what was made this tick for each node, found by the node's slot in the
//! node table: a head per slot (stamped with the tick's epoch, so that a new tick forgets every
//! record without touching the heads) holding the slot's first record, and the later ones
//! linked in the order made. The tick's entry cache and its bit-packed states keep theirs this
//! way: most nodes have one record a tick, read with their head rather than after it, and the
//! first is made for the most clients (coded ahead for the tick most of them acknowledged), so
//! a node's later records, made for fewer, are read after it.

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

/// This tick's records of type `R`, by node slot (see the [module documentation](self)).
/// Allocates nothing once its buffers have grown.
#[derive(Debug)]
pub(crate) struct SlotRecords<R> {
    /// Counts ticks (from 1; heads of another epoch are empty).
    epoch: u32,
    heads: Vec<Head<R>>,
    /// Each record made after its slot's first, and the one after it in its slot.
    later: Vec<(R, u32)>,
    /// How many records this tick holds.
    len: usize,
}

impl<R> Default for SlotRecords<R> {
    fn default() -> Self {
        Self {
            epoch: 1,
            heads: Vec::new(),
            later: Vec::new(),
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

    /// A new tick, of a node table of `slots` slots: forgets every record.
    pub(crate) fn begin(&mut self, slots: usize) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Wrapped: old heads could pass for this epoch's.
            self.heads.fill_with(Self::empty);
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

    /// The first record of the node `key` this tick that `matches` accepts, in the order made
    /// (always in line: the snapshot walks ask it once an entry).
    #[inline(always)]
    pub(crate) fn find(&self, key: NodeKey, matches: impl Fn(&R) -> bool) -> Option<R> {
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

    /// Adds `record` as the last of the node `key`'s this tick. In line: a record handed
    /// over through memory, written a field at a time and read back in other widths, stalls
    /// the reads on the writes.
    #[inline(always)]
    pub(crate) fn push(&mut self, key: NodeKey, record: R) {
        self.len += 1;
        let slot = key.slot();
        if self.head(key).is_some() {
            let at = u32::try_from(self.later.len()).unwrap_or(NONE);
            match last_of(&self.later, self.heads[slot].next) {
                Some(last) => self.later[last].1 = at,
                None => self.heads[slot].next = at,
            }
            self.later.push((record, NONE));
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
    }

    /// Hints the processor to bring the head of `key`'s slot into the cache (the line it
    /// starts in).
    #[inline]
    pub(crate) fn prefetch(&self, key: NodeKey) {
        crate::cache_hint::prefetch(&self.heads, key.slot());
    }

    /// [`prefetch`](Self::prefetch), and the line of the head's check too where the head
    /// straddles two: for a lookup ([`find`](Self::find)), which reads both.
    #[inline]
    pub(crate) fn prefetch_for_find(&self, key: NodeKey) {
        if let Some(head) = self.heads.get(key.slot()) {
            crate::cache_hint::prefetch_ref(&head.epoch);
            crate::cache_hint::prefetch_ref(&head.first);
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
        assert_eq!(r.find(a, |x| x.0 == 1), Some((1, 100)));
        assert_eq!(r.find(a, |_| true), Some((1, 100)), "in the order made");
        assert_eq!(r.find(a, |x| x.0 == 2), Some((2, 101)));
        r.push(a, (3, 102));
        r.push(a, (2, 103));
        assert_eq!(r.find(a, |x| x.0 == 3), Some((3, 102)), "after the head's");
        assert_eq!(r.find(a, |x| x.0 == 2), Some((2, 101)), "the first of two");
        assert_eq!(r.find(b, |x| x.0 == 2), None);
        assert_eq!(
            r.find(NodeKey::new(1, 11), |_| true),
            None,
            "another id in the slot"
        );
        assert_eq!(
            r.find(NodeKey::new(9, 90), |_| true),
            None,
            "past the heads"
        );
        r.push(NodeKey::new(9, 90), (3, 900));
        assert_eq!(r.len(), 6);
        r.begin(4);
        assert_eq!(r.find(a, |_| true), None, "a new tick forgets");
        assert_eq!(r.len(), 0);
    }
}
