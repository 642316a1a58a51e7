//! [`Baselines`]: the values each bit-packed entry a client decoded gave its node, by the
//! snapshot's tick, as later entries' baselines.
//!
//! One table per tick of the last `depth` ([`baseline_depth`] at the server's tick rate: a
//! ring indexed by tick modulo `depth`): the entries of that tick's snapshot in the order it
//! carried them, each its net id and its values. A snapshot is written into its table as it is read, front to back; and since a
//! snapshot's entries come in net id order and most are coded against one baseline tick, the
//! entries it looks up in a baseline's table come in that table's order too: each lookup first
//! tries the entry after the last one found, and only then searches. So both ends of the work
//! walk memory in order, as a snapshot does, rather than a node's records scattered in a map.
//! An entry names its baseline at most `depth - 1` ticks back (the server's rule), so
//! a table is overwritten only once it can no longer be named.
//!
//! A baseline is a node's values *as of* a tick: the values of its newest entry at or before
//! it, or of its spawn. The server names a tick whose snapshot did not carry the node when the
//! client acknowledged a snapshot that carried all there was to send (the node had nothing new
//! since; see `SendState::apply_ack` on the server), or the tick of its spawn. The newest
//! entry is then found in an older table, or, when no table holds the node any longer, in the
//! node's *floor*: the values of its spawn, or of its newest entry whose table was
//! overwritten, kept when the node is in no table of the tick after (a node in every snapshot
//! keeps none). Tables and floors are ordered by when they were made, not by tick: the clock
//! may jump, and a slot no snapshot came for in a while keeps an old table.

use crate::codec::quantize::Buckets;
use crate::replication::client::floors::Floors;
#[cfg(doc)]
use crate::replication::shared::protocol::baseline_depth;
use crate::replication::shared::protocol::{MAX_BASELINE_DEPTH, MIN_BASELINE_DEPTH};
use crate::tick::{tick_after, tick_diff, HORIZON};

/// One entry of a [`TickTable`]: its node, and where its values are.
#[derive(Debug, Clone, Copy)]
struct Row {
    id: u32,
    start: u32,
    slots: u32,
}

/// [`Row::slots`] of an entry whose node was forgotten since (despawned, or gone from the
/// client's interest): its values are no one's baseline, nor a floor once its table retires.
const GONE: u32 = u32::MAX;

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
    /// Twice the number of tables begun until this one: orders tables and floors whatever
    /// their ticks (a slot no snapshot came for in a while keeps an old table).
    begun: u64,
    /// A bit per bucket of net ids ([`id_bit`]) set for each entry's: a node whose bit is
    /// clear has no entry here, which a lookup that goes back through the tables (most of
    /// them without the node) learns from one cached word rather than a search.
    ids: [u64; ID_WORDS],
}

/// Words of [`TickTable::ids`]: 1024 bits, enough to tell most absent nodes apart in the
/// tables of a client that sees a few hundred changing nodes a tick.
const ID_WORDS: usize = 16;

/// The word and bit of [`TickTable::ids`] for net id `id` (its bits mixed, so that ids a
/// table's size apart do not share one).
#[inline]
fn id_bit(id: u32) -> (usize, u64) {
    let h = id.wrapping_mul(0x9E37_79B9) >> 22;
    ((h >> 6) as usize % ID_WORDS, 1 << (h & 63))
}

impl TickTable {
    /// Whether this table may have an entry of node `id` (no if its bit is clear).
    #[inline]
    fn may_hold(&self, id: u32) -> bool {
        let (word, bit) = id_bit(id);
        self.ids[word] & bit != 0
    }

    /// Where this table has an entry of node `id`. The next lookup looks from there first,
    /// found or not: a snapshot's lookups in a table come in net id order.
    fn row_of(&mut self, id: u32) -> Option<usize> {
        let at = self.position(id);
        self.cursor = at;
        self.rows.get(at).is_some_and(|r| r.id == id).then_some(at)
    }

