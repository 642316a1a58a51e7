//! [`Replicas`]: a client's runtime state of every networked node, one column per type,
//! reached by node (one lookup, then the column's dynamic call) or for every column at once
//! (one pass per type): snapshot entries applied, interpolation, prediction.

use std::any::TypeId;

use super::bit_snapshot::StateType;
use super::entry::EntryAt;
use super::interpolation::row::BlendAt;
use super::prediction::predicted::{ConfirmAt, Confirmation};
use super::replica_column::{new_replicas, ErasedReplicas, NewReplicas};
use crate::replicated::Replicated;
use crate::replication::shared::columns::{make_column, Columns, ValueAt};
use crate::store::{NodeId, Store};
use crate::wire::{DecodeError, NetReader, ProtocolViolation};

/// The error of a read into a node that holds no value.
const NO_VALUE: DecodeError = DecodeError::Protocol(ProtocolViolation::UnknownNode);

/// A client's runtime state of its networked nodes (see the [module docs](self)).
#[derive(Default)]
pub(crate) struct Replicas {
    columns: Columns<dyn ErasedReplicas>,
    /// The predicted nodes, by slot index: what the `Simulation` step asks of every row it
    /// walks, answered without a call into a column.
    predicted: Vec<Option<NodeId>>,
}

impl Replicas {
    /// The column of `node`'s value's type in `store`, made if there is none yet.
    fn column_of(
        &mut self,
        store: &dyn Store,
        node: NodeId,
    ) -> Option<&mut (dyn ErasedReplicas + 'static)> {
        let ty = store.value_type(node)?;
        let column = self.columns.column_for(ty, make)?;
        self.columns.get_mut(column)
    }

    /// `node` is networked: it gets a row of its value's type (kept if it has one). Returns
    /// where, `None` if it holds no value of a registered type.
    pub(crate) fn add(&mut self, store: &mut dyn Store, node: NodeId) -> Option<ValueAt> {
        let ty = store.value_type(node)?;
        let column = self.columns.column_for(ty, make)?;
        match self.columns.at(node) {
            Some(at) if at.column == column => return Some(at),
            Some(_) => self.remove(node),
            None => {}
        }
        let row = self.columns.get_mut(column)?.push(store, node);
        let at = ValueAt { column, row };
        self.columns.placed(node, at);
        Some(at)
    }

    /// `node` is no longer networked: its row is dropped.
    pub(crate) fn remove(&mut self, node: NodeId) {
        self.columns.remove(node);
        self.mark_predicted(node, false);
    }

    /// Drops every row: the runtime stopped or changed role, and every node is a plain node
    /// again.
    pub(crate) fn clear(&mut self) {
        self.columns.clear();
        self.predicted.clear();
    }

    /// Records whether `node` is predicted.
    fn mark_predicted(&mut self, node: NodeId, predicted: bool) {
        let i = node.index() as usize;
        if predicted {
            if i >= self.predicted.len() {
                self.predicted.resize(i + 1, None);
            }
            self.predicted[i] = Some(node);
        } else if let Some(slot) = self.predicted.get_mut(i).filter(|n| **n == Some(node)) {
            *slot = None;
        }
    }

    /// Reads a state into `node`'s value, recording changed `on_change` members in `changed`
    /// unless it is empty.
    pub(crate) fn read_state(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        let column = self.column_of(store, node).ok_or(NO_VALUE)?;
        column.read(store, node, r, changed)
    }

    /// Runs the `on_change` hooks `changed` names on `node`'s value.
    pub(crate) fn run_on_change(&mut self, store: &mut dyn Store, node: NodeId, changed: &[u64]) {
        if let Some(column) = self.column_of(store, node) {
            column.run_on_change(store, node, changed);
        }
    }

