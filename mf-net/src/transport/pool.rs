//! A private pool of packet buffers shared by the in-process transports.
//!
//! Packets are copied into `Vec<u8>`s taken from the pool and given back once the receiver has
//! seen them, so after a warm-up the steady state allocates nothing: the pool holds, in each
//! size class, as many buffers as packets of that size are in flight at once.
//!
//! The pool is single-threaded on purpose (the reference engine measured a flaky test when its
//! buffers came from a process-wide pool that other threads could drain).

/// Free buffers by size class, each class reused last-in first-out (the warmest buffer first).
#[derive(Debug)]
pub(crate) struct PacketPool {
    /// By class: buffers whose capacity is at least `MIN_GROWN << class` (the last class also
    /// holds every larger one).
    free: Vec<Vec<Vec<u8>>>,
    /// How many buffers `free` holds.
    pooled: usize,
    max_pooled: usize,
}

/// How many size classes there are: `MIN_GROWN` (2 KiB) to 64 MiB and above.
const CLASSES: usize = 16;

impl PacketPool {
    /// How many free buffers a pool keeps by default; buffers given back past that are freed.
    /// One pool serves a whole loopback network: a server sending 256 clients a snapshot and
    /// a few thousand relevance spawns and despawns a tick has more than 4 096 in flight, and
    /// a smaller limit freed buffers only to allocate them again the next tick. At most
    /// 32 MiB of 2 KiB buffers stay pooled after a burst.
    pub(crate) const DEFAULT_MAX_POOLED: usize = 16_384;

    /// An empty pool keeping at most [`DEFAULT_MAX_POOLED`](Self::DEFAULT_MAX_POOLED) buffers.
    pub(crate) const fn new() -> Self {
        Self {
            free: Vec::new(),
            pooled: 0,
            max_pooled: Self::DEFAULT_MAX_POOLED,
        }
    }

    /// The least capacity a buffer grows to: every datagram up to a typical MTU fits it.
    pub(crate) const MIN_GROWN: usize = 2048;

    /// A buffer holding a copy of `data`, reusing a pooled buffer when there is one: the
    /// warmest of the smallest class that holds `data`, else the warmest of a smaller class,
    /// grown. A buffer grows to the power of two above `data` (at least
    /// [`MIN_GROWN`](Self::MIN_GROWN)), so that once the pool holds buffers of every class its
    /// packets need, mixed sizes (small spawns between large snapshots) allocate nothing.
    pub(crate) fn take(&mut self, data: &[u8]) -> Vec<u8> {
        let class = class_of(data.len());
        let fits = (class..self.free.len()).find(|&c| !self.free[c].is_empty());
        let smaller = || {
            (0..class.min(self.free.len()))
                .rev()
                .find(|&c| !self.free[c].is_empty())
        };
        let from = fits.or_else(smaller);
        let mut buf = match from {
            Some(c) => {
                self.pooled -= 1;
                self.free[c].pop().unwrap_or_default()
            }
            None => Vec::new(),
        };
        buf.clear();
        if buf.capacity() < data.len() {
            buf.reserve_exact(data.len().next_power_of_two().max(Self::MIN_GROWN));
        }
        buf.extend_from_slice(data);
        buf
    }

    /// Returns `buf` to the pool (freed if the pool is full or it never held anything).
    pub(crate) fn give(&mut self, mut buf: Vec<u8>) {
        if self.pooled < self.max_pooled && buf.capacity() > 0 {
            buf.clear();
            let class = held_class(buf.capacity());
            if self.free.len() <= class {
                self.free.resize_with(CLASSES, Vec::new);
            }
            self.free[class].push(buf);
            self.pooled += 1;
        }
    }

    /// Pre-warms the pool: at least `buffers` free buffers (up to the pool's limit) of at
    /// least `bytes` capacity each, so that a burst allocates nothing.
    pub(crate) fn reserve(&mut self, buffers: usize, bytes: usize) {
        let buffers = buffers.min(self.max_pooled);
        let bytes = bytes.max(1);
        let mut kept = Vec::new();
        for list in &mut self.free {
            kept.append(list);
        }
        self.pooled = 0;
        for mut buf in kept {
            if buf.capacity() < bytes {
                buf.reserve(bytes);
            }
            self.give(buf);
        }
        while self.pooled < buffers {
            self.give(Vec::with_capacity(bytes));
        }
        if let Some(list) = self.free.get_mut(held_class(bytes)) {
            list.reserve(buffers.saturating_sub(list.len()));
        }
    }

    /// How many free buffers the pool holds.
    pub(crate) fn len(&self) -> usize {
        self.pooled
    }
}

/// The class of the buffers that hold `len` bytes without growing.
fn class_of(len: usize) -> usize {
    let classes = len
        .div_ceil(PacketPool::MIN_GROWN)
        .next_power_of_two()
        .trailing_zeros();
    (classes as usize).min(CLASSES - 1)
}

/// The class a buffer of `capacity` bytes is kept in: the largest whose size it reaches (one
/// below every class, the first).
fn held_class(capacity: usize) -> usize {
    let whole = capacity / PacketPool::MIN_GROWN;
    match whole.checked_ilog2() {
        Some(log) => (log as usize).min(CLASSES - 1),
        None => 0,
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
            pooled: 0,
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
        assert!(pool.free.iter().flatten().all(Vec::is_empty));
        // Its whole capacity counts: nothing to grow.
        pool.reserve(1, 64);
        assert_eq!(pool.free[0][0].capacity(), 64);
    }

    #[test]
    fn reserve_prefills() {
        let mut pool = PacketPool::new();
        pool.give(Vec::with_capacity(1));
        pool.reserve(3, 64);
        assert_eq!(pool.len(), 3);
        assert!(pool.free.iter().flatten().all(|b| b.capacity() >= 64));
    }

    #[test]
    fn small_and_large_packets_in_flight_together_stop_growing_buffers() {
        let mut pool = PacketPool::new();
        // Warm-up: a spawn and a snapshot in flight at once, the spawn given back last.
        let (small, large) = (pool.take(&[1; 40]), pool.take(&[2; 5000]));
        let (small_at, large_at) = (small.as_ptr(), large.as_ptr());
        pool.give(large);
        pool.give(small);
        for _ in 0..3 {
            // The warmest buffer is the small one: the snapshot still gets the large one.
            let large = pool.take(&[2; 5000]);
            let small = pool.take(&[1; 40]);
            assert_eq!((large.as_ptr(), large.capacity()), (large_at, 8192));
            assert_eq!((small.as_ptr(), small.capacity()), (small_at, 2048));
            assert_eq!(&large[..], &[2; 5000][..]);
            pool.give(large);
            pool.give(small);
        }
        assert_eq!(pool.len(), 2);
    }

    #[test]
    fn size_classes_hold_what_they_promise() {
        for len in [0, 1, 2048, 2049, 4096, 4097, 100_000] {
            let class = class_of(len);
            let capacity = len.next_power_of_two().max(PacketPool::MIN_GROWN);
            assert_eq!(held_class(capacity), class, "{len} bytes");
            assert!(PacketPool::MIN_GROWN << class >= len, "{len} bytes");
        }
        assert_eq!(held_class(1), 0);
        assert_eq!(held_class(usize::MAX), CLASSES - 1);
    }
}