    /// The values of the entry at row `at`, if it has `slots` values; the next lookup looks
    /// after it first.
    fn values_at(&mut self, at: usize, slots: usize) -> Option<&[Buckets]> {
        let row = *self.rows.get(at)?;
        self.cursor = at + 1;
        if row.slots == GONE {
            return None;
        }
        let start = row.start as usize;
        let values = self.values.get(start..start + row.slots as usize)?;
        (values.len() == slots).then_some(values)
    }
}

impl TickTable {
    /// Node `id` is forgotten: its entry here, if it has one, is [`GONE`].
    fn forget(&mut self, id: u32) {
        if !self.may_hold(id) {
            return;
        }
        let at = match self.sorted {
            true => self.row_of(id),
            false => self.rows.iter().position(|r| r.id == id),
        };
        if let Some(row) = at.and_then(|at| self.rows.get_mut(at)) {
            row.slots = GONE;
        }
    }

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
/// cannot make them larger), so they hold at most `depth` values of each node, as a record per
/// node would.
#[derive(Default)]
pub(crate) struct Baselines {
    /// One table per tick of the last `depth`: made when the first is begun.
    tables: Vec<TickTable>,
    /// How many ticks back a baseline may be ([`set_depth`](Self::set_depth); 0: the least).
    depth: usize,
    /// The tick being written, if any.
    writing: Option<u32>,
    /// The most rows and values one table has held.
    largest: (usize, usize),
    /// The most rows the table being written keeps.
    limit: usize,
    /// By net id, the values of the node's spawn, or of its newest entry whose table was
    /// overwritten if the table after did not hold the node (see the
    /// [module documentation](self)).
    floors: Floors,
    /// How many tables were begun.
    begins: u64,
    /// The tick the floors were last aged at.
    aged: u32,
    /// The slots, the table begun last first (as of the last table ended).
    newest_first: Vec<u8>,
}

impl Baselines {
    /// How many ticks back a baseline may be ([`baseline_depth`] at the server's tick rate):
    /// how many tables the client keeps. Another depth than the tables' forgets them.
    pub(crate) fn set_depth(&mut self, depth: usize) {
        debug_assert!(depth.is_power_of_two());
        self.depth = depth.clamp(MIN_BASELINE_DEPTH, MAX_BASELINE_DEPTH);
        if !self.tables.is_empty() && self.tables.len() != self.depth {
            self.clear();
            self.tables.clear();
        }
    }

    /// The slot of `tick`'s table (0 before any table is made): the tick modulo the table
    /// count, a power of two.
    fn slot(&self, tick: u32) -> usize {
        tick as usize & self.tables.len().saturating_sub(1)
    }

    /// Starts the table of the snapshot of `tick`, in place of the one `depth` ticks before, to
    /// keep at most `limit` entries (the client's node count).
    pub(crate) fn begin(&mut self, tick: u32, limit: usize) {
        self.limit = limit;
        if self.tables.is_empty() {
            let depth = self.depth.max(MIN_BASELINE_DEPTH);
            self.tables.resize_with(depth, TickTable::default);
        }
        for table in &mut self.tables {
            table.cursor = 0;
        }
        let slot = self.slot(tick);
        if let Some(old) = self.tables[slot].tick.filter(|&old| old != tick) {
            self.retire(slot, old);
        }
        self.floors.settle();
        self.age_floors(tick);
        let table = &mut self.tables[slot];
        table.tick = Some(tick);
        // Even: a spawn between two tables takes the odd number between theirs.
        self.begins += 1;
        table.begun = 2 * self.begins;
        table.rows.clear();
        table.ids = [0; ID_WORDS];
        table.values.clear();
        table.rows.reserve(self.largest.0);
        table.values.reserve(self.largest.1);
        table.sorted = true;
        self.writing = Some(tick);
    }

    /// Keeps every floor's tick within [`HORIZON`] of `tick` (the newest table's), so that
    /// ticks compare however long a node keeps still (or the clock jumps): a floor older is
    /// as good as one of the horizon's tick for any tick the server names. Sweeps the floors
    /// once every half horizon.
    fn age_floors(&mut self, tick: u32) {
        let since = tick_diff(tick, self.aged);
        if (0..(HORIZON / 2) as i32).contains(&since) {
            return;
        }
        self.aged = tick;
        self.floors.age(tick.wrapping_sub(HORIZON));
    }

