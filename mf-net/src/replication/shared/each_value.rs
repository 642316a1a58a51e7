//! [`each_value`]: one pass of a runtime column over the engine's values of its type, lent for
//! the pass: a dense storage indexed at each row's hint, the others looked up by node.

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

/// Calls `f` with every row that `wants` a value and whose node holds one in `values`, and that
/// value, in one typed loop (a row that does not want it costs no lookup): a [dense](Rows::dense) storage is indexed at each row's hint; the rows whose hint
/// went stale (and every row, for a storage that is not dense) are looked up afterwards.
pub(crate) fn each_value<T, R: HintedRow>(
    values: &mut dyn Rows<T>,
    rows: &mut [R],
    wants: impl Fn(&R) -> bool,
    mut f: impl FnMut(usize, &mut R, &mut T),
) {
    let Some(mut dense) = values.dense() else {
        return each_value_looked_up(values, rows, &wants, &mut f, false);
    };
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
