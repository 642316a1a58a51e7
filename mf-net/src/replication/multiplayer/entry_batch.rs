//! A client's snapshot entries, applied one column at a time: the snapshot is read through
//! once (each entry's net id found in the dense table, with where its value was last seen),
//! then every column applies its entries in one pass, one dynamic call per column, the loop
//! inside monomorphized. Entries are applied by column, not in the snapshot's net id order: no
//! entry depends on another.

use crate::scene::{EntryAt, EntryMisses, EntryRef, Scene, ValueAt};

/// The entries of one snapshot (see the [module docs](self)); allocates nothing once its
/// buffers have grown.
#[derive(Debug, Default)]
pub(crate) struct EntryBatch {
    /// Entries in snapshot order, each with its column.
    read: Vec<(u32, EntryRef)>,
    /// Whether they are in more than one column.
    mixed: bool,
    /// The same, by column, and where each column's run starts and is filled to.
    by_column: Vec<EntryRef>,
    starts: Vec<u32>,
    fill: Vec<u32>,
    /// What the columns could not apply.
    pub(crate) misses: EntryMisses,
}

impl EntryBatch {
    /// A new snapshot.
    pub(crate) fn clear(&mut self) {
        self.read.clear();
        self.mixed = false;
        self.misses.stale.clear();
        self.misses.rejected.clear();
    }

    /// An entry whose value was last seen `at`.
    pub(crate) fn push(&mut self, at: ValueAt, entry: EntryRef) {
        if let Some(&(first, _)) = self.read.first() {
            self.mixed |= first != at.column;
        }
        self.read.push((at.column, entry));
    }

    /// Applies every entry (their bytes in `snapshot`), one pass per column; the entries of a
    /// column that is not there go to the stale misses.
    pub(crate) fn apply(
        &mut self,
        scene: &mut Scene,
        snapshot: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) {
        let Some(&(first, filler)) = self.read.first() else {
            return;
        };
        if !self.mixed {
            self.by_column.clear();
            self.by_column.extend(self.read.iter().map(|&(_, e)| e));
            scene.apply_entries(
                first,
                &self.by_column,
                snapshot,
                at,
                changed,
                &mut self.misses,
            );
            return;
        }
        // A counting sort by column: counts, then starts, then each entry into its run.
        let columns = scene.column_count();
        self.starts.clear();
        self.starts.resize(columns + 1, 0);
        for &(column, entry) in &self.read {
            match self.starts.get_mut(column as usize + 1) {
                Some(count) => *count += 1,
                None => self.misses.stale.push(entry),
            }
        }
        for c in 0..columns {
            self.starts[c + 1] += self.starts[c];
        }
        self.fill.clear();
        self.fill.extend_from_slice(&self.starts[..columns]);
        self.by_column.clear();
        self.by_column.resize(self.starts[columns] as usize, filler);
        for &(column, entry) in &self.read {
            if let Some(slot) = self.fill.get_mut(column as usize) {
                self.by_column[*slot as usize] = entry;
                *slot += 1;
            }
        }
        for c in 0..columns {
            let run = &self.by_column[self.starts[c] as usize..self.starts[c + 1] as usize];
            if !run.is_empty() {
                // `c < columns`, a column count (which fits `u32`: columns are indexed by it).
                #[allow(clippy::cast_possible_truncation)]
                scene.apply_entries(c as u32, run, snapshot, at, changed, &mut self.misses);
            }
        }
    }
}
