//! The spatial index's upkeep on the server (see [`SpatialIndex`]): groups placed in the cells
//! the policy gives their roots when they are added, read again when their nodes change (with
//! the groups nested under them, whose place may follow theirs) and in a slow sweep over all of
//! them, taken out when they go; and the groups nested under another group, which follow it.

use crate::replication::server::node_table::GroupKey;
use crate::replication::server::spatial_index::SpatialIndex;
use crate::replication::server::state::ServerState;
use crate::replication::shared::state::Shared;

impl ServerState {
    /// Builds the spatial index anew for the current policy (after it changed): every group in
    /// its cell.
    pub(crate) fn rebuild_index(&mut self, shared: &Shared) {
        let reach = self.interest.policy.as_ref().and_then(|p| p.reach_cells());
        self.interest.index = reach.map(SpatialIndex::new);
        for i in 0..self.groups.len() {
            let g = self.groups.keys()[i];
            self.place(shared, g);
        }
        for client in &mut self.clients {
            client.focus_cell = None;
            client.seen_moves = 0;
        }
    }

    /// Puts group `g` in the cell the policy gives its root now (with a spatial index).
    fn place(&mut self, shared: &Shared, g: GroupKey) {
        let (Some(policy), Some(index)) = (&mut self.interest.policy, &mut self.interest.index)
        else {
            return;
        };
        if let Some(group) = self.groups.get(g) {
            index.place(g, policy.cell_of(&*shared.store, group.root));
        }
    }

    /// Reads the cells again (with a spatial index), once per tick: of the groups with a node
    /// that changed at the last capture and the groups nested under them (see
    /// [`place_nested`](Self::place_nested)), and of a slice of the others (all of them every
    /// [`every`](crate::replication::server::interest_state::Interest::every) ticks), in case a
    /// position changes without a captured change.
    pub(crate) fn read_cells(&mut self, shared: &Shared) {
        if self.interest.index.is_none() || self.interest.read_at == Some(self.tick) {
            return;
        }
        self.interest.read_at = Some(self.tick);
        let mut last = None;
        for i in 0..self.changed.len() {
            let Some(g) = self.nodes.get(self.changed[i]).map(|n| n.group) else {
                continue;
            };
            if last != Some(g) {
                last = Some(g);
                self.place(shared, g);
                self.place_nested(shared, g);
            }
        }
        let len = self.groups.len();
        let slice = len / self.interest.every.max(1) as usize + 1;
        for _ in 0..slice.min(len) {
            if self.interest.sweep >= len {
                self.interest.sweep = 0;
            }
            let g = self.groups.keys()[self.interest.sweep];
            self.interest.sweep += 1;
            self.place(shared, g);
        }
    }

    /// Puts the groups nested under group `g`, at any depth, in their cells again: a nested
    /// group's position may be relative to the group it is nested in (a child under a moving
    /// parent), so it moves with that group without a change of its own. Walks the nested lists
    /// with [`Interest::below`](crate::replication::server::interest_state::Interest::below) as
    /// its stack (capacity kept), placing at most as many groups as the table holds, so that
    /// lists that loop cannot hold it.
    fn place_nested(&mut self, shared: &Shared, g: GroupKey) {
        // (Most servers nest nothing: no hash of the id then.)
        if self.interest.nested.is_empty() {
            return;
        }
        let mut below = std::mem::take(&mut self.interest.below);
        below.clear();
        self.interest.push_nested(g, &mut below);
        let mut left = self.groups.len();
        while let Some(child) = below.pop() {
            if left == 0 {
                break;
            }
            left -= 1;
            self.place(shared, child);
            self.interest.push_nested(child, &mut below);
        }
        below.clear();
        self.interest.below = below;
    }

    /// A group was just added to the table: placed in the spatial index, and noted under the
    /// group it is nested in.
    pub(crate) fn note_group(&mut self, shared: &Shared, g: GroupKey) {
        self.place(shared, g);
        self.nest(g);
    }

    /// Notes group `g` in the nested list of the group of the nearest networked node up from
    /// it ([`Group::up`](crate::replication::server::node_table::Group::up)), if any.
    pub(crate) fn nest(&mut self, g: GroupKey) {
        let Some(up) = self
            .groups
            .get(g)
            .map(|group| group.up)
            .filter(|&up| up != 0)
        else {
            return;
        };
        if let Some(pg) = self.group_of(up).filter(|&pg| pg != g) {
            self.interest.nested.entry(pg.id()).or_default().push(g);
        }
    }

    /// Takes group `g` out of the nested list [`nest`](Self::nest) put it in.
    pub(crate) fn unnest(&mut self, g: GroupKey) {
        let up = self
            .groups
            .get(g)
            .map(|group| group.up)
            .filter(|&up| up != 0);
        if let Some(pg) = up.and_then(|up| self.group_of(up)) {
            if let Some(list) = self.interest.nested.get_mut(&pg.id()) {
                list.retain(|&child| child != g);
            }
        }
    }

    /// Group `g` is leaving the table: out of the index, its manual settings and the nested
    /// lists.
    pub(crate) fn forget_interest(&mut self, g: GroupKey) {
        self.unnest(g);
        self.interest.forget_group(g);
    }
}
