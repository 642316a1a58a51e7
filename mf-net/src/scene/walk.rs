//! Walking a subtree depth-first: the order in which a spawned scene's networked nodes take
//! consecutive network ids.

use super::{NodeId, Scene};

impl Scene {
    /// `root` and its descendants in pre-order, children in insertion order. Empty if `root`
    /// is gone.
    pub fn depth_first(&self, root: NodeId) -> DepthFirst<'_> {
        DepthFirst {
            scene: self,
            stack: if self.contains(root) {
                vec![root]
            } else {
                Vec::new()
            },
        }
    }

    /// The nodes of [`depth_first`](Self::depth_first) that hold a value: the order in which a
    /// spawned scene's networked nodes take consecutive network ids.
    pub fn networked_depth_first(&self, root: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.depth_first(root)
            .filter(|&node| self.value_type(node).is_some())
    }
}

/// Pre-order walk of a subtree: see [`Scene::depth_first`].
#[derive(Debug)]
pub struct DepthFirst<'a> {
    scene: &'a Scene,
    stack: Vec<NodeId>,
}

impl Iterator for DepthFirst<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        let node = self.stack.pop()?;
        self.stack
            .extend(self.scene.children(node).iter().rev().copied());
        Some(node)
    }
}
