//! Spawns withheld from a client because a member holds a value no client could read (a
//! string over the limit, set after the spawn was asked for): the client does not get the
//! group, as if it were not relevant to it, until the value fits again; then the spawn goes
//! with the next snapshot, whether or not an interest policy is set.

use tracing::warn;

use crate::replication::server::group_vis::GroupVis;
use crate::replication::server::node_table::{group_nodes, GroupKey};
use crate::replication::server::state::ServerState;
use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::state::Shared;
use crate::replication::Audience;
use crate::transport::PeerId;

impl ServerState {
    /// The spawn of group `g` holds a state no client could read: `peer` does not get the
    /// group rather than a message it would refuse; raised and counted once, then retried
    /// every frame ([`retry_withheld`](Self::retry_withheld)).
    pub(crate) fn withhold_group(&mut self, shared: &mut Shared, g: GroupKey, peer: PeerId) {
        let Some(c) = self.clients.index_of(peer) else {
            return;
        };
        warn!(%peer, "spawn holds a string over the limit; withheld from the client");
        self.set_vis(c, g, GroupVis::HIDDEN);
        self.hide_nodes(c, g);
        if self.withheld.contains(&(g, peer)) {
            return;
        }
        self.withheld.push((g, peer));
        if let Some(group) = self.groups.get(g) {
            shared.stats.states_over_limit += 1;
            let node = group.root;
            shared
                .events
                .push(MultiplayerEvent::StateOverLimit { node });
        }
    }

    /// Whether the spawn of group `g` is withheld from `peer` (interest evaluation leaves it
    /// to [`retry_withheld`](Self::retry_withheld)).
    pub(crate) fn is_withheld(&self, g: GroupKey, peer: PeerId) -> bool {
        !self.withheld.is_empty() && self.withheld.contains(&(g, peer))
    }

    /// Sends every withheld spawn whose captured states (what a spawn carries) all fit now to
    /// its client, if the group is relevant to it: after a capture, before its snapshots.
    /// Forgets those of groups or clients that are gone.
    pub(crate) fn retry_withheld(&mut self, core: &mut Outbox, shared: &mut Shared) {
        // Only the entries there now: a spawn withheld again is appended, for the next tick.
        let (mut i, mut end) = (0, self.withheld.len());
        while i < end {
            let (g, peer) = self.withheld[i];
            let client = self.clients.ready_index_of(peer);
            let gone = client.is_none() || self.group_gone(&*shared.store, g);
            if !gone && !self.group_fits(g, peer) {
                i += 1;
                continue;
            }
            self.withheld.remove(i);
            end -= 1;
            if let Some(c) = client.filter(|_| !gone) {
                self.reconsider_now(core, shared, c, g);
            }
        }
    }

    /// Whether every captured state of group `g`, as `peer` would get it, fits the wire's
    /// limits.
    fn group_fits(&mut self, g: GroupKey, peer: PeerId) -> bool {
        let Some(group) = self.groups.get(g) else {
            return true;
        };
        for n in group_nodes(&self.nodes, group).filter(|n| n.has_state()) {
            self.scratch.clear();
            let audience = Audience::of(n.authority == peer);
            self.shadows
                .write_full_for(n.node, audience, &mut self.scratch);
            if self.scratch.over_limit() {
                return false;
            }
        }
        true
    }
}
