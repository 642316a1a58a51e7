//! [`SpatialIndex`]: the spawn groups by cell, for a policy with cells
//! ([`InterestPolicy::reach_cells`](crate::replication::interest::InterestPolicy::reach_cells)),
//! and the log of the groups that changed cell, so that a client's relevance evaluation asks
//! only about the groups near its focus and those that moved.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::int_hasher::IntHasher;
use crate::replication::interest::Cell;
use crate::replication::server::node_table::{Group, GroupKey};
use crate::replication::server::per_slot::PerSlot;

/// Where a group stands in the index.
#[derive(Debug, Clone, Copy, Default)]
struct Placed {
    /// Its cell (`None`: it has no place, and is in `unplaced`).
    cell: Option<Cell>,
    /// Its position in its cell's list (or in `unplaced`).
    at: u32,
}

/// A group that changed cell.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Move {
    pub(crate) group: GroupKey,
    /// Its cell before, and its new cell.
    pub(crate) from: Option<Cell>,
    pub(crate) to: Option<Cell>,
}

/// How many empty cells the index keeps beyond [`EMPTY_PER_OCCUPIED`] per occupied one: up to
/// then, a group moving back into a cell finds its list's capacity.
const EMPTY_CELLS_KEPT: usize = 4096;
/// How many empty cells the index keeps per occupied one, beyond [`EMPTY_CELLS_KEPT`].
const EMPTY_PER_OCCUPIED: usize = 4;

/// The groups by cell (see the [module documentation](self)). Allocates nothing in steady
/// state: a cell's list keeps its capacity when it empties, unless the cells left empty
/// outnumber [`EMPTY_CELLS_KEPT`] and four per occupied cell (groups that wander a wide world
/// leave cells behind; those are dropped then).
pub(crate) struct SpatialIndex {
    reach: u32,
    cells: HashMap<Cell, Vec<GroupKey>, BuildHasherDefault<IntHasher>>,
    /// How many of `cells` are empty.
    empty: usize,
    placed: PerSlot<Group, Placed>,
    unplaced: Vec<GroupKey>,
    /// The groups that changed cell, oldest first; `moves[0]` is move number `base`.
    moves: Vec<Move>,
    base: u64,
}

impl SpatialIndex {
    /// An empty index for a policy whose groups are relevant up to `reach` cells from a focus.
    pub(crate) fn new(reach: u32) -> Self {
        Self {
            reach,
            cells: HashMap::default(),
            empty: 0,
            placed: PerSlot::default(),
            unplaced: Vec::new(),
            moves: Vec::new(),
            base: 0,
        }
    }

    /// Whether cells `a` and `b` are within reach of each other.
    #[inline]
    pub(crate) fn within(&self, a: Cell, b: Cell) -> bool {
        distance(a, b) <= u64::from(self.reach)
    }

    /// The distance between cells `a` and `b`, every distance beyond reach counting as one
    /// past it.
    #[inline]
    pub(crate) fn reach_distance(&self, a: Cell, b: Cell) -> u64 {
        distance(a, b).min(u64::from(self.reach) + 1)
    }

    /// Whether a group whose [`cell`](Self::cell) is `cell` may be relevant to a client whose
    /// focus is in `focus`: it has no place, or is not in the index, or is within reach.
    pub(crate) fn may_reach(&self, cell: Option<Cell>, focus: Option<Cell>) -> bool {
        cell.map_or(true, |cell| focus.is_some_and(|f| self.within(cell, f)))
    }

    /// Asks the processor for what [`cell`](Self::cell) reads of group `g` (see
    /// [`crate::cache_hint`]).
    #[inline]
    pub(crate) fn prefetch(&self, g: GroupKey) {
        self.placed.prefetch(g);
    }

    /// Group `g`'s cell, if the index holds it in one.
    pub(crate) fn cell(&self, g: GroupKey) -> Option<Cell> {
        self.placed.get(g).and_then(|p| p.cell)
    }

    /// Puts group `g` in `cell` (a new group, or one that may have moved); a group that was in
    /// the index and changed cell is logged as a move.
    pub(crate) fn place(&mut self, g: GroupKey, cell: Option<Cell>) {
        let old = self.placed.get(g).copied();
        if let Some(old) = old {
            if old.cell == cell {
                return;
            }
            self.take_out(g, old);
            self.moves.push(Move {
                group: g,
                from: old.cell,
                to: cell,
            });
        }
        let list = match cell {
            Some(cell) => {
                let list = self.cells.entry(cell).or_default();
                if list.is_empty() && list.capacity() > 0 {
                    self.empty -= 1;
                }
                list
            }
            None => &mut self.unplaced,
        };
        let at = u32::try_from(list.len()).unwrap_or(u32::MAX);
        list.push(g);
        self.placed.set(g, Placed { cell, at });
    }

    /// Takes group `g` (gone) out of the index.
    pub(crate) fn remove(&mut self, g: GroupKey) {
        if let Some(old) = self.placed.get(g).copied() {
            self.take_out(g, old);
            // Id 0 is no group's: the slot answers to no key until its next group is placed.
            let slot = u32::try_from(g.slot()).unwrap_or(u32::MAX);
            self.placed.set(GroupKey::new(slot, 0), Placed::default());
        }
    }

    fn take_out(&mut self, g: GroupKey, old: Placed) {
        let list = match old.cell {
            Some(cell) => self.cells.get_mut(&cell),
            None => Some(&mut self.unplaced),
        };
        let Some(list) = list else {
            return;
        };
        let at = old.at as usize;
        if list.get(at) != Some(&g) {
            return;
        }
        list.swap_remove(at);
        if let Some(&moved) = list.get(at) {
            if let Some(p) = self.placed.get_mut(moved) {
                p.at = old.at;
            }
        }
        if list.is_empty() && old.cell.is_some() {
            self.empty += 1;
            self.drop_empty_cells_if_many();
        }
    }

