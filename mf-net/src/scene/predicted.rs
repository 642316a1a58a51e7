//! A client's prediction state of one row, kept in the row beside the value: the server's
//! state as last confirmed, the per-tick history of what this client predicted, and the
//! visual correction being smoothed out. The passes over a column's predicted rows are here;
//! [`Scene`]'s passes over every column are at the end.
//!
//! Only rows of types with a `#[replicated(predict)]` member that this client owns are
//! predicted; their snapshot entries are read straight into the value (never buffered for
//! interpolation), between [`Scene::restore_confirmed`] (the value's predicted members back to
//! the confirmed state, so that a delta applies to what the server had) and
//! [`Scene::confirm_predicted`] (the new confirmed state compared with the history, and the
//! value back to the predicted present).

use super::column::Column;
use super::{NodeId, Scene};
use crate::replicated::Replicated;
use crate::tick::{tick_after, tick_diff, tick_max};

/// What [`Scene::confirm_predicted`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Confirmation {
    /// The earliest tick whose confirmed state differs from the prediction: re-simulate from
    /// the tick after it.
    pub(crate) rollback_from: Option<u32>,
    /// The first mismatching node and member, at `rollback_from`.
    pub(crate) mismatch: Option<(NodeId, &'static str)>,
    /// Rows whose confirmed tick advanced.
    pub(crate) confirmed: u32,
}

impl Confirmation {
    fn mismatch(&mut self, tick: u32, node: NodeId, member: &'static str) {
        if self.rollback_from.map_or(true, |t| tick_after(t, tick)) {
            self.rollback_from = Some(tick);
            self.mismatch = Some((node, member));
        }
    }
}

/// A row's prediction state (see the [module docs](self)).
pub(crate) struct RowPrediction<T: Replicated> {
    /// The server's state as of `confirmed_tick` (every member; the predicted ones compare).
    confirmed: T::State,
    confirmed_tick: u32,
    /// The newest snapshot that carried the row.
    carried: u32,
    /// The state after simulating tick `t` is `history[t & mask]` when `ticks[t & mask]` is
    /// `Some(t)`.
    history: Box<[T::State]>,
    ticks: Box<[Option<u32>]>,
    /// Error smoothing: shown = simulated + weight · (from − to) for predicted members that
    /// are also interpolated.
    smooth_from: T::State,
    smooth_to: T::State,
    weight: f32,
    scratch: T::State,
}

impl<T: Replicated> RowPrediction<T> {
    /// Prediction of `value` confirmed at `tick`, with `capacity` ticks of history (a power of
    /// two).
    pub(crate) fn new(value: &T, tick: u32, capacity: usize) -> Self {
        Self {
            confirmed: value.new_state(tick),
            confirmed_tick: tick,
            carried: tick,
            history: (0..capacity).map(|_| value.new_state(tick)).collect(),
            ticks: vec![None; capacity].into_boxed_slice(),
            smooth_from: value.new_state(tick),
            smooth_to: value.new_state(tick),
            weight: 0.0,
            scratch: value.new_state(tick),
        }
    }

    /// A snapshot of `tick` carried the row.
    pub(crate) fn carried(&mut self, tick: u32) {
        self.carried = tick_max(self.carried, tick);
    }

    fn index(&self, tick: u32) -> usize {
        tick as usize & (self.history.len() - 1)
    }

    /// The predicted state after `tick`, if it is still in the history.
    fn at(&self, tick: u32) -> Option<&T::State> {
        let i = self.index(tick);
        (self.ticks[i] == Some(tick)).then(|| &self.history[i])
    }
}

impl<T: Replicated> Column<T> {
    /// Every predicted row's value with its prediction state and node.
    fn predicted_mut(&mut self) -> impl Iterator<Item = (NodeId, &mut T, &mut RowPrediction<T>)> {
        let (values, rows) = self.parts_mut();
        values
            .iter_mut()
            .zip(rows)
            .filter_map(|(value, (node, pred))| Some((node, value, pred.as_deref_mut()?)))
    }

    /// See [`Scene::restore_confirmed`].
    pub(crate) fn predict_restore_confirmed(&mut self) {
        for (_, value, pred) in self.predicted_mut() {
            value.restore_predicted(&pred.confirmed);
        }
    }