    /// Applies a snapshot entry's state `bytes` to `node`, wherever its row is now, for an
    /// entry whose row hint went stale; returns where the row is (`None`: the node has no row
    /// or holds no value, and nothing is read).
    pub(crate) fn apply_entry_found(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        bytes: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) -> Result<Option<ValueAt>, DecodeError> {
        let Some(found) = self.columns.at(node) else {
            return Ok(None);
        };
        let Some(column) = self.columns.get_mut(found.column) else {
            return Ok(None);
        };
        Ok(column
            .apply_entry(store, found.row, node, bytes, at, changed)?
            .then_some(found))
    }

    /// The type of column `column`, as bit-packed entries need it (`None`: no such column).
    pub(crate) fn column_type(&self, column: u32) -> Option<StateType> {
        Some(self.columns.get(column)?.state_type())
    }

    /// The type of `node`'s value, as bit-packed entries need it (`None`: it has no row).
    pub(crate) fn state_type_of(&self, node: NodeId) -> Option<StateType> {
        let found = self.columns.at(node)?;
        Some(self.columns.get(found.column)?.state_type())
    }

    /// Column `column` (snapshot entries are applied one column at a time).
    pub(crate) fn column_mut(
        &mut self,
        column: u32,
    ) -> Option<&mut (dyn ErasedReplicas + 'static)> {
        self.columns.get_mut(column)
    }

    /// How many columns there are.
    pub(crate) fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// `node` interpolates from now on, starting from its current value at `tick`.
    pub(crate) fn start_interp(&mut self, store: &mut dyn Store, node: NodeId, tick: u32) {
        if let Some((column, row)) = self.columns.row_of_mut(node) {
            column.start_interp(store, row, tick);
        }
    }

    /// Every interpolated member snaps to its newest sample; buffers are cleared.
    pub(crate) fn snap_interps(&mut self, store: &mut dyn Store) {
        for (_, column) in self.columns.iter_mut() {
            column.snap_interps(store);
        }
    }

    /// After a frame's snapshots, one pass per type: with `blend`, every interpolated member's
    /// sample at the render tick is written into its value; with `confirm`, every predicted
    /// row whose known tick (the newer of the last snapshot carrying it and the floor) advanced
    /// takes its value as the confirmed state, compared with the prediction of that tick, and
    /// every predicted row's value goes back to the prediction of the present. Returns what
    /// the confirmation found.
    pub(crate) fn after_receive(
        &mut self,
        store: &mut dyn Store,
        blend: Option<BlendAt>,
        confirm: Option<ConfirmAt>,
    ) -> Confirmation {
        let mut out = Confirmation::default();
        for (_, column) in self.columns.iter_mut() {
            column.after_receive(store, blend, confirm, &mut out);
        }
        out
    }

    /// Every predicted member back to the server's confirmed state, before snapshots are
    /// applied (a snapshot's delta is against what the server had). Returns the first
    /// predicted node whose plain members were written since (on this client), with its
    /// type's name.
    pub(crate) fn restore_confirmed(
        &mut self,
        store: &mut dyn Store,
    ) -> Option<(NodeId, &'static str)> {
        let mut written = None;
        for (index, column) in self.columns.iter_mut() {
            if let Some(node) = column.restore_confirmed(store) {
                written.get_or_insert((node, index));
            }
        }
        let (node, index) = written?;
        Some((node, self.type_name(index)))
    }

