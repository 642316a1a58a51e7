//! [`Shadows`]: the server's shadow states of every networked node, one column per type,
//! reached by node (one lookup, then the column's dynamic call) or for every column at once
//! (one pass per type).

use std::any::TypeId;

use super::shadow_column::{
    new_shadows, Changed, ErasedShadows, LastChanged, NewShadows, StateRequest, StateWritten,
};
use crate::codec::quantize::Buckets;
use crate::codec::state_coder::Coding;
use crate::replicated::Audience;
use crate::replication::shared::columns::{make_column, Columns, ValueAt};
use crate::store::{NodeId, Store};
use crate::wire::NetWriter;

/// The server's shadow states (see the [module docs](self)).
#[derive(Default)]
pub(crate) struct Shadows {
    columns: Columns<dyn ErasedShadows>,
}

impl Shadows {
    /// Asks for the line that says where `node`'s row is.
    #[inline]
    pub(crate) fn prefetch_at(&self, node: NodeId) {
        self.columns.prefetch_at(node);
    }

    /// Asks for `node`'s row (where [`prefetch_at`](Self::prefetch_at) asked for says it is).
    #[inline]
    pub(crate) fn prefetch_row(&self, node: NodeId) {
        if let Some((column, row)) = self.columns.row_of(node) {
            column.prefetch_row(row);
        }
    }

    /// Gives `node`'s value in `store` a shadow state (every member stamped `tick`) tagged
    /// `tag`; returns its change ticks and where it is, or `None` if the node holds no value
    /// of a registered type.
    pub(crate) fn start(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        tag: u32,
        tick: u32,
    ) -> Option<(LastChanged, ValueAt)> {
        let ty = store.value_type(node)?;
        let column = self.columns.column_for(ty, make)?;
        let row = match self.columns.at(node) {
            Some(at) if at.column == column => Some(at.row),
            Some(_) => {
                self.columns.remove(node);
                None
            }
            None => None,
        };
        let (last, row) = self
            .columns
            .get_mut(column)?
            .start(store, node, row, tag, tick)?;
        let at = ValueAt { column, row };
        self.columns.placed(node, at);
        Some((last, at))
    }

    /// Moves every change tick of `node`'s shadow state older than `floor` up to it
    /// ([`Capture::age`](crate::replication::Capture::age)). Returns its change ticks, `None`
    /// if it has no shadow state.
    pub(crate) fn age(&mut self, node: NodeId, floor: u32) -> Option<LastChanged> {
        let (column, row) = self.columns.row_of_mut(node)?;
        column.age(row, floor)
    }

    /// `node` is no longer networked; its shadow state is dropped.
    pub(crate) fn stop(&mut self, node: NodeId) {
        self.columns.remove(node);
    }

    /// Whether `node` has a shadow state of the type of its value in `store` (false once the
    /// value was cleared or replaced by one of another type).
    pub(crate) fn matches(&self, store: &dyn Store, node: NodeId) -> bool {
        let at = self.columns.at(node);
        at.is_some_and(|at| {
            let ty = store.value_type(node);
            ty.is_some() && ty == self.columns.type_of(at.column)
        })
    }

    /// Captures every networked value in `store` at `tick`, one pass per type, and appends
    /// the changed ones to `changed`.
    pub(crate) fn capture(&mut self, store: &mut dyn Store, tick: u32, changed: &mut Vec<Changed>) {
        for (index, column) in self.columns.iter_mut() {
            column.capture(store, tick, index, changed);
        }
    }

    /// Gives every shadow state that names one of `renamed` (sorted) a new one, every member
    /// stamped `tick`, and appends each to `changed` (see
    /// [`ErasedShadows::restamp_naming`]).
    pub(crate) fn restamp_naming(
        &mut self,
        store: &mut dyn Store,
        tick: u32,
        renamed: &[NodeId],
        changed: &mut Vec<Changed>,
    ) {
        for (index, column) in self.columns.iter_mut() {
            column.restamp_naming(store, tick, index, renamed, changed);
        }
    }

    /// `node`'s snapshot entry state (see
    /// [`Capture::write_since_for`](crate::replication::Capture::write_since_for)), read at
    /// `hint` when it is still the node's row, else found again.
    #[inline]
    pub(crate) fn write_since_for(
        &self,
        hint: ValueAt,
        node: NodeId,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) {
        let column = self.columns.get(hint.column);
        if column.is_some_and(|c| c.write_since_for(hint.row, node, since, audience, w)) {
            return;
        }
        if let Some((column, row)) = self.columns.row_of(node) {
            column.write_since_for(row, node, since, audience, w);
        }
    }

    /// The bit form of `node`'s snapshot entry state against `base`, into `coding` (see
    /// [`Capture::write_bits_since_for`](crate::replication::Capture::write_bits_since_for)),
    /// read at `hint` when it is still the node's row, else found again: whether it can be
    /// sent; `None` if the node has no shadow state.
    pub(crate) fn write_bits_since_for(
        &self,
        (hint, node): (ValueAt, NodeId),
        (since, audience): (Option<u32>, Audience),
        base: &[Buckets],
        coding: &mut Coding,
    ) -> Option<bool> {
        // The since and the audience go to the column apart: a pair built on the stack a
        // part at a time and read back whole stalls the read on the writes.
        let column = self.columns.get(hint.column);
        let at = (hint.row, node);
        if let Some(sent) =
            column.and_then(|c| c.write_bits_since_for(at, since, audience, base, coding))
        {
            return Some(sent);
        }
        let (column, row) = self.columns.row_of(node)?;
        column.write_bits_since_for((row, node), since, audience, base, coding)
    }

    /// Writes the snapshot entries `requests` of rows of column `column` to `w`, in one pass;
    /// with no such column, each is [`StateWritten::Stale`].
    pub(crate) fn write_states(
        &self,
        column: u32,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    ) {
        match self.columns.get(column) {
            Some(c) => c.write_states(requests, w, scratch, written),
            None => written.extend(requests.iter().map(|_| StateWritten::Stale)),
        }
    }

    /// How many columns there are.
    pub(crate) fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// `node`'s spawn state (see
    /// [`Capture::write_full_for`](crate::replication::Capture::write_full_for)).
    pub(crate) fn write_full_for(&self, node: NodeId, audience: Audience, w: &mut NetWriter) {
        if let Some((column, row)) = self.columns.row_of(node) {
            column.write_full_for(row, audience, w);
        }
    }

    /// The bit form of `node`'s spawn state from zero (see
    /// [`ErasedShadows::write_bits_full_for`]), into `coding`: whether it can be sent; `None`
    /// if the node has no shadow state.
    pub(crate) fn write_bits_full_for(
        &self,
        node: NodeId,
        audience: Audience,
        scratch: &mut NetWriter,
        coding: &mut Coding,
    ) -> Option<bool> {
        let (column, row) = self.columns.row_of(node)?;
        column.write_bits_full_for(row, audience, scratch, coding)
    }
}

/// The shadow column of type `ty`, from its registry entry.
fn make(ty: TypeId) -> Option<Box<dyn ErasedShadows>> {
    make_column::<NewShadows, _>(ty, |new| new())
}

/// What a type's registry entry gives the server ([`RegisteredType::runtime_part`]).
///
/// [`RegisteredType::runtime_part`]: crate::replication::RegisteredType::runtime_part
pub(crate) fn shadows_part<T: crate::replicated::Replicated>() -> &'static dyn std::any::Any {
    const { &(new_shadows::<T> as NewShadows) }
}
