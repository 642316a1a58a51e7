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

/// One list's revision and the copy it was last found equal to (see the
/// [module documentation](self)).
#[derive(Debug, Default)]
pub(crate) struct Alike {
    /// Counts the list's changes: equal revisions, equal contents.
    revision: u64,
    /// The copy the list was found equal to, and the list's revision then.
    copy: Cell<Option<(u64, u64)>>,
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
        self.copy.get() == Some((copy, self.revision))
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

    /// The list was just copied as copy number `copy`.
    #[inline]
    pub(crate) fn copied_as(&self, copy: u64) {
        self.copy.set(Some((copy, self.revision)));
    }

    /// The copy the list equals, if it remembers one: a copy of the list as it is may take
    /// that number too (copies of equal contents under one number, which lists alike then
    /// remember whichever of them they meet).
    #[inline]
    pub(crate) fn remembered(&self) -> Option<u64> {
        self.copy
            .get()
            .filter(|&(_, revision)| revision == self.revision)
            .map(|(copy, _)| copy)
    }
}

#[cfg(test)]
mod tests {
    use super::Alike;

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
        assert_eq!(alike.remembered(), Some(3));
        alike.changed();
        assert_eq!(alike.remembered(), None, "changed since");
    }
}
