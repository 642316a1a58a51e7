//! Per-client relevance of spawn groups on the server (see [`crate::replication::interest`]):
//! the visibility state of every group for every client, and the evaluation that spawns and
//! despawns groups per client as relevance changes. The public API is on
//! [`Multiplayer`](crate::replication::Multiplayer).
//!
//! A node of a group a client does not have is not in that client's list of nodes
//! ([`Known`](crate::replication::server::known::Known)), so snapshots skip it at no cost. A
//! group that becomes relevant is sent as a spawn
//! with its state captured so far (like a late join), and nothing more is sent until a node
//! changes: an entry then carries what changed (bit-packed, coded against the spawn's values,
//! which the client keeps as the node's first baseline). The client discards a
//! snapshot from before a spawn it applied: one from before the group left it, delayed past
//! the spawn, would set older values on the new copy. Snapshots stay unreliable: a snapshot
//! that overtakes the spawn is not acknowledged, since a client acknowledges a snapshot only if
//! every entry's id is one it has, or one it knows is gone locally (freed by game code, or a
//! spawn it could not apply); an id it never received or that the server despawned holds the
//! acknowledgement back, so the entry is sent again.

use std::time::Duration;

use tracing::debug;

use crate::cache_hint::prefetch_ref;
use crate::replication::interest::{Cell, InterestPolicy, InterestQuery, Relevance};
use crate::replication::server::asked::Around;
use crate::replication::server::group_vis::{next_slot, GroupVis, Vis};
use crate::replication::server::node_table::{
    self, group_keys, group_nodes, prefetch_group, Group, GroupKey,
};
use crate::replication::server::slot_table::PREFETCH_AHEAD;
use crate::replication::server::spatial_index;
use crate::replication::server::state::ServerState;

use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::{ParentRef, SCENE_BIND};
use crate::replication::shared::state::Shared;
use crate::scene::NodeId;
use crate::store::Store;

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

/// How a question is asked: with the policy's grace, and whether the client's focus cell is
/// this frame's (its evaluation just found it), so that a policy answering by distance is
/// answered from the index's cells ([`InterestPolicy::at_distance`]).
#[derive(Debug, Clone, Copy)]
struct Asking {
    grace: Duration,
    fresh: bool,
}

impl ServerState {
    /// The key of the flushed group holding `net_id`.
    pub(crate) fn group_of(&self, net_id: u32) -> Option<GroupKey> {
        node_table::group_of(&self.groups, net_id)
    }

    /// The first net id of the group (flushed or pending) holding the networked `node`; for a
    /// group beside its parent (another value of the parent's object), that of the parent's
    /// group, and so on up: relevance is the object's.
    pub(crate) fn group_first_of_node(&self, node: NodeId) -> Option<u32> {
        let mut id = self.by_node.get(node)?;
        // Net parents form no cycle: the bound only guards the walk.
        for _ in 0..=self.nodes.len() + self.pending.len() {
            let group = self.group_holding(id)?;
            if group.up == 0 || !group.beside_parent() {
                return Some(group.first);
            }
            id = group.up;
        }
        None
    }

    /// The group (flushed or pending) holding the net id `id`.
    pub(crate) fn group_holding(&self, id: u32) -> Option<&Group> {
        if let Some(g) = self.group_of(id).and_then(|g| self.groups.get(g)) {
            return Some(g);
        }
        self.pending.iter().map(|p| &p.group).find(|g| g.holds(id))
    }

    /// Whether the client at `c` has the flushed node `net_id` (it is in a group it sees).
    pub(crate) fn sees(&self, c: usize, net_id: u32) -> bool {
        let client = &self.clients[c];
        match self.group_of(net_id) {
            Some(g) => client.vis.state(g).map_or(true, |s| s == Vis::Visible),
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
            Some(g) => client.vis.state(g) != Some(Vis::Hidden),
            None => true,
        }
    }

