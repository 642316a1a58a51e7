//! A client's snapshot entries, applied one column at a time: the snapshot is read through
//! once (each entry's net id found in the dense table, with where its value was last seen),
//! then every column applies its entries in one pass, one dynamic call per column, the loop
//! inside monomorphized. Entries are applied by column, not in the snapshot's net id order: no
//! entry depends on another.

use crate::replication::client::entry::{EntryAt, EntryMisses, EntryRef};
use crate::replication::client::replicas::Replicas;
use crate::replication::shared::by_column::ByColumn;
use crate::replication::shared::columns::ValueAt;
use crate::store::Store;

/// The entries of one snapshot (see the [module docs](self)); allocates nothing once its
/// buffers have grown.
#[derive(Debug, Default)]
pub(crate) struct EntryBatch {
    /// Entries in snapshot order, each with its column.
    read: Vec<(u32, EntryRef)>,
    /// The same, by column.
    sort: ByColumn,
    by_column: Vec<EntryRef>,
    /// What the columns could not apply.
    pub(crate) misses: EntryMisses,
}

impl EntryBatch {
    /// A new snapshot.
    pub(crate) fn clear(&mut self) {
        self.read.clear();
        self.misses.stale.clear();
        self.misses.rejected.clear();
        self.misses.named.clear();
        self.misses.held = 0;
    }

    /// An entry whose value was last seen `at`.
    pub(crate) fn push(&mut self, at: ValueAt, entry: EntryRef) {
        self.read.push((at.column, entry));
    }

    /// Applies every entry (their bytes in `snapshot`), one pass per column; the entries of a
    /// column that is not there go to the stale misses.
    pub(crate) fn apply(
        &mut self,
        replicas: &mut Replicas,
        store: &mut dyn Store,
        snapshot: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) {
        let stale = &mut self.misses.stale;
        let columns = replicas.column_count();
        self.sort
            .sort(&self.read, columns, &mut self.by_column, |e| stale.push(e));
        for (column, run) in self.sort.runs() {
            let run = &self.by_column[run];
            match replicas.column_mut(column) {
                Some(c) => c.apply_entries(store, run, snapshot, at, changed, &mut self.misses),
                None => self.misses.stale.extend_from_slice(run),
            }
        }
    }
}
