//! A networked group the server moved under another parent, or to none
//! ([`PARENT`](crate::replication::message_ids::PARENT)): the client's list of nodes (what a
//! despawn takes with a node) and its storage's hierarchy follow.

use tracing::warn;

use crate::replication::client::state::ClientState;
use crate::replication::shared::state::Shared;

impl ClientState {
    /// The group whose first net id is `first` hangs under `up` from now on: the networked
    /// node with that net id, or (0) the scene node at that path (one every peer loads;
    /// empty: none). A move the client cannot make (a group or a parent it lacks, a parent
    /// inside the group's own subtree, one its storage refuses) changes nothing and is counted
    /// as dropped.
    pub(crate) fn on_parent(&mut self, shared: &mut Shared, first: u32, up: (u32, &str)) {
        let (Some(i), Some(root)) = (self.nodes.index_of(first), self.node_of(first)) else {
            return drop_move(shared, first, "no such group");
        };
        // The parent, and the nearest networked node up from it (what a despawn takes the
        // group with).
        let (parent, net_parent) = match up {
            (0, "") => (None, 0),
            (0, path) => match shared.scene().and_then(|s| Some((s, s.find(path)?))) {
                Some((scene, node)) => (Some(node), self.by_node.networked_up(scene, node)),
                None => return drop_move(shared, first, "no such parent"),
            },
            (id, _) => match self.node_of(id) {
                Some(node) => (Some(node), id),
                None => return drop_move(shared, first, "no such parent"),
            },
        };
        if net_parent != 0 && self.nodes.is_under(net_parent, first) {
            return drop_move(shared, first, "the parent is inside the group");
        }
        // The list follows the storage, which may refuse (a name taken under the parent); a
        // node gone locally follows the server.
        if shared.store.set_parent(root, parent) || !shared.store.alive(root) {
            self.nodes.set_parent(i, net_parent);
            return;
        }
        drop_move(shared, first, "the storage refused the move");
    }
}

/// Counts a move the client cannot make.
fn drop_move(shared: &mut Shared, first: u32, why: &'static str) {
    warn!(first, why, "group move dropped");
    shared.stats.control_dropped += 1;
}
