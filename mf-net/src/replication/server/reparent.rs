//! A networked group moved under another parent, or to none ([`ServerState::set_parent`]):
//! from then on its spawn names the new parent, and it goes with that parent (a client that
//! lacks the parent lacks it, it is despawned with the parent, a recursive hand-over of the
//! parent reaches it). Each client that has it is told ([`PARENT`](crate::replication::message_ids::PARENT)),
//! in order with its spawns and despawns: at once when the new parent's spawn went out
//! already, else it is made a root at once (so that despawning the old parent in the same
//! frame leaves it) and put under the parent after that frame's spawns. A client that lacks
//! the new parent's group loses the group instead.

use crate::replication::server::group_vis::Vis;
use crate::replication::server::node_table::{Group, GroupKey};
use crate::replication::server::state::{Pending, ServerState};
use crate::replication::shared::config::MultiplayerError;
use crate::replication::shared::instance::as_scene_mut;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::{ParentRef, MAX_NAME_BYTES, SCENE_BIND, SCENE_TYPED};
use crate::replication::shared::state::Shared;
use crate::scene::Scene;
use crate::store::NodeId;

impl ServerState {
    /// Moves the group whose root is `root` (a node [`replicate`] networked) under the
    /// networked node `parent`, or makes it a root (`None`).
    ///
    /// [`replicate`]: crate::replication::Multiplayer::replicate
    pub(crate) fn set_parent(
        &mut self,
        core: Option<&mut Outbox>,
        shared: &mut Shared,
        root: NodeId,
        parent: Option<NodeId>,
    ) -> Result<(), MultiplayerError> {
        let first = self
            .by_node
            .get(root)
            .ok_or(MultiplayerError::NotNetworked(root))?;
        let up = match parent {
            Some(p) => self
                .by_node
                .get(p)
                .ok_or(MultiplayerError::NotNetworked(p))?,
            None => 0,
        };
        let group = self.group_rooted_at(first);
        if group.map(|g| g.scene) != Some(SCENE_TYPED) || group.is_some_and(Group::beside_parent) {
            return Err(MultiplayerError::NotGroupRoot(root));
        }
        if up != 0 && self.is_under(up, first) {
            return Err(MultiplayerError::ParentInside(root));
        }
        let parent_ref = match up {
            0 => ParentRef::Path(String::new()),
            id => ParentRef::Net(id),
        };
        self.move_group(core, shared, first, (parent_ref, up));
        Ok(())
    }

    /// Moves the scene node `node`, the root of a spawned scene or spawner instance, under the
    /// scene node `parent` in the server's scene (with its subtree), and on clients.
    pub(crate) fn reparent(
        &mut self,
        core: Option<&mut Outbox>,
        shared: &mut Shared,
        node: NodeId,
        parent: NodeId,
    ) -> Result<(), MultiplayerError> {
        let first = self
            .by_node
            .get(node)
            .ok_or(MultiplayerError::NotNetworked(node))?;
        let kind = self.root_kind(first);
        if kind.is_none() || kind == Some(SCENE_BIND) || kind == Some(SCENE_TYPED) {
            return Err(MultiplayerError::NotGroupRoot(node));
        }
        let scene = shared.scene().ok_or(MultiplayerError::NeedsScene)?;
        let parent_ref = self.parent_ref(scene, parent)?;
        let scene = as_scene_mut(&mut *shared.store).ok_or(MultiplayerError::NeedsScene)?;
        let was = scene.parent(node).map(|p| {
            let at = scene.children(p).iter().position(|&c| c == node);
            (p, at.unwrap_or(usize::MAX))
        });
        scene
            .reparent(node, parent)
            .map_err(MultiplayerError::Scene)?;
        // The groups under plain nodes of what moved name those nodes by their new paths.
        let paths = match self.paths_under(scene, first) {
            Ok(paths) => paths,
            Err(error) => {
                if let Some((was, at)) = was {
                    scene.put_back(node, was, at);
                }
                return Err(error);
            }
        };
        self.rename_parents(paths);
        let up = self.by_node.networked_up(scene, parent);
        self.move_group(core, shared, first, (parent_ref, up));
        Ok(())
    }

    /// How a spawn names the scene node `parent`: by its net id if it is networked, else by its
    /// path (an error if longer than clients read).
    fn parent_ref(&self, scene: &Scene, parent: NodeId) -> Result<ParentRef, MultiplayerError> {
        if let Some(id) = self.by_node.get(parent) {
            return Ok(ParentRef::Net(id));
        }
        let path = scene.path(parent).unwrap_or_default();
        if path.len() > MAX_NAME_BYTES {
            let (len, limit) = (path.len(), MAX_NAME_BYTES);
            return Err(MultiplayerError::NameTooLong { len, limit });
        }
        Ok(ParentRef::Path(path))
    }