    /// Keeps, as their nodes' floors, the entries of the table in `slot` (of the snapshot of
    /// `old`, about to be overwritten) whose nodes the table of the tick after does not hold,
    /// unless a newer table's are kept already.
    /// Both tables are in net id order: one walk along each.
    fn retire(&mut self, slot: usize, old: u32) {
        let next_tick = old.wrapping_add(1);
        let next = &self.tables[self.slot(next_tick)];
        let next_rows = match next.tick == Some(next_tick) {
            true => &next.rows[..],
            false => &[],
        };
        let table = &self.tables[slot];
        let mut at = 0;
        for row in &table.rows {
            while next_rows.get(at).is_some_and(|r| r.id < row.id) {
                at += 1;
            }
            if row.slots == GONE || next_rows.get(at).is_some_and(|r| r.id == row.id) {
                continue;
            }
            let start = row.start as usize;
            let Some(values) = table.values.get(start..start + row.slots as usize) else {
                continue;
            };
            self.floors.set(row.id, (old, table.begun), values);
        }
    }

    /// Node `id`'s values as of `tick` (with `slots` values), if this client has them: those
    /// of its entry in the snapshot of `tick`, else of its newest entry before (in an older
    /// table, else its floor). For a tick the server may name: at most `depth - 1` before the
    /// newest snapshot begun, which is not a baseline yet.
    pub(crate) fn find(&mut self, tick: u32, id: u32, slots: usize) -> Option<&[Buckets]> {
        // Its table, the usual case: newer than any spawn of the node the server names a tick
        // at or after.
        let slot = self.slot(tick);
        let writing = self.writing;
        let own = self
            .tables
            .get_mut(slot)
            .filter(|t| t.tick == Some(tick) && writing != Some(tick) && t.may_hold(id))
            .and_then(|t| t.row_of(id));
        if let Some(at) = own {
            return self.tables.get_mut(slot)?.values_at(at, slots);
        }
        // A floor newer than a table is newer than the node's entry there, which may be
        // another node's of the same id (despawned before a spawn).
        let floor = self.floors.get(id);
        let floor_begun = floor.map_or(0, |f| f.begun);
        if let Some((slot, at)) = self.newest_holding(tick, id, floor_begun) {
            return self.tables.get_mut(slot)?.values_at(at, slots);
        }
        let floor = floor.filter(|f| !tick_after(f.tick, tick))?;
        let values = self.floors.values(floor);
        (values.len() == slots).then_some(values)
    }

    /// The slot and row of the newest table (the last begun) of a tick no later than `tick`
    /// that holds an entry of node `id` and is newer than `floor` (a floor's `begun`), but
    /// for the one being written. Ticks that jumped leave tables of older ticks in the ring:
    /// the order they were begun in is theirs ([`newest_first`](Self::newest_first)).
    fn newest_holding(&mut self, tick: u32, id: u32, floor: u64) -> Option<(usize, usize)> {
        for &slot in &self.newest_first {
            let slot = usize::from(slot);
            let Some(table) = self.tables.get_mut(slot) else {
                continue;
            };
            if table.begun < floor {
                return None;
            }
            let usable = table
                .tick
                .is_some_and(|t| !tick_after(t, tick) && self.writing != Some(t))
                && table.may_hold(id);
            if let Some(at) = usable.then(|| table.row_of(id)).flatten() {
                return Some((slot, at));
            }
        }
        None
    }

    /// Node `id` was spawned with `values` (its state as of `tick`): they are its floor,
    /// newer than any table begun so far (a node of the same id before it, despawned, may be
    /// in them) and older than any begun after.
    pub(crate) fn spawned(&mut self, id: u32, tick: u32, values: &[Buckets]) {
        self.floors.set(id, (tick, 2 * self.begins + 1), values);
    }

