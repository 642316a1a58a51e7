//! What the replication runtime keeps in a node's row, reached by node (one lookup, then the
//! column's dynamic call) or for every column at once (one pass per type): the server's
//! shadow states, the client's entry reads, interpolation and prediction.

use super::column::{
    BlendAt, Changed, EntryAt, EntryMisses, EntryRef, LastChanged, StateRequest, StateWritten,
};
use super::predicted::Confirmation;
use super::{NodeId, Scene, ValueAt};
use crate::replicated::Audience;
use crate::wire::{DecodeError, NetReader, NetWriter, ProtocolViolation};

/// The error of a read into a node that holds no value.
const NO_VALUE: DecodeError = DecodeError::Protocol(ProtocolViolation::UnknownNode);

impl Scene {
    /// Server: gives `node`'s value a shadow state (every member stamped `tick`) tagged `tag`;
    /// returns its change ticks and where the value is, or `None` if the node holds no value.
    pub(crate) fn start_shadow(
        &mut self,
        node: NodeId,
        tag: u32,
        tick: u32,
    ) -> Option<(LastChanged, ValueAt)> {
        let at = self.value_at(node)?;
        let column = self.columns.get_mut(at.column as usize)?;
        Some((column.column.start_shadow(at.row, tag, tick), at))
    }

    /// Server: moves every change tick of `node`'s shadow state older than `floor` up to it
    /// ([`Capture::age`](crate::replication::Capture::age)). Returns its change ticks,
    /// `None` if it has no shadow state.
    pub(crate) fn age_shadow(&mut self, node: NodeId, floor: u32) -> Option<LastChanged> {
        let (column, row) = self.column_of_mut(node)?;
        column.age_shadow(row, floor)
    }

    /// Server: `node` is no longer networked; its value keeps no shadow state.
    pub(crate) fn stop_shadow(&mut self, node: NodeId) {
        if let Some((column, row)) = self.column_of_mut(node) {
            column.stop_shadow(row);
        }
    }

    /// Server: whether `node`'s value has a shadow state (false once the value was cleared or
    /// replaced by one of another type).
    pub(crate) fn has_shadow(&self, node: NodeId) -> bool {
        self.column_of(node)
            .is_some_and(|(column, row)| column.has_shadow(row))
    }

    /// Server: captures every value with a shadow state at `tick`, one pass per type, and
    /// appends the changed ones to `changed`.
    pub(crate) fn capture(&mut self, tick: u32, changed: &mut Vec<Changed>) {
        for (index, column) in (0u32..).zip(self.columns_mut()) {
            column.capture(tick, index, changed);
        }
    }

    /// Server: `node`'s snapshot entry state (see [`Capture::write_since_for`]), read at
    /// `hint` (where the node's value was last seen) when it is still there, else found again.
    ///
    /// [`Capture::write_since_for`]: crate::replication::Capture::write_since_for
    #[inline]
    pub(crate) fn write_since_for(
        &self,
        hint: ValueAt,
        node: NodeId,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) {
        let column = self.columns.get(hint.column as usize);
        if column.is_some_and(|c| c.column.write_since_for(hint.row, node, since, audience, w)) {
            return;
        }
        if let Some((column, row)) = self.column_of(node) {
            column.write_since_for(row, node, since, audience, w);
        }
    }

    /// Server: writes the snapshot entries `requests` of rows of column `column` to `w`, in one
    /// pass (see [`ErasedColumn::write_states`](super::column::ErasedColumn::write_states));
    /// with no such column, each is [`StateWritten::Stale`].
    pub(crate) fn write_states(
        &self,
        column: u32,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    ) {
        match self.columns.get(column as usize) {
            Some(c) => c.column.write_states(requests, w, scratch, written),
            None => written.extend(requests.iter().map(|_| StateWritten::Stale)),
        }
    }

    /// Client: applies a snapshot entry's state `bytes` to `node`'s value, wherever it is now
    /// (see [`ErasedColumn::apply_entry`](super::column::ErasedColumn::apply_entry)), for an
    /// entry whose row hint went stale; returns where the value is (`None`: the node holds no
    /// value, and nothing is read).
    pub(crate) fn apply_entry_found(
        &mut self,
        node: NodeId,
        bytes: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) -> Result<Option<ValueAt>, DecodeError> {
        let Some(found) = self.value_at(node) else {
            return Ok(None);
        };
        if let Some(c) = self.columns.get_mut(found.column as usize) {
            c.column.apply_entry(found.row, node, bytes, at, changed)?;
        }
        Ok(Some(found))
    }

    /// Client: applies `entries` (their bytes in `snapshot`) to the rows of column `column`, in
    /// one pass (see [`apply_entry_found`](Self::apply_entry_found) for one whose row moved).
    pub(crate) fn apply_entries(
        &mut self,
        column: u32,
        entries: &[EntryRef],
        snapshot: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
        misses: &mut EntryMisses,
    ) {
        match self.columns.get_mut(column as usize) {
            Some(c) => c
                .column
                .apply_entries(entries, snapshot, at, changed, misses),
            None => misses.stale.extend_from_slice(entries),
        }
    }

    /// The number of columns (types with values, now or before).
    pub(crate) fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// Where `node`'s value is now.
    pub(crate) fn value_at(&self, node: NodeId) -> Option<ValueAt> {
        self.node(node)?.value
    }

    /// Server: `node`'s spawn state (see [`Capture::write_full_for`]).
    ///
    /// [`Capture::write_full_for`]: crate::replication::Capture::write_full_for
    pub(crate) fn write_full_for(&self, node: NodeId, audience: Audience, w: &mut NetWriter) {
        if let Some((column, row)) = self.column_of(node) {
            column.write_full_for(row, audience, w);
        }
    }

