//! The minimal world replication needs: a tree of named nodes, some holding a
//! [`Replicated`] value, and the spawnable scenes of a [`SceneLibrary`].
//!
//! A [`Scene`] is an arena of nodes addressed by generational [`NodeId`]s: once a node is
//! removed its id never resolves again, even after its slot is reused. Each node has a name
//! (unique among its siblings, since peers bind nodes by parent path and name), a parent, ordered
//! children and optionally one value of a [`Replicated`] type. Game code reads and writes its
//! structs directly through typed [`NetRef`] handles.
//!
//! ```
//! use mf_net::prelude::*;
//! use mf_net::scene::Scene;
//!
//! #[derive(Replicated, Default)]
//! struct Body {
//!     #[replicated]
//!     x: i32,
//! }
//!
//! # fn main() -> Result<(), mf_net::scene::SceneError> {
//! let mut scene = Scene::new();
//! let level = scene.add(scene.root(), "level")?;
//! let player = scene.insert(level, "player", Body { x: 1 })?;
//! scene.get_mut(player).map(|body| body.x += 1);
//! assert_eq!(scene.get(player).map(|body| body.x), Some(2));
//! assert_eq!(scene.path(player.node()).as_deref(), Some("/root/level/player"));
//! assert_eq!(scene.find("/root/level/player"), Some(player.node()));
//! # Ok(())
//! # }
//! ```

mod library;
mod net_ref;

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::replication::{RegisteredType, Replicated};

pub use library::{first_difference, SceneIndex, SceneLibrary, SceneShape};
pub use net_ref::NetRef;

/// A node of a [`Scene`]: an arena slot and the generation it had when the node was created.
///
/// Removing a node bumps its slot's generation, so a stale id never resolves to a later node
/// that reuses the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    index: u32,
    generation: u32,
}

impl NodeId {
    /// The arena slot.
    pub fn index(self) -> u32 {
        self.index
    }

    /// The slot's generation when the node was created.
    pub fn generation(self) -> u32 {
        self.generation
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

/// Why a scene operation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SceneError {
    /// The node (a parent, or the target of an operation) is not in the scene.
    NoSuchNode(NodeId),
    /// The parent already has a child with this name. Names are unique among siblings because
    /// peers bind nodes by parent path and name; nothing is renamed automatically.
    DuplicateName {
        /// The parent's path.
        parent: String,
        /// The name that is taken.
        name: String,
    },
    /// A node name must be non-empty and must not contain `/`.
    InvalidName(String),
    /// No scene is registered at this index.
    UnknownScene(SceneIndex),
    /// A spawnable scene with this name is already registered.
    DuplicateScene(String),
    /// More spawnable scenes than a [`SceneIndex`] can number.
    TooManyScenes,
    /// The root cannot be detached or moved.
    RootNode,
    /// [`Scene::attach`] needs a detached node; this one is in the tree or under another
    /// detached node (use [`Scene::reparent`] to move it).
    NotDetached(NodeId),
    /// A node cannot be moved under itself or one of its descendants.
    InsideItself {
        /// The node being moved.
        node: NodeId,
        /// The parent it was to go under.
        parent: NodeId,
    },
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchNode(id) => write!(f, "node {id} is not in the scene"),
            Self::DuplicateName { parent, name } => {
                write!(f, "`{parent}` already has a child named `{name}`")
            }
            Self::InvalidName(name) => {
                write!(
                    f,
                    "invalid node name `{name}`: it must be non-empty and contain no `/`"
                )
            }
            Self::UnknownScene(index) => write!(f, "no spawnable scene has index {}", index.get()),
            Self::DuplicateScene(name) => {
                write!(f, "a spawnable scene named `{name}` is already registered")
            }
            Self::TooManyScenes => write!(f, "too many spawnable scenes for a u16 index"),
            Self::RootNode => f.write_str("the root node cannot be detached or moved"),
            Self::NotDetached(node) => {
                write!(f, "node {node} is not detached; reparent it instead")
            }
            Self::InsideItself { node, parent } => {
                write!(
                    f,
                    "node {node} cannot go under {parent}, which is inside it"
                )
            }
        }
    }
}

impl std::error::Error for SceneError {}

/// A node's value: the boxed struct and its registry entry (stable name, schema hash, `TypeId`).
struct NodeValue {
    value: Box<dyn Any>,
    ty: RegisteredType,
}

struct Node {
    name: String,
    /// `None` for the root and for the top of a detached subtree.
    parent: Option<NodeId>,
    children: Vec<NodeId>,
    value: Option<NodeValue>,
    /// Whether the node is in the tree (reachable from the root), as opposed to detached.
    attached: bool,
}

struct Slot {
    generation: u32,
    node: Option<Node>,
}

