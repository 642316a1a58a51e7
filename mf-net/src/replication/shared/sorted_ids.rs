//! [`first_from`]: where an id stands in an ascending run of ids, found from its front — the
//! search of walks that ask for ids in order (a client's node list on the server, a client's
//! floors), which mostly find the next one close by.

/// How many ids [`first_from`] compares at once: a cache line of them.
const BLOCK: usize = 16;

/// How many blocks [`first_from`] reads one after the other before it gallops.
const LINEAR_BLOCKS: usize = 2;

/// How many of `block`'s ids are below `id` (without a branch: the compiler compares them
/// all at once).
#[inline(always)]
fn below(block: &[u32], id: u32) -> usize {
    block.iter().map(|&x| u32::from(x < id)).sum::<u32>() as usize
}

/// The index of the first id of `ids` (ascending) that is `id` or more (`ids.len()` if none):
/// the first [`LINEAR_BLOCKS`] blocks of [`BLOCK`] ids each, compared whole, then steps
/// doubling from there until one passes `id`, then a binary search of the last step. A gap of
/// `n` ids costs about `2 log n` reads, not `n`.
#[inline(always)]
pub(crate) fn first_from(ids: &[u32], id: u32) -> usize {
    let mut low = 0;
    for block in ids.chunks_exact(BLOCK).take(LINEAR_BLOCKS) {
        let n = below(block, id);
        if n < BLOCK {
            return low + n;
        }
        low += BLOCK;
    }
    if ids.len() - low < BLOCK {
        return low + below(&ids[low..], id);
    }
    gallop(ids, low, id)
}

/// [`first_from`] past its blocks: every id before `low` is below `id`.
fn gallop(ids: &[u32], mut low: usize, id: u32) -> usize {
    let mut step = BLOCK;
    while low < ids.len() {
        let high = (low + step).min(ids.len());
        if high == ids.len() || ids[high] >= id {
            return low + ids[low..high].partition_point(|&x| x < id);
        }
        low = high + 1;
        step = step.saturating_mul(2);
    }
    ids.len()
}

#[cfg(test)]
mod tests {
    use super::first_from;

    #[test]
    fn a_block_scan_finds_what_a_binary_search_finds() {
        // Lists shorter than a block, of whole blocks and past them (the gallop), every id
        // asked from every start.
        for len in 0..70u32 {
            let ids: Vec<u32> = (0..len).map(|i| 3 * i + 1).collect();
            for from in 0..=ids.len() {
                for id in 0..3 * len + 3 {
                    let expected = ids[from..].partition_point(|&x| x < id);
                    assert_eq!(first_from(&ids[from..], id), expected, "{len} {from} {id}");
                }
            }
        }
    }
}
