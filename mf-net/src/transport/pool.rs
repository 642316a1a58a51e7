//! A private pool of packet buffers shared by the in-process transports.
//!
//! Packets are copied into `Vec<u8>`s taken from the pool and given back once the receiver has
//! seen them, so after a warm-up the steady state allocates nothing: every buffer has grown to
//! the sizes it carries and the free list has grown to the number of packets in flight.
//!
//! The pool is single-threaded on purpose (the reference engine measured a flaky test when its
//! buffers came from a process-wide pool that other threads could drain).

/// Free buffers, reused last-in first-out (the warmest buffer first).
#[derive(Debug)]
pub(crate) struct PacketPool {
    free: Vec<Vec<u8>>,
    max_pooled: usize,
}

impl PacketPool {
    /// How many free buffers a pool keeps by default; buffers given back past that are freed.
    pub(crate) const DEFAULT_MAX_POOLED: usize = 4096;

    /// An empty pool keeping at most [`DEFAULT_MAX_POOLED`](Self::DEFAULT_MAX_POOLED) buffers.
    pub(crate) const fn new() -> Self {
        Self {
            free: Vec::new(),
            max_pooled: Self::DEFAULT_MAX_POOLED,
        }
    }

    /// The least capacity a buffer grows to: every datagram up to a typical MTU fits it.
    pub(crate) const MIN_GROWN: usize = 2048;

    /// A buffer holding a copy of `data`, reusing a pooled buffer when there is one. A buffer
    /// too small grows to the power of two above `data` (at least
    /// [`MIN_GROWN`](Self::MIN_GROWN)), not to `data`'s exact size: buffers are reused last in,
    /// first out whatever size they were grown for, so exact sizes would grow again each time a
    /// larger packet came after a smaller one, allocating in a steady state of mixed sizes.
    pub(crate) fn take(&mut self, data: &[u8]) -> Vec<u8> {
        let mut buf = self.free.pop().unwrap_or_default();
        buf.clear();
        if buf.capacity() < data.len() {
            buf.reserve_exact(data.len().next_power_of_two().max(Self::MIN_GROWN));
        }
        buf.extend_from_slice(data);
        buf
    }

    /// Gives a buffer back for reuse, emptied (so that [`reserve`](Self::reserve) counts its
    /// whole capacity as free). Buffers past the pool's limit are freed.
    pub(crate) fn give(&mut self, mut buf: Vec<u8>) {
        if self.free.len() < self.max_pooled && buf.capacity() > 0 {
            buf.clear();
            self.free.push(buf);
        }
    }

    /// Makes sure at least `buffers` free buffers of at least `bytes` capacity each are pooled
    /// (capped by the pool's limit), so that a later burst allocates nothing.
    pub(crate) fn reserve(&mut self, buffers: usize, bytes: usize) {
        let buffers = buffers.min(self.max_pooled);
        let bytes = bytes.max(1);
        for buf in &mut self.free {
            if buf.capacity() < bytes {
                buf.reserve(bytes);
            }
        }
        if self.free.len() < buffers {
            self.free.reserve(buffers - self.free.len());
            while self.free.len() < buffers {
                self.free.push(Vec::with_capacity(bytes));
            }
        }
    }

    /// How many free buffers are pooled.
    pub(crate) fn len(&self) -> usize {
        self.free.len()
    }
}

impl Default for PacketPool {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_buffers() {
        let mut pool = PacketPool::new();
        let a = pool.take(b"hello");
        assert_eq!(a, b"hello");
        let ptr = a.as_ptr();
        pool.give(a);
        assert_eq!(pool.len(), 1);
        let b = pool.take(b"hey");
        assert_eq!(b, b"hey");
        assert_eq!(b.as_ptr(), ptr, "the pooled buffer is reused");
        assert_eq!(pool.len(), 0);
    }

    #[test]
    fn a_buffer_grows_to_a_size_class_so_mixed_sizes_stop_growing_it() {
        let mut pool = PacketPool::new();
        let small = pool.take(&[1; 40]);
        assert!(small.capacity() >= PacketPool::MIN_GROWN);
        pool.give(small);
        // Every packet up to the class fits the buffer grown for the small one.
        for len in [600, 1400, PacketPool::MIN_GROWN] {
            let buf = pool.take(&vec![2; len]);
            assert_eq!(buf.capacity(), PacketPool::MIN_GROWN, "{len} bytes");
            pool.give(buf);
        }
        let large = pool.take(&[3; 5000]);
        assert_eq!(large.capacity(), 8192);
        assert_eq!(&large[..], &[3; 5000][..]);
    }

    #[test]
    fn keeps_at_most_its_limit() {
        let mut pool = PacketPool {
            free: Vec::new(),
            max_pooled: 2,
        };
        for _ in 0..5 {
            pool.give(vec![1, 2, 3]);
        }
        assert_eq!(pool.len(), 2);
        pool.give(Vec::new());
        assert_eq!(pool.len(), 2);
    }

    #[test]
    fn given_buffers_are_emptied_so_reserve_does_not_over_allocate() {
        let mut pool = PacketPool::new();
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&[7; 64]);
        pool.give(buf);
        assert!(pool.free.iter().all(Vec::is_empty));
        // Its whole capacity counts: nothing to grow.
        pool.reserve(1, 64);
        assert_eq!(pool.free[0].capacity(), 64);
    }

    #[test]
    fn reserve_prefills() {
        let mut pool = PacketPool::new();
        pool.give(Vec::with_capacity(1));
        pool.reserve(3, 64);
        assert_eq!(pool.len(), 3);
        assert!(pool.free.iter().all(|b| b.capacity() >= 64));
    }
}
