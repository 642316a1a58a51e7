//! [`Baselines`]: the values each bit-packed entry a client decoded gave its node, by the
//! snapshot's tick, as later entries' baselines.
//!
//! One table per tick of the last [`BASELINE_DEPTH`] (a ring indexed by tick modulo
//! `BASELINE_DEPTH`): the entries of that tick's snapshot in the order it carried them, each its net id and its
//! values. A snapshot is written into its table as it is read, front to back; and since a
//! snapshot's entries come in net id order and most are coded against one baseline tick, the
//! entries it looks up in a baseline's table come in that table's order too: each lookup first
//! tries the entry after the last one found, and only then searches. So both ends of the work
//! walk memory in order, as a snapshot does, rather than a node's records scattered in a map.
//! An entry names its baseline at most `BASELINE_DEPTH - 1` ticks back (the server's rule), so
//! a table is overwritten only once it can no longer be named.

use crate::codec::quantize::Buckets;
use crate::replication::shared::protocol::BASELINE_DEPTH;

/// One entry of a [`TickTable`]: its node, and where its values are.
#[derive(Debug, Clone, Copy)]
struct Row {
    id: u32,
    start: u32,
    slots: u32,
}

/// The values of one snapshot's decoded entries.
#[derive(Debug, Default)]
struct TickTable {
    /// The snapshot's tick, if the table holds one.
    tick: Option<u32>,
    /// Its entries, by increasing net id once the snapshot is read.
    rows: Vec<Row>,
    values: Vec<Buckets>,
    /// Whether `rows` came in increasing id order so far.
    sorted: bool,
    /// Where the next lookup looks first.
    cursor: usize,
}

impl TickTable {
    /// The values of node `id` in this table, if it has them with `slots` values.
    fn find(&mut self, id: u32, slots: usize) -> Option<&[Buckets]> {
        let at = self.position(id);
        let row = *self.rows.get(at).filter(|r| r.id == id)?;
        self.cursor = at + 1;
        let start = row.start as usize;
        let values = self.values.get(start..start + row.slots as usize)?;
        (values.len() == slots).then_some(values)
    }
}

impl TickTable {
    /// Where node `id` is or would be among the rows: a few steps from the cursor when it is
    /// ahead of it (the usual case), else a binary search.
    fn position(&self, id: u32) -> usize {
        let from = self.cursor;
        match self.rows.get(from..) {
            Some(ahead) if ahead.first().is_some_and(|r| r.id <= id) => {
                match ahead.iter().take(8).position(|r| r.id >= id) {
                    Some(k) => from + k,
                    None => from + ahead.partition_point(|r| r.id < id),
                }
            }
            _ => self.rows.partition_point(|r| r.id < id),
        }
    }
}

/// A client's baselines (see the [module documentation](self)). Allocates nothing once every
/// table has been begun after the largest snapshot so far: each table is made as large as
/// that one when it is begun (snapshots whose sizes vary in a cycle, as update tiers make
/// them, would otherwise have each table wait for the largest to land on it). A table keeps
/// at most as many entries as the client has nodes (a hostile server repeating one entry
/// cannot make them larger), so they hold at most `BASELINE_DEPTH` values of each node, as a
/// record per node would.
#[derive(Default)]
pub(crate) struct Baselines {
    tables: Vec<TickTable>,
    /// The tick being written, if any.
    writing: Option<u32>,
    /// The most rows and values one table has held.
    largest: (usize, usize),
    /// The most rows the table being written keeps.
    limit: usize,
}

impl Baselines {
    /// Starts the table of the snapshot of `tick`, in place of the one `BASELINE_DEPTH` ticks
    /// before, to keep at most `limit` entries (the client's node count).
    pub(crate) fn begin(&mut self, tick: u32, limit: usize) {
        self.limit = limit;
        if self.tables.is_empty() {
            self.tables.resize_with(BASELINE_DEPTH, TickTable::default);
        }
        for table in &mut self.tables {
            table.cursor = 0;
        }
        let table = &mut self.tables[tick as usize % BASELINE_DEPTH];
        table.tick = Some(tick);
        table.rows.clear();
        table.values.clear();
        table.rows.reserve(self.largest.0);
        table.values.reserve(self.largest.1);
        table.sorted = true;
        self.writing = Some(tick);
    }

    /// Node `id`'s values in the snapshot of `tick`, if this client decoded an entry for it
    /// there with `slots` values (and has not written `BASELINE_DEPTH` ticks since).
    pub(crate) fn find(&mut self, tick: u32, id: u32, slots: usize) -> Option<&[Buckets]> {
        let table = self.tables.get_mut(tick as usize % BASELINE_DEPTH)?;
        if table.tick != Some(tick) || self.writing == Some(tick) {
            return None;
        }
        table.find(id, slots)
    }