    /// Forgets the nodes `ids` (despawned): their floors, and their entries in the tables
    /// (which would be kept as floors again when their tables retire).
    pub(crate) fn forget(&mut self, ids: &[u32]) {
        for &id in ids {
            self.floors.forget(id);
            for table in &mut self.tables {
                table.forget(id);
            }
        }
    }

    /// Adds node `id`'s `values` to the table [begun](Self::begin) last.
    pub(crate) fn push(&mut self, id: u32, values: &[Buckets]) {
        let Some(tick) = self.writing else {
            return;
        };
        let slot = self.slot(tick);
        let Some(table) = self.tables.get_mut(slot) else {
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
        let (word, bit) = id_bit(id);
        table.ids[word] |= bit;
        table.values.extend_from_slice(values);
    }

    /// Ends the table begun last: sorts its entries by net id if they did not come so.
    pub(crate) fn end(&mut self) {
        let Some(tick) = self.writing.take() else {
            return;
        };
        let slot = self.slot(tick);
        if let Some(table) = self.tables.get_mut(slot) {
            if !table.sorted {
                table.rows.sort_unstable_by_key(|r| r.id);
            }
            self.largest.0 = self.largest.0.max(table.rows.len());
            self.largest.1 = self.largest.1.max(table.values.len());
        }
        let tables = &self.tables;
        self.newest_first.clear();
        // At most `MAX_BASELINE_DEPTH` slots, which fit a byte.
        #[allow(clippy::cast_possible_truncation)]
        let slots = (0..tables.len())
            .filter(|&s| tables[s].tick.is_some())
            .map(|s| s as u8);
        self.newest_first.extend(slots);
        self.newest_first
            .sort_unstable_by_key(|&s| std::cmp::Reverse(tables[usize::from(s)].begun));
    }

    /// Forgets every table and floor.
    pub(crate) fn clear(&mut self) {
        for table in &mut self.tables {
            table.tick = None;
        }
        self.writing = None;
        self.floors.clear();
        self.newest_first.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::Baselines;
    use crate::codec::quantize::Buckets;
    use crate::replication::shared::protocol::MIN_BASELINE_DEPTH as BASELINE_DEPTH;

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
    fn a_node_reads_as_of_a_tick_from_its_newest_entry_then_or_before() {
        let mut b = Baselines::default();
        snapshot(&mut b, 10, &[(3, 30), (7, 70), (9, 90)]);
        snapshot(&mut b, 14, &[(7, 71)]);
        assert_eq!(b.find(10, 7, 2), Some(&value(70)[..]));
        assert_eq!(b.find(14, 7, 2), Some(&value(71)[..]));
        assert_eq!(b.find(10, 9, 2), Some(&value(90)[..]));
        assert_eq!(b.find(10, 3, 2), Some(&value(30)[..]), "behind the cursor");
        assert_eq!(b.find(14, 3, 2), Some(&value(30)[..]), "not carried then");
        assert_eq!(b.find(13, 7, 2), Some(&value(70)[..]), "no snapshot then");
        assert_eq!(b.find(16, 7, 2), Some(&value(71)[..]), "a later tick");
        assert_eq!(b.find(9, 7, 2), None, "before its first entry");
        assert_eq!(b.find(14, 5, 2), None, "never decoded");
        assert_eq!(b.find(10, 7, 1), None, "another width");
        b.clear();
        assert_eq!(b.find(14, 7, 2), None, "cleared");
    }

    #[test]
    fn a_forgotten_node_is_not_kept_when_its_tables_are_overwritten() {
        let depth = BASELINE_DEPTH as u32;
        let mut b = Baselines::default();
        snapshot(&mut b, 10, &[(3, 30), (7, 70)]);
        b.forget(&[3]);
        assert_eq!(b.find(10, 3, 2), None, "forgotten");
        assert_eq!(b.find(10, 7, 2), Some(&value(70)[..]));
        snapshot(&mut b, 10 + depth, &[]);
        snapshot(&mut b, 11 + depth, &[]);
        b.floors.settle();
        assert_eq!(b.find(11 + depth, 7, 2), Some(&value(70)[..]), "a floor");
        assert_eq!(b.find(11 + depth, 3, 2), None, "no floor: it was forgotten");
        assert!(b.floors.get(3).is_none());
    }

    #[test]
    fn a_node_no_table_holds_any_longer_reads_from_its_floor() {
        let depth = BASELINE_DEPTH as u32;
        let mut b = Baselines::default();
        snapshot(&mut b, 6, &[(3, 36)]);
        snapshot(&mut b, 10, &[(3, 30), (7, 70)]);
        snapshot(&mut b, 11, &[(7, 71)]);
        // Tick 10's table is overwritten: node 3 keeps its values as its floor; node 7 is in
        // tick 11's table, and keeps none yet.
        snapshot(&mut b, 10 + depth, &[(9, 90)]);
        assert_eq!(b.find(10 + depth, 3, 2), Some(&value(30)[..]));
        assert_eq!(b.find(10 + depth, 7, 2), Some(&value(71)[..]));
        assert_eq!(b.find(9 + depth, 3, 2), Some(&value(30)[..]));
        // Tick 11's table goes too: node 7's floor is its entry then.
        snapshot(&mut b, 11 + depth, &[]);
        assert_eq!(b.find(11 + depth, 7, 2), Some(&value(71)[..]));
        assert_eq!(b.find(11 + depth, 7, 1), None, "another width");
        // A newer entry is read from its table; the tick before it, still from the floor.
        snapshot(&mut b, 12 + depth, &[(7, 72)]);
        assert_eq!(b.find(12 + depth, 7, 2), Some(&value(72)[..]));
        assert_eq!(b.find(11 + depth, 7, 2), Some(&value(71)[..]));
        // A table left over from before (no snapshot arrived for its slot since) does not
        // take a newer floor's place when it is overwritten.
        snapshot(&mut b, 6 + 2 * depth, &[]);
        assert_eq!(b.find(6 + 2 * depth, 3, 2), Some(&value(30)[..]));
        // A despawned node's floor goes.
        b.forget(&[3, 7]);
        assert_eq!(b.find(6 + 2 * depth, 3, 2), None);
    }

    #[test]
    fn after_ticks_jump_the_newest_entry_is_the_last_one_decoded() {
        let depth = BASELINE_DEPTH as u32;
        let mut b = Baselines::default();
        for tick in 100..100 + depth {
            let entries: &[(u32, u64)] = match tick {
                110 => &[(3, 110), (7, 110)],
                120 => &[(3, 120)],
                _ => &[],
            };
            snapshot(&mut b, tick, entries);
        }
        // The clock jumped: the first snapshot after it takes the slot of tick 120, whose
        // node 3 keeps its values as its floor; the tables of 100 to 131 but 120 stay.
        let jump = 120 + 1000 * depth;
        snapshot(&mut b, jump, &[]);
        assert_eq!(
            b.find(jump, 3, 2),
            Some(&value(120)[..]),
            "the floor, newer"
        );
        assert_eq!(
            b.find(jump - 5, 7, 2),
            Some(&value(110)[..]),
            "a table from before"
        );
        snapshot(&mut b, jump + 1, &[(7, 1)]);
        assert_eq!(b.find(jump + 1, 7, 2), Some(&value(1)[..]));
        assert_eq!(
            b.find(jump, 7, 2),
            Some(&value(110)[..]),
            "as of the tick before"
        );
    }

    #[test]
    fn every_tick_a_server_may_name_reads_as_the_newest_entry_decoded_by_then() {
        // At 30, 128 and 255 ticks a second.
        for depth in [32, 64, 128] {
            every_tick_a_server_may_name_reads_at(depth);
        }
    }

    fn every_tick_a_server_may_name_reads_at(depth: usize) {
        let mut rng = fastrand::Rng::with_seed(26);
        let mut b = Baselines::default();
        b.set_depth(depth);
        let depth = depth as u64;
        // Every entry decoded and every spawn, in order, by absolute tick (the tables' ticks
        // wrap: they start just before `u32::MAX`); and where each node's life began in it.
        let mut decoded: Vec<(u64, u32, u64)> = Vec::new();
        // Where the node's spawn is in `decoded`, if it was spawned (else its life is all).
        let mut life = [None; 30];
        let start = u64::from(u32::MAX) - 500;
        let mut now = start;
        #[allow(clippy::cast_possible_truncation)]
        let wire = |tick: u64| tick as u32;
        for _ in 0..3000 {
            // Mostly the next tick; some snapshots lost; now and then the clock jumps.
            now += match rng.u32(0..100) {
                0 => rng.u64(33..5000),
                1..=15 => rng.u64(2..6),
                _ => 1,
            };
            b.begin(wire(now), 100);
            for id in 1..30u32 {
                // Some nodes in most snapshots, others seldom.
                if rng.u32(0..30) < id {
                    continue;
                }
                let v = rng.u64(0..1000);
                b.push(id, &value(v));
                decoded.push((now, id, v));
            }
            b.end();
            // Now and then a node is despawned and spawned again (the same id), with its state
            // as of a tick after the snapshot's (no snapshot of the server's tick then carries
            // the node it took the id from).
            if rng.u32(0..10) == 0 {
                let (id, v) = (rng.u32(1..30), rng.u64(0..1000));
                b.forget(&[id]);
                b.spawned(id, wire(now + 1), &value(v));
                life[id as usize] = Some(decoded.len());
                decoded.push((now + 1, id, v));
            }
            // Any tick the server may name: up to `depth - 1` back.
            for _ in 0..5 {
                let id = rng.u32(1..30);
                // Not before the node's spawn: the server names none.
                let from = life[id as usize].unwrap_or(0);
                let born = life[id as usize].map_or(0, |at| decoded[at].0);
                let asked = (now - rng.u64(0..depth)).max(born);
                if asked > now {
                    continue;
                }
                let newest = decoded[from..]
                    .iter()
                    .rev()
                    .find(|&&(t, i, _)| i == id && t <= asked)
                    .map(|&(_, _, v)| value(v).to_vec());
                let found = b.find(wire(asked), id, 2).map(<[Buckets]>::to_vec);
                assert_eq!(found, newest, "depth {depth}: node {id} as of {asked}");
            }
        }
    }

    #[test]
    fn a_spawn_is_a_baseline_from_its_tick_until_an_entry_after_it() {
        let mut b = Baselines::default();
        // Node 3 had an entry before it was despawned; spawned again at 12.
        snapshot(&mut b, 10, &[(3, 30)]);
        b.forget(&[3]);
        b.spawned(3, 12, &value(40));
        assert_eq!(b.find(12, 3, 2), Some(&value(40)[..]), "its spawn");
        assert_eq!(b.find(20, 3, 2), Some(&value(40)[..]), "still");
        assert_eq!(
            b.find(11, 3, 2),
            None,
            "before it, the other node's is no baseline"
        );
        snapshot(&mut b, 13, &[(3, 41)]);
        assert_eq!(b.find(13, 3, 2), Some(&value(41)[..]), "an entry after it");
        assert_eq!(b.find(12, 3, 2), Some(&value(40)[..]));
        // Spawned again before the next snapshot: newer than every table.
        b.spawned(3, 14, &value(50));
        assert_eq!(b.find(14, 3, 2), Some(&value(50)[..]));
    }

    #[test]
    fn a_floor_stays_a_baseline_however_long_its_node_keeps_still() {
        let mut b = Baselines::default();
        b.spawned(3, 10, &value(30));
        // Four jumps of the clock of just under 2³⁰ ticks: past half the tick space.
        let mut tick = 10u32;
        for _ in 0..4 {
            tick = tick.wrapping_add((1 << 30) - 1000);
            for t in tick..tick + 3 {
                snapshot(&mut b, t, &[(7, 70)]);
            }
            assert_eq!(b.find(tick + 2, 3, 2), Some(&value(30)[..]));
        }
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
