//! [`ChildNames`]: every node's children indexed by name, so that finding a child by name (what
//! adding a node checks, and what binding and paths use) is a hash lookup rather than a scan of
//! all its siblings, which made adding many children to one parent quadratic.

use std::collections::HashMap;

use super::NodeId;
use crate::schema;

/// What the index knows of a child name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lookup {
    /// Probably this child (the caller confirms the name: two names can share a hash).
    Candidate(NodeId),
    /// No such child.
    Absent,
    /// The index cannot tell (two siblings' names once shared a hash): scan the siblings.
    Unknown,
}

/// `(parent, hash of the name)` → child. Siblings have unique names, so a hash taken by another
/// sibling is a hash collision: the first child keeps the slot and lookups of the others scan.
#[derive(Debug, Default)]
pub(super) struct ChildNames {
    map: HashMap<(NodeId, u64), NodeId>,
    collided: bool,
}

fn key(parent: NodeId, name: &str) -> (NodeId, u64) {
    (parent, schema::hash_str(schema::FNV_OFFSET, name))
}

impl ChildNames {
    /// `child`, named `name`, is now a child of `parent`.
    pub(super) fn insert(&mut self, parent: NodeId, name: &str, child: NodeId) {
        let slot = self.map.entry(key(parent, name)).or_insert(child);
        if *slot != child {
            self.collided = true;
        }
    }

    /// `child`, named `name`, is no longer a child of `parent`.
    pub(super) fn remove(&mut self, parent: NodeId, name: &str, child: NodeId) {
        let key = key(parent, name);
        if self.map.get(&key) == Some(&child) {
            self.map.remove(&key);
        }
    }

    /// The child of `parent` named `name`, as far as the index knows.
    pub(super) fn get(&self, parent: NodeId, name: &str) -> Lookup {
        match self.map.get(&key(parent, name)) {
            Some(&child) => Lookup::Candidate(child),
            None if self.collided => Lookup::Unknown,
            None => Lookup::Absent,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::scene::{Scene, SceneError};

    #[test]
    fn children_are_found_by_name_through_adds_moves_and_removals() {
        let mut scene = Scene::new();
        let root = scene.root();
        let level = scene.add(root, "level").unwrap();
        let boxes: Vec<_> = (0..5000)
            .map(|i| scene.add(level, &format!("box#{i}")).unwrap())
            .collect();
        assert_eq!(scene.child(level, "box#4321"), Some(boxes[4321]));
        assert!(matches!(
            scene.add(level, "box#17"),
            Err(SceneError::DuplicateName { .. })
        ));
        assert_eq!(scene.child(level, "box#5000"), None);
        // Removed: gone from the index, and its name is free again.
        assert!(scene.remove(boxes[17]));
        assert_eq!(scene.child(level, "box#17"), None);
        let again = scene.add(level, "box#17").unwrap();
        assert_eq!(scene.child(level, "box#17"), Some(again));
        // Detached and attached elsewhere: found under its new parent only.
        scene.detach(boxes[9]).unwrap();
        assert_eq!(scene.child(level, "box#9"), None);
        scene.attach(boxes[9], root).unwrap();
        assert_eq!(scene.child(root, "box#9"), Some(boxes[9]));
        assert_eq!(scene.child(level, "box#9"), None);
        // A removed parent's children are not found through its stale id.
        assert!(scene.remove(level));
        assert_eq!(scene.child(level, "box#4321"), None);
    }
}
