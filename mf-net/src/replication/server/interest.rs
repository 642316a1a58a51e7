//! Per-client relevance of spawn groups on the server (see [`crate::replication::interest`]):
//! the visibility state of every group for every client, and the evaluation that spawns and
//! despawns groups per client as relevance changes. The public API is on
//! [`Multiplayer`](crate::replication::Multiplayer).
//!
//! A node of a group a client does not have is marked hidden for that client
//! ([`NodeSend::hidden`](crate::replication::server::send_state::NodeSend::hidden)), so snapshots skip it at no cost. A group that becomes relevant is sent as a spawn
//! with its state captured so far (like a late join); its nodes then travel as resyncs (their
//! full state) in every snapshot until the client acknowledges one, sent after the spawn, that
//! carried them (a snapshot from before the group left the client, delayed past the spawn, may
//! be applied to the new copy; a full entry repairs it). Snapshots stay unreliable: a snapshot
//! that overtakes the spawn is not acknowledged, since a client acknowledges a snapshot only if
//! every entry's id is one it has, or one it knows is gone locally (freed by game code, or a
//! spawn it could not apply); an id it never received or that the server despawned holds the
//! acknowledgement back, so the entry is sent again.

use std::time::Duration;

use tracing::debug;

use crate::replication::interest::InterestQuery;
use crate::replication::server::group_vis::{next_slot, GroupVis, Vis};
use crate::replication::server::node_table::{self, group_keys, group_nodes, GroupKey};
use crate::replication::server::state::ServerState;

use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::{ParentRef, DESPAWN, SCENE_BIND};
use crate::replication::shared::state::Shared;
use crate::scene::NodeId;

/// What a group should become for a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Have it, updated every `period` ticks.
    Show { period: u32 },
    /// Leave now; `silent` when its parent group left the client already (the client freed it
    /// with the parent's subtree).
    Hide { silent: bool },
    /// The policy finds it irrelevant: leave once the grace period has passed.
    Leave,
}

impl ServerState {
    /// The key of the flushed group holding `net_id`.
    pub(crate) fn group_of(&self, net_id: u32) -> Option<GroupKey> {
        node_table::group_of(&self.groups, net_id)
    }

    /// The first net id of the group (flushed or pending) holding the networked `node`.
    pub(crate) fn group_first_of_node(&self, node: NodeId) -> Option<u32> {
        let id = self.by_node.get(node)?;
        if let Some(g) = self.group_of(id) {
            return Some(g.id());
        }
        self.pending
            .iter()
            .find(|p| id >= p.group.first && id < p.group.first.saturating_add(p.group.count))
            .map(|p| p.group.first)
    }

    /// Whether the client at `c` has the flushed node `net_id` (it is in a group it sees).
    pub(crate) fn sees(&self, c: usize, net_id: u32) -> bool {
        let client = &self.clients[c];
        match self.group_of(net_id) {
            Some(g) => client.vis.get(g).map_or(true, |v| v.state == Vis::Visible),
            None => true,
        }
    }

    /// Whether the client at `c` may name `net_id` in a node reference: a node it sees (see
    /// [`sees`](Self::sees)), or one freed so lately that it may not know yet. Not a node of a
    /// spawn that has not gone out, nor an id never handed out.
    pub(crate) fn may_name(&self, c: usize, net_id: u32) -> bool {
        match self.nodes.by_id(net_id) {
            Some(_) => self.sees(c, net_id),
            None => self.ids.freed_lately(net_id),
        }
    }

    /// Whether the client at `c` has the group of `net_id` at all (visible or dormant).
    pub(crate) fn knows(&self, c: usize, net_id: u32) -> bool {
        let client = &self.clients[c];
        match self.group_of(net_id) {
            Some(g) => client.vis.get(g).map_or(true, |v| v.state != Vis::Hidden),
            None => true,
        }
    }

