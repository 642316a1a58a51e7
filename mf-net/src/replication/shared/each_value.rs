//! [`each_value`]: one pass of a runtime column over the engine's values of its type, lent for
//! the pass: a dense storage indexed at each row's hint (or, while the runtime's rows are known
//! to sit at the same indices as the storage's values, walked beside them), the others looked
//! up by node.

use crate::store::{NodeId, Rows};

/// A runtime row as [`each_value`] walks it: its node, and the store's hint for its value.
pub(crate) trait HintedRow {
    /// The row's node.
    fn node(&self) -> NodeId;
    /// The store's hint for the node's value ([`Rows::get_hinted`]).
    fn hint(&mut self) -> &mut u32;
    /// The [`Dense::moves`](crate::store::Dense::moves) at which the hint was last found
    /// valid.
    fn checked(&mut self) -> &mut u64;
}

/// Whether a runtime column's rows sit at the same indices as the values of the storage's dense
/// column (row `i`'s node's value at index `i`): the [`Dense::moves`](crate::store::Dense::moves)
/// at which that was last found true, 0 if not known. The runtime column forgets it
/// ([`reset`](Self::reset)) whenever it adds, removes or replaces a row; the storage's removals
/// renew `moves`. While it holds, a pass walks rows and values side by side, as one column,
/// with no check per row. (The runtime and the scene both push new nodes at the end and fill a
/// removed index with the last row, so the two stay aligned through spawns and despawns alike.)
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Aligned(u64);

impl Aligned {
    /// The rows changed: alignment is found again by the next pass.
    pub(crate) fn reset(&mut self) {
        self.0 = 0;
    }
}

/// Calls `f` with every row that `wants` a value and whose node holds one in `values`, and that
/// value, in one typed loop (a row that does not want it costs no lookup): a [dense](Rows::dense) storage is indexed at each row's hint; the rows whose hint
/// went stale (and every row, for a storage that is not dense) are looked up afterwards.
pub(crate) fn each_value<T, R: HintedRow>(
    values: &mut dyn Rows<T>,
    rows: &mut [R],
    aligned: &mut Aligned,
    wants: impl Fn(&R) -> bool,
    mut f: impl FnMut(usize, &mut R, &mut T),
) {
    let Some(mut dense) = values.dense() else {
        return each_value_looked_up(values, rows, &wants, &mut f, false);
    };
    let moves = dense.moves;
    if moves != 0 && aligned.0 == moves && rows.len() <= dense.values.len() {
        for (i, (row, value)) in rows.iter_mut().zip(dense.values.iter_mut()).enumerate() {
            if wants(row) {
                f(i, row, value);
            }
        }
        return;
    }
    let mut stale = false;
    for (i, row) in rows.iter_mut().enumerate() {
        if !wants(row) {
            continue;
        }
        let (node, hint) = (row.node(), *row.hint());
        match dense.at_checked(node, hint, row.checked()) {
            Some(value) => f(i, row, value),
            None => stale = true,
        }
    }
    if stale {
        each_value_looked_up(values, rows, &wants, &mut f, true);
    }
    // After the look-ups, which tell visited rows by their hints.
    if moves != 0 && values.dense().is_some_and(|d| find_aligned(rows, d.nodes)) {
        aligned.0 = moves;
    }
}

/// Whether every row's node is the one at the row's own index in `nodes` (then each row's hint
/// is set to its index).
#[inline(never)]
fn find_aligned<R: HintedRow>(rows: &mut [R], nodes: &[NodeId]) -> bool {
    if rows.len() > nodes.len() || rows.iter().zip(nodes).any(|(row, &n)| row.node() != n) {
        return false;
    }
    for (i, row) in rows.iter_mut().enumerate() {
        *row.hint() = u32::try_from(i).unwrap_or(u32::MAX);
    }
    true
}

/// [`each_value`]'s rows looked up one by one: every row, or with `skip_dense` those whose
/// hint into the dense column is stale (a function of its own, so that the dense loop inlines
/// `f` at its one call).
#[inline(never)]
fn each_value_looked_up<T, R: HintedRow>(
    values: &mut dyn Rows<T>,
    rows: &mut [R],
    wants: &impl Fn(&R) -> bool,
    f: &mut impl FnMut(usize, &mut R, &mut T),
    skip_dense: bool,
) {
    for (i, row) in rows.iter_mut().enumerate() {
        if !wants(row) {
            continue;
        }
        let (node, hint) = (row.node(), *row.hint());
        if skip_dense
            && values
                .dense()
                .is_some_and(|mut d| d.at(node, hint).is_some())
        {
            continue;
        }
        if let Some(value) = values.get_mut_hinted(node, row.hint()) {
            f(i, row, value);
        }
    }
}
