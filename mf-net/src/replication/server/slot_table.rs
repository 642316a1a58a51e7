//! [`SlotTable`]: records in stable slots, each named by a [`Key`] (slot and id) that stays
//! valid until the record is removed and is never mistaken for a later record in the same slot.
//!
//! Ids are unique for the table's whole life and never reused (net ids, a group's first net
//! id), so the id doubles as the check a generation counter would be: a key whose id is not the
//! slot's current id names a record that is gone. Data kept elsewhere for each record (per
//! client, see [`PerSlot`](crate::replication::server::per_slot::PerSlot)) is keyed by the same keys, and so can
//! neither drift from the table nor be read for the wrong record.

use std::fmt;
use std::marker::PhantomData;

use crate::cache_hint::prefetch_ref;

/// How many keys ahead of the one it reads a walk over scattered slots asks for the slot it
/// will read (see [`SlotTable::prefetch`]): far enough that the line arrives in time, near
/// enough that it is still cached.
pub(crate) const PREFETCH_AHEAD: usize = 12;

/// Names one record of a [`SlotTable<T>`]: its slot and its id.
pub(crate) struct Key<T> {
    slot: u32,
    id: u32,
    _of: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    /// The key of the record with `id` in `slot` (valid only if the table agrees).
    pub(crate) const fn new(slot: u32, id: u32) -> Self {
        Self {
            slot,
            id,
            _of: PhantomData,
        }
    }

    /// The slot index (an index into per-slot arrays).
    #[inline]
    pub(crate) const fn slot(self) -> usize {
        self.slot as usize
    }

    /// The record's id (net id, or a group's first net id).
    #[inline]
    pub(crate) const fn id(self) -> u32 {
        self.id
    }
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Key<T> {}

impl<T> PartialEq for Key<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.slot, self.id) == (other.slot, other.id)
    }
}

impl<T> Eq for Key<T> {}

impl<T> fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}@{}", self.id, self.slot)
    }
}

/// The id of a vacant slot (ids start at 1).
const VACANT: u32 = 0;

/// One slot: the record it holds and its id, or a default record and [`VACANT`]. Without an
/// `Option` around the record, finding it reads its id and nothing else of the slot (the
/// niche an `Option` keeps its tag in may lie in any line of a long record). In this order
/// (`repr(C)`): the id ends the slot, so that [`SlotTable::prefetch`] asks for its first and
/// last lines.
#[repr(C)]
struct Slot<T> {
    value: T,
    id: u32,
}

/// Records in stable slots (freed slots are reused), with their keys also kept in id order,
/// and found by id through a dense index (see [`ById`]).
pub(crate) struct SlotTable<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    /// The key of every record, sorted by id.
    order: Vec<Key<T>>,
    by_id: ById,
    /// Changes whenever a record is added or removed.
    version: u64,
}

/// The slot of each record by id, for the ids of a window that follows the newest (at most
/// [`ById::room`] long): a lookup by id reads one entry instead of searching the ids. Ids
/// outside the window (long-lived records left behind as ids are handed out, ids far ahead,
/// ids handed out again) are searched.
#[derive(Default)]
struct ById {
    /// The id `slots` starts at.
    base: u32,
    /// From `base` on, by id: the slot plus one (0: no record).
    slots: Vec<u32>,
}

impl ById {
    /// How long the window may be for a table of `records` records: ids are handed out in
    /// order and the live ones mostly stay near the newest, so a few times the records (and
    /// a floor) holds them.
    fn room(records: usize) -> usize {
        records.saturating_mul(4).saturating_add(4096)
    }

    /// Where `id` is in the window, if it is in it.
    #[inline]
    fn at(&self, id: u32) -> Option<usize> {
        let at = id.checked_sub(self.base)? as usize;
        (at < self.slots.len()).then_some(at)
    }