    /// What group `g` should become for the client at `c`.
    fn want(&mut self, shared: &Shared, c: usize, g: GroupKey) -> Want {
        let Some(group) = self.groups.get(g) else {
            // Gone: nothing to send.
            return Want::Hide { silent: true };
        };
        let peer = self.clients[c].peer;
        if let ParentRef::Net(parent) = group.parent {
            if let Some(pg) = self.group_of(parent).filter(|&pg| pg != g) {
                if self.clients[c].vis.get(pg).map(|v| v.state) == Some(Vis::Hidden) {
                    return Want::Hide { silent: true };
                }
            }
        }
        const EVERY_TICK: Want = Want::Show { period: 1 };
        if group_nodes(&self.nodes, group).any(|n| n.authority == peer) {
            return EVERY_TICK;
        }
        if self.interest.unrestricted() {
            return EVERY_TICK;
        }
        if let Some(&manual) = self.interest.manual.get(&(group.first, peer)) {
            return if manual {
                EVERY_TICK
            } else {
                Want::Hide { silent: false }
            };
        }
        let root = group.root;
        let visible = self.clients[c]
            .vis
            .get(g)
            .is_some_and(|v| v.state == Vis::Visible);
        let focus = self.clients[c].focus;
        match self.interest.policy.as_mut() {
            None => EVERY_TICK,
            Some(policy) => {
                let query = InterestQuery {
                    store: &*shared.store,
                    group_root: root,
                    peer,
                    focus,
                    visible,
                    now: shared.now,
                };
                if policy.relevant(&query) {
                    Want::Show {
                        period: policy.update_period(&query).max(1),
                    }
                } else {
                    Want::Leave
                }
            }
        }
    }

    /// Decides group `g` for the client at `c` while it joins or when the group is first sent:
    /// whether it goes to the client now, and if so its visibility (with its update period).
    pub(crate) fn initially_visible(
        &mut self,
        shared: &Shared,
        c: usize,
        g: GroupKey,
    ) -> Option<GroupVis> {
        match self.want(shared, c, g) {
            Want::Show { period } => {
                let mut vis = GroupVis::visible(1);
                self.set_period(&mut vis, g, period);
                self.clients[c].note_tier(g, vis);
                Some(vis)
            }
            Want::Hide { .. } | Want::Leave => None,
        }
    }

    /// Gives the visible group `g`'s `vis` the update period `period`; a new period takes
    /// effect from the next snapshot, in the group's slots.
    fn set_period(&self, vis: &mut GroupVis, g: GroupKey, period: u32) {
        let period = period.max(1);
        if vis.period != period {
            vis.period = period;
            vis.next = next_slot(self.tick, period, g.id());
        }
    }

    /// Marks the nodes of group `g` as not had by the client at `c` (and drops their resyncs).
    pub(crate) fn hide_nodes(&mut self, c: usize, g: GroupKey) {
        let Some(group) = self.groups.get(g) else {
            return;
        };
        let client = &mut self.clients[c];
        for &key in group_keys(&self.nodes, group) {
            client.send.hide(key);
        }
    }

    /// Marks the nodes of group `g` as had by the client at `c` from the current tick, each
    /// owing a resync of everything it receives (until a snapshot carrying it, sent after the
    /// spawn, is acknowledged).
    fn show_nodes(&mut self, c: usize, g: GroupKey) {
        let Some(group) = self.groups.get(g) else {
            return;
        };
        let client = &mut self.clients[c];
        for &key in group_keys(&self.nodes, group) {
            let stateful = self.nodes.get(key).is_some_and(|n| n.has_state);
            client.send.show(key, self.tick, stateful);
        }
    }

    /// Evaluates relevance if it is due (something changed, or the policy's interval has
    /// passed), and spawns and despawns groups per client accordingly.
    pub(crate) fn update_interest(&mut self, core: &mut Outbox, shared: &mut Shared) {
        if !self.interest.due(self.tick) {
            return;
        }
        if self.interest.policy.is_some() {
            self.interest.last_eval = Some(self.tick);
        }
        self.interest.dirty = false;
        let grace = self
            .interest
            .policy
            .as_ref()
            .map_or(Duration::ZERO, |p| p.grace());
        for c in 0..self.clients.len() {
            if !self.clients[c].ready {
                continue;
            }
            for i in 0..self.groups.len() {
                let g = self.groups.keys()[i];
                if self.group_gone(&*shared.store, g)
                    || !self.failed.is_empty()
                    || self.is_withheld(g, self.clients[c].peer)
                {
                    continue;
                }
                self.reconsider(core, shared, c, g, grace);
            }
        }
        for client in &mut self.clients {
            client.recount_tiers(&self.groups);
        }
        self.drop_failed(core, shared);
    }

