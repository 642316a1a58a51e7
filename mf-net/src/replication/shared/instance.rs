//! The networked nodes of a spawned instance, in the order both ends number them.

use crate::scene::{NodeId, Scene};

/// The networked nodes of an instance rooted at `root`: the root, then every descendant holding
/// a value, depth-first.
pub(crate) fn instance_nodes(scene: &Scene, root: NodeId) -> Vec<NodeId> {
    let mut out = vec![root];
    out.extend(scene.networked_depth_first(root).filter(|&n| n != root));
    out
}
