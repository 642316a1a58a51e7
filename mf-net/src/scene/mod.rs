//! The minimal world replication needs: a tree of named nodes, some holding a
//! [`Replicated`] value, and the spawnable scenes of a [`SceneLibrary`].
//!
//! A [`Scene`] is an arena of nodes addressed by generational [`NodeId`]s: once a node is
//! removed its id never resolves again, even after its slot is reused. Each node has a name
//! (unique among its siblings, since peers bind nodes by parent path and name), a parent, ordered
//! children and optionally one value of a [`Replicated`] type. Game code reads and writes its
//! structs directly through typed [`NetRef`] handles.
//!
//! Values are stored by type: one column per type holds every value of that type contiguously,
//! and a node refers to its value by (column, row). [`Scene::iter`] walks one column. The scene
//! is a [`Store`](crate::store::Store): the replication runtime keeps its own state of each
//! value (the server's shadow states, a client's interpolation buffers) in its own columns,
//! and borrows a column of the scene once per pass.
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

mod column;
mod error;
mod library;
mod names;
mod net_ref;
mod paths;
mod store;
mod tree;
mod values;
mod walk;

use std::any::TypeId;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cache_hint::prefetch_ref;
#[cfg(doc)]
use crate::replicated::Replicated;

use self::column::ErasedColumn;
use self::names::ChildNames;

pub use crate::store::NodeId;
pub use error::SceneError;
pub use library::{first_difference, SceneIndex, SceneLibrary, SceneShape};
pub use net_ref::NetRef;
pub use walk::DepthFirst;

/// Where a node's value lives: its type's column and its row there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct ValueSlot {
    column: u32,
    row: u32,
}

/// The values of one type, with the type they hold.
struct TypedColumn {
    type_id: TypeId,
    column: Box<dyn ErasedColumn>,
    /// How the column is lent ([`Store::lender`](crate::store::Store::lender)).
    lender: &'static dyn std::any::Any,
}

struct Node {
    name: String,
    /// `None` for the root and for the top of a detached subtree.
    parent: Option<NodeId>,
    children: Vec<NodeId>,
    value: Option<ValueSlot>,
    /// Whether the node is in the tree (reachable from the root), as opposed to detached.
    attached: bool,
}

/// One slot of the arena: its node (none while free) and the generation that names it. In
/// this order (`repr(C)`): the generation ends the slot, so that [`Scene::prefetch`] asks
/// for its first and last lines.
#[repr(C)]
struct Slot {
    node: Option<Node>,
    generation: u32,
}

/// The node `id` names in `slots`, if it is still there (on the slots alone, so that other
/// fields of the scene can be borrowed beside it).
fn node_in(slots: &[Slot], id: NodeId) -> Option<&Node> {
    let slot = slots.get(id.index as usize)?;
    if slot.generation == id.generation {
        slot.node.as_ref()
    } else {
        None
    }
}

/// A tree of named nodes in an arena, some holding a [`Replicated`] value.
///
/// It starts with one node, the root, named `root`; every path starts with `/root`. The root
/// cannot be removed.
pub struct Scene {
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// One column per value type, in the order the types were first stored.
    columns: Vec<TypedColumn>,
    /// Every node's children by name.
    child_names: ChildNames,
    root: NodeId,
    len: usize,
    /// Changes whenever a node may have stopped being attached or a value was cleared or
    /// replaced by one of another type (see [`Store::removals`](crate::store::Store::removals)).
    removals: u64,
    /// Whether columns are lent as dense (see `Scene::set_dense_lending`).
    lends_dense: bool,
}

/// Source of the scene's [`removals`](crate::store::Store::removals) values: unique across
/// every scene of the process, so a scene swapped for another never repeats a value recorded
/// for the first.
static REMOVALS: AtomicU64 = AtomicU64::new(1);

fn next_removal() -> u64 {
    REMOVALS.fetch_add(1, Ordering::Relaxed)
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
            columns: Vec::new(),
            child_names: ChildNames::default(),
            root,
            len: 1,
            removals: next_removal(),
            lends_dense: true,
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
        node_in(&self.slots, id)
    }

    fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        let slot = self.slots.get_mut(id.index as usize)?;
        if slot.generation == id.generation {
            slot.node.as_mut()
        } else {
            None
        }
    }

    /// Asks the processor for `node`'s slot, ahead of reading it
    /// ([`Store::prefetch`](crate::store::Store::prefetch)): its first line and the line of its
    /// generation, which ends it (a slot rarely lies in one line).
    pub(crate) fn prefetch(&self, node: NodeId) {
        if let Some(slot) = self.slots.get(node.index as usize) {
            prefetch_ref(slot);
            prefetch_ref(&slot.generation);
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
}
