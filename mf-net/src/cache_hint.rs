//! Hints to the processor to bring memory into the cache before it is read: for passes over
//! scattered records, which ask a few records ahead for the one they will read. A hint changes
//! no result; off x86-64 it does nothing.

/// Asks for the line holding `item`.
#[inline]
pub(crate) fn prefetch_ref<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(item);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Asks for the line holding `items[index]` (nothing if out of bounds).
#[inline]
pub(crate) fn prefetch<I>(items: &[I], index: usize) {
    if let Some(item) = items.get(index) {
        prefetch_ref(item);
    }
}
