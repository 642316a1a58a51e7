//! Reading the tree: a node's parent, children and name, absolute paths, and finding a node
//! by its path.

use super::names::Lookup;
use super::{NodeId, Scene};

impl Scene {
    /// `node`'s parent (`None` for the root or a node that is gone).
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        self.node(node)?.parent
    }

    /// `node`'s children in insertion order (empty if the node is gone).
    pub fn children(&self, node: NodeId) -> &[NodeId] {
        self.node(node).map_or(&[], |n| n.children.as_slice())
    }

    /// The child of `parent` named `name`.
    pub fn child(&self, parent: NodeId, name: &str) -> Option<NodeId> {
        match self.child_names.get(parent, name) {
            Lookup::Candidate(child) if self.is_child_named(parent, child, name) => Some(child),
            Lookup::Absent => None,
            // Another name with the same hash, or an index that cannot tell: scan.
            Lookup::Candidate(_) | Lookup::Unknown => self
                .children(parent)
                .iter()
                .copied()
                .find(|&child| self.name(child) == Some(name)),
        }
    }

    /// Whether `child` is a child of `parent` named `name`.
    fn is_child_named(&self, parent: NodeId, child: NodeId, name: &str) -> bool {
        self.node(child)
            .is_some_and(|n| n.parent == Some(parent) && n.name == name)
    }

    /// `node`'s name.
    pub fn name(&self, node: NodeId) -> Option<&str> {
        Some(self.node(node)?.name.as_str())
    }

    /// `node`'s absolute path, such as `/root/level/player` (`None` if it is gone or not
    /// [attached](Self::is_attached)).
    pub fn path(&self, node: NodeId) -> Option<String> {
        if !self.is_attached(node) {
            return None;
        }
        let mut names = Vec::new();
        let mut current = Some(node);
        while let Some(id) = current {
            let n = self.node(id)?;
            names.push(n.name.as_str());
            current = n.parent;
        }
        let mut path = String::new();
        for name in names.iter().rev() {
            path.push('/');
            path.push_str(name);
        }
        Some(path)
    }

    /// The node at an absolute path such as `/root/level/player` (a trailing `/` is ignored).
    pub fn find(&self, path: &str) -> Option<NodeId> {
        let rest = path.strip_prefix('/')?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let mut parts = rest.split('/');
        if parts.next()? != self.node(self.root)?.name {
            return None;
        }
        parts.try_fold(self.root, |node, name| self.child(node, name))
    }
}