    /// [`reconsider`](Self::reconsider) out of an evaluation (with the policy's grace).
    pub(crate) fn reconsider_now(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        g: GroupKey,
    ) {
        let grace = self
            .interest
            .policy
            .as_ref()
            .map_or(Duration::ZERO, |p| p.grace());
        self.reconsider(core, shared, c, g, grace);
        self.clients[c].recount_tiers(&self.groups);
        self.drop_failed(core, shared);
    }

    /// Shows, hides or keeps group `g` for the client at `c` as the policy now wants (leaving
    /// after `grace` out of range).
    fn reconsider(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        g: GroupKey,
        grace: Duration,
    ) {
        let want = self.want(shared, c, g);
        let Some(mut vis) = self.clients[c].vis.get(g).copied() else {
            return;
        };
        let now = shared.now;
        match (vis.state, want) {
            (Vis::Visible, Want::Show { period }) => {
                vis.out_since = None;
                self.set_period(&mut vis, g, period);
                self.set_vis(c, g, vis);
            }
            (Vis::Hidden | Vis::Dormant, Want::Show { period }) => {
                if !self.show(core, shared, c, g) {
                    return;
                }
                let mut vis = GroupVis::visible(1);
                self.set_period(&mut vis, g, period);
                self.set_vis(c, g, vis);
            }
            (Vis::Visible, Want::Leave) => {
                let since = *vis.out_since.get_or_insert(now);
                self.set_vis(c, g, vis);
                if now.saturating_sub(since) >= grace {
                    self.hide(core, shared, c, g, false);
                }
            }
            (Vis::Visible, Want::Hide { silent }) => self.hide(core, shared, c, g, silent),
            (Vis::Dormant, Want::Hide { silent: true }) => {
                // Its parent left the client, and the bound node with it.
                self.set_vis(c, g, GroupVis::HIDDEN);
            }
            (Vis::Hidden | Vis::Dormant, Want::Hide { .. } | Want::Leave) => {}
        }
    }

    /// Group `g` becomes relevant to the client at `c`. Returns `false` if its spawn did not
    /// go (withheld, or refused by the transport): the client still does not have it.
    fn show(&mut self, core: &mut Outbox, shared: &mut Shared, c: usize, g: GroupKey) -> bool {
        let peer = self.clients[c].peer;
        let dormant = self.clients[c]
            .vis
            .get(g)
            .is_some_and(|v| v.state == Vis::Dormant);
        if !dormant && !self.send_group(core, shared, g, peer) {
            return false;
        }
        self.show_nodes(c, g);
        self.set_vis(c, g, GroupVis::visible(1));
        shared.stats.relevance_spawns += u64::from(!dormant);
        self.clients[c].stats.relevance_spawns += u64::from(!dormant);
        debug!(%peer, first = g.id(), "group became relevant");
        true
    }

    /// Group `g` stops being relevant to the client at `c`: despawned there (unless `silent`),
    /// or kept dormant if bound.
    fn hide(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        g: GroupKey,
        silent: bool,
    ) {
        let peer = self.clients[c].peer;
        let first = g.id();
        let bound = self.groups.get(g).is_some_and(|g| g.scene == SCENE_BIND);
        self.hide_nodes(c, g);
        if bound && !silent {
            let dormant = GroupVis {
                state: Vis::Dormant,
                ..GroupVis::HIDDEN
            };
            self.set_vis(c, g, dormant);
            debug!(%peer, first, "bound group became irrelevant (dormant)");
            return;
        }
        self.set_vis(c, g, GroupVis::HIDDEN);
        if !silent {
            self.send_control(core, shared, peer, DESPAWN, |w| w.write_var_u32(first));
        }
        shared.stats.relevance_despawns += 1;
        self.clients[c].stats.relevance_despawns += 1;
        debug!(%peer, first, silent, "group became irrelevant");
    }
}