    /// The stable name of the type of column `column`.
    fn type_name(&self, column: u32) -> &'static str {
        use crate::replicated::registry::ReplicationRegistry;
        let registry = ReplicationRegistry::global();
        self.columns
            .type_of(column)
            .and_then(|ty| registry.get(registry.id_of_type_id(ty)?))
            .map_or("", |entry| entry.name())
    }

    /// The name of `node`'s replicated type if that type has predicted members.
    pub(crate) fn predicted_type(&self, node: NodeId) -> Option<&'static str> {
        let at = self.columns.at(node)?;
        let column = self.columns.get(at.column)?;
        column.predicts().then(|| self.type_name(at.column))
    }

    /// Calls `f` with every predicted node.
    pub(crate) fn each_predicted(&self, f: &mut dyn FnMut(NodeId)) {
        self.predicted.iter().flatten().for_each(|&node| f(node));
    }

    /// Whether `node` is predicted.
    #[inline]
    pub(crate) fn is_predicted(&self, node: NodeId) -> bool {
        matches!(self.predicted.get(node.index() as usize), Some(&Some(n)) if n == node)
    }

    /// A rollback to `tick`, in one pass: every predicted row's value as of `tick` (its
    /// confirmed state if confirmed then, else its prediction), recorded as the prediction of
    /// `tick`. With `smoothing`, what each shows now is kept as the start of its correction's
    /// offset.
    pub(crate) fn roll_back_to(&mut self, store: &mut dyn Store, tick: u32, smoothing: bool) {
        for (_, column) in self.columns.iter_mut() {
            column.roll_back_to(store, tick, smoothing);
        }
    }

    /// `tick` was simulated: a row confirmed at `tick` takes the confirmed state, and every
    /// predicted row records its state as the prediction of `tick`; then, with `show`, its
    /// correction fades by that much as in [`show_predicted`](Self::show_predicted), in the
    /// same pass.
    pub(crate) fn record_predicted(&mut self, store: &mut dyn Store, tick: u32, show: Option<f32>) {
        for (_, column) in self.columns.iter_mut() {
            column.record(store, tick, show);
        }
    }

    /// A rollback re-simulated up to the present `tick`: each row's correction fades from what
    /// it showed to its new state.
    pub(crate) fn end_correction(&mut self, store: &mut dyn Store, tick: u32) {
        for (_, column) in self.columns.iter_mut() {
            column.end_correction(store, tick);
        }
    }

    /// Every correction fades by `fade` (of its whole offset) and the values show what is left
    /// of it.
    pub(crate) fn show_predicted(&mut self, store: &mut dyn Store, fade: f32) {
        for (_, column) in self.columns.iter_mut() {
            column.show(store, fade);
        }
    }

    /// The first predicted row whose value differs from its prediction of `tick`, by node and
    /// member (the determinism check); rows without a prediction of the tick before (predicted
    /// from `tick` on) are not compared.
    pub(crate) fn check_predicted(
        &mut self,
        store: &mut dyn Store,
        tick: u32,
    ) -> Option<(NodeId, &'static str)> {
        self.columns
            .iter_mut()
            .find_map(|(_, column)| column.check(store, tick))
    }

    /// Every predicted row's value back to its prediction of `tick` (when kept).
    pub(crate) fn restore_history(&mut self, store: &mut dyn Store, tick: u32) {
        for (_, column) in self.columns.iter_mut() {
            column.restore_history(store, tick);
        }
    }

    /// `node` is predicted from now on (see [`ErasedReplicas::start_prediction`]).
    pub(crate) fn start_prediction(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        tick: u32,
        history: usize,
    ) -> bool {
        let started = self
            .columns
            .row_of_mut(node)
            .is_some_and(|(column, row)| column.start_prediction(store, row, tick, history));
        if started {
            self.mark_predicted(node, true);
        }
        started
    }

    /// `node` is no longer predicted; returns whether it was.
    pub(crate) fn stop_prediction(&mut self, node: NodeId) -> bool {
        self.mark_predicted(node, false);
        self.columns
            .row_of_mut(node)
            .is_some_and(|(column, row)| column.stop_prediction(row))
    }
}

/// The replica column of type `ty`, from its registry entry.
fn make(ty: TypeId) -> Option<Box<dyn ErasedReplicas>> {
    make_column::<NewReplicas, _>(ty, |new| new())
}

/// What a type's registry entry gives a client ([`RegisteredType::runtime_part`]).
///
/// [`RegisteredType::runtime_part`]: crate::replication::RegisteredType::runtime_part
pub(crate) fn replicas_part<T: Replicated>() -> &'static dyn std::any::Any {
    const { &(new_replicas::<T> as NewReplicas) }
}