    /// The slot of the record `id`, if the window covers `id` (`Some(None)`: no record).
    #[inline]
    fn get(&self, id: u32) -> Option<Option<u32>> {
        let entry = self.slots[self.at(id)?];
        Some(entry.checked_sub(1))
    }

    /// Notes that `key`'s record was added to a table whose keys in id order are `order`
    /// (`key`'s among them). An id past the window stretches it, indexing
    /// the records it newly covers; if that would make it longer than its room, the window
    /// moves up first, so that `key` lands half its room from the start (moving it costs its
    /// length once per half a room of new ids).
    fn add<T>(&mut self, key: Key<T>, order: &[Key<T>]) {
        let id = key.id();
        if let Some(at) = self.at(id) {
            self.slots[at] = key.slot.saturating_add(1);
            return;
        }
        if id < self.base {
            return;
        }
        let room = Self::room(order.len());
        if (id - self.base) as usize >= room {
            let behind = u32::try_from(room / 2).unwrap_or(u32::MAX);
            let base = id.saturating_sub(behind).max(self.base);
            let dropped = ((base - self.base) as usize).min(self.slots.len());
            self.slots.drain(..dropped);
            if self.slots.is_empty() {
                self.base = base;
            } else {
                self.base += u32::try_from(dropped).unwrap_or(u32::MAX);
            }
        }
        let first_new = self.base as usize + self.slots.len();
        self.slots.resize((id - self.base) as usize + 1, 0);
        let start = order.partition_point(|k| (k.id() as usize) < first_new);
        for k in order[start..].iter().take_while(|k| k.id() <= id) {
            if let Some(at) = self.at(k.id()) {
                self.slots[at] = k.slot.saturating_add(1);
            }
        }
    }

    /// Forgets the record `id`.
    fn remove(&mut self, id: u32) {
        if let Some(at) = self.at(id) {
            self.slots[at] = 0;
        }
    }
}

impl<T> Default for SlotTable<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            order: Vec::new(),
            by_id: ById::default(),
            version: 0,
        }
    }
}

impl<T: Default> SlotTable<T> {
    /// Adds `value` with `id`, which must not be in the table (nor [`VACANT`]), in a free slot
    /// or a new one, and returns its key. Ids usually grow with every push (it appends); a
    /// smaller one (an id handed out again) is inserted in order.
    pub(crate) fn push(&mut self, id: u32, value: T) -> Key<T> {
        debug_assert!(
            self.order.binary_search_by_key(&id, |k| k.id).is_err(),
            "id {id} is in the table"
        );
        debug_assert_ne!(id, VACANT, "ids start at 1");
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Slot { id, value };
                slot
            }
            None => {
                let slot = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
                self.slots.push(Slot { id, value });
                slot
            }
        };
        let key = Key::new(slot, id);
        match self.order.last() {
            // Ids grow with every spawn, until they run out and freed ones come back.
            Some(last) if last.id > id => {
                let at = self.order.partition_point(|k| k.id < id);
                self.order.insert(at, key);
            }
            _ => self.order.push(key),
        }
        self.by_id.add(key, &self.order);
        self.version += 1;
        key
    }

    /// Removes every record for which `keep` is false (one pass), freeing their slots for
    /// later records; the removed records' keys name nothing afterwards.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(Key<T>, &T) -> bool) {
        self.version += 1;
        let (slots, free, by_id) = (&mut self.slots, &mut self.free, &mut self.by_id);
        self.order.retain(|&key| {
            let slot = &mut slots[key.slot()];
            if slot.id == key.id && keep(key, &slot.value) {
                return true;
            }
            *slot = Slot {
                value: T::default(),
                id: VACANT,
            };
            free.push(key.slot);
            by_id.remove(key.id);
            false
        });
    }
}

impl<T> SlotTable<T> {
    /// How many records it holds.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// How many slots there are (records and free slots): the length per-slot arrays need.
    #[inline]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The record `key` names, if it is still in the table.
    #[inline]
    pub(crate) fn get(&self, key: Key<T>) -> Option<&T> {
        let slot = self.slots.get(key.slot())?;
        (slot.id == key.id && key.id != VACANT).then_some(&slot.value)
    }

