//! A networked group the server moved under another parent, or to none
//! ([`PARENT`](crate::replication::message_ids::PARENT)): the client's list of nodes (what a
//! despawn takes with a node) and its storage's hierarchy follow.

use tracing::warn;

use crate::replication::client::state::ClientState;
use crate::replication::shared::state::Shared;

impl ClientState {
    /// The group whose first net id is `first` hangs under the node `parent` (0: none) from
    /// now on. A move the client cannot make (a group or a parent it lacks, a parent inside
    /// the group's own subtree) changes nothing and is counted as dropped.
    pub(crate) fn on_parent(&mut self, shared: &mut Shared, first: u32, parent: u32) {
        let (Some(i), Some(root)) = (self.nodes.index_of(first), self.node_of(first)) else {
            return drop_move(shared, first, parent, "no such group");
        };
        let up = match parent {
            0 => None,
            id => match self.node_of(id) {
                Some(node) => Some(node),
                None => return drop_move(shared, first, parent, "no such parent"),
            },
        };
        if parent != 0 && self.nodes.subtree(first).binary_search(&parent).is_ok() {
            return drop_move(shared, first, parent, "the parent is inside the group");
        }
        self.nodes.set_parent(i, parent);
        if !shared.store.set_parent(root, up) {
            warn!(
                first,
                parent, "the storage keeps no hierarchy of replicated groups"
            );
        }
    }
}

/// Counts a move the client cannot make.
fn drop_move(shared: &mut Shared, first: u32, parent: u32, why: &'static str) {
    warn!(first, parent, why, "group move dropped");
    shared.stats.control_dropped += 1;
}
