//! [`SlotRecords`]: what was made this tick for each node, found by the node's slot in the
//! node table: a head per slot (stamped with the tick's epoch, so that a new tick forgets every
//! record without touching the heads) and each slot's records linked newest first. The
//! tick's entry cache and its bit-packed states keep theirs this way.

use crate::replication::server::node_table::NodeKey;

/// No record (the end of a slot's list).
const NONE: u32 = u32::MAX;

/// Where a node slot's records of this tick start.
#[derive(Debug, Clone, Copy)]
struct Head {
    /// The tick's epoch when it was set (another epoch: no records).
    epoch: u32,
    /// The node's net id (its key's check).
    id: u32,
    /// Its newest record.
    record: u32,
}

const EMPTY: Head = Head {
    epoch: 0,
    id: 0,
    record: NONE,
};

/// This tick's records of type `R`, by node slot (see the [module documentation](self)).
/// Allocates nothing once its buffers have grown.
#[derive(Debug)]
pub(crate) struct SlotRecords<R> {
    /// Counts ticks (from 1; heads of another epoch are empty).
    epoch: u32,
    heads: Vec<Head>,
    /// Each record, and the previous one of its slot.
    records: Vec<(R, u32)>,
}

impl<R> Default for SlotRecords<R> {
    fn default() -> Self {
        Self {
            epoch: 1,
            heads: Vec::new(),
            records: Vec::new(),
        }
    }
}

impl<R: Copy> SlotRecords<R> {
    /// A new tick, of a node table of `slots` slots: forgets every record.
    pub(crate) fn begin(&mut self, slots: usize) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Wrapped: old heads could pass for this epoch's.
            self.heads.fill(EMPTY);
            self.epoch = 1;
        }
        if self.heads.len() < slots {
            self.heads.resize(slots, EMPTY);
        }
        self.records.clear();
    }

    /// How many records this tick holds.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// The newest record of the node `key` this tick that `matches` accepts (always in line:
    /// the snapshot walks ask it once an entry).
    #[inline(always)]
    pub(crate) fn find(&self, key: NodeKey, matches: impl Fn(&R) -> bool) -> Option<R> {
        let mut at = self.newest(key);
        while let Some(&(record, next)) = self.records.get(at as usize) {
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
        let next = self.newest(key);
        let slot = key.slot();
        if slot >= self.heads.len() {
            self.heads.resize(slot + 1, EMPTY);
        }
        self.heads[slot] = Head {
            epoch: self.epoch,
            id: key.id(),
            record: u32::try_from(self.records.len()).unwrap_or(NONE),
        };
        self.records.push((record, next));
    }

    /// The newest record of `key`'s slot this tick ([`NONE`]: none).
    fn newest(&self, key: NodeKey) -> u32 {
        match self.heads.get(key.slot()) {
            Some(head) if head.epoch == self.epoch && head.id == key.id() => head.record,
            _ => NONE,
        }
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