/// A tree of named nodes in an arena, some holding a [`Replicated`] value.
///
/// It starts with one node, the root, named `root`; every path starts with `/root`. The root
/// cannot be removed.
pub struct Scene {
    slots: Vec<Slot>,
    free: Vec<u32>,
    root: NodeId,
    len: usize,
    /// Changes whenever a node may have stopped being attached (see
    /// [`unattach_epoch`](Self::unattach_epoch)).
    unattach_epoch: u64,
    /// Changes whenever a value is cleared or replaced by one of another type (see
    /// [`retype_epoch`](Self::retype_epoch)).
    retype_epoch: u64,
}

/// Source of [`Scene::retype_epoch`] values, unique across every scene of the process.
static RETYPE_EPOCHS: AtomicU64 = AtomicU64::new(1);

fn next_retype_epoch() -> u64 {
    RETYPE_EPOCHS.fetch_add(1, Ordering::Relaxed)
}

/// Source of [`Scene::unattach_epoch`] values: unique across every scene of the process, so a
/// scene swapped for another never repeats a value recorded for the first.
static UNATTACH_EPOCHS: AtomicU64 = AtomicU64::new(1);

fn next_unattach_epoch() -> u64 {
    UNATTACH_EPOCHS.fetch_add(1, Ordering::Relaxed)
}

impl Default for Scene {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Scene {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for id in self.depth_first(self.root) {
            let path = self.path(id).unwrap_or_default();
            match self.value_info(id) {
                Some(ty) => list.entry(&format_args!("{path}: {}", ty.name())),
                None => list.entry(&format_args!("{path}")),
            };
        }
        list.finish()
    }
}

impl Scene {
    /// The name of the root node.
    pub const ROOT_NAME: &'static str = "root";

    /// A scene holding only the root node.
    pub fn new() -> Self {
        let root = NodeId {
            index: 0,
            generation: 0,
        };
        Self {
            slots: vec![Slot {
                generation: 0,
                node: Some(Node {
                    name: Self::ROOT_NAME.to_owned(),
                    parent: None,
                    children: Vec::new(),
                    value: None,
                    attached: true,
                }),
            }],
            free: Vec::new(),
            root,
            len: 1,
            unattach_epoch: next_unattach_epoch(),
            retype_epoch: next_retype_epoch(),
        }
    }

    /// The root node.
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// How many nodes the scene holds, the root and detached nodes included.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the scene holds no node besides the root. (Never literally empty.)
    pub fn is_empty(&self) -> bool {
        self.len <= 1
    }

    fn node(&self, id: NodeId) -> Option<&Node> {
        let slot = self.slots.get(id.index as usize)?;
        if slot.generation == id.generation {
            slot.node.as_ref()
        } else {
            None
        }
    }

    fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        let slot = self.slots.get_mut(id.index as usize)?;
        if slot.generation == id.generation {
            slot.node.as_mut()
        } else {
            None
        }
    }

    /// Whether `node` is (still) in the scene: in the tree or [detached](Self::detach), that
    /// is, whether its id resolves. See [`is_attached`](Self::is_attached) for the tree only.
    pub fn contains(&self, node: NodeId) -> bool {
        self.node(node).is_some()
    }

    /// Whether `node` is in the tree (reachable from the root): `false` for a node that is gone,
    /// detached, or under a detached node.
    pub fn is_attached(&self, node: NodeId) -> bool {
        self.node(node).is_some_and(|n| n.attached)
    }

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
        self.set_attached(node, false);
        self.unattach_epoch = next_unattach_epoch();
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
        self.set_attached(node, attached);
        Ok(())
    }

    /// Moves `node` (with its subtree) to be the last child of `parent`: [`detach`] then
    /// [`attach`] in one step (it also attaches a detached node). Every id stays valid. Not
    /// replicated for a networked node (see [`detach`]).
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

    /// A value that changes whenever a node may have stopped being [attached](Self::is_attached)
    /// (a [`detach`](Self::detach), also through [`reparent`](Self::reparent), or a
    /// [`remove`](Self::remove)) and that no other scene ever has: while it is unchanged, every
    /// node that was attached still is. The server's despawn check uses it to skip asking every
    /// networked node every frame.
    pub(crate) fn unattach_epoch(&self) -> u64 {
        self.unattach_epoch
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
        self.len += 1;
        Ok(id)
    }

    /// Adds a node named `name` under `parent` holding `value`, and returns its typed handle.
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    pub fn insert<T: Replicated>(
        &mut self,
        parent: NodeId,
        name: &str,
        value: T,
    ) -> Result<NetRef<T>, SceneError> {
        let node = self.add(parent, name)?;
        self.set_value(node, value)
    }

    /// Sets `node`'s value to `value`, replacing any previous value (of any type).
    ///
    /// A [`Multiplayer`](crate::replication::Multiplayer) server despawns (frees) a networked
    /// node whose value is replaced by one of another type, at the end of the frame: its
    /// clients built it with the old type and could not read the new one.
    ///
    /// # Errors
    ///
    /// [`SceneError::NoSuchNode`] if `node` is gone.
    pub fn set_value<T: Replicated>(
        &mut self,
        node: NodeId,
        value: T,
    ) -> Result<NetRef<T>, SceneError> {
        let slot = self.node_mut(node).ok_or(SceneError::NoSuchNode(node))?;
        let retyped = slot
            .value
            .as_ref()
            .is_some_and(|old| old.ty.type_id() != TypeId::of::<T>());
        slot.value = Some(NodeValue {
            value: Box::new(value),
            ty: RegisteredType::of::<T>(),
        });
        if retyped {
            self.retype_epoch = next_retype_epoch();
        }
        Ok(NetRef::new(node))
    }

    /// Removes `node`'s value, leaving the node in place. Returns whether it had one.
    ///
    /// A [`Multiplayer`](crate::replication::Multiplayer) server despawns (frees) a networked
    /// node whose value is cleared, at the end of the frame.
    pub fn clear_value(&mut self, node: NodeId) -> bool {
        let cleared = self
            .node_mut(node)
            .and_then(|node| node.value.take())
            .is_some();
        if cleared {
            self.retype_epoch = next_retype_epoch();
        }
        cleared
    }

    /// A value that changes whenever a value is [cleared](Self::clear_value) or
    /// [replaced](Self::set_value) by one of another type, and that no other scene ever has.
    /// The server's check for networked nodes whose value no longer matches their shadow state
    /// uses it to run only after such a change.
    pub(crate) fn retype_epoch(&self) -> u64 {
        self.retype_epoch
    }

    /// The typed handle of `node` if it holds a `T`.
    pub fn net_ref<T: Replicated>(&self, node: NodeId) -> Option<NetRef<T>> {
        (self.value_type(node)? == TypeId::of::<T>()).then(|| NetRef::new(node))
    }

    /// The value behind `handle`: `None` if the node is gone or no longer holds a `T`.
    pub fn get<T: Replicated>(&self, handle: NetRef<T>) -> Option<&T> {
        self.node(handle.node())?
            .value
            .as_ref()?
            .value
            .downcast_ref()
    }

    /// The value behind `handle`, mutably: `None` if the node is gone or no longer holds a `T`.
    pub fn get_mut<T: Replicated>(&mut self, handle: NetRef<T>) -> Option<&mut T> {
        self.node_mut(handle.node())?
            .value
            .as_mut()?
            .value
            .downcast_mut()
    }

    /// The [`TypeId`] of `node`'s value, if it has one.
    pub fn value_type(&self, node: NodeId) -> Option<TypeId> {
        Some(self.value_info(node)?.type_id())
    }

    /// The registry entry (stable name, schema hash, members) of `node`'s value's type.
    pub fn value_info(&self, node: NodeId) -> Option<&RegisteredType> {
        Some(&self.node(node)?.value.as_ref()?.ty)
    }

    /// `node`'s value, type-erased.
    pub fn value_any(&self, node: NodeId) -> Option<&dyn Any> {
        Some(self.node(node)?.value.as_ref()?.value.as_ref())
    }

    /// `node`'s value, type-erased and mutable.
    pub fn value_any_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
        Some(self.node_mut(node)?.value.as_mut()?.value.as_mut())
    }

    /// [`value_info`](Self::value_info) and [`value_any_mut`](Self::value_any_mut) with one
    /// lookup.
    pub(crate) fn value_info_and_any_mut(
        &mut self,
        node: NodeId,
    ) -> Option<(&RegisteredType, &mut dyn Any)> {
        let value = self.node_mut(node)?.value.as_mut()?;
        Some((&value.ty, value.value.as_mut()))
    }

    /// Every node holding a `T`, with its value, in arena order (not tree order; use
    /// [`networked_depth_first`](Self::networked_depth_first) for that). Detached nodes are
    /// included.
    pub fn iter<T: Replicated>(&self) -> impl Iterator<Item = (NetRef<T>, &T)> + '_ {
        self.slots.iter().enumerate().filter_map(|(index, slot)| {
            let value = slot
                .node
                .as_ref()?
                .value
                .as_ref()?
                .value
                .downcast_ref::<T>()?;
            let id = NodeId {
                index: index as u32,
                generation: slot.generation,
            };
            Some((NetRef::new(id), value))
        })
    }

    /// Every node holding a `T`, with its value mutably, in arena order.
    pub fn iter_mut<T: Replicated>(&mut self) -> impl Iterator<Item = (NetRef<T>, &mut T)> + '_ {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(index, slot)| {
                let generation = slot.generation;
                let value = slot
                    .node
                    .as_mut()?
                    .value
                    .as_mut()?
                    .value
                    .downcast_mut::<T>()?;
                let id = NodeId {
                    index: index as u32,
                    generation,
                };
                Some((NetRef::new(id), value))
            })
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
                stack.extend(removed.children);
            }
        }
        self.unattach_epoch = next_unattach_epoch();
        true
    }

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
        self.children(parent)
            .iter()
            .copied()
            .find(|&child| self.name(child) == Some(name))
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
