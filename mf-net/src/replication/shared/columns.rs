//! The runtime's own columns: per replicated type, one column of what the runtime keeps beside
//! each networked value (the server's shadow states, a client's interpolation and prediction
//! state), and for every node, where its row is. The values themselves stay in the engine's
//! [`Store`](crate::store::Store).
//!
//! A column is made the first time a node of its type needs one, from the type's
//! [registry entry](crate::replication::RegisteredType); rows are removed by swapping the last
//! row in, and the node whose row moved is pointed at its new place.

use std::any::{Any, TypeId};

use crate::replicated::registry::ReplicationRegistry;
use crate::store::NodeId;

/// Where the runtime keeps a node's state: its type's column and its row there. Kept as a
/// hint beside the runtime's node records; every use checks that the row is still the node's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ValueAt {
    pub(crate) column: u32,
    pub(crate) row: u32,
}

impl ValueAt {
    /// No place yet: a column and row no table has.
    pub(crate) const UNPLACED: Self = Self {
        column: u32::MAX,
        row: u32::MAX,
    };
}

/// What the table needs of one type's column, whatever else it keeps.
pub(crate) trait RuntimeColumn {
    /// Removes `row` by moving the last row into it; returns the node whose row moved there.
    fn swap_remove(&mut self, row: u32) -> Option<NodeId>;
    /// Drops every row.
    fn clear(&mut self);
}

/// Makes the column of a type from its registry entry's runtime part of kind `K` (a `fn`
/// returning the column), `None` for a type without one.
pub(crate) fn make_column<K: Copy + 'static, C: ?Sized>(
    ty: TypeId,
    call: impl FnOnce(K) -> Box<C>,
) -> Option<Box<C>> {
    let registry = ReplicationRegistry::global();
    let entry = registry.get(registry.id_of_type_id(ty)?)?;
    let part: &'static dyn Any = entry.runtime_part(TypeId::of::<K>())?;
    part.downcast_ref::<K>().map(|&make| call(make))
}

/// One column per type of the nodes the runtime keeps state of, and each node's row.
pub(crate) struct Columns<C: ?Sized> {
    columns: Vec<Box<C>>,
    types: Vec<TypeId>,
    /// By node slot index: the node that has a row, and where.
    at: Vec<Option<(NodeId, ValueAt)>>,
}

impl<C: ?Sized> Default for Columns<C> {
    fn default() -> Self {
        Self {
            columns: Vec::new(),
            types: Vec::new(),
            at: Vec::new(),
        }
    }
}

impl<C: ?Sized + RuntimeColumn> Columns<C> {
    /// The column of type `ty`, made with `make` if there is none yet (`None`: it could not be).
    pub(crate) fn column_for(
        &mut self,
        ty: TypeId,
        make: impl FnOnce(TypeId) -> Option<Box<C>>,
    ) -> Option<u32> {
        if let Some(i) = self.types.iter().position(|&t| t == ty) {
            return u32::try_from(i).ok();
        }
        self.columns.push(make(ty)?);
        self.types.push(ty);
        u32::try_from(self.columns.len() - 1).ok()
    }

    /// The type of the values of `column`.
    pub(crate) fn type_of(&self, column: u32) -> Option<TypeId> {
        self.types.get(column as usize).copied()
    }

    /// How many columns there are.
    pub(crate) fn len(&self) -> usize {
        self.columns.len()
    }

    /// Column `column`.
    pub(crate) fn get(&self, column: u32) -> Option<&C> {
        self.columns.get(column as usize).map(|c| &**c)
    }

    /// Column `column`, mutably.
    pub(crate) fn get_mut(&mut self, column: u32) -> Option<&mut C> {
        self.columns.get_mut(column as usize).map(|c| &mut **c)
    }

    /// Every column with its index, mutably.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut C)> + '_ {
        (0u32..).zip(self.columns.iter_mut().map(|c| &mut **c))
    }

    /// Where `node`'s row is.
    #[inline]
    pub(crate) fn at(&self, node: NodeId) -> Option<ValueAt> {
        match self.at.get(node.index() as usize) {
            Some(&Some((n, at))) if n == node => Some(at),
            _ => None,
        }
    }

    /// Asks for the line [`at`](Self::at) reads for `node`.
    #[inline]
    pub(crate) fn prefetch_at(&self, node: NodeId) {
        crate::cache_hint::prefetch(&self.at, node.index() as usize);
    }

    /// `node`'s column and row.
    pub(crate) fn row_of(&self, node: NodeId) -> Option<(&C, u32)> {
        let at = self.at(node)?;
        Some((self.get(at.column)?, at.row))
    }

    /// `node`'s column, mutably, and row.
    pub(crate) fn row_of_mut(&mut self, node: NodeId) -> Option<(&mut C, u32)> {
        let at = self.at(node)?;
        Some((self.get_mut(at.column)?, at.row))
    }

    /// `node`'s row is `at` (just pushed).
    pub(crate) fn placed(&mut self, node: NodeId, at: ValueAt) {
        let i = node.index() as usize;
        if i >= self.at.len() {
            self.at.resize(i + 1, None);
        }
        self.at[i] = Some((node, at));
    }

    /// Drops `node`'s row; returns whether it had one.
    pub(crate) fn remove(&mut self, node: NodeId) -> bool {
        let Some(at) = self.at(node) else {
            return false;
        };
        self.at[node.index() as usize] = None;
        let moved = self.get_mut(at.column).and_then(|c| c.swap_remove(at.row));
        if let Some(moved) = moved {
            self.placed(moved, at);
        }
        true
    }

    /// Drops every row (the columns stay, empty).
    pub(crate) fn clear(&mut self) {
        for column in &mut self.columns {
            column.clear();
        }
        self.at.clear();
    }
}
