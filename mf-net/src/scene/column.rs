//! One column per value type: the values of every node holding a `T`, contiguously, each with
//! its node. Nothing else: the replication runtime keeps its own state of each value in its
//! own columns, and borrows these through the [storage seam](crate::store).
//!
//! Rows are removed by swapping the last row in, so a column stays dense; [`Scene`](super::Scene)
//! keeps each node's row up to date.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};

use super::NodeId;
use crate::replicated::{RegisteredType, Replicated};
use crate::wire::NetWriter;

/// The values of every node holding a `T`, with their nodes.
pub(crate) struct Column<T> {
    values: Vec<T>,
    nodes: Vec<NodeId>,
    /// Changes whenever a row is removed (a value moves to another row, or a later value may
    /// take the row), unique across every column of the process ([`Dense::moves`](crate::store::Dense::moves)).
    moves: u64,
}

/// Source of [`Column::moves`] values.
static MOVES: AtomicU64 = AtomicU64::new(1);

fn next_moves() -> u64 {
    MOVES.fetch_add(1, Ordering::Relaxed)
}

impl<T: Replicated> Column<T> {
    /// An empty column.
    pub(crate) fn new() -> Self {
        Self {
            values: Vec::new(),
            nodes: Vec::new(),
            moves: next_moves(),
        }
    }

    /// Adds `value` for `node`; returns its row.
    pub(crate) fn push(&mut self, node: NodeId, value: T) -> u32 {
        self.values.push(value);
        self.nodes.push(node);
        u32::try_from(self.values.len() - 1)
            .unwrap_or_else(|_| panic!("a column holds more than u32::MAX values"))
    }

    /// The value of `row`.
    #[inline]
    pub(crate) fn value(&self, row: u32) -> Option<&T> {
        self.values.get(row as usize)
    }

    /// The node of `row`.
    #[inline]
    pub(crate) fn node(&self, row: u32) -> Option<NodeId> {
        self.nodes.get(row as usize).copied()
    }

    /// The value of `row`, mutably.
    #[inline]
    pub(crate) fn value_mut(&mut self, row: u32) -> Option<&mut T> {
        self.values.get_mut(row as usize)
    }

    /// Every row's node, the values, mutably, and the column's moves.
    #[inline]
    pub(crate) fn parts_mut(&mut self) -> (&[NodeId], &mut [T], u64) {
        (&self.nodes, &mut self.values, self.moves)
    }

    /// Every row's node with its value.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (NodeId, &T)> + '_ {
        self.nodes.iter().copied().zip(&self.values)
    }

    /// Every row's node with its value, mutably.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (NodeId, &mut T)> + '_ {
        self.nodes.iter().copied().zip(&mut self.values)
    }

    /// Replaces the value of `row`.
    pub(crate) fn replace(&mut self, row: u32, value: T) {
        if let Some(slot) = self.values.get_mut(row as usize) {
            *slot = value;
        }
    }
}

/// A [`Column`] without its type: what the scene calls.
pub(crate) trait ErasedColumn {
    /// The column, for downcasting to its type.
    fn as_any(&self) -> &dyn Any;
    /// The column, mutably, for downcasting to its type.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The value type's registry entry.
    fn entry(&self) -> &'static RegisteredType;
    /// Removes `row` by moving the last row into it; returns the node whose row moved there.
    fn swap_remove(&mut self, row: u32) -> Option<NodeId>;
    /// The value of `row`, type-erased and mutable.
    fn value_mut(&mut self, row: u32) -> Option<&mut dyn Any>;
    /// The full state of `row`'s current value, every member (as a spawn for everyone).
    fn write_current(&self, row: u32, w: &mut NetWriter);
}

impl<T: Replicated> ErasedColumn for Column<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn entry(&self) -> &'static RegisteredType {
        const { &RegisteredType::of::<T>() }
    }

    fn swap_remove(&mut self, row: u32) -> Option<NodeId> {
        let row = row as usize;
        if row >= self.values.len() {
            return None;
        }
        self.values.swap_remove(row);
        self.nodes.swap_remove(row);
        // Every removal, not only one that moves a row: a later value may take this row.
        self.moves = next_moves();
        self.nodes.get(row).copied()
    }

    fn value_mut(&mut self, row: u32) -> Option<&mut dyn Any> {
        Some(self.values.get_mut(row as usize)?)
    }

    fn write_current(&self, row: u32, w: &mut NetWriter) {
        if let Some(value) = self.values.get(row as usize) {
            T::write_full(&value.new_state(0), w);
        }
    }
}
