//! [`subtree`]: a node and the nodes spawned under it, found by their net parents (the net id
//! of the nearest networked ancestor each had when it was spawned), as both ends keep them.

/// Lists in `found` (ascending) node `id` and every node spawned under it, among the nodes
/// `nodes` yields as (net id, net parent; 0 for none) pairs, whatever their net ids: a pass
/// over the nodes adds those spawned under a node found, until a pass adds none.
pub(crate) fn subtree<I>(nodes: impl Fn() -> I, id: u32, found: &mut Vec<u32>)
where
    I: Iterator<Item = (u32, u32)>,
{
    found.clear();
    found.push(id);
    loop {
        let before = found.len();
        for (net_id, parent) in nodes() {
            let under = parent != 0 && found[..before].binary_search(&parent).is_ok();
            if under && found[..before].binary_search(&net_id).is_err() {
                found.push(net_id);
            }
        }
        if found.len() == before {
            return;
        }
        found.sort_unstable();
        found.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::subtree;

    #[test]
    fn a_subtree_is_found_whatever_the_order_of_its_ids() {
        // 5 under 9 under 2; 7 under 5; 3 apart.
        let nodes = [(2, 0), (3, 0), (5, 9), (7, 5), (9, 2)];
        let mut found = Vec::new();
        subtree(|| nodes.iter().copied(), 2, &mut found);
        assert_eq!(found, [2, 5, 7, 9]);
        subtree(|| nodes.iter().copied(), 3, &mut found);
        assert_eq!(found, [3]);
    }
}