    /// Adds node `id`'s `values` to the table [begun](Self::begin) last.
    pub(crate) fn push(&mut self, id: u32, values: &[Buckets]) {
        let Some(tick) = self.writing else {
            return;
        };
        let Some(table) = self.tables.get_mut(tick as usize % BASELINE_DEPTH) else {
            return;
        };
        let (Ok(start), Ok(slots)) = (
            u32::try_from(table.values.len()),
            u32::try_from(values.len()),
        ) else {
            return;
        };
        if table.rows.len() >= self.limit {
            return;
        }
        if table.rows.last().is_some_and(|last| last.id >= id) {
            table.sorted = false;
        }
        table.rows.push(Row { id, start, slots });
        table.values.extend_from_slice(values);
    }

    /// Ends the table begun last: sorts its entries by net id if they did not come so.
    pub(crate) fn end(&mut self) {
        let Some(tick) = self.writing.take() else {
            return;
        };
        if let Some(table) = self.tables.get_mut(tick as usize % BASELINE_DEPTH) {
            if !table.sorted {
                table.rows.sort_unstable_by_key(|r| r.id);
            }
            self.largest.0 = self.largest.0.max(table.rows.len());
            self.largest.1 = self.largest.1.max(table.values.len());
        }
    }

    /// Forgets every table.
    pub(crate) fn clear(&mut self) {
        for table in &mut self.tables {
            table.tick = None;
        }
        self.writing = None;
    }
}

#[cfg(test)]
mod tests {
    use super::{Baselines, BASELINE_DEPTH};
    use crate::codec::quantize::Buckets;

    fn value(v: u64) -> [Buckets; 2] {
        [Buckets::from_low_u64(v), Buckets::from_low_u64(v + 1)]
    }

    fn snapshot(b: &mut Baselines, tick: u32, entries: &[(u32, u64)]) {
        b.begin(tick, 100);
        for &(id, v) in entries {
            b.push(id, &value(v));
        }
        b.end();
    }

    #[test]
    fn an_entry_reads_at_its_tick_only_until_a_tick_depth_later_takes_its_place() {
        let mut b = Baselines::default();
        snapshot(&mut b, 10, &[(3, 30), (7, 70), (9, 90)]);
        snapshot(&mut b, 14, &[(7, 71)]);
        assert_eq!(b.find(10, 7, 2), Some(&value(70)[..]));
        assert_eq!(b.find(14, 7, 2), Some(&value(71)[..]));
        assert_eq!(b.find(10, 9, 2), Some(&value(90)[..]));
        assert_eq!(b.find(10, 3, 2), Some(&value(30)[..]), "behind the cursor");
        assert_eq!(b.find(14, 3, 2), None, "not carried then");
        assert_eq!(b.find(13, 7, 2), None, "never decoded");
        assert_eq!(b.find(10, 7, 1), None, "another width");
        assert_eq!(
            b.find(10 + BASELINE_DEPTH as u32, 7, 2),
            None,
            "not that tick"
        );
        snapshot(&mut b, 10 + BASELINE_DEPTH as u32, &[(7, 72)]);
        assert_eq!(b.find(10, 7, 2), None, "overwritten");
        assert_eq!(
            b.find(10 + BASELINE_DEPTH as u32, 7, 2),
            Some(&value(72)[..])
        );
        b.clear();
        assert_eq!(b.find(14, 7, 2), None, "cleared");
    }

    #[test]
    fn a_table_keeps_no_more_entries_than_the_client_has_nodes() {
        let mut b = Baselines::default();
        b.begin(3, 2);
        for _ in 0..1000 {
            b.push(7, &value(70));
        }
        b.push(8, &value(80));
        b.end();
        assert_eq!(b.tables[3].rows.len(), 2, "a hostile repeat keeps two");
        assert_eq!(b.find(3, 7, 2), Some(&value(70)[..]));
        assert_eq!(b.find(3, 8, 2), None, "past the limit: no baseline");
    }

    #[test]
    fn entries_out_of_order_are_found_once_their_snapshot_ends() {
        let mut b = Baselines::default();
        snapshot(&mut b, 5, &[(8, 80), (9, 90), (2, 20), (4, 40)]);
        for (id, v) in [(2, 20), (4, 40), (8, 80), (9, 90), (4, 40), (2, 20)] {
            assert_eq!(b.find(5, id, 2), Some(&value(v)[..]), "node {id}");
        }
        // The table being written is not a baseline yet.
        b.begin(6, 100);
        b.push(1, &value(1));
        assert_eq!(b.find(6, 1, 2), None);
        b.end();
        assert_eq!(b.find(6, 1, 2), Some(&value(1)[..]));
    }
}