    /// Hints the processor to bring `key`'s slot into the cache (see [`prefetch_ref`]): the line
    /// it starts in and the line of its id, which ends it (a slot is rarely aligned to a line,
    /// and may be longer than one).
    #[inline]
    pub(crate) fn prefetch(&self, key: Key<T>) {
        self.prefetch_with(key, |_| ());
    }

    /// [`prefetch`](Self::prefetch), and `inner` given the slot's record (whichever it holds),
    /// to ask for lines between the first and the last of a slot longer than two (the
    /// addresses of its fields, which reads nothing).
    #[inline]
    pub(crate) fn prefetch_with(&self, key: Key<T>, inner: impl FnOnce(&T)) {
        if let Some(slot) = self.slots.get(key.slot()) {
            prefetch_ref(slot);
            prefetch_ref(&slot.id);
            inner(&slot.value);
        }
    }

    /// [`get`](Self::get), mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: Key<T>) -> Option<&mut T> {
        let slot = self.slots.get_mut(key.slot())?;
        (slot.id == key.id && key.id != VACANT).then_some(&mut slot.value)
    }

    /// A value that changes whenever a record is added or removed: while it is the same, the
    /// table holds the same records.
    #[inline]
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// The key of the record in `slot`, if it holds one.
    #[inline]
    pub(crate) fn key_at_slot(&self, slot: usize) -> Option<Key<T>> {
        let entry = self.slots.get(slot).filter(|e| e.id != VACANT)?;
        Some(Key::new(u32::try_from(slot).ok()?, entry.id))
    }

    /// The key of the record with `id`.
    #[inline]
    pub(crate) fn find(&self, id: u32) -> Option<Key<T>> {
        if let Some(slot) = self.by_id.get(id) {
            let key = Key::new(slot?, id);
            debug_assert!(self.get(key).is_some(), "the index names a record gone");
            return Some(key);
        }
        let at = self.order.binary_search_by_key(&id, |k| k.id).ok()?;
        Some(self.order[at])
    }

    /// The record with `id`.
    pub(crate) fn by_id(&self, id: u32) -> Option<&T> {
        self.find(id).and_then(|key| self.get(key))
    }

    /// Every key, in id order.
    #[inline]
    pub(crate) fn keys(&self) -> &[Key<T>] {
        &self.order
    }

    /// The positions in [`keys`](Self::keys) of the ids in `first..end`.
    pub(crate) fn span(&self, first: u32, end: u32) -> std::ops::Range<usize> {
        let lo = self.order.partition_point(|k| k.id < first);
        let hi = self.order.partition_point(|k| k.id < end);
        lo..hi.max(lo)
    }

    /// The keys whose ids are in `first..end`, in id order.
    pub(crate) fn keys_in(&self, first: u32, end: u32) -> &[Key<T>] {
        &self.order[self.span(first, end)]
    }

    /// The key of the last record with an id at most `id`.
    pub(crate) fn last_at_most(&self, id: u32) -> Option<Key<T>> {
        let at = self.order.partition_point(|k| k.id <= id).checked_sub(1)?;
        Some(self.order[at])
    }

    /// Every record with its key, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Key<T>, &T)> + Clone + '_ {
        self.order
            .iter()
            .filter_map(move |&key| self.get(key).map(|value| (key, value)))
    }

    /// Every record, in id order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> + Clone + '_ {
        self.iter().map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::{ById, Key, SlotTable};

    #[test]
    fn every_id_is_found_through_the_index_or_past_it_as_by_a_search() {
        let mut table = SlotTable::default();
        let mut live: Vec<u32> = Vec::new();
        let mut next = 1u32;
        let mut seed = 7u64;
        let mut random = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            seed >> 33
        };
        for round in 0..4000 {
            match random() % 10 {
                // Mostly the next id; now and then one far past the index's room, or an
                // id handed out again.
                0..=5 => {
                    table.push(next, next);
                    live.push(next);
                    next += 1;
                }
                6 => {
                    let far = next + 100_000 + u32::try_from(random() % 1000).unwrap_or(0);
                    if !live.contains(&far) {
                        table.push(far, far);
                        live.push(far);
                    }
                }
                7 if round % 3 == 0 => {
                    let again = u32::try_from(random() % u64::from(next)).unwrap_or(0) + 1;
                    if !live.contains(&again) {
                        table.push(again, again);
                        live.push(again);
                    }
                }
                _ => {
                    let gone = random() % 3;
                    table.retain(|k, _| u64::from(k.id()) % 7 != gone || k.id() % 5 != 0);
                    live.retain(|&id| u64::from(id) % 7 != gone || id % 5 != 0);
                }
            }
        }
        let highest = live.iter().copied().max().unwrap_or(0);
        for id in (0..=next + 10).chain(100_000..highest + 10) {
            let searched = table.order.iter().find(|k| k.id() == id).copied();
            assert_eq!(table.find(id), searched, "id {id}");
            assert_eq!(
                table.by_id(id).copied(),
                searched.map(|k| k.id()),
                "id {id}"
            );
        }
        assert_eq!(table.len(), live.len());
        // The ids far past the others (the table never held more than 4000 records) were
        // searched, not indexed.
        assert!(table.by_id.slots.len() <= ById::room(4000));
        assert!(table.by_id.slots.len() > 1000, "the others were indexed");
    }

    #[test]
    fn the_index_follows_the_newest_ids_as_records_come_and_go() {
        let mut table = SlotTable::default();
        // A few records that stay, then a stream of short-lived ones (projectiles): ids run
        // far past four times the records.
        for id in 1..=10 {
            table.push(id, id);
        }
        for id in 11..=200_000u32 {
            table.push(id, id);
            if id > 110 {
                let old = id - 100;
                table.retain(|k, _| k.id() != old);
            }
        }
        assert_eq!(table.len(), 110);
        assert!(table.by_id.slots.len() <= ById::room(110));
        // The newest are in the window; the long-lived ones, left behind, are searched.
        assert!(table.by_id.get(200_000).is_some() && table.by_id.get(199_901).is_some());
        assert!(table.by_id.get(5).is_none());
        for id in (1..=20).chain(199_850..=200_010) {
            let searched = table.order.iter().find(|k| k.id() == id).copied();
            assert_eq!(table.find(id), searched, "id {id}");
        }
    }

    #[test]
    fn a_reused_slot_does_not_answer_to_the_key_of_the_record_it_held() {
        let mut table = SlotTable::default();
        let a = table.push(1, "a");
        let b = table.push(2, "b");
        let c = table.push(3, "c");
        table.retain(|_, &v| v != "b");
        assert_eq!(table.get(b), None);
        assert_eq!(table.find(2), None);
        // The freed slot is reused by the next record; the old key still names nothing.
        let d = table.push(7, "d");
        assert_eq!(d.slot(), b.slot());
        assert_eq!(table.get(b), None);
        assert_eq!(table.get(d), Some(&"d"));
        assert_eq!(table.slot_count(), 3);
        let ids: Vec<u32> = table.keys().iter().map(|k| k.id()).collect();
        assert_eq!(ids, [1, 3, 7]);
        assert_eq!(table.iter().map(|(_, v)| *v).collect::<String>(), "acd");
        assert_eq!(table.keys_in(2, 8), [c, d]);
        assert_eq!(table.last_at_most(6), Some(c));
        assert_eq!(table.last_at_most(0), None);
        assert_eq!(table.by_id(1), Some(&"a"));
        assert_eq!(table.get(a), Some(&"a"));
        // A key for a slot that never existed names nothing.
        assert_eq!(table.get(Key::new(9, 1)), None);
    }
}
