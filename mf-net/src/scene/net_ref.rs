//! [`NetRef`]: a typed handle to a node's value.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use super::NodeId;

/// A typed handle to a node holding a `T`, in the [`Scene`](super::Scene) or any
/// [`Store`](crate::store::Store).
///
/// It is a [`NodeId`] plus the type: [`Scene::get`](super::Scene::get) and
/// [`Scene::get_mut`](super::Scene::get_mut) return `None` once the node is removed or holds a
/// value of another type, and an RPC sent through it is refused if the node holds no `T`.
/// `Copy`, `Eq`, `Hash` and `Debug` hold for every `T`.
///
/// A `NetRef<T>` is also a valid RPC parameter and `#[replicated]` member: it travels as the
/// node's net id and arrives as the receiver's own handle to that node. A reference the
/// receiver cannot map (a node it does not have, or one that is not networked) arrives
/// [unresolved](Self::is_unresolved) in an RPC argument; a member keeps its previous value until
/// the node is there. A reference to a node of another type is refused like any malformed
/// value. See the book's chapter on references.
pub struct NetRef<T> {
    node: NodeId,
    _type: PhantomData<fn() -> T>,
}

impl<T> NetRef<T> {
    /// A handle to `node` as a holder of a `T` (for a storage of the game's own; the scene
    /// gives out handles it checked, [`Scene::net_ref`](super::Scene::net_ref)). Every use
    /// checks the type again.
    pub fn new(node: NodeId) -> Self {
        Self {
            node,
            _type: PhantomData,
        }
    }

    /// The node this handle points at.
    pub fn node(self) -> NodeId {
        self.node
    }

    /// The unresolved reference: it names no node (every look-up through it finds nothing).
    /// A received reference is unresolved when the receiver has no node for it: not spawned
    /// here yet, not relevant to this peer, despawned, or never networked on the sender. It is
    /// also the [`Default`] and what a reference encodes as outside a runtime.
    pub const fn unresolved() -> Self {
        Self {
            node: UNRESOLVED,
            _type: PhantomData,
        }
    }

    /// Whether this is the [unresolved](Self::unresolved) reference.
    pub fn is_unresolved(self) -> bool {
        self.node == UNRESOLVED
    }
}

/// The node no storage hands out, that the unresolved reference names.
const UNRESOLVED: NodeId = NodeId::new(u32::MAX, u32::MAX);

impl<T> Default for NetRef<T> {
    fn default() -> Self {
        Self::unresolved()
    }
}

impl<T> Clone for NetRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for NetRef<T> {}

impl<T> PartialEq for NetRef<T> {
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
    }
}

impl<T> Eq for NetRef<T> {}

impl<T> Hash for NetRef<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.node.hash(state);
    }
}

impl<T> fmt::Debug for NetRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = std::any::type_name::<T>();
        if self.is_unresolved() {
            return write!(f, "NetRef<{name}>(unresolved)");
        }
        write!(f, "NetRef<{name}>({})", self.node)
    }
}

impl<T> From<NetRef<T>> for NodeId {
    fn from(handle: NetRef<T>) -> Self {
        handle.node
    }
}