    /// Drops every shadow state and interpolation state: the runtime stopped or changed role,
    /// and every node is a plain node again.
    pub(crate) fn clear_runtime(&mut self) {
        for column in self.columns_mut() {
            column.clear_runtime();
        }
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

    /// Client: reads a state into `node`'s value, recording changed `on_change` members in
    /// `changed` unless it is empty.
    pub(crate) fn read_state(
        &mut self,
        node: NodeId,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        let (column, row) = self.column_of_mut(node).ok_or(NO_VALUE)?;
        column.read(row, r, changed)
    }

    /// Client: runs the `on_change` hooks `changed` names on `node`'s value.
    pub(crate) fn run_on_change(&mut self, node: NodeId, changed: &[u64]) {
        if let Some((column, row)) = self.column_of_mut(node) {
            column.run_on_change(row, changed);
        }
    }

    /// Client: `node` interpolates from now on, starting from its current value at `tick`.
    pub(crate) fn start_interp(&mut self, node: NodeId, tick: u32) {
        if let Some((column, row)) = self.column_of_mut(node) {
            column.start_interp(row, tick);
        }
    }

    /// Client: every interpolated member snaps to its newest sample; buffers are cleared.
    pub(crate) fn snap_interps(&mut self) {
        for column in self.columns_mut() {
            column.snap_interps();
        }
    }

    /// Client: writes every interpolated member's sample at the render tick into its value,
    /// one pass per type.
    pub(crate) fn blend(&mut self, at: BlendAt) {
        for column in self.columns_mut() {
            column.blend(at);
        }
    }

    /// Client: every predicted member back to the server's confirmed state, before snapshots
    /// are applied (a snapshot's delta is against what the server had). Returns the first
    /// predicted node whose plain members were written since (on this client), with its type's
    /// name.
    pub(crate) fn restore_confirmed(&mut self) -> Option<(NodeId, &'static str)> {
        let mut written = None;
        for column in self.columns_mut() {
            if let Some(node) = column.predict_restore_confirmed() {
                written.get_or_insert((node, column.entry().name()));
            }
        }
        written
    }

    /// The name of `node`'s replicated type if that type has predicted members.
    pub(crate) fn predicted_type(&self, node: NodeId) -> Option<&'static str> {
        let (column, _) = self.column_of(node)?;
        let entry = column.entry();
        entry.predicts().then(|| entry.name())
    }

    /// Client: after snapshots were applied: every predicted row whose known tick (the newer of
    /// the last snapshot carrying it and `known_floor`) advanced takes its value as the
    /// confirmed state, compared with the prediction of that tick; then every predicted row's
    /// value goes back to the prediction of `present`.
    pub(crate) fn confirm_predicted(
        &mut self,
        known_floor: u32,
        present: Option<u32>,
    ) -> Confirmation {
        let mut out = Confirmation::default();
        for column in self.columns_mut() {
            column.predict_confirm(known_floor, present, &mut out);
        }
        out
    }

    /// Client: a rollback to `tick`: every predicted row's value as of `tick` (its confirmed
    /// state if confirmed then, else its prediction). With `smoothing`, what each shows now is
    /// kept as the start of its correction's offset.
    pub(crate) fn restore_predicted_at(&mut self, tick: u32, smoothing: bool) {
        for column in self.columns_mut() {
            column.predict_restore_at(tick, smoothing);
        }
    }

    /// Client: `tick` was simulated: a row confirmed at `tick` takes the confirmed state, and
    /// every predicted row records its state as the prediction of `tick`.
    pub(crate) fn record_predicted(&mut self, tick: u32) {
        for column in self.columns_mut() {
            column.predict_record(tick);
        }
    }

    /// Client: a rollback re-simulated up to the present `tick`: each row's correction fades
    /// from what it showed to its new state.
    pub(crate) fn end_correction(&mut self, tick: u32) {
        for column in self.columns_mut() {
            column.predict_end_correction(tick);
        }
    }

    /// Client: every correction fades by `fade` (of its whole offset) and the values show what
    /// is left of it.
    pub(crate) fn show_predicted(&mut self, fade: f32) {
        for column in self.columns_mut() {
            column.predict_show(fade);
        }
    }

    /// Client: the first predicted row whose value differs from its prediction of `tick`, by
    /// node and member (the determinism check); rows without a prediction of the tick before
    /// (predicted from `tick` on) are not compared.
    pub(crate) fn check_predicted(&mut self, tick: u32) -> Option<(NodeId, &'static str)> {
        self.columns_mut()
            .find_map(|column| column.predict_check(tick))
    }

    /// Client: every predicted row's value back to its prediction of `tick` (when kept).
    pub(crate) fn restore_history(&mut self, tick: u32) {
        for column in self.columns_mut() {
            column.predict_restore_history(tick);
        }
    }

    /// Client: `node` is predicted from now on (see
    /// [`ErasedColumn::start_prediction`](super::column::ErasedColumn::start_prediction)).
    pub(crate) fn start_prediction(&mut self, node: NodeId, tick: u32, history: usize) -> bool {
        self.column_of_mut(node)
            .is_some_and(|(column, row)| column.start_prediction(row, tick, history))
    }

    /// Client: `node` is no longer predicted; returns whether it was.
    pub(crate) fn stop_prediction(&mut self, node: NodeId) -> bool {
        self.column_of_mut(node)
            .is_some_and(|(column, row)| column.stop_prediction(row))
    }
}
