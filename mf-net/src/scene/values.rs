//! The values of nodes, stored by type: setting, clearing and reading them, typed or
//! type-erased, and iterating over every node holding a given type (and keeping
//! the scene's removals value up to date).
//!
//! Each value lives in its type's [`Column`]; a node holds its (column, row). Typed access
//! checks the column's type once (a `TypeId` comparison) and indexes the row.

use std::any::{Any, TypeId};

use super::column::{Column, ErasedColumn};
use super::store::lender_of;
use super::{next_removal, NetRef, NodeId, Scene, SceneError, TypedColumn, ValueSlot};
use crate::replicated::{RegisteredType, Replicated};
use crate::wire::NetWriter;

impl Scene {
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
    /// clients built it with the old type and could not read the new one. A value replaced by
    /// one of the same type stays networked: its changes are sent as usual.
    ///
    /// # Errors
    ///
    /// [`SceneError::NoSuchNode`] if `node` is gone.
    pub fn set_value<T: Replicated>(
        &mut self,
        node: NodeId,
        value: T,
    ) -> Result<NetRef<T>, SceneError> {
        let old = self.node(node).ok_or(SceneError::NoSuchNode(node))?.value;
        let column = self.column_index::<T>();
        if let Some(old) = old.filter(|old| old.column == column) {
            if let Some(typed) = self.typed_column_mut::<T>(column) {
                typed.replace(old.row, value);
            }
            return Ok(NetRef::new(node));
        }
        if let Some(old) = old {
            self.remove_row(old);
            self.removals = next_removal();
        }
        let row = self
            .typed_column_mut::<T>(column)
            .map(|typed| typed.push(node, value));
        if let (Some(row), Some(slot)) = (row, self.node_mut(node)) {
            slot.value = Some(ValueSlot { column, row });
        }
        Ok(NetRef::new(node))
    }

    /// Removes `node`'s value, leaving the node in place. Returns whether it had one.
    ///
    /// A [`Multiplayer`](crate::replication::Multiplayer) server despawns (frees) a networked
    /// node whose value is cleared, at the end of the frame.
    pub fn clear_value(&mut self, node: NodeId) -> bool {
        let Some(value) = self.node_mut(node).and_then(|node| node.value.take()) else {
            return false;
        };
        self.remove_row(value);
        self.removals = next_removal();
        true
    }

    /// The typed handle of `node` if it holds a `T`.
    pub fn net_ref<T: Replicated>(&self, node: NodeId) -> Option<NetRef<T>> {
        (self.value_type(node)? == TypeId::of::<T>()).then(|| NetRef::new(node))
    }

    /// The value behind `handle`: `None` if the node is gone or no longer holds a `T`.
    pub fn get<T: Replicated>(&self, handle: NetRef<T>) -> Option<&T> {
        let slot = self.node(handle.node())?.value?;
        self.typed_column::<T>(slot.column)?.value(slot.row)
    }

    /// The value behind `handle`, mutably: `None` if the node is gone or no longer holds a `T`.
    pub fn get_mut<T: Replicated>(&mut self, handle: NetRef<T>) -> Option<&mut T> {
        let slot = self.node(handle.node())?.value?;
        self.typed_column_mut::<T>(slot.column)?.value_mut(slot.row)
    }

    /// The [`TypeId`] of `node`'s value, if it has one.
    pub fn value_type(&self, node: NodeId) -> Option<TypeId> {
        let slot = self.node(node)?.value?;
        Some(self.columns.get(slot.column as usize)?.type_id)
    }

