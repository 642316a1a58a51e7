//! The storage seam: how an engine lends the values of its replicated types to the runtime.
//!
//! The engine owns the game's values; the replication runtime owns everything else (the
//! server's shadow states and change ticks, a client's interpolation buffers and prediction
//! history, net ids) in its own columns, one per type, keyed by the [`NodeId`]s the engine
//! gives out. To read or write values, the runtime borrows one type's storage at a time, for
//! one pass, as [`Rows`]: the storage is reached through a dynamic call once per type per
//! pass, and the loop over its rows is typed.
//!
//! An engine implements [`Store`] and, for every type it stores, a [`Lend`] function; the
//! built-in [`Scene`](crate::scene::Scene) is one such engine. A
//! [`Multiplayer`](crate::replication::Multiplayer) made
//! [`with_store`](crate::replication::Multiplayer::with_store) replicates any other: its nodes
//! are networked with [`replicate`](crate::replication::Multiplayer::replicate), and each client's
//! store makes them with [`Store::spawn`].
//!
//! ```
//! use std::any::{Any, TypeId};
//! use mf_net::prelude::*;
//! use mf_net::store::{lend, Lend, Rows, Store};
//!
//! #[derive(Replicated, Default)]
//! struct Body {
//!     #[replicated]
//!     x: i32,
//! }
//!
//! /// A game's own storage: one `Vec` of bodies, a node's index its slot.
//! #[derive(Default)]
//! struct Bodies(Vec<Body>);
//!
//! impl Rows<Body> for Bodies {
//!     fn get(&self, node: NodeId) -> Option<&Body> {
//!         self.0.get(node.index() as usize)
//!     }
//!     fn get_mut(&mut self, node: NodeId) -> Option<&mut Body> {
//!         self.0.get_mut(node.index() as usize)
//!     }
//! }
//!
//! impl Store for Bodies {
//!     fn value_type(&self, node: NodeId) -> Option<TypeId> {
//!         self.get(node).map(|_| TypeId::of::<Body>())
//!     }
//!     fn lender(&self, ty: TypeId) -> Option<&'static dyn Any> {
//!         let body: &'static Lend<Body> = &(lend_bodies as Lend<Body>);
//!         (ty == TypeId::of::<Body>()).then_some(body as &dyn Any)
//!     }
//!     fn alive(&self, node: NodeId) -> bool {
//!         self.get(node).is_some()
//!     }
//!     fn removals(&self) -> u64 {
//!         1 // never removes a body (nor replaces another storage)
//!     }
//!     fn value_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
//!         Some(self.get_mut(node)?)
//!     }
//!     fn despawn(&mut self, _node: NodeId) -> bool {
//!         false
//!     }
//! }
//!
//! fn lend_bodies(store: &mut dyn Store, f: &mut dyn FnMut(&mut dyn Rows<Body>)) {
//!     if let Some(bodies) = (store as &mut dyn Any).downcast_mut::<Bodies>() {
//!         f(bodies);
//!     }
//! }
//!
//! let mut bodies = Bodies(vec![Body { x: 1 }]);
//! let mut sum = 0;
//! assert!(lend::<Body>(&mut bodies, &mut |rows| {
//!     sum += rows.get(NodeId::new(0, 0)).map_or(0, |b| b.x);
//! }));
//! assert_eq!(sum, 1);
//! ```

mod link;
mod node_id;

use std::any::{Any, TypeId};

pub use link::Link;
pub use node_id::NodeId;

/// The values of one type `T` in an engine's storage, lent to the runtime for one pass.
pub trait Rows<T> {
    /// `node`'s value, if it holds a `T`.
    fn get(&self, node: NodeId) -> Option<&T>;

    /// `node`'s value, mutably, if it holds a `T`.
    fn get_mut(&mut self, node: NodeId) -> Option<&mut T>;

    /// [`get`](Self::get), looking first where `hint` says `node`'s value was last found, and
    /// setting `hint` to where it is now. The runtime keeps one hint per node for the storage:
    /// a storage that finds a value faster from some position of its own (the built-in scene:
    /// the row in its column) keeps it there. The runtime reads it only as an index into the
    /// storage's [`dense`](Self::dense) column, checked against the node. By default the hint
    /// is not used.
    #[inline]
    fn get_hinted(&self, node: NodeId, hint: &mut u32) -> Option<&T> {
        let _ = hint;
        self.get(node)
    }