    /// Moves the group whose first net id is `first` under `parent` (its net parent, the
    /// nearest networked node up from it, `up`; 0: none), and tells the clients.
    fn move_group(
        &mut self,
        core: Option<&mut Outbox>,
        shared: &mut Shared,
        first: u32,
        (parent, up): (ParentRef, u32),
    ) {
        if let Some(at) = self.pending.iter().position(|p| p.group.first == first) {
            // Its spawn names the parent when it goes out, after the parent's.
            let p = &mut self.pending[at];
            (p.group.parent, p.group.up) = (parent, up);
            if let Some(node) = p.nodes.first_mut() {
                node.2 = up;
            }
            self.spawn_after_parent(at, up);
            return;
        }
        let Some(g) = self.groups.find(first) else {
            return;
        };
        // A parent whose spawn has not gone out yet: a root on clients until it has.
        let parent_sent = up == 0 || self.group_of(up).is_some();
        let told = match parent_sent {
            true => parent.clone(),
            false => ParentRef::Path(String::new()),
        };
        self.unnest(g);
        if let Some(group) = self.groups.get_mut(g) {
            group.parent = parent;
            group.up = up;
        }
        if let Some(n) = self
            .nodes
            .find(first)
            .and_then(|key| self.nodes.get_mut(key))
        {
            n.net_parent = up;
        }
        self.nest(g);
        if let Some(core) = core {
            let told_up = if parent_sent { up } else { 0 };
            self.tell_moved(core, shared, g, (&told, told_up));
        }
        if !parent_sent {
            self.moved.push(first);
        }
        self.interest.groups_due.push(first);
    }

    /// After a frame's spawns: the groups moved under a parent spawned in that frame go under
    /// it on the clients that have them.
    pub(crate) fn tell_moved_late(&mut self, core: &mut Outbox, shared: &mut Shared) {
        let mut moved = std::mem::take(&mut self.moved);
        for &first in &moved {
            let Some(g) = self.groups.find(first) else {
                continue;
            };
            let Some(group) = self.groups.get(g) else {
                continue;
            };
            let (parent, up) = (group.parent.clone(), group.up);
            // Nested under the parent's group, which exists now.
            self.unnest(g);
            self.nest(g);
            self.tell_moved(core, shared, g, (&parent, up));
        }
        moved.clear();
        self.moved = moved;
    }

    /// Tells each client that has group `g` that it is under `parent` now (its nearest
    /// networked node up, `up`); a client that lacks that node's group loses `g` instead.
    fn tell_moved(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        g: GroupKey,
        (parent, up): (&ParentRef, u32),
    ) {
        let parent_group = (up != 0).then(|| self.group_of(up)).flatten();
        for c in 0..self.clients.len() {
            let client = &self.clients[c];
            if !client.ready || client.vis.state(g) != Some(Vis::Visible) {
                continue;
            }
            let lacks_parent = parent_group.is_some_and(|pg| {
                !matches!(client.vis.state(pg), Some(Vis::Visible | Vis::Dormant))
            });
            match lacks_parent {
                true => self.take_away(core, shared, c, g),
                false => self.clients[c].queue.parent(|w| {
                    w.write_var_u32(g.id());
                    parent.write(w);
                }),
            }
        }
        self.flush_all_queued(core, shared);
    }

    /// The new path of the plain parent of each group under the group from `first` (flushed, by
    /// the nested lists, or pending, by the scene), after that group moved in `scene`; an error
    /// if one is now longer than clients read.
    fn paths_under(
        &self,
        scene: &Scene,
        first: u32,
    ) -> Result<Vec<(u32, String)>, MultiplayerError> {
        let flushed = self.groups.find(first).into_iter();
        let mut stack: Vec<GroupKey> = flushed.collect();
        let mut groups = Vec::new();
        while let Some(g) = stack.pop() {
            let nested = self.interest.nested.get(&g.id());
            for &child in nested.into_iter().flatten() {
                if let Some(group) = self.groups.get(child) {
                    groups.push((group.first, group.root, &group.parent));
                }
                stack.push(child);
            }
        }
        let pending = self
            .pending
            .iter()
            .map(|p| (p.group.first, p.group.root, &p.group.parent));
        let mut paths = Vec::new();
        for (id, root, parent) in groups.into_iter().chain(pending) {
            let ParentRef::Path(old) = parent else {
                continue;
            };
            let path = scene
                .parent(root)
                .and_then(|p| scene.path(p))
                .unwrap_or_default();
            if path.len() > MAX_NAME_BYTES {
                let (len, limit) = (path.len(), MAX_NAME_BYTES);
                return Err(MultiplayerError::NameTooLong { len, limit });
            }
            if path != *old {
                paths.push((id, path));
            }
        }
        Ok(paths)
    }

