//! The scene as a [`Store`]: it lends one type's column at a time, a node's value found through
//! the node's slot.

use std::any::{Any, TypeId};

use super::column::Column;
use super::{node_in, NodeId, Scene, Slot};
use crate::replicated::Replicated;
use crate::store::{Dense, Lend, Rows, Store};

impl Scene {
    /// Whether the scene lends its columns as [dense](crate::store::Rows::dense) (the default).
    /// Off, the runtime looks every value up by node, as it does in a storage without dense
    /// columns: for tests of that path.
    #[doc(hidden)]
    pub fn set_dense_lending(&mut self, on: bool) {
        self.lends_dense = on;
    }
}

impl Store for Scene {
    fn value_type(&self, node: NodeId) -> Option<TypeId> {
        Scene::value_type(self, node)
    }

    fn lender(&self, ty: TypeId) -> Option<&'static dyn Any> {
        self.columns
            .iter()
            .find(|c| c.type_id == ty)
            .map(|c| c.lender)
    }

    /// A node is alive while it is [attached](Scene::is_attached): a detached subtree is
    /// despawned unless attached again before the frame ends.
    fn alive(&self, node: NodeId) -> bool {
        self.is_attached(node)
    }

    fn removals(&self) -> u64 {
        self.removals
    }

    fn prefetch(&self, node: NodeId) {
        Scene::prefetch(self, node);
    }

    fn value_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
        self.value_any_mut(node)
    }

    /// [Removes](Scene::remove) `node` and its subtree.
    /// Moves `root` under `parent` (the scene's root for none).
    fn set_parent(&mut self, root: NodeId, parent: Option<NodeId>) -> bool {
        let parent = parent.unwrap_or_else(|| self.root());
        self.reparent(root, parent).is_ok()
    }

    fn despawn(&mut self, node: NodeId) -> bool {
        self.remove(node)
    }
}

/// The [`Lend`] of the scene's column of `T`s (see [`lender_of`]).
fn lend<T: Replicated>(store: &mut dyn Store, f: &mut dyn FnMut(&mut dyn Rows<T>)) {
    let Some(scene) = (store as &mut dyn Any).downcast_mut::<Scene>() else {
        return;
    };
    let Some(index) = scene.find_column::<T>() else {
        return;
    };
    let Some(typed) = scene.columns.get_mut(index as usize) else {
        return;
    };
    let Some(column) = typed.column.as_any_mut().downcast_mut::<Column<T>>() else {
        return;
    };
    f(&mut SceneRows {
        slots: &scene.slots,
        index,
        column,
        dense: scene.lends_dense,
    });
}

/// The [`Lend`] of `T`s that a scene's lender for `T` returns.
pub(super) fn lender_of<T: Replicated>() -> &'static dyn Any {
    const { &(lend::<T> as Lend<T>) }
}

/// A scene's column of `T`s, lent: a node's value is found through its slot.
struct SceneRows<'a, T> {
    slots: &'a [Slot],
    /// The column's index in the scene.
    index: u32,
    column: &'a mut Column<T>,
    /// Whether it is lent as a dense column ([`Scene::set_dense_lending`]).
    dense: bool,
}

impl<T: Replicated> SceneRows<'_, T> {
    fn row(&self, node: NodeId) -> Option<u32> {
        let at = node_in(self.slots, node)?.value?;
        (at.column == self.index).then_some(at.row)
    }
}

impl<T: Replicated> Rows<T> for SceneRows<'_, T> {
    #[inline]
    fn get(&self, node: NodeId) -> Option<&T> {
        self.column.value(self.row(node)?)
    }

    #[inline]
    fn get_mut(&mut self, node: NodeId) -> Option<&mut T> {
        let row = self.row(node)?;
        self.column.value_mut(row)
    }

    #[inline]
    fn dense(&mut self) -> Option<Dense<'_, T>> {
        if !self.dense {
            return None;
        }
        let (nodes, values, moves) = self.column.parts_mut();
        Some(Dense {
            nodes,
            values,
            moves,
        })
    }

    #[inline]
    fn get_hinted(&self, node: NodeId, hint: &mut u32) -> Option<&T> {
        if self.column.node(*hint) != Some(node) {
            *hint = self.row(node)?;
        }
        self.column.value(*hint)
    }

    #[inline]
    fn get_mut_hinted(&mut self, node: NodeId, hint: &mut u32) -> Option<&mut T> {
        if self.column.node(*hint) != Some(node) {
            *hint = self.row(node)?;
        }
        self.column.value_mut(*hint)
    }
}
