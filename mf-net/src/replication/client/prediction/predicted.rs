//! A client's prediction state of one row, kept in the runtime's row beside the node: the
//! server's state as last confirmed, the per-tick history of what this client predicted, and
//! the visual correction being smoothed out; and what each pass over the predicted rows does
//! to one row (the column loops over its rows: `replica_column.rs`; the table calls every
//! column: `replicas.rs`).
//!
//! Only rows of types with a `#[replicated(predict)]` member that this client owns are
//! predicted; their snapshot entries are read straight into the value (never buffered for
//! interpolation), between `Replicas::restore_confirmed` (the value's predicted members back
//! to the confirmed state, so that a delta applies to what the server had) and
//! `Replicas::after_receive` (the new confirmed state compared with the history, and the
//! value back to the predicted present).

use crate::replicated::Replicated;
use crate::store::NodeId;
use crate::tick::{tick_after, tick_diff, tick_max};

/// Where a confirmation is: every row is known up to `known_floor` (or the newest snapshot that
/// carried it), and the present tick the values go back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConfirmAt {
    pub(crate) known_floor: u32,
    pub(crate) present: Option<u32>,
}

/// What `Replicas::after_receive` found of the predicted rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Confirmation {
    /// The earliest tick whose confirmed state differs from the prediction (re-simulate from
    /// the tick after it), with the first node and member that differ there.
    pub(crate) earliest: Option<(u32, NodeId, &'static str)>,
    /// Rows whose confirmed tick advanced.
    pub(crate) confirmed: u32,
}

impl Confirmation {
    fn mismatch(&mut self, tick: u32, node: NodeId, member: &'static str) {
        if self.earliest.map_or(true, |(t, ..)| tick_after(t, tick)) {
            self.earliest = Some((tick, node, member));
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

/// `Replicas::restore_confirmed` of one row: returns whether its plain members differ from
/// the confirmed state (written on this client).
pub(crate) fn restore_confirmed<T: Replicated>(value: &mut T, pred: &mut RowPrediction<T>) -> bool {
    // A `skip_owner` or `initial_only` member is the owner's to write: no snapshot overwrites it.
    let watched = !T::OWNER_CONDITIONS && T::SNAPSHOT_EXCLUDED == 0;
    value.restore_predicted(&pred.confirmed);
    // The predicted members equal the confirmed state now: a difference is in a plain
    // member. (Kept in the confirmed state: no confirmation compares plain members.)
    watched && value.capture(&mut pred.confirmed, pred.confirmed_tick)
}

/// The confirmation of one row (`Replicas::after_receive`).
pub(crate) fn confirm<T: Replicated>(
    (node, value, pred): (NodeId, &mut T, &mut RowPrediction<T>),
    at: ConfirmAt,
    out: &mut Confirmation,
) {
    let ConfirmAt {
        known_floor,
        present,
    } = at;
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

/// The restore of `Replicas::roll_back_to` of one row.
pub(crate) fn restore_at<T: Replicated>(
    value: &mut T,
    pred: &mut RowPrediction<T>,
    tick: u32,
    smoothing: bool,
) {
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

/// `Replicas::record_predicted` of one row.
pub(crate) fn record<T: Replicated>(value: &mut T, pred: &mut RowPrediction<T>, tick: u32) {
    if pred.confirmed_tick == tick {
        // The server's state of this tick is known: it replaces the prediction.
        value.restore_predicted(&pred.confirmed);
    }
    let i = pred.index(tick);
    value.capture(&mut pred.history[i], tick);
    pred.ticks[i] = Some(tick);
}

/// `Replicas::end_correction` of one row.
pub(crate) fn end_correction<T: Replicated>(value: &mut T, pred: &mut RowPrediction<T>, tick: u32) {
    value.capture(&mut pred.smooth_to, tick);
    pred.weight = 1.0;
}

/// `Replicas::show_predicted` of one row.
pub(crate) fn show<T: Replicated>(value: &mut T, pred: &mut RowPrediction<T>, fade: f32) {
    if pred.weight > 0.0 {
        pred.weight = (pred.weight - fade).max(0.0);
        if pred.weight > 0.0 {
            value.smooth_predicted(&pred.smooth_from, &pred.smooth_to, pred.weight);
        }
    }
}

/// `Replicas::check_predicted` of one row: the first member whose value differs from its
/// prediction of `tick`.
pub(crate) fn check<T: Replicated>(
    value: &mut T,
    pred: &mut RowPrediction<T>,
    tick: u32,
) -> Option<&'static str> {
    // Predicted from this tick on (spawned, handed over, or after a skip): there is no state
    // before it to run it again from.
    pred.at(tick.wrapping_sub(1))?;
    value.capture(&mut pred.scratch, tick);
    pred.at(tick)
        .and_then(|h| T::predicted_difference(h, &pred.scratch))
}

/// `Replicas::restore_history` of one row.
pub(crate) fn restore_history<T: Replicated>(
    value: &mut T,
    pred: &mut RowPrediction<T>,
    tick: u32,
) {
    if let Some(state) = pred.at(tick) {
        value.restore_predicted(state);
    }
}