    /// The registry entry (stable name, schema hash, members) of `node`'s value's type.
    pub fn value_info(&self, node: NodeId) -> Option<&'static RegisteredType> {
        let (column, _) = self.column_of(node)?;
        Some(column.entry())
    }

    /// Writes the full state of `node`'s current value (every member, as a spawn for every
    /// client would carry it) to `w`. Returns whether the node holds a value.
    ///
    /// For tools and tests that compare two peers' copies of a node; the runtime sends the
    /// state it captured, not this.
    pub fn write_state(&self, node: NodeId, w: &mut NetWriter) -> bool {
        match self.column_of(node) {
            Some((column, row)) => {
                column.write_current(row, w);
                true
            }
            None => false,
        }
    }

    /// `node`'s value, type-erased and mutable (what an RPC dispatcher takes).
    pub(crate) fn value_any_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
        let (column, row) = self.column_of_mut(node)?;
        column.value_mut(row)
    }

    /// Every node holding a `T`, with its value, in the order of `T`'s column (the order the
    /// values were set in, except that removing one moves the last into its place; use
    /// [`networked_depth_first`](Self::networked_depth_first) for tree order). Detached nodes
    /// are included.
    pub fn iter<T: Replicated>(&self) -> impl Iterator<Item = (NetRef<T>, &T)> + '_ {
        self.find_column::<T>()
            .and_then(|column| self.typed_column::<T>(column))
            .into_iter()
            .flat_map(|typed| typed.iter().map(|(node, value)| (NetRef::new(node), value)))
    }

    /// Every node holding a `T`, with its value mutably, in the order of [`iter`](Self::iter).
    pub fn iter_mut<T: Replicated>(&mut self) -> impl Iterator<Item = (NetRef<T>, &mut T)> + '_ {
        let column = self.find_column::<T>();
        column
            .and_then(|column| self.typed_column_mut::<T>(column))
            .into_iter()
            .flat_map(|typed| {
                typed
                    .iter_mut()
                    .map(|(node, value)| (NetRef::new(node), value))
            })
    }

    /// The column of `node`'s value, with its row.
    fn column_of(&self, node: NodeId) -> Option<(&dyn ErasedColumn, u32)> {
        let slot = self.node(node)?.value?;
        let column = self.columns.get(slot.column as usize)?;
        Some((&*column.column, slot.row))
    }

    /// The column of `node`'s value, mutably, with its row.
    fn column_of_mut(&mut self, node: NodeId) -> Option<(&mut dyn ErasedColumn, u32)> {
        let slot = self.node(node)?.value?;
        let column = self.columns.get_mut(slot.column as usize)?;
        Some((&mut *column.column, slot.row))
    }

    /// The index of `T`'s column, if one was made.
    pub(super) fn find_column<T: Replicated>(&self) -> Option<u32> {
        let type_id = TypeId::of::<T>();
        let index = self.columns.iter().position(|c| c.type_id == type_id)?;
        u32::try_from(index).ok()
    }

    /// The index of `T`'s column, made if there is none yet.
    fn column_index<T: Replicated>(&mut self) -> u32 {
        if let Some(index) = self.find_column::<T>() {
            return index;
        }
        self.columns.push(TypedColumn {
            type_id: TypeId::of::<T>(),
            column: Box::new(Column::<T>::new()),
            lender: lender_of::<T>(),
        });
        u32::try_from(self.columns.len() - 1).unwrap_or(u32::MAX)
    }

    fn typed_column<T: Replicated>(&self, column: u32) -> Option<&Column<T>> {
        self.columns
            .get(column as usize)?
            .column
            .as_any()
            .downcast_ref()
    }

    pub(super) fn typed_column_mut<T: Replicated>(
        &mut self,
        column: u32,
    ) -> Option<&mut Column<T>> {
        self.columns
            .get_mut(column as usize)?
            .column
            .as_any_mut()
            .downcast_mut()
    }

    /// Drops the row at `slot` (the node no longer refers to it) and points the node whose row
    /// moved into its place at it.
    pub(super) fn remove_row(&mut self, slot: ValueSlot) {
        let Some(column) = self.columns.get_mut(slot.column as usize) else {
            return;
        };
        let Some(moved) = column.column.swap_remove(slot.row) else {
            return;
        };
        if let Some(value) = self.node_mut(moved).and_then(|n| n.value.as_mut()) {
            value.row = slot.row;
        }
    }
}
