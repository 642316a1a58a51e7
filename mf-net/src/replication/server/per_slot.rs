//! [`PerSlot`]: a value for some records of a [`SlotTable`](crate::replication::server::slot_table::SlotTable),
//! stored by slot and checked against the record's id on every access, so that a value set for
//! a record is never read for another one that later took its slot.

use crate::replication::server::slot_table::Key;

/// A `V` for each record set so far, indexed by the records' slots. Values are not removed with
/// their records: a value left for a removed record answers to no key (its id is not the new
/// record's), and is replaced when [`set`](Self::set) is called for the slot's next record.
pub(crate) struct PerSlot<T, V> {
    /// By slot: the id of the record the value is for (0: none; ids start at 1), and the value.
    entries: Vec<(u32, V)>,
    _of: std::marker::PhantomData<fn() -> T>,
}

impl<T, V> Default for PerSlot<T, V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            _of: std::marker::PhantomData,
        }
    }
}

impl<T, V: Default> PerSlot<T, V> {
    /// The value set for `key`'s record, if any.
    #[inline]
    pub(crate) fn get(&self, key: Key<T>) -> Option<&V> {
        match self.entries.get(key.slot()) {
            Some((id, value)) if *id == key.id() => Some(value),
            _ => None,
        }
    }

    /// Asks the processor for what [`get`](Self::get) reads of `key`'s record (see
    /// [`crate::cache_hint`]).
    #[inline]
    pub(crate) fn prefetch(&self, key: Key<T>) {
        crate::cache_hint::prefetch(&self.entries, key.slot());
    }

    /// [`get`](Self::get), mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: Key<T>) -> Option<&mut V> {
        match self.entries.get_mut(key.slot()) {
            Some((id, value)) if *id == key.id() => Some(value),
            _ => None,
        }
    }

    /// Sets the value of `key`'s record (replacing whatever its slot held).
    pub(crate) fn set(&mut self, key: Key<T>, value: V) {
        let slot = key.slot();
        if slot >= self.entries.len() {
            self.entries.resize_with(slot + 1, || (0, V::default()));
        }
        self.entries[slot] = (key.id(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::PerSlot;
    use crate::replication::server::slot_table::SlotTable;

    #[test]
    fn a_value_is_read_only_for_the_record_it_was_set_for() {
        let mut table = SlotTable::default();
        let a = table.push(1, ());
        let b = table.push(2, ());
        let mut acked: PerSlot<(), u32> = PerSlot::default();
        acked.set(a, 10);
        acked.set(b, 20);
        table.retain(|_, _| false);
        let c = table.push(3, ());
        assert_eq!(c.slot(), b.slot());
        // Until it is set, the new record in the reused slot has no value, and the old
        // record's value answers only to the old key.
        assert_eq!(acked.get(c), None);
        assert_eq!(acked.get(b), Some(&20));
        acked.set(c, 30);
        assert_eq!(acked.get(b), None);
        assert_eq!(acked.get_mut(c).copied(), Some(30));
    }
}
