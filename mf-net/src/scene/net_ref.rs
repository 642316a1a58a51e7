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
        write!(f, "NetRef<{}>({})", std::any::type_name::<T>(), self.node)
    }
}

impl<T> From<NetRef<T>> for NodeId {
    fn from(handle: NetRef<T>) -> Self {
        handle.node
    }
}