    /// Drops the empty cells once there are too many of them (see [`EMPTY_CELLS_KEPT`]).
    fn drop_empty_cells_if_many(&mut self) {
        let occupied = self.cells.len() - self.empty;
        if self.empty > EMPTY_CELLS_KEPT + EMPTY_PER_OCCUPIED * occupied {
            self.cells.retain(|_, list| !list.is_empty());
            self.empty = 0;
        }
    }

    /// Appends to `out` every group in a cell within reach of `around`.
    pub(crate) fn near(&self, around: Cell, out: &mut Vec<GroupKey>) {
        self.for_near(around, |_, groups| out.extend_from_slice(groups));
    }

    /// Calls `f` with every occupied cell within reach of `around` and its groups.
    pub(crate) fn for_near(&self, around: Cell, mut f: impl FnMut(Cell, &[GroupKey])) {
        let r = i64::from(self.reach);
        for dx in -r..=r {
            for dz in -r..=r {
                let cell = (around.0.saturating_add(dx), around.1.saturating_add(dz));
                if let Some(list) = self.cells.get(&cell).filter(|l| !l.is_empty()) {
                    f(cell, list);
                }
            }
        }
    }

    /// The groups without a place.
    pub(crate) fn unplaced(&self) -> &[GroupKey] {
        &self.unplaced
    }

    /// The number the next move will have.
    pub(crate) fn moves_end(&self) -> u64 {
        self.base + self.moves.len() as u64
    }

    /// The moves from number `since` on (those forgotten already are not given).
    pub(crate) fn moves_since(&self, since: u64) -> &[Move] {
        let skip = since.saturating_sub(self.base);
        &self.moves[usize::try_from(skip)
            .unwrap_or(usize::MAX)
            .min(self.moves.len())..]
    }

    /// Forgets the moves before number `before` (every client has seen them).
    pub(crate) fn forget_moves(&mut self, before: u64) {
        let n = before
            .saturating_sub(self.base)
            .min(self.moves.len() as u64);
        if n > 0 {
            self.moves.drain(..n as usize);
            self.base += n;
        }
    }
}

/// The Chebyshev distance between two cells.
#[inline]
pub(crate) fn distance(a: Cell, b: Cell) -> u64 {
    a.0.abs_diff(b.0).max(a.1.abs_diff(b.1))
}

#[cfg(test)]
mod tests {
    use super::SpatialIndex;
    use crate::replication::server::node_table::GroupKey;

    fn near(index: &SpatialIndex, around: (i64, i64)) -> Vec<u32> {
        let mut out = Vec::new();
        index.near(around, &mut out);
        let mut ids: Vec<u32> = out.iter().map(|g| g.id()).collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn groups_are_found_near_their_cells_and_moves_are_logged() {
        let mut index = SpatialIndex::new(1);
        let (a, b, c) = (
            GroupKey::new(0, 1),
            GroupKey::new(1, 2),
            GroupKey::new(2, 3),
        );
        index.place(a, Some((0, 0)));
        index.place(b, Some((2, 0)));
        index.place(c, None);
        assert_eq!(near(&index, (1, 0)), [1, 2]);
        assert_eq!(near(&index, (-1, -1)), [1]);
        assert_eq!(index.unplaced(), [c]);
        assert_eq!(index.moves_end(), 0, "placing a new group is no move");
        // `a` crosses to (3, 0), and back and forth: each change of cell is a move.
        index.place(a, Some((3, 0)));
        index.place(a, Some((3, 0)));
        index.place(a, Some((0, 0)));
        assert_eq!(index.moves_end(), 2);
        let moves = index.moves_since(1);
        assert_eq!(
            (moves[0].group, moves[0].from, moves[0].to),
            (a, Some((3, 0)), Some((0, 0)))
        );
        index.forget_moves(1);
        assert_eq!(index.moves_since(0).len(), 1);
        // A gone group leaves its cell, and the group that took its place in the list stays.
        index.place(c, Some((2, 1)));
        index.remove(b);
        assert_eq!(near(&index, (2, 0)), [3]);
        assert!(
            index.may_reach(index.cell(b), None),
            "not in the index: may reach"
        );
        assert!(!index.may_reach(index.cell(c), Some((5, 5))));
        assert!(index.may_reach(index.cell(c), Some((3, 2))));
    }

    #[test]
    fn groups_wandering_a_wide_world_leave_a_bounded_number_of_cells_behind() {
        use super::{EMPTY_CELLS_KEPT, EMPTY_PER_OCCUPIED};
        let mut index = SpatialIndex::new(1);
        let groups: Vec<GroupKey> = (0..10).map(|i| GroupKey::new(i, i + 1)).collect();
        for step in 0..100_000i64 {
            for (i, &g) in (0i64..).zip(&groups) {
                index.place(g, Some((step, i * 1000)));
            }
            index.forget_moves(index.moves_end());
            let bound = EMPTY_CELLS_KEPT + (EMPTY_PER_OCCUPIED + 1) * groups.len();
            assert!(
                index.cells.len() <= bound,
                "step {step}: {}",
                index.cells.len()
            );
        }
        // Each group is still found where it is.
        assert_eq!(near(&index, (99_999, 0)), [1]);
        assert_eq!(near(&index, (99_999, 9000)), [10]);
        // Going back and forth between two cells keeps both lists: nothing is dropped.
        let before = index.cells.len();
        for step in 0..1000i64 {
            index.place(groups[0], Some((step % 2, -5)));
        }
        assert!(index.cells.len() <= before + 2);
        assert_eq!(near(&index, (1, -5)), [1]);
    }
}