    /// What group `g` should become for the client at `c` (by distance where the policy
    /// answers so and the client's focus cell is `fresh`: see [`Asking`]).
    fn want(&mut self, shared: &Shared, c: usize, g: GroupKey, fresh: bool) -> Want {
        let Some(group) = self.groups.get(g) else {
            // Gone: nothing to send.
            return Want::Hide { silent: true };
        };
        let peer = self.clients[c].peer;
        if group.up != 0 {
            // A parent whose spawn has not gone out (a group moved under one spawned this
            // frame), or not decided for the client yet (one moved under a later group is asked
            // about first), is one the client does not have.
            let pg = self.group_of(group.up);
            let had = pg.and_then(|pg| self.clients[c].vis.get(pg));
            let state = had.map(|vis| vis.state);
            if pg != Some(g) && !matches!(state, Some(Vis::Visible | Vis::Dormant)) {
                return Want::Hide { silent: true };
            }
            // Another value of its parent's object: relevant as the object is, updated as
            // often.
            if let Some(parent) = had.filter(|_| group.beside_parent()) {
                return match parent.state {
                    Vis::Visible => Want::Show {
                        period: parent.period,
                    },
                    _ => Want::Hide { silent: false },
                };
            }
        }
        const EVERY_TICK: Want = Want::Show { period: 1 };
        if group.client_owned && group_nodes(&self.nodes, group).any(|n| n.authority == peer) {
            return EVERY_TICK;
        }
        if self.interest.unrestricted() {
            return EVERY_TICK;
        }
        let manual = match self.interest.manual.is_empty() {
            true => None,
            false => self.interest.manual.get(&(group.first, peer)),
        };
        if let Some(&manual) = manual {
            return if manual {
                EVERY_TICK
            } else {
                Want::Hide { silent: false }
            };
        }
        let focus_cell = self.clients[c].focus_cell;
        // The group's cell, read once for the reach and the answer by distance.
        let cell = self.interest.index.as_ref().and_then(|index| index.cell(g));
        if let Some(index) = &self.interest.index {
            // Beyond the policy's reach (on the cells of the client's last evaluation).
            if !index.may_reach(cell, focus_cell) {
                return Want::Leave;
            }
        }
        let root = group.root;
        let visible = self.clients[c].vis.state(g) == Some(Vis::Visible);
        let focus = self.clients[c].focus;
        match self.interest.policy.as_mut() {
            None => EVERY_TICK,
            Some(policy) => {
                let cells = (cell, focus_cell.filter(|_| fresh));
                if let Some(want) = by_distance(cells, &**policy, visible) {
                    return want;
                }
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
        match self.want(shared, c, g, false) {
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

    /// Decides relevance where it is due: what changed this frame (manual settings, authority,
    /// a focus, the policy), then each client whose turn has come (every
    /// [`every`](crate::replication::server::interest_state::Interest::every) ticks, the turns
    /// spread over the clients so that no tick carries them all), asking about what may have
    /// changed for it (see [`evaluate`](Self::evaluate)).
    pub(crate) fn update_interest(&mut self, core: &mut Outbox, shared: &mut Shared) {
        let all = std::mem::take(&mut self.interest.all_due);
        if all {
            self.rebuild_index(shared);
        }
        self.read_cells(shared);
        let grace = self.grace();
        self.decide_due(core, shared, grace);
        let every = self.interest.every.max(1);
        let periodic = self.interest.policy.is_some();
        for c in 0..self.clients.len() {
            let client = &self.clients[c];
            if !client.ready {
                continue;
            }
            let whole = all || client.whole_due || (periodic && client.turn_at.is_none());
            let turn = periodic
                && client
                    .turn_at
                    .is_some_and(|t| self.tick.wrapping_sub(t) >= every);
            if whole || turn {
                self.evaluate(core, shared, c, whole, grace);
            }
        }
        self.settle_interest();
        self.flush_all_queued(core, shared);
        self.drop_failed(core, shared);
    }

    /// The policy's grace (zero without a policy).
    fn grace(&self) -> Duration {
        self.interest
            .policy
            .as_ref()
            .map_or(Duration::ZERO, |p| p.grace())
    }

    /// Decides again the groups whose authority changed (for every client) and the manual
    /// settings changed this frame.
    fn decide_due(&mut self, core: &mut Outbox, shared: &mut Shared, grace: Duration) {
        let asking = Asking {
            grace,
            fresh: false,
        };
        let mut groups = std::mem::take(&mut self.interest.groups_due);
        groups.sort_unstable();
        groups.dedup();
        for &first in &groups {
            let Some(g) = self.groups.find(first) else {
                continue;
            };
            for c in 0..self.clients.len() {
                if self.clients[c].ready {
                    self.ask(core, shared, c, g, asking);
                }
            }
        }
        self.interest.groups_due = groups;
        self.interest.groups_due.clear();
        let manual = std::mem::take(&mut self.interest.manual_due);
        for &(first, peer) in &manual {
            let g = self.groups.find(first);
            let c = self.clients.ready_index_of(peer);
            if let (Some(g), Some(c)) = (g, c) {
                self.ask(core, shared, c, g, asking);
            }
        }
        self.interest.manual_due = manual;
        self.interest.manual_due.clear();
    }

    /// Evaluates the client at `c`: `whole`, every group that may be relevant to it (after it
    /// joined, its focus was set, or the policy changed); else only what may have changed for
    /// it since its last evaluation (see [`gather`](Self::gather)). Groups without a cell and
    /// groups in their grace period are asked at every evaluation.
    fn evaluate(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        whole: bool,
        grace: Duration,
    ) {
        let mut asked = std::mem::take(&mut self.interest.asked);
        asked.clear();
        self.gather(shared, c, whole, &mut asked);
        asked.extend_from_slice(&self.clients[c].grace);
        asked.sort_unstable_by_key(|g| g.id());
        asked.dedup();
        // The focus cell was just found (`gather`).
        let asking = Asking { grace, fresh: true };
        for (at, &g) in asked.iter().enumerate() {
            self.prefetch_questions(&*shared.store, c, &asked[at..]);
            self.ask(core, shared, c, g, asking);
        }
        self.interest.asked = asked;
        let every = self.interest.every.max(1);
        let client = &mut self.clients[c];
        client.whole_due = false;
        // A client's turns keep the phase its index gives, so that turns spread over the ticks.
        let phase = u32::try_from(c).unwrap_or(0) % every;
        client.turn_at = Some(match whole {
            true => self.tick.wrapping_sub(phase),
            false => self.tick,
        });
    }

    /// Before the first question of `asked` (for the client at `c`): asks the processor for
    /// what later ones read, each a cold line otherwise (see [`crate::cache_hint`]). A question
    /// reads its group's slot, the client's standing with it and its cell in the index, then
    /// (without an answer by distance) its root in the store; one that shows or hides the
    /// group sets its viewers, and a spawn reads its node's record and shadow state and copies
    /// the group's name and its parent's path. Two dozen questions ahead: the slot, the
    /// standing and the cell; a dozen: what the slot leads to, and where the root's shadow
    /// state is; half a dozen: that state.
    fn prefetch_questions(&self, store: &dyn Store, c: usize, asked: &[GroupKey]) {
        if let Some(&far) = asked.get(2 * PREFETCH_AHEAD) {
            prefetch_group(&self.groups, far);
            self.clients[c].vis.prefetch(far);
            if let Some(index) = &self.interest.index {
                index.prefetch(far);
            }
        }
        let near = asked
            .get(PREFETCH_AHEAD / 2)
            .and_then(|g| self.groups.get(*g));
        if let Some(group) = near {
            self.shadows.prefetch_row(group.root);
        }
        let Some((&g, group)) = asked
            .get(PREFETCH_AHEAD)
            .and_then(|g| Some((g, self.groups.get(*g)?)))
        else {
            return;
        };
        self.shadows.prefetch_at(group.root);
        store.prefetch(group.root);
        self.viewers.prefetch(g);
        if let Some(node) = group.single {
            self.nodes.prefetch(node);
        }
        let path = match &group.parent {
            ParentRef::Path(path) => path.as_bytes(),
            ParentRef::Net(_) => &[],
        };
        for first in [group.name.as_bytes(), path]
            .iter()
            .filter_map(|s| s.first())
        {
            prefetch_ref(first);
        }
    }

    /// Appends to `asked` the groups the evaluation of the client at `c` asks about, but for
    /// those in their grace period; notes the client's focus cell and the moves it has seen.
    /// Without a spatial index: every group. With one: the groups that changed cell since its
    /// last evaluation near its focus or that it has (with distance bands, and its focus in the
    /// same cell: only those whose band changed); `whole`, the groups near its focus and those
    /// it has; else, if its focus changed cell, the groups in the cells whose band changed
    /// (without bands: near its old and its new cell); and the groups without a cell.
    fn gather(&mut self, shared: &Shared, c: usize, whole: bool, asked: &mut Vec<GroupKey>) {
        let (Some(policy), Some(index)) = (&mut self.interest.policy, &self.interest.index) else {
            asked.extend_from_slice(self.groups.keys());
            return;
        };
        let client = &self.clients[c];
        let focus = client
            .focus
            .and_then(|node| policy.cell_of(&*shared.store, node));
        let around = Around {
            index,
            policy: &**policy,
            focus,
            old: if whole { None } else { client.focus_cell },
            vis: &client.vis,
        };
        around.moves(client.seen_moves, asked);
        if whole {
            let had = self
                .groups
                .keys()
                .iter()
                .filter(|&&g| client.vis.state(g).is_some_and(|s| s != Vis::Hidden));
            asked.extend(had);
            if let Some(focus) = focus {
                index.near(focus, asked);
            }
        } else if focus != client.focus_cell {
            around.focus_moved(asked);
        }
        asked.extend_from_slice(index.unplaced());
        let seen = index.moves_end();
        let client = &mut self.clients[c];
        client.focus_cell = focus;
        client.seen_moves = seen;
    }

    /// Asks about group `g` for the client at `c` (unless it is gone or withheld), and takes
    /// the groups nested under it along if it came or went.
    fn ask(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        g: GroupKey,
        asking: Asking,
    ) {
        if self.group_gone(&*shared.store, g)
            || !self.failed.is_empty()
            || self.is_withheld(g, self.clients[c].peer)
        {
            return;
        }
        let before = self.clients[c].vis.state(g);
        self.reconsider(core, shared, c, g, asking);
        let after = self.clients[c].vis.state(g);
        // (Most servers nest nothing: no hash of the id then.)
        if before != after && !self.interest.nested.is_empty() {
            let children = self.interest.nested.get(&g.id()).map_or(0, Vec::len);
            for i in 0..children {
                let Some(&child) = self.interest.nested.get(&g.id()).and_then(|l| l.get(i)) else {
                    break;
                };
                self.ask(core, shared, c, child, asking);
            }
        }
    }

    /// Group `g` leaves the client at `c` whatever it would want (it moved under a parent the
    /// client lacks): despawned there, and the groups nested under it with it.
    pub(crate) fn take_away(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        g: GroupKey,
    ) {
        if self.clients[c].vis.state(g) != Some(Vis::Visible) {
            return;
        }
        self.hide(shared, c, g, false);
        let asking = Asking {
            grace: self.grace(),
            fresh: false,
        };
        let children = self.interest.nested.get(&g.id()).map_or(0, Vec::len);
        for i in 0..children {
            let Some(&child) = self.interest.nested.get(&g.id()).and_then(|l| l.get(i)) else {
                break;
            };
            self.ask(core, shared, c, child, asking);
        }
    }

    /// After the evaluations of a frame: drops from each client's grace list the groups no
    /// longer in grace, recounts the update tiers of the clients whose periods changed, and
    /// forgets the moves every client has seen.
    fn settle_interest(&mut self) {
        let mut seen = u64::MAX;
        for client in &mut self.clients {
            if !client.ready {
                continue;
            }
            let vis = &client.vis;
            client.grace.retain(|&g| {
                vis.get(g)
                    .is_some_and(|v| v.state == Vis::Visible && v.out_since.is_some())
            });
            client.grace.sort_unstable_by_key(|g| g.id());
            client.grace.dedup();
            if client.tiers_due {
                client.tiers_due = false;
                client.recount_tiers(&self.groups);
            }
            seen = seen.min(client.seen_moves);
        }
        if let Some(index) = &mut self.interest.index {
            index.forget_moves(seen.min(index.moves_end()));
        }
    }

    /// [`reconsider`](Self::reconsider) out of an evaluation (with the policy's grace).
    pub(crate) fn reconsider_now(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        g: GroupKey,
    ) {
        let asking = Asking {
            grace: self.grace(),
            fresh: false,
        };
        self.ask(core, shared, c, g, asking);
        self.settle_interest();
        self.flush_queued(core, shared, c);
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
        asking: Asking,
    ) {
        let (want, grace) = (self.want(shared, c, g, asking.fresh), asking.grace);
        let Some(mut vis) = self.clients[c].vis.get(g) else {
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
                let since = vis.out_since.unwrap_or(now);
                if now.saturating_sub(since) >= grace {
                    // (Out of its grace list at the next settle.)
                    return self.hide(shared, c, g, false);
                }
                if vis.out_since.is_none() {
                    self.clients[c].grace.push(g);
                }
                vis.out_since = Some(since);
                self.set_vis(c, g, vis);
            }
            (Vis::Visible, Want::Hide { silent }) => self.hide(shared, c, g, silent),
            (Vis::Dormant, Want::Hide { silent: true }) => {
                // Its parent left the client, and the bound node with it.
                self.set_vis(c, g, GroupVis::HIDDEN);
            }
            (Vis::Hidden | Vis::Dormant, Want::Hide { .. } | Want::Leave) => {}
        }
    }

    /// Group `g` becomes relevant to the client at `c`: its spawn is queued (sent at the end of
    /// the pass). Returns `false` if the spawn is withheld: the client still does not have it.
    fn show(&mut self, core: &mut Outbox, shared: &mut Shared, c: usize, g: GroupKey) -> bool {
        let peer = self.clients[c].peer;
        let dormant = self.clients[c]
            .vis
            .get(g)
            .is_some_and(|v| v.state == Vis::Dormant);
        if !dormant && !self.queue_group(core, shared, g, c) {
            return false;
        }
        self.give_group(c, g, !dormant);
        self.set_vis(c, g, GroupVis::visible(1));
        shared.stats.relevance_spawns += u64::from(!dormant);
        self.clients[c].stats.relevance_spawns += u64::from(!dormant);
        debug!(%peer, first = g.id(), "group became relevant");
        true
    }

    /// Group `g` stops being relevant to the client at `c`: despawned there (unless `silent`;
    /// the despawn is queued, see [`queue_despawn`](Self::queue_despawn)), or kept dormant if
    /// bound.
    fn hide(&mut self, shared: &mut Shared, c: usize, g: GroupKey, silent: bool) {
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
            self.queue_despawn(c, first);
        }
        shared.stats.relevance_despawns += 1;
        self.clients[c].stats.relevance_despawns += 1;
        debug!(%peer, first, silent, "group became irrelevant");
    }
}

/// The answer of `policy` by distance ([`InterestPolicy::at_distance`]) for a group the
/// client has (`visible`) or not, from the group's cell in the index and the client's focus
/// cell, if both have one (`None` for a focus cell that is not this frame's) and the policy
/// answers so.
fn by_distance(
    (cell, focus): (Option<Cell>, Option<Cell>),
    policy: &dyn InterestPolicy,
    visible: bool,
) -> Option<Want> {
    let cells = spatial_index::distance(cell?, focus?);
    Some(match policy.at_distance(cells, visible)? {
        Relevance::Relevant { period } => Want::Show {
            period: period.max(1),
        },
        Relevance::Irrelevant => Want::Leave,
    })
}