    /// See [`Scene::confirm_predicted`].
    pub(crate) fn predict_confirm(
        &mut self,
        known_floor: u32,
        present: Option<u32>,
        out: &mut Confirmation,
    ) {
        for (node, value, pred) in self.predicted_mut() {
            let tick = tick_max(pred.carried, known_floor);
            if tick_after(tick, pred.confirmed_tick) {
                value.capture(&mut pred.confirmed, tick);
                pred.confirmed_tick = tick;
                out.confirmed += 1;
                if present.is_some_and(|p| tick_diff(p, tick) >= 0) {
                    if let Some(member) = pred
                        .at(tick)
                        .and_then(|h| T::predicted_difference(h, &pred.confirmed))
                    {
                        out.mismatch(tick, node, member);
                    }
                }
            }
            if let Some(state) = present.and_then(|p| pred.at(p)) {
                value.restore_predicted(state);
            }
        }
    }

    /// See [`Scene::restore_predicted_at`].
    pub(crate) fn predict_restore_at(&mut self, tick: u32, smoothing: bool) {
        for (_, value, pred) in self.predicted_mut() {
            if smoothing {
                // What is shown now becomes where the correction's offset starts from.
                if pred.weight > 0.0 {
                    value.smooth_predicted(&pred.smooth_from, &pred.smooth_to, pred.weight);
                }
                value.capture(&mut pred.scratch, tick);
                std::mem::swap(&mut pred.scratch, &mut pred.smooth_from);
            }
            let state = if pred.confirmed_tick == tick {
                &pred.confirmed
            } else {
                pred.at(tick).unwrap_or(&pred.confirmed)
            };
            value.restore_predicted(state);
        }
    }

    /// See [`Scene::record_predicted`].
    pub(crate) fn predict_record(&mut self, tick: u32) {
        for (_, value, pred) in self.predicted_mut() {
            if pred.confirmed_tick == tick {
                // The server's state of this tick is known: it replaces the prediction.
                value.restore_predicted(&pred.confirmed);
            }
            let i = pred.index(tick);
            value.capture(&mut pred.history[i], tick);
            pred.ticks[i] = Some(tick);
        }
    }

    /// See [`Scene::end_correction`].
    pub(crate) fn predict_end_correction(&mut self, tick: u32) {
        for (_, value, pred) in self.predicted_mut() {
            value.capture(&mut pred.smooth_to, tick);
            pred.weight = 1.0;
        }
    }

    /// See [`Scene::show_predicted`].
    pub(crate) fn predict_show(&mut self, fade: f32) {
        for (_, value, pred) in self.predicted_mut() {
            if pred.weight > 0.0 {
                pred.weight = (pred.weight - fade).max(0.0);
                if pred.weight > 0.0 {
                    value.smooth_predicted(&pred.smooth_from, &pred.smooth_to, pred.weight);
                }
            }
        }
    }

    /// See [`Scene::check_predicted`].
    pub(crate) fn predict_check(&mut self, tick: u32) -> Option<(NodeId, &'static str)> {
        for (node, value, pred) in self.predicted_mut() {
            value.capture(&mut pred.scratch, tick);
            if let Some(member) = pred
                .at(tick)
                .and_then(|h| T::predicted_difference(h, &pred.scratch))
            {
                return Some((node, member));
            }
        }
        None
    }

    /// See [`Scene::restore_history`].
    pub(crate) fn predict_restore_history(&mut self, tick: u32) {
        for (_, value, pred) in self.predicted_mut() {
            if let Some(state) = pred.at(tick) {
                value.restore_predicted(state);
            }
        }
    }
}

impl Scene {
    /// Client: every predicted member back to the server's confirmed state, before snapshots
    /// are applied (a snapshot's delta is against what the server had).
    pub(crate) fn restore_confirmed(&mut self) {
        for column in self.columns_mut() {
            column.predict_restore_confirmed();
        }
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
    /// node and member (the determinism check).
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
}

impl Scene {
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

    /// The nodes holding a `T` that a simulation step advances, with their values: every one
    /// when `all` (the server), else the predicted ones (a client).
    pub(crate) fn simulated_mut<T: Replicated>(
        &mut self,
        all: bool,
    ) -> impl Iterator<Item = (NodeId, &mut T)> + '_ {
        let column = self.find_column::<T>();
        column
            .and_then(|column| self.typed_column_mut::<T>(column))
            .into_iter()
            .flat_map(move |typed| typed.simulated_mut(all))
    }
}
