//! [`RegionPool`]: runs of values handed out by length, in pages that never move, and taken
//! back for the next run of the same length.

/// Values a page holds, unless one region needs more (such a region has a page of its own).
/// A region that does not fit the rest of the newest page leaves that rest unused: large pages
/// keep that waste small (under an eighth of a page for regions of up to 2048 values, such
/// as 32 records of 63 values).
const PAGE_VALUES: usize = 1 << PAGE_SHIFT;
/// Bits of a region's start that give its place in its page (the rest name the page: up to
/// 2¹⁸ pages).
const PAGE_SHIFT: u32 = 14;

/// Regions of values, each a run of the length asked for, carved from pages. A region given
/// back goes to the next request of its length; a page is added only when none of that
/// length is free and the newest page has no room left. Pages are never moved or copied: a
/// pool that grows by a page writes that page and no other, however much it already holds
/// (one buffer that grew by reallocation copied everything it held, and a tick in which many
/// rings grew at once stalled on the copies). A region's contents are what was last written
/// there: the taker writes before it reads.
///
/// A region is named by its start: its page, shifted, and its place in the page.
#[derive(Debug)]
pub(crate) struct RegionPool<T> {
    pages: Vec<Vec<T>>,
    /// Values carved from the newest page so far.
    carved: usize,
    /// The starts of the free regions, by their length.
    free: Vec<(u32, Vec<u32>)>,
}

impl<T> Default for RegionPool<T> {
    fn default() -> Self {
        Self {
            pages: Vec::new(),
            carved: 0,
            free: Vec::new(),
        }
    }
}

impl<T: Copy + Default> RegionPool<T> {
    /// The start of a region of `len` values (at least one): a free one, else one carved from
    /// the newest page, else from a new page; `None` if pages can no longer be named.
    pub(crate) fn take(&mut self, len: usize) -> Option<u32> {
        let len32 = u32::try_from(len).ok().filter(|&l| l > 0)?;
        let reused = self
            .free
            .iter_mut()
            .find(|(l, _)| *l == len32)
            .and_then(|(_, starts)| starts.pop());
        if reused.is_some() {
            return reused;
        }
        let room = self.pages.last().map_or(0, |page| page.len() - self.carved);
        if len > room {
            // The rest of the newest page is left unused (less than the region asked for).
            let page = u32::try_from(self.pages.len()).ok()?;
            page.checked_shl(PAGE_SHIFT)
                .filter(|s| s >> PAGE_SHIFT == page)?;
            self.pages.push(vec![T::default(); len.max(PAGE_VALUES)]);
            self.carved = 0;
        }
        let page = self.pages.len() - 1;
        // Below `PAGE_VALUES`: a region that starts past it has a page of its own.
        let at = self.carved;
        self.carved += len;
        u32::try_from(page << PAGE_SHIFT | at).ok()
    }

    /// Gives back the region of `len` values at `start` (one [`take`](Self::take) gave).
    pub(crate) fn give(&mut self, start: u32, len: usize) {
        let Ok(len) = u32::try_from(len) else {
            return;
        };
        match self.free.iter_mut().find(|(l, _)| *l == len) {
            Some((_, starts)) => starts.push(start),
            None => self.free.push((len, vec![start])),
        }
    }

    /// The page `start` lies in, and its place there.
    #[inline]
    fn place(start: u32) -> (usize, usize) {
        let start = start as usize;
        (start >> PAGE_SHIFT, start & (PAGE_VALUES - 1))
    }

    /// The `len` values of the region at `start` (empty if no region lies there).
    #[inline]
    pub(crate) fn region(&self, start: u32, len: usize) -> &[T] {
        let (page, at) = Self::place(start);
        self.pages
            .get(page)
            .and_then(|p| p.get(at..at + len))
            .unwrap_or(&[])
    }

    /// The `len` values of the region at `start`, to write (empty if no region lies there).
    #[inline]
    pub(crate) fn region_mut(&mut self, start: u32, len: usize) -> &mut [T] {
        let (page, at) = Self::place(start);
        self.pages
            .get_mut(page)
            .and_then(|p| p.get_mut(at..at + len))
            .unwrap_or(&mut [])
    }

