//! [`SlotRecords`]: what was made this tick for each node, found by the node's slot in the
//! node table: a head per slot (stamped with the tick's epoch, so that a new tick forgets every
//! record without touching the heads) holding the slot's newest record, and the older ones
//! linked newest first. The tick's entry cache and its bit-packed states keep theirs this way:
//! most nodes have one record a tick, read with their head rather than after it.

use crate::replication::server::node_table::NodeKey;

/// No record (the end of a slot's list).
const NONE: u32 = u32::MAX;

/// A node slot's records of this tick: the newest, and where the one before it is.
#[derive(Debug, Clone, Copy)]
struct Head<R> {
    /// The tick's epoch when it was set (another epoch: no records).
    epoch: u32,
    /// The node's net id (its key's check).
    id: u32,
    /// Its newest record (meaningless in a head of another epoch).
    newest: R,
    /// The record before it in [`SlotRecords::older`] ([`NONE`]: none).
    older: u32,
}

/// This tick's records of type `R`, by node slot (see the [module documentation](self)).
/// Allocates nothing once its buffers have grown.
#[derive(Debug)]
pub(crate) struct SlotRecords<R> {
    /// Counts ticks (from 1; heads of another epoch are empty).
    epoch: u32,
    heads: Vec<Head<R>>,
    /// Each record a newer one took the head from, and the one before it in its slot.
    older: Vec<(R, u32)>,
    /// How many records this tick holds.
    len: usize,
}

impl<R> Default for SlotRecords<R> {
    fn default() -> Self {
        Self {
            epoch: 1,
            heads: Vec::new(),
            older: Vec::new(),
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
            newest: R::default(),
            older: NONE,
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
        self.older.clear();
        self.len = 0;
    }

    /// How many records this tick holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The newest record of the node `key` this tick that `matches` accepts (always in line:
    /// the snapshot walks ask it once an entry).
    #[inline(always)]
    pub(crate) fn find(&self, key: NodeKey, matches: impl Fn(&R) -> bool) -> Option<R> {
        let head = self.head(key)?;
        if matches(&head.newest) {
            return Some(head.newest);
        }
        let mut at = head.older;
        while let Some(&(record, next)) = self.older.get(at as usize) {
            if matches(&record) {
                return Some(record);
            }
            at = next;
        }
        None
    }

    /// Adds `record` as the newest of the node `key`'s this tick. In line: a record handed
    /// over through memory, written a field at a time and read back in other widths, stalls
    /// the reads on the writes.
    #[inline(always)]
    pub(crate) fn push(&mut self, key: NodeKey, record: R) {
        let older = match self.head(key).map(|head| (head.newest, head.older)) {
            Some(taken) => {
                let at = u32::try_from(self.older.len()).unwrap_or(NONE);
                self.older.push(taken);
                at
            }
            None => NONE,
        };
        let slot = key.slot();
        if slot >= self.heads.len() {
            self.heads.resize_with(slot + 1, Self::empty);
        }
        self.heads[slot] = Head {
            epoch: self.epoch,
            id: key.id(),
            newest: record,
            older,
        };
        self.len += 1;
    }

    /// Hints the processor to bring the head of `key`'s slot into the cache.
    #[inline]
    pub(crate) fn prefetch(&self, key: NodeKey) {
        crate::cache_hint::prefetch(&self.heads, key.slot());
    }

    /// The head of `key`'s slot, if it holds records of the node this tick.
    #[inline(always)]
    fn head(&self, key: NodeKey) -> Option<&Head<R>> {
        self.heads
            .get(key.slot())
            .filter(|head| head.epoch == self.epoch && head.id == key.id())
    }
}

#[cfg(test)]
mod tests {
    use super::SlotRecords;
    use crate::replication::server::node_table::NodeKey;

    #[test]
    fn records_are_found_by_slot_and_id_newest_first_until_the_next_tick() {
        let mut r = SlotRecords::<(u8, u32)>::default();
        r.begin(4);
        let (a, b) = (NodeKey::new(1, 10), NodeKey::new(2, 20));
        r.push(a, (1, 100));
        r.push(b, (1, 200));
        r.push(a, (2, 101));
        assert_eq!(r.find(a, |x| x.0 == 1), Some((1, 100)));
        assert_eq!(r.find(a, |_| true), Some((2, 101)), "newest first");
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
        assert_eq!(r.len(), 4);
        r.begin(4);
        assert_eq!(r.find(a, |_| true), None, "a new tick forgets");
        assert_eq!(r.len(), 0);
    }
}
