//! Where each client stands with each spawn group, kept in one place: every change of a group's
//! visibility for a client goes through [`ServerState::set_vis`], which keeps the group's
//! [`Viewers`], the client's visible counts and its view signature in step; and a tick's
//! changes are handed to the clients that see them.

use crate::replication::server::group_vis::{GroupVis, Vis};
use crate::replication::server::node_table::{
    group_keys, prefetch_group, GroupKey, GroupTable, NodeKey, NodeTable,
};
use crate::replication::server::slot_table::PREFETCH_AHEAD;
use crate::replication::server::state::ServerState;
use crate::replication::server::viewers::Viewers;

/// A group's share of a client's view signature: its id, mixed (so that sets of groups differ
/// by more than a few bits).
fn mix(id: u32) -> u64 {
    let mut x = u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x.wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

impl ServerState {
    /// Sets group `g`'s visibility for the client at `c`, keeping its viewers, the client's
    /// visible group and node counts and its view signature in step (and noting a change of
    /// update period, for its tiers). In line: a visibility handed over through memory,
    /// written a field at a time and read back whole, stalls the read on the writes.
    #[inline(always)]
    pub(crate) fn set_vis(&mut self, c: usize, g: GroupKey, vis: GroupVis) {
        let client = &mut self.clients[c];
        let old = client.vis.get(g).unwrap_or_default();
        let was = old.state == Vis::Visible;
        let now = vis.state == Vis::Visible;
        client.vis.set(g, vis);
        if old.period != vis.period || (was != now && vis.period > 1) {
            client.tiers_due = true;
        }
        if was == now {
            return;
        }
        self.viewers.set(g, c, now);
        client.view ^= mix(g.id());
        let nodes = self
            .groups
            .get(g)
            .map_or(0, |group| group_keys(&self.nodes, group).len());
        let stats = &mut client.stats;
        if now {
            stats.visible_groups += 1;
            stats.visible_nodes += nodes;
        } else {
            stats.visible_groups = stats.visible_groups.saturating_sub(1);
            stats.visible_nodes = stats.visible_nodes.saturating_sub(nodes);
        }
    }

    /// Group `g` is leaving the table (with `nodes` nodes still in it): no client sees it any
    /// more.
    pub(crate) fn forget_viewers(&mut self, g: GroupKey, nodes: usize) {
        let clients = &mut self.clients;
        self.viewers.each(g, |c| {
            if let Some(client) = clients.get_mut(c) {
                client.view ^= mix(g.id());
                let stats = &mut client.stats;
                stats.visible_groups = stats.visible_groups.saturating_sub(1);
                stats.visible_nodes = stats.visible_nodes.saturating_sub(nodes);
            }
        });
    }

    /// A node of group `g` (which stays) left the table: one node fewer for its viewers.
    pub(crate) fn node_left_group(&mut self, g: GroupKey) {
        let clients = &mut self.clients;
        self.viewers.each(g, |c| {
            if let Some(client) = clients.get_mut(c) {
                let stats = &mut client.stats;
                stats.visible_nodes = stats.visible_nodes.saturating_sub(1);
            }
        });
    }

    /// Hands each of `changed` (in net id order) to the ready clients that see its group (every
    /// ready client, for a node whose group is gone), in `visible_changed`, in the same order.
    ///
    /// When a quarter of the nodes or more changed, each client instead walks the nodes it has
    /// and picks the marked ones ([`ChangedMarks`](crate::replication::server::changed_marks::ChangedMarks)):
    /// the same list (a client has exactly the nodes of the groups it sees, and a node whose
    /// group is gone only if it had it), written one client at a time rather than a few keys
    /// into every client's list per node. Otherwise each changed node's record is asked for
    /// two dozen nodes ahead, and its group's slot and viewers a dozen ahead (see
    /// [`crate::cache_hint`]): a tenth of a large world changing makes a scattered walk.
    pub(crate) fn scatter_changes(&mut self, changed: &[NodeKey]) {
        for client in &mut self.clients {
            client.visible_changed.clear();
        }
        if changed.len() * 4 >= self.nodes.len() {
            self.changed_marks.mark(changed, self.nodes.slot_count());
            let marks = &self.changed_marks;
            for client in self.clients.iter_mut().filter(|c| c.ready) {
                client
                    .send
                    .changed_known(|key| marks.has(key), &mut client.visible_changed);
            }
            return;
        }
        let clients = &mut self.clients;
        for (at, &key) in changed.iter().enumerate() {
            prefetch_scatter((&self.nodes, &self.groups, &self.viewers), &changed[at..]);
            let Some(node) = self.nodes.get(key) else {
                continue;
            };
            if self.groups.get(node.group).is_none() {
                for client in clients.iter_mut() {
                    client.visible_changed.push(key);
                }
                continue;
            }
            self.viewers.each(node.group, |c| {
                if let Some(client) = clients.get_mut(c) {
                    client.visible_changed.push(key);
                }
            });
        }
    }
}

/// Before the first node of `changed` in
/// [`scatter_changes`](ServerState::scatter_changes): asks for what later ones read.
fn prefetch_scatter(
    (nodes, groups, viewers): (&NodeTable, &GroupTable, &Viewers),
    changed: &[NodeKey],
) {
    if let Some(&far) = changed.get(2 * PREFETCH_AHEAD) {
        nodes.prefetch(far);
    }
    if let Some(node) = changed.get(PREFETCH_AHEAD).and_then(|&k| nodes.get(k)) {
        prefetch_group(groups, node.group);
        viewers.prefetch(node.group);
    }
}