    /// Copies `len` values from the region at `from.0`, starting `from.1` values in, to the
    /// region at `to.0`, starting `to.1` values in (nothing if either run lies outside its
    /// page).
    pub(crate) fn copy(&mut self, from: (u32, usize), to: (u32, usize), len: usize) {
        let ((from_page, from_at), (to_page, to_at)) = (Self::place(from.0), Self::place(to.0));
        let (from_at, to_at) = (from_at + from.1, to_at + to.1);
        if from_page == to_page {
            if let Some(page) = self.pages.get_mut(from_page) {
                if from_at + len <= page.len() && to_at + len <= page.len() {
                    page.copy_within(from_at..from_at + len, to_at);
                }
            }
            return;
        }
        let high = from_page.max(to_page);
        let Some((before, after)) = self.pages.get_mut(..=high).map(|p| p.split_at_mut(high))
        else {
            return;
        };
        let (low, high) = (&mut before[from_page.min(to_page)], &mut after[0]);
        let (source, target) = match from_page < to_page {
            true => (&*low, high),
            false => (&*high, low),
        };
        if let (Some(s), Some(t)) = (
            source.get(from_at..from_at + len),
            target.get_mut(to_at..to_at + len),
        ) {
            t.copy_from_slice(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{RegionPool, PAGE_SHIFT, PAGE_VALUES};

    #[test]
    fn a_region_given_back_serves_the_next_request_of_its_length_only() {
        let mut pool = RegionPool::<u8>::default();
        let a = pool.take(4).unwrap();
        let b = pool.take(8).unwrap();
        assert_eq!((a, b), (0, 4));
        pool.give(a, 4);
        assert_eq!(pool.take(8), Some(12), "another length: a new region");
        assert_eq!(pool.take(4), Some(0), "the one given back");
        assert_eq!(pool.take(4), Some(20));
        pool.give(b, 8);
        assert_eq!(pool.take(8), Some(4));
        assert_eq!(pool.pages.len(), 1, "no growth for a reused region");
        assert_eq!(pool.take(0), None, "no empty regions");
    }

    #[test]
    fn pages_are_added_whole_and_never_move() {
        let mut pool = RegionPool::<u32>::default();
        let first = pool.take(PAGE_VALUES - 3).unwrap();
        pool.region_mut(first, 2).copy_from_slice(&[7, 8]);
        let address = pool.region(first, 1).as_ptr();
        // Not room for 4 in the first page: a second page, the first kept where it is.
        let second = pool.take(4).unwrap();
        assert_eq!(second, 1 << PAGE_SHIFT);
        assert_eq!(pool.region(first, 2), [7, 8]);
        assert_eq!(pool.region(first, 1).as_ptr(), address, "not moved");
        // A region longer than a page has one of its own, and the next region a new page.
        let large = pool.take(PAGE_VALUES + 5).unwrap();
        assert_eq!(large, 2 << PAGE_SHIFT);
        assert_eq!(pool.region(large, PAGE_VALUES + 5).len(), PAGE_VALUES + 5);
        assert_eq!(pool.take(1), Some(3 << PAGE_SHIFT));
        assert!(pool.region(9 << PAGE_SHIFT, 1).is_empty(), "no such page");
    }

    #[test]
    fn values_copy_within_a_page_and_across_pages_either_way() {
        let mut pool = RegionPool::<u32>::default();
        let a = pool.take(4).unwrap();
        let b = pool.take(4).unwrap();
        pool.region_mut(a, 4).copy_from_slice(&[1, 2, 3, 4]);
        pool.copy((a, 1), (b, 0), 3);
        assert_eq!(pool.region(b, 4), [2, 3, 4, 0]);
        // A page of its own, written past the first page's length of values.
        let far = pool.take(PAGE_VALUES + 8).unwrap();
        pool.copy((a, 0), (far, PAGE_VALUES + 2), 2);
        assert_eq!(
            pool.region(far, PAGE_VALUES + 4)[PAGE_VALUES..],
            [0, 0, 1, 2]
        );
        pool.region_mut(far, 1)[0] = 9;
        pool.copy((far, 0), (a, 3), 1);
        assert_eq!(pool.region(a, 4), [1, 2, 3, 9]);
        // Overlapping, within a region.
        pool.copy((a, 0), (a, 1), 3);
        assert_eq!(pool.region(a, 4), [1, 1, 2, 3]);
        pool.copy((a, 1), (a, 0), 3);
        assert_eq!(pool.region(a, 4), [1, 2, 3, 3]);
    }
}