    /// The values as one dense column, each with its node, if the storage keeps them so (the
    /// built-in scene does): the runtime's loops then index it directly at each node's hint,
    /// checking the node, with no call per row, and look up through
    /// [`get_mut_hinted`](Self::get_mut_hinted) only the rows whose hint went stale. `None` by
    /// default: every row is looked up.
    #[inline]
    fn dense(&mut self) -> Option<Dense<'_, T>> {
        None
    }

    /// [`get_mut`](Self::get_mut) with a hint, as [`get_hinted`](Self::get_hinted).
    #[inline]
    fn get_mut_hinted(&mut self, node: NodeId, hint: &mut u32) -> Option<&mut T> {
        let _ = hint;
        self.get_mut(node)
    }
}

/// A storage's values of one type as a dense column: `values[i]` is `nodes[i]`'s (see
/// [`Rows::dense`]). A hint is an index into it.
#[derive(Debug)]
pub struct Dense<'a, T> {
    /// Each value's node.
    pub nodes: &'a [NodeId],
    /// The values.
    pub values: &'a mut [T],
    /// A value that changes whenever an index stops holding the value it held (a removal,
    /// whether or not it moves the last value into its place) and that no other column ever
    /// has; 0 if the storage does not say. While it is unchanged, a hint found valid stays
    /// valid, and the runtime indexes `values` without reading `nodes`.
    pub moves: u64,
}

impl<T> Dense<'_, T> {
    /// `node`'s value if it is at `hint`.
    #[inline]
    pub fn at(&mut self, node: NodeId, hint: u32) -> Option<&mut T> {
        let i = hint as usize;
        match self.nodes.get(i) {
            Some(&n) if n == node => self.values.get_mut(i),
            _ => None,
        }
    }

    /// [`at`](Self::at), trusting `hint` without reading `nodes` when it was found valid at the
    /// current [`moves`](Self::moves) (`checked`, updated).
    #[inline]
    pub fn at_checked(&mut self, node: NodeId, hint: u32, checked: &mut u64) -> Option<&mut T> {
        if self.moves == 0 || *checked != self.moves {
            let i = hint as usize;
            if self.nodes.get(i) != Some(&node) {
                return None;
            }
            *checked = self.moves;
        }
        self.values.get_mut(hint as usize)
    }
}

/// How a [`Store`] lends its `T`s: calls `f` with them (not at all if it holds none). The store
/// it is given is the one whose [`lender`](Store::lender) returned it.
pub type Lend<T> = fn(&mut dyn Store, &mut dyn FnMut(&mut dyn Rows<T>));

/// An engine's storage of replicated values and of the nodes that hold them, as the runtime
/// reaches it.
///
/// Values are read and written a type at a time through [`lender`](Self::lender). The rest is
/// what the runtime needs of the storage's structure: whether a networked node still exists
/// (the server despawns one that does not), removing one (a client applying a despawn, a
/// kick), creating one (a client applying a spawn of
/// [`replicate`](crate::replication::Multiplayer::replicate)), and one value by node (RPC
/// dispatch).
pub trait Store: Any {
    /// The type of `node`'s value, if it holds one.
    fn value_type(&self, node: NodeId) -> Option<TypeId>;

    /// How the store lends the values of type `ty`: a [`Lend<T>`] for `ty` the [`TypeId`] of
    /// `T`. `None` if the store keeps no such values.
    fn lender(&self, ty: TypeId) -> Option<&'static dyn Any>;

    /// Whether `node` is alive for replication. The server despawns every networked node that
    /// is not (checked at the end of each frame in which [`removals`](Self::removals)
    /// changed).
    fn alive(&self, node: NodeId) -> bool;

    /// A value that changes whenever a node stops being [alive](Self::alive) or its value is
    /// removed or replaced by one of another type. While it is unchanged, the server skips its
    /// scan for despawned and retyped nodes. A storage put in place of another
    /// (`*mp.store_mut() = …`) must not start at a value the other had: draw the values from
    /// a process-wide counter, as the built-in scene does.
    fn removals(&self) -> u64;

