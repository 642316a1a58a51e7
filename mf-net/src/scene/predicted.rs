//! A client's prediction state of one row, kept in the row beside the value: the server's
//! state as last confirmed, the per-tick history of what this client predicted, and the
//! visual correction being smoothed out; and the passes over one column's predicted rows
//! (the column calls them with its rows, the scene calls every column: `runtime.rs`).
//!
//! Only rows of types with a `#[replicated(predict)]` member that this client owns are
//! predicted; their snapshot entries are read straight into the value (never buffered for
//! interpolation), between [`Scene::restore_confirmed`](super::Scene::restore_confirmed) (the value's predicted members back to
//! the confirmed state, so that a delta applies to what the server had) and
//! [`Scene::confirm_predicted`](super::Scene::confirm_predicted) (the new confirmed state compared with the history, and the
//! value back to the predicted present).

use super::NodeId;
use crate::replicated::Replicated;
use crate::tick::{tick_after, tick_diff, tick_max};

/// What [`Scene::confirm_predicted`](super::Scene::confirm_predicted) found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Confirmation {
    /// The earliest tick whose confirmed state differs from the prediction (re-simulate from
    /// the tick after it), with the first node and member that differ there.
    pub(crate) earliest: Option<(u32, NodeId, &'static str)>,
    /// Rows whose confirmed tick advanced.
    pub(crate) confirmed: u32,
}

/// A column's predicted row: its node, value and prediction state.
pub(super) type Rows<'a, T> = (NodeId, &'a mut T, &'a mut RowPrediction<T>);

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

/// One column's rows of [`Scene::restore_confirmed`](super::Scene::restore_confirmed): returns
/// the first row whose plain members differ from the confirmed state (written on this client).
pub(super) fn restore_confirmed<'a, T: Replicated>(
    rows: impl Iterator<Item = Rows<'a, T>>,
) -> Option<NodeId> {
    // A `skip_owner` or `initial_only` member is the owner's to write: no snapshot overwrites it.
    let watched = !T::OWNER_CONDITIONS && T::SNAPSHOT_EXCLUDED == 0;
    let mut written = None;
    for (node, value, pred) in rows {
        value.restore_predicted(&pred.confirmed);
        // The predicted members equal the confirmed state now: a difference is in a plain
        // member. (Kept in the confirmed state: no confirmation compares plain members.)
        if watched && value.capture(&mut pred.confirmed, pred.confirmed_tick) {
            written.get_or_insert(node);
        }
    }
    written
}

/// One column's rows of [`Scene::confirm_predicted`](super::Scene::confirm_predicted).
pub(super) fn confirm<'a, T: Replicated>(
    rows: impl Iterator<Item = Rows<'a, T>>,
    known_floor: u32,
    present: Option<u32>,
    out: &mut Confirmation,
) {
    for (node, value, pred) in rows {
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

/// One column's rows of [`Scene::restore_predicted_at`](super::Scene::restore_predicted_at).
pub(super) fn restore_at<'a, T: Replicated>(
    rows: impl Iterator<Item = Rows<'a, T>>,
    tick: u32,
    smoothing: bool,
) {
    for (_, value, pred) in rows {
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

/// One column's rows of [`Scene::record_predicted`](super::Scene::record_predicted).
pub(super) fn record<'a, T: Replicated>(rows: impl Iterator<Item = Rows<'a, T>>, tick: u32) {
    for (_, value, pred) in rows {
        if pred.confirmed_tick == tick {
            // The server's state of this tick is known: it replaces the prediction.
            value.restore_predicted(&pred.confirmed);
        }
        let i = pred.index(tick);
        value.capture(&mut pred.history[i], tick);
        pred.ticks[i] = Some(tick);
    }
}

/// One column's rows of [`Scene::end_correction`](super::Scene::end_correction).
pub(super) fn end_correction<'a, T: Replicated>(
    rows: impl Iterator<Item = Rows<'a, T>>,
    tick: u32,
) {
    for (_, value, pred) in rows {
        value.capture(&mut pred.smooth_to, tick);
        pred.weight = 1.0;
    }
}

/// One column's rows of [`Scene::show_predicted`](super::Scene::show_predicted).
pub(super) fn show<'a, T: Replicated>(rows: impl Iterator<Item = Rows<'a, T>>, fade: f32) {
    for (_, value, pred) in rows {
        if pred.weight > 0.0 {
            pred.weight = (pred.weight - fade).max(0.0);
            if pred.weight > 0.0 {
                value.smooth_predicted(&pred.smooth_from, &pred.smooth_to, pred.weight);
            }
        }
    }
}

/// One column's rows of [`Scene::check_predicted`](super::Scene::check_predicted).
pub(super) fn check<'a, T: Replicated>(
    rows: impl Iterator<Item = Rows<'a, T>>,
    tick: u32,
) -> Option<(NodeId, &'static str)> {
    for (node, value, pred) in rows {
        if pred.at(tick.wrapping_sub(1)).is_none() {
            // Predicted from this tick on (spawned, handed over, or after a skip): there is no
            // state before it to run it again from.
            continue;
        }
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

/// One column's rows of [`Scene::restore_history`](super::Scene::restore_history).
pub(super) fn restore_history<'a, T: Replicated>(
    rows: impl Iterator<Item = Rows<'a, T>>,
    tick: u32,
) {
    for (_, value, pred) in rows {
        if let Some(state) = pred.at(tick) {
            value.restore_predicted(state);
        }
    }
}
