//! Which groups a client's interest evaluation asks about, from the spatial index: those that
//! changed cell near it or that it has, and, when its focus changed cell, those whose distance
//! from it may now get another answer.

use crate::replication::interest::{Cell, InterestPolicy};
use crate::replication::server::group_vis::Vis;
use crate::replication::server::node_table::GroupKey;
use crate::replication::server::spatial_index::SpatialIndex;
use crate::replication::server::vis_table::VisTable;

/// One client's evaluation as the index sees it.
pub(crate) struct Around<'a> {
    pub(crate) index: &'a SpatialIndex,
    pub(crate) policy: &'a dyn InterestPolicy,
    /// Its focus's cell now, and at its last evaluation.
    pub(crate) focus: Option<Cell>,
    pub(crate) old: Option<Cell>,
    /// Where it stands with each group.
    pub(crate) vis: &'a VisTable,
}

impl Around<'_> {
    /// Whether the policy gives distance bands.
    fn banded(&self) -> bool {
        self.policy.distance_band(0, false).is_some()
    }

    /// The distance band of `cell` from the focus cell `f` for a group the client has
    /// (`visible`) or not (every distance beyond reach counts as one past it: nothing is
    /// relevant there).
    fn band(&self, cell: Cell, f: Cell, visible: bool) -> u32 {
        let cells = self.index.reach_distance(cell, f);
        self.policy.distance_band(cells, visible).unwrap_or(0)
    }

    /// Whether the client has group `g` and gets its changes.
    fn visible(&self, g: GroupKey) -> bool {
        self.vis.state(g) == Some(Vis::Visible)
    }

    /// Whether the client has group `g` (visible or dormant).
    fn has(&self, g: GroupKey) -> bool {
        self.vis.state(g).is_some_and(|s| s != Vis::Hidden)
    }

    /// Appends the groups that changed cell from move number `seen` on and may get another
    /// answer: with bands and the focus in the same cell, those whose band changed; else those
    /// now near the focus or without a cell, and those the client has. A group the client has
    /// by the policy's answer was within reach of the focus cell of that answer, the last
    /// evaluation's: its first move since starts there, so a move from beyond it is not one of
    /// its (groups in their grace period are asked anyway, and the answers for the others do
    /// not depend on cells); only moves from no cell need a look at what the client has.
    pub(crate) fn moves(&self, seen: u64, asked: &mut Vec<GroupKey>) {
        let steady = self.banded() && self.focus == self.old;
        let near = |cell: Cell| self.focus.is_some_and(|f| self.index.within(cell, f));
        for m in self.index.moves_since(seen) {
            let ask = match (m.from, m.to, self.focus, self.old) {
                (Some(from), Some(to), Some(f), _) if steady => {
                    // Beyond reach on both sides: one band, nothing to ask.
                    (near(from) || near(to)) && {
                        let visible = self.visible(m.group);
                        self.band(from, f, visible) != self.band(to, f, visible)
                    }
                }
                _ if m.to.map_or(true, near) => true,
                (Some(from), _, _, Some(old)) => self.index.within(from, old),
                _ => self.has(m.group),
            };
            if ask {
                asked.push(m.group);
            }
        }
    }

    /// Appends, for a focus that changed cell, the groups whose band changed (without bands:
    /// every group near the old or the new cell).
    pub(crate) fn focus_moved(&self, asked: &mut Vec<GroupKey>) {
        let (Some(old), Some(new)) = (self.old, self.focus) else {
            return self.around_both(asked);
        };
        if !self.banded() {
            return self.around_both(asked);
        }
        let changed = |cell: Cell, visible: bool| {
            self.band(cell, old, visible) != self.band(cell, new, visible)
        };
        let mut each = |cell: Cell, groups: &[GroupKey]| {
            let (hidden, shown) = (changed(cell, false), changed(cell, true));
            if hidden || shown {
                let wanted = |&&g: &&GroupKey| if self.visible(g) { shown } else { hidden };
                asked.extend(groups.iter().filter(wanted));
            }
        };
        self.index.for_near(old, &mut each);
        self.index.for_near(new, |cell, groups| {
            if !self.index.within(cell, old) {
                each(cell, groups);
            }
        });
    }

    /// Appends every group near the old or the new focus cell.
    fn around_both(&self, asked: &mut Vec<GroupKey>) {
        for cell in [self.old, self.focus].into_iter().flatten() {
            self.index.near(cell, asked);
        }
    }
}
