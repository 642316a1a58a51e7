//! [`RegionPool`]: runs of one buffer handed out by length, and taken back for the next run
//! of the same length.

/// Regions of one buffer, each a run of values of the length asked for. A region given back
/// goes to the next request of its length; the buffer grows only when none of that length is
/// free. Its contents are what was last written there: the taker writes before it reads.
#[derive(Debug)]
pub(crate) struct RegionPool<T> {
    values: Vec<T>,
    /// The starts of the free regions, by their length.
    free: Vec<(u32, Vec<u32>)>,
}

impl<T> Default for RegionPool<T> {
    fn default() -> Self {
        Self {
            values: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Clone + Default> RegionPool<T> {
    /// The start of a region of `len` values: a free one, else a new one at the end; `None`
    /// if its end would not fit a `u32` (nor does its start then equal `u32::MAX`).
    pub(crate) fn take(&mut self, len: usize) -> Option<u32> {
        let len32 = u32::try_from(len).ok()?;
        let reused = self
            .free
            .iter_mut()
            .find(|(l, _)| *l == len32)
            .and_then(|(_, starts)| starts.pop());
        if reused.is_some() {
            return reused;
        }
        let start = self.values.len();
        let end = start.checked_add(len)?;
        u32::try_from(end).ok()?;
        self.values.resize(end, T::default());
        u32::try_from(start).ok()
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

    /// The buffer.
    #[inline]
    pub(crate) fn values(&self) -> &[T] {
        &self.values
    }

    /// The buffer, to write regions in.
    #[inline]
    pub(crate) fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }
}

#[cfg(test)]
mod tests {
    use super::RegionPool;

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
        assert_eq!(pool.values().len(), 24);
        pool.give(b, 8);
        assert_eq!(pool.take(8), Some(4));
        assert_eq!(pool.values().len(), 24, "no growth for a reused region");
    }
}
