//! A counting sort of a pass's items by the scene column they are for, so that each column
//! takes its items in one dynamic call (snapshot entries: the client reads them, the server
//! writes them).

use std::ops::Range;

/// Sorts items by column (see the [module docs](self)); allocates nothing once its buffers
/// have grown.
#[derive(Debug, Default)]
pub(crate) struct ByColumn {
    /// Where each column's run starts in the sorted items (one past the last: the end), then
    /// how far each is filled while sorting.
    starts: Vec<u32>,
    fill: Vec<u32>,
}

impl ByColumn {
    /// Replaces `out` with the items of `items` (each with its column), sorted by column and
    /// otherwise in their order; an item whose column is `columns` or more goes to `missing`
    /// instead. Items all of one column (the common case) are copied in one go. Then
    /// [`runs`](Self::runs) tells where each column's items are.
    pub(crate) fn sort<E: Copy>(
        &mut self,
        items: &[(u32, E)],
        columns: usize,
        out: &mut Vec<E>,
        mut missing: impl FnMut(E),
    ) {
        out.clear();
        self.starts.clear();
        let Some(&(first, _)) = items.first() else {
            return;
        };
        if items.iter().all(|&(c, _)| c == first) {
            if (first as usize) < columns {
                out.extend(items.iter().map(|&(_, e)| e));
                self.starts.resize(first as usize + 1, 0);
                self.starts
                    .push(u32::try_from(out.len()).unwrap_or(u32::MAX));
            } else {
                items.iter().for_each(|&(_, e)| missing(e));
            }
            return;
        }
        // Counts, then starts, then each item into its column's run.
        self.starts.resize(columns + 1, 0);
        for &(column, e) in items {
            match self.starts.get_mut(column as usize + 1) {
                Some(count) => *count += 1,
                None => missing(e),
            }
        }
        for c in 0..columns {
            self.starts[c + 1] += self.starts[c];
        }
        self.fill.clear();
        self.fill.extend_from_slice(&self.starts[..columns]);
        out.resize(self.starts[columns] as usize, items[0].1);
        for &(column, e) in items {
            if let Some(slot) = self.fill.get_mut(column as usize) {
                out[*slot as usize] = e;
                *slot += 1;
            }
        }
    }

    /// After [`sort`](Self::sort): each column with items, and where they are in `out`.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (u32, Range<usize>)> + '_ {
        self.starts
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] < w[1])
            // `c` indexes `starts`, whose length is a column count plus one (columns are
            // indexed by `u32`).
            .map(|(c, w)| (c as u32, w[0] as usize..w[1] as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::ByColumn;

    fn sorted(items: &[(u32, char)], columns: usize) -> (Vec<char>, Vec<(u32, usize)>, String) {
        let (mut by, mut out, mut missing) = (ByColumn::default(), Vec::new(), String::new());
        by.sort(items, columns, &mut out, |e| missing.push(e));
        let runs = by.runs().map(|(c, r)| (c, r.len())).collect();
        (out, runs, missing)
    }

    #[test]
    fn items_go_by_column_in_their_order_and_unknown_columns_are_missing() {
        let items = [(2, 'a'), (0, 'b'), (2, 'c'), (5, 'x'), (0, 'd')];
        let (out, runs, missing) = sorted(&items, 3);
        assert_eq!(out, ['b', 'd', 'a', 'c']);
        assert_eq!(runs, [(0, 2), (2, 2)]);
        assert_eq!(missing, "x");
    }

    #[test]
    fn items_of_one_column_are_one_run() {
        let (out, runs, missing) = sorted(&[(1, 'a'), (1, 'b')], 2);
        assert_eq!(
            (out, runs, missing.len()),
            (vec!['a', 'b'], vec![(1, 2)], 0)
        );
        let (out, runs, missing) = sorted(&[(4, 'a'), (4, 'b')], 2);
        assert_eq!((out.len(), runs.len(), missing.as_str()), (0, 0, "ab"));
        assert_eq!(sorted(&[], 2).1, []);
    }
}