    /// A hint that `node` is about to be read (whether it is alive, its value): a storage may
    /// ask the processor to bring it into the cache. The server gives it a few reads ahead
    /// where it reads many scattered nodes in a row (interest's questions). By default,
    /// nothing.
    fn prefetch(&self, node: NodeId) {
        let _ = node;
    }

    /// `node`'s value, type-erased and mutable: what an RPC is dispatched to.
    fn value_mut(&mut self, node: NodeId) -> Option<&mut dyn Any>;

    /// Removes `node` (and what the storage removes with it). Returns whether it existed.
    fn despawn(&mut self, node: NodeId) -> bool;

    /// A new node holding the default value of type `ty`, for a client applying a spawn of a
    /// [replicated](crate::replication::Multiplayer::replicate) node; its state is written
    /// into it right after. `None` (the default) if the store makes no such nodes: the spawn
    /// then fails with [`SpawnFailed`](crate::replication::MultiplayerEvent::SpawnFailed).
    fn spawn(&mut self, ty: TypeId) -> Option<NodeId> {
        let _ = ty;
        None
    }

    /// The nodes [`replicate`](crate::replication::Multiplayer::replicate) networks together
    /// with `root`, appended to `group` after `root` (which is there already, at index 0), each
    /// with how it relates to a node before it (its index in `group`): the other values of
    /// `root`'s object, its children. They travel in one spawn, with consecutive net ids. By
    /// default, none: `root` goes alone.
    fn group(&self, root: NodeId, group: &mut Vec<(NodeId, Link<u32>)>) {
        let _ = (root, group);
    }

    /// The node the group [replicated](crate::replication::Multiplayer::replicate) from `root`
    /// hangs under in the engine's hierarchy, if any (a Bevy entity's parent's first networked
    /// component). When that node is networked, the group's spawn names it: each client makes
    /// the root [a child of](Link::ChildOf) its copy, a client that lacks the parent's group
    /// lacks this one too, and the group goes with its parent (despawned with it, and handed
    /// over with it by a recursive [`set_authority`](crate::replication::Multiplayer::set_authority)).
    /// By default, none: the group is a root.
    fn parent(&self, root: NodeId) -> Option<NodeId> {
        let _ = root;
        None
    }

    /// Whether the group [replicated](crate::replication::Multiplayer::replicate) from `root`
    /// is another value of its [`parent`](Self::parent)'s object rather than a child of it (a
    /// component inserted into a Bevy entity networked already): each client makes the root
    /// [beside](Link::Beside) its copy of the parent, and the group cannot
    /// [move](crate::replication::Multiplayer::set_parent). By default, `false`.
    fn beside_parent(&self, root: NodeId) -> bool {
        let _ = root;
        false
    }

    /// A client: the group whose root is `root` moved, on the server, under the networked node
    /// `parent` (`None`: to no parent; see
    /// [`set_parent`](crate::replication::Multiplayer::set_parent)): the engine's hierarchy
    /// follows (a Bevy entity's `ChildOf`). Returns whether it did. By default the store keeps
    /// no such hierarchy: `false`.
    fn set_parent(&mut self, root: NodeId, parent: Option<NodeId>) -> bool {
        let _ = (root, parent);
        false
    }

    /// A new node holding the default value of type `ty`, placed as `link` says (a client
    /// applying a spawn of a [`group`](Self::group)): the root of a new object, a child of
    /// one, or another value of one. By default, [`spawn`](Self::spawn) for a root and `None`
    /// otherwise.
    fn spawn_linked(&mut self, ty: TypeId, link: Link<NodeId>) -> Option<NodeId> {
        match link {
            Link::Root => self.spawn(ty),
            _ => None,
        }
    }
}

/// Lends `store`'s `T`s to `f`, for one pass. Returns whether the store had a lender for `T`.
pub fn lend<T: 'static>(store: &mut dyn Store, f: &mut dyn FnMut(&mut dyn Rows<T>)) -> bool {
    let Some(&lend) = store
        .lender(TypeId::of::<T>())
        .and_then(|l| l.downcast_ref::<Lend<T>>())
    else {
        return false;
    };
    lend(store, f);
    true
}
