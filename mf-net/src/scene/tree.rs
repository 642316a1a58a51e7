//! Changing the tree's shape: adding and removing nodes, detaching subtrees and attaching or
//! moving them (and keeping the scene's removals value up to date).

#[cfg(doc)]
use super::NetRef;
use super::{next_removal, node_in, Node, NodeId, Scene, SceneError, Slot};

impl Scene {
    /// Whether `node` is the top of a detached subtree (see [`detach`](Self::detach)).
    pub fn is_detached(&self, node: NodeId) -> bool {
        node != self.root && self.node(node).is_some_and(|n| n.parent.is_none())
    }

    /// The tops of every detached subtree, in arena order (to find nodes that were detached and
    /// never attached again or removed).
    pub fn detached_roots(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0u32..).zip(&self.slots).filter_map(move |(index, slot)| {
            let node = slot.node.as_ref()?;
            let id = NodeId {
                index,
                generation: slot.generation,
            };
            (node.parent.is_none() && id != self.root).then_some(id)
        })
    }

    /// Takes `node` and its subtree out of the tree, keeping them: every id, [`NetRef`] and
    /// value stays valid (readable and writable), and the subtree can be put back with
    /// [`attach`](Self::attach), under the same parent or another. Detaching a node that is
    /// already the top of a detached subtree does nothing.
    ///
    /// A detached node is not [attached](Self::is_attached): it has no [`path`](Self::path), is
    /// not found by [`find`](Self::find) nor walked from the root, but still counts in
    /// [`len`](Self::len) and [`iter`](Self::iter). It stays in the scene until attached or
    /// [removed](Self::remove).
    ///
    /// For replication ([`Multiplayer`](crate::replication::Multiplayer) on the server): a
    /// networked node detached and attached again before
    /// [`end_frame`](crate::replication::Multiplayer::end_frame) stays networked (with its id
    /// and state); one still detached at `end_frame` is despawned on clients as if it had been
    /// removed, and on the server it stays detached as a plain, non-networked node (its value
    /// kept as it was) until the game attaches it (still plain) or removes it. Moving a
    /// networked node to another parent (or a different place) is not replicated: clients keep
    /// their copy where it was spawned.
    ///
    /// # Errors
    ///
    /// [`SceneError::NoSuchNode`] if `node` is gone, [`SceneError::RootNode`] for the root.
    pub fn detach(&mut self, node: NodeId) -> Result<(), SceneError> {
        if node == self.root {
            return Err(SceneError::RootNode);
        }
        let parent = self.node(node).ok_or(SceneError::NoSuchNode(node))?.parent;
        let Some(parent) = parent else {
            return Ok(());
        };
        if let Some(p) = self.node_mut(parent) {
            p.children.retain(|&child| child != node);
        }
        if let Some(n) = self.node_mut(node) {
            n.parent = None;
        }
        if let Some(n) = node_in(&self.slots, node) {
            self.child_names.remove(parent, &n.name, node);
        }
        self.set_attached(node, false);
        self.removals = next_removal();
        Ok(())
    }

    /// Puts the detached `node` (with its subtree) back as the last child of `parent`, under
    /// its own name. If `parent` is in the tree, the subtree is attached again.
    ///
    /// # Errors
    ///
    /// [`SceneError::NoSuchNode`] if either node is gone, [`SceneError::NotDetached`] unless
    /// `node` is the top of a detached subtree, [`SceneError::InsideItself`] if `parent` is in
    /// `node`'s subtree, [`SceneError::DuplicateName`] if `parent` has a child with `node`'s
    /// name. On error nothing changes.
    pub fn attach(&mut self, node: NodeId, parent: NodeId) -> Result<(), SceneError> {
        if !self.is_detached(node) {
            return Err(if self.contains(node) {
                SceneError::NotDetached(node)
            } else {
                SceneError::NoSuchNode(node)
            });
        }
        self.check_move(node, parent)?;
        let attached = self.node(parent).is_some_and(|p| p.attached);
        if let Some(p) = self.node_mut(parent) {
            p.children.push(node);
        }
        if let Some(n) = self.node_mut(node) {
            n.parent = Some(parent);
        }
        if let Some(n) = node_in(&self.slots, node) {
            self.child_names.insert(parent, &n.name, node);
        }
        self.set_attached(node, attached);
        Ok(())
    }

    /// Moves `node` (with its subtree) to be the last child of `parent`: [`detach`] then
    /// [`attach`] in one step (it also attaches a detached node). Every id stays valid. Not
    /// replicated for a networked node (see [`detach`]): move a networked instance with
    /// [`Multiplayer::reparent`](crate::replication::Multiplayer::reparent).
    ///
    /// [`detach`]: Self::detach
    /// [`attach`]: Self::attach
    ///
    /// # Errors
    ///
    /// [`SceneError::RootNode`] for the root, otherwise as [`attach`](Self::attach) (except
    /// `NotDetached`). On error nothing changes.
    pub fn reparent(&mut self, node: NodeId, parent: NodeId) -> Result<(), SceneError> {
        if node == self.root {
            return Err(SceneError::RootNode);
        }
        if !self.contains(node) {
            return Err(SceneError::NoSuchNode(node));
        }
        if self.parent(node) == Some(parent) {
            // Already there: move it to the end, as a new child would be.
            if let Some(p) = self.node_mut(parent) {
                p.children.retain(|&child| child != node);
                p.children.push(node);
            }
            return Ok(());
        }
        self.check_move(node, parent)?;
        self.detach(node)?;
        self.attach(node, parent)
    }

    /// Moves `node` back under `parent`, at `at` among its children (where it was before a move
    /// that is being undone).
    pub(crate) fn put_back(&mut self, node: NodeId, parent: NodeId, at: usize) {
        if self.reparent(node, parent).is_err() {
            return;
        }
        if let Some(p) = self.node_mut(parent) {
            p.children.retain(|&child| child != node);
            p.children.insert(at.min(p.children.len()), node);
        }
    }

    /// Checks that `node` may become a child of `parent` (which is not its parent now).
    fn check_move(&self, node: NodeId, parent: NodeId) -> Result<(), SceneError> {
        let name = &self.node(node).ok_or(SceneError::NoSuchNode(node))?.name;
        if !self.contains(parent) {
            return Err(SceneError::NoSuchNode(parent));
        }
        let mut up = Some(parent);
        while let Some(ancestor) = up {
            if ancestor == node {
                return Err(SceneError::InsideItself { node, parent });
            }
            up = self.parent(ancestor);
        }
        if self.child(parent, name).is_some() {
            return Err(SceneError::DuplicateName {
                parent: self.path(parent).unwrap_or_default(),
                name: name.clone(),
            });
        }
        Ok(())
    }

    /// Marks `top` and its subtree attached or not.
    fn set_attached(&mut self, top: NodeId, attached: bool) {
        let mut stack = vec![top];
        while let Some(id) = stack.pop() {
            if let Some(n) = self.node_mut(id) {
                n.attached = attached;
                stack.extend_from_slice(&n.children);
            }
        }
    }

    /// Adds an empty node named `name` as the last child of `parent` (under a detached
    /// `parent`, the new node is detached with it).
    ///
    /// # Errors
    ///
    /// [`SceneError::NoSuchNode`] if `parent` is gone, [`SceneError::InvalidName`] for an empty
    /// name or one containing `/`, [`SceneError::DuplicateName`] if `parent` already has a child
    /// with that name (names are never suffixed automatically).
    pub fn add(&mut self, parent: NodeId, name: &str) -> Result<NodeId, SceneError> {
        if name.is_empty() || name.contains('/') {
            return Err(SceneError::InvalidName(name.to_owned()));
        }
        let Some(attached) = self.node(parent).map(|p| p.attached) else {
            return Err(SceneError::NoSuchNode(parent));
        };
        if self.child(parent, name).is_some() {
            return Err(SceneError::DuplicateName {
                parent: self.path(parent).unwrap_or_default(),
                name: name.to_owned(),
            });
        }
        let node = Node {
            name: name.to_owned(),
            parent: Some(parent),
            children: Vec::new(),
            value: None,
            attached,
        };
        let id = match self.free.pop() {
            Some(index) => {
                let slot = &mut self.slots[index as usize];
                slot.node = Some(node);
                NodeId {
                    index,
                    generation: slot.generation,
                }
            }
            None => {
                let index = u32::try_from(self.slots.len())
                    .unwrap_or_else(|_| panic!("scene holds more than u32::MAX nodes"));
                self.slots.push(Slot {
                    generation: 0,
                    node: Some(node),
                });
                NodeId {
                    index,
                    generation: 0,
                }
            }
        };
        if let Some(parent) = self.node_mut(parent) {
            parent.children.push(id);
        }
        self.child_names.insert(parent, name, id);
        self.len += 1;
        Ok(id)
    }

    /// Removes `node` and its whole subtree (attached or [detached](Self::detach)), destroying
    /// their values. Every removed id (and [`NetRef`]) stops resolving. Returns whether `node`
    /// was in the scene; the root is never removed (returns `false`). To take a node out and
    /// put it back later, keeping its id (and on the server, its networking if it is back by
    /// the end of the frame), use [`detach`](Self::detach) and [`attach`](Self::attach).
    pub fn remove(&mut self, node: NodeId) -> bool {
        if node == self.root {
            return false;
        }
        let Some(parent) = self.node(node).map(|n| n.parent) else {
            return false;
        };
        if let Some(parent) = parent.and_then(|p| self.node_mut(p)) {
            parent.children.retain(|&child| child != node);
        }
        let mut stack = vec![node];
        while let Some(id) = stack.pop() {
            let slot = &mut self.slots[id.index as usize];
            if let Some(removed) = slot.node.take() {
                slot.generation = slot.generation.wrapping_add(1);
                self.free.push(id.index);
                self.len -= 1;
                if let Some(value) = removed.value {
                    self.remove_row(value);
                }
                if let Some(parent) = removed.parent {
                    self.child_names.remove(parent, &removed.name, id);
                }
                stack.extend(removed.children);
            }
        }
        self.removals = next_removal();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_paths_and_removal() -> Result<(), SceneError> {
        let mut scene = Scene::new();
        let root = scene.root();
        assert_eq!(scene.path(root).as_deref(), Some("/root"));
        let a = scene.add(root, "a")?;
        let b = scene.add(a, "b")?;
        let c = scene.add(root, "c")?;
        assert_eq!(scene.find("/root/a/b"), Some(b));
        assert_eq!(scene.find("/root"), Some(root));
        assert_eq!(scene.find("/other/a"), None);
        assert_eq!(scene.find("root/a"), None);
        assert_eq!(
            scene.depth_first(root).collect::<Vec<_>>(),
            vec![root, a, b, c]
        );
        assert!(matches!(
            scene.add(root, "a"),
            Err(SceneError::DuplicateName { .. })
        ));
        assert!(matches!(
            scene.add(root, "x/y"),
            Err(SceneError::InvalidName(_))
        ));
        assert!(scene.remove(a));
        assert!(!scene.remove(a));
        assert!(!scene.contains(b));
        assert!(!scene.remove(root));
        assert_eq!(scene.len(), 2);
        // Slots are reused with a new generation; stale ids stay dead.
        let d = scene.add(root, "a")?;
        assert!(!scene.contains(a) && !scene.contains(b));
        assert!(scene.contains(d));
        assert_eq!(scene.children(root), &[c, d]);
        Ok(())
    }

    #[test]
    fn detach_attach_and_reparent_keep_ids() -> Result<(), SceneError> {
        let mut scene = Scene::new();
        let root = scene.root();
        let a = scene.add(root, "a")?;
        let b = scene.add(a, "b")?;
        let c = scene.add(root, "c")?;
        assert_eq!(scene.detach(root), Err(SceneError::RootNode));
        scene.detach(a)?;
        scene.detach(a)?; // no-op
        assert!(scene.contains(a) && scene.contains(b));
        assert!(!scene.is_attached(a) && !scene.is_attached(b));
        assert!(scene.is_detached(a) && !scene.is_detached(b));
        assert_eq!(scene.path(b), None);
        assert_eq!(scene.find("/root/a/b"), None);
        assert_eq!(scene.children(root), &[c]);
        assert_eq!(scene.detached_roots().collect::<Vec<_>>(), vec![a]);
        assert_eq!(scene.len(), 4);
        // Building under a detached node builds detached.
        let e = scene.add(b, "e")?;
        assert!(scene.contains(e) && !scene.is_attached(e));
        assert_eq!(
            scene.attach(a, b),
            Err(SceneError::InsideItself { node: a, parent: b })
        );
        assert_eq!(scene.attach(c, root), Err(SceneError::NotDetached(c)));
        scene.attach(a, c)?;
        assert!(scene.is_attached(e));
        assert_eq!(scene.find("/root/c/a/b/e"), Some(e));
        assert_eq!(scene.detached_roots().count(), 0);
        // Reparent in one step; a name clash changes nothing.
        let other_a = scene.add(root, "a")?;
        assert!(matches!(
            scene.reparent(a, root),
            Err(SceneError::DuplicateName { .. })
        ));
        assert_eq!(scene.path(a).as_deref(), Some("/root/c/a"));
        scene.remove(other_a);
        scene.reparent(a, root)?;
        assert_eq!(scene.path(e).as_deref(), Some("/root/a/b/e"));
        assert_eq!(
            scene.reparent(a, e),
            Err(SceneError::InsideItself { node: a, parent: e })
        );
        // Removing a detached subtree destroys it.
        scene.detach(b)?;
        assert!(scene.remove(b));
        assert!(!scene.contains(e));
        assert_eq!(scene.len(), 3);
        Ok(())
    }
}
