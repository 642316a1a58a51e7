//! [`Alike`]: a list's memory that it equals a numbered copy of another list, kept while the
//! list does not change, so that two lists compared every tick are compared once while they
//! stay as they were.
//!
//! Every copy takes a new number ([`new_copy`]: unique in the process, so that lists compared
//! with copies kept in different places never mistake one for another); the list counts its
//! own changes. Equal (copy number, list revision) pairs mean equal contents, without a look at
//! either.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The last copy number given.
static COPIES: AtomicU64 = AtomicU64::new(0);

/// A number for a new copy, never given before (never 0).
pub(crate) fn new_copy() -> u64 {
    COPIES.fetch_add(1, Ordering::Relaxed) + 1
}

/// How many copies a list remembers being equal to: a client's lists are compared with the
/// kept copy of each bit-packed body kept in a tick (one per default baseline), and a client
/// at a distance of its own meets a different one from tick to tick.
const REMEMBERED: usize = 8;

/// One list's revision and the copies it was last found equal to (see the
/// [module documentation](self)).
#[derive(Debug, Default)]
pub(crate) struct Alike {
    /// Counts the list's changes: equal revisions, equal contents.
    revision: u64,
    /// The copies the list was found equal to, each with the list's revision then (the
    /// oldest replaced first).
    copies: Cell<[(u64, u64); REMEMBERED]>,
    /// Where the next copy remembered goes.
    next: Cell<usize>,
}

impl Alike {
    /// The list changed (call it at every change: a missed one would take a changed list for
    /// the copy it was).
    #[inline]
    pub(crate) fn changed(&mut self) {
        self.revision += 1;
    }

    /// Whether the list was found equal to copy number `copy` and has not changed since.
    #[inline]
    pub(crate) fn remembers(&self, copy: u64) -> bool {
        copy != 0 && self.copies.get().contains(&(copy, self.revision))
    }

    /// Whether `list` (the list this belongs to) equals `kept`, copy number `copy`: remembered,
    /// or else compared (and remembered if equal).
    pub(crate) fn is_copy<T: PartialEq>(&self, list: &[T], copy: u64, kept: &[T]) -> bool {
        if self.remembers(copy) {
            return true;
        }
        let equal = list == kept;
        if equal {
            self.copied_as(copy);
        }
        equal
    }

    /// The list was just copied as copy number `copy` (or found equal to it).
    #[inline]
    pub(crate) fn copied_as(&self, copy: u64) {
        if self.remembers(copy) {
            return;
        }
        let mut copies = self.copies.get();
        let at = self.next.get();
        copies[at] = (copy, self.revision);
        self.copies.set(copies);
        self.next.set((at + 1) % REMEMBERED);
    }
}

#[cfg(test)]
mod tests {
    use super::{Alike, REMEMBERED};

    #[test]
    fn a_list_is_taken_for_a_copy_only_while_neither_changes() {
        let mut alike = Alike::default();
        let (mut list, kept) = (vec![1, 2, 3], vec![1, 2, 3]);
        assert!(!alike.remembers(1));
        assert!(alike.is_copy(&list, 1, &kept));
        assert!(alike.remembers(1));
        // Another copy (another number), even with the same contents: compared again.
        assert!(!alike.remembers(2));
        list[0] = 9;
        alike.changed();
        assert!(!alike.remembers(1));
        assert!(!alike.is_copy(&list, 1, &kept));
        alike.copied_as(3);
        assert!(alike.remembers(3));
    }

    #[test]
    fn a_list_remembers_the_last_copies_it_equals_up_to_a_limit() {
        let alike = Alike::default();
        let list = [7, 8];
        for copy in 1..=REMEMBERED as u64 {
            assert!(alike.is_copy(&list, copy, &list));
        }
        assert!((1..=REMEMBERED as u64).all(|copy| alike.remembers(copy)));
        // Remembered again: nothing moves.
        alike.copied_as(1);
        assert!((1..=REMEMBERED as u64).all(|copy| alike.remembers(copy)));
        // One more: the oldest goes.
        let newest = REMEMBERED as u64 + 1;
        alike.copied_as(newest);
        assert!(alike.remembers(newest));
        assert!(!alike.remembers(1));
        assert!((2..=newest).all(|copy| alike.remembers(copy)));
        assert!(!alike.remembers(0), "no copy");
    }
}
