//! Counting allocations, for the zero-allocation tests.
//!
//! Linking this module installs the `allocation-counter` crate's global allocator: the system
//! allocator plus per-thread counters. Counting is per thread, so tests of one binary running in
//! parallel (and the test harness itself) do not disturb each other's measurements. Everything
//! measured must run on the calling thread, as mf-net's sans-IO core does.
//!
//! ```no_run
//! use mf_net_tests::alloc_counter;
//!
//! let mut buf = Vec::with_capacity(64);
//! alloc_counter::assert_no_alloc("push within capacity", || {
//!     for i in 0..64u8 {
//!         buf.push(i);
//!     }
//! });
//! ```

pub use allocation_counter::AllocationInfo;

/// Runs `f` on this thread and returns its result with what it allocated meanwhile (on this
/// thread).
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, AllocationInfo) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (out.expect("the measured closure ran"), info)
}

/// Runs `f` without counting what it allocates, even inside [`measure`] (for assertion
/// messages, logging, setup).
pub fn not_counted<R>(f: impl FnOnce() -> R) -> R {
    let mut out = None;
    allocation_counter::opt_out(|| out = Some(f()));
    out.expect("the closure ran")
}

/// Whether the counting allocator is installed and counting (it is whenever this module is
/// linked; a test asserting zero allocations checks it first, so that it cannot pass vacuously).
pub fn is_counting() -> bool {
    let ((), info) = measure(|| {
        std::hint::black_box(Box::new(std::hint::black_box(0_u64)));
    });
    info.count_total > 0
}

/// Runs `f` and panics, naming `what`, if it allocated anything on this thread. Returns `f`'s
/// result otherwise.
pub fn assert_no_alloc<R>(what: &str, f: impl FnOnce() -> R) -> R {
    assert!(is_counting(), "the counting allocator is not installed");
    let (out, info) = measure(f);
    assert!(
        info.count_total == 0 && info.bytes_total == 0,
        "{what}: allocated {} bytes in {} allocations (expected none)",
        info.bytes_total,
        info.count_total,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_this_thread() {
        assert!(is_counting());
        let (v, info) = measure(|| vec![0_u8; 100]);
        assert_eq!(v.len(), 100);
        assert_eq!(info.bytes_total, 100);
        let ((), info) = measure(|| not_counted(|| drop(vec![0_u8; 10])));
        assert_eq!(info.count_total, 0);
        assert_no_alloc("nothing", || 1 + 1);
    }

    #[test]
    #[should_panic(expected = "allocated")]
    fn assert_no_alloc_catches_allocation() {
        assert_no_alloc("boxing", || std::hint::black_box(Box::new(1_u32)));
    }
}