    /// Gives each group (flushed or pending, by its first net id) its parent's new path.
    fn rename_parents(&mut self, paths: Vec<(u32, String)>) {
        for (first, path) in paths {
            if let Some(group) = self.groups.find(first).and_then(|g| self.groups.get_mut(g)) {
                group.parent = ParentRef::Path(path);
            } else if let Some(p) = self.pending.iter_mut().find(|p| p.group.first == first) {
                p.group.parent = ParentRef::Path(path);
            }
        }
    }

    /// Moves the pending spawn at `at` after the pending spawn holding the node `up`, if that
    /// comes later: spawns go out in the order pending, and a client must have a group's parent
    /// before the group.
    fn spawn_after_parent(&mut self, at: usize, up: u32) {
        let holds = |p: &Pending| {
            up.checked_sub(p.group.first)
                .is_some_and(|o| o < p.group.count)
        };
        if let Some(parent_at) = self.pending.iter().position(holds).filter(|&i| i > at) {
            let moved = self.pending.remove(at);
            self.pending.insert(parent_at, moved);
        }
    }

    /// The kind of the group whose root is the net id `first` (flushed or pending; its scene
    /// index, or a negative kind), if it is one's root.
    fn root_kind(&self, first: u32) -> Option<i32> {
        self.group_rooted_at(first).map(|g| g.scene)
    }

    /// The group (flushed or pending) whose first net id is `first`.
    fn group_rooted_at(&self, first: u32) -> Option<&Group> {
        self.group_holding(first).filter(|g| g.first == first)
    }

    /// Whether the node `id` is `top` or was spawned under it (flushed or pending): a walk up
    /// its net parents, as long as the chain of its ancestors.
    fn is_under(&self, mut id: u32, top: u32) -> bool {
        // Net parents form no cycle (a move under its own subtree is refused): the bound only
        // guards the walk.
        for _ in 0..=self.nodes.len() + self.pending.len() {
            if id == top {
                return true;
            }
            match self.net_parent_of(id) {
                Some(up) if up != 0 => id = up,
                _ => return false,
            }
        }
        false
    }

    /// The net parent of the networked node `id` (flushed or pending; 0: none).
    fn net_parent_of(&self, id: u32) -> Option<u32> {
        if let Some(n) = self.nodes.by_id(id) {
            return Some(n.net_parent);
        }
        self.pending_node(id).map(|n| n.2)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::replication::server::node_table::Group;
    use crate::transport::PeerId;

    /// A pending typed spawn of `count` nodes from net id `first`, under nothing, its other
    /// nodes under its first.
    fn pending(first: u32, count: u32) -> Pending {
        let up = |i: u32| if i == 0 { 0 } else { first };
        let node = |i: u32| (NodeId::new(first + i, 0), PeerId::SERVER, up(i));
        Pending {
            group: Group {
                first,
                count,
                scene: SCENE_TYPED,
                ..Group::default()
            },
            nodes: (0..count).map(node).collect(),
        }
    }

    /// A group moved, before its spawn went out, under a node spawned after it goes out after
    /// that node's group (a client lacking the parent would refuse the spawn); under one
    /// spawned before it, or under nothing, it keeps its place. A move under its own node, or
    /// under a node spawned under it, is refused.
    #[test]
    fn a_pending_spawn_moved_under_a_later_one_goes_after_it() {
        let mut server = ServerState::new(0, 1, Duration::ZERO, 64);
        server.pending = vec![pending(1, 2), pending(3, 1), pending(4, 3)];
        let order = |s: &ServerState| s.pending.iter().map(|p| p.group.first).collect::<Vec<_>>();
        server.spawn_after_parent(0, 5);
        assert_eq!(order(&server), [3, 4, 1]);
        server.spawn_after_parent(2, 3);
        assert_eq!(order(&server), [3, 4, 1]);
        server.spawn_after_parent(0, 0);
        assert_eq!(order(&server), [3, 4, 1]);
        server.pending[0].nodes[0].2 = 5; // 3 under 5, in the group from 4
        assert!(server.is_under(3, 4));
        assert!(server.is_under(4, 4));
        assert!(!server.is_under(1, 4));
    }
}
