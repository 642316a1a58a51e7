//! One column per value type: the values of every node holding a `T`, contiguously, and beside
//! each value its node and the runtime's state for that row (the server's shadow state and
//! change ticks, the client's interpolation buffers and the tick up to which they are known).
//!
//! The runtime reaches a column through [`ErasedColumn`], one dynamic call per column per pass
//! (capture every row, blend every row, snap every row) or per entry (write or read one row);
//! the loops inside are monomorphized, and nothing is downcast per node. Rows are removed by
//! swapping the last row in, so a column stays dense; [`Scene`](super::Scene) keeps each
//! node's row up to date.

use std::any::Any;

use super::predicted::{self, Confirmation, RowPrediction, Rows};
use super::{NodeId, ValueSlot};
use crate::replicated::{Apply, Audience, Capture, RegisteredType, Replicated};
use crate::tick::{tick_after, tick_diff, tick_max, unwrap_near, HORIZON};
use crate::wire::{DecodeError, NetReader, NetWriter, ProtocolViolation};

/// A row's change ticks as snapshots read them, for the node's owner and for any other client
/// (in that order): the newest tick stamped on a member that a snapshot for them carries (0:
/// none), and how far before it the newest change before it is ([`Capture::changed_before`]):
/// 0 for none, at most [`MAX_CHANGE_GAP`] (a change further back is counted as that far, which
/// only groups fewer `since`s as one entry). Twelve bytes, not twenty: the node records the
/// snapshots walk stay small.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LastChanged {
    pub(crate) last: [u32; 2],
    pub(crate) gap: [u16; 2],
}

/// The largest gap a [`LastChanged`] records.
pub(crate) const MAX_CHANGE_GAP: u16 = u16::MAX;

/// A row whose shadow state changed at a capture: its tag and its new change ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Changed {
    /// The runtime's tag of the row (the server: the node's net id).
    pub(crate) tag: u32,
    /// The row's change ticks after the capture.
    pub(crate) last_changed: LastChanged,
    /// Where the row is (column and row).
    pub(crate) at: ValueSlot,
}

/// Where and when a client reads a snapshot entry into a row.
#[derive(Debug)]
struct EntryRead<'a> {
    /// The snapshot's tick.
    tick: u32,
    /// The tick up to which every node is known still (the newest untruncated snapshot); a
    /// row's known tick is the newer of this and the last snapshot that carried it.
    known_floor: u32,
    /// Where changed `on_change` members are recorded (empty: not recorded).
    changed: &'a mut [u64],
}

/// When a client applies a snapshot entry (see [`EntryRead`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryAt {
    /// The snapshot's tick.
    pub(crate) tick: u32,
    /// As [`EntryRead::known_floor`].
    pub(crate) known_floor: u32,
}

/// A snapshot entry a client applies in its column's pass: the row and node it is for (a
/// hint: the row is checked), the runtime's tag (the net id) and where its state's bytes are
/// in the snapshot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryRef {
    pub(crate) row: u32,
    pub(crate) node: NodeId,
    pub(crate) tag: u32,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl EntryRef {
    /// Its state's bytes in `snapshot` (none if the range is not in it).
    pub(crate) fn bytes<'a>(&self, snapshot: &'a [u8]) -> &'a [u8] {
        snapshot
            .get(self.start as usize..self.end as usize)
            .unwrap_or(&[])
    }
}

/// A snapshot entry the server writes in its column's pass: the row and node it is for (a
/// hint: the row is checked), the tag it is written with (the net id) and which members
/// ([`Capture::write_since_for`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StateRequest {
    pub(crate) row: u32,
    pub(crate) node: NodeId,
    pub(crate) tag: u32,
    pub(crate) since: Option<u32>,
    pub(crate) audience: Audience,
}

/// What a column's pass wrote for one [`StateRequest`], in the requests' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateWritten {
    /// The entry, up to this length of the writer.
    Entry { end: u32 },
    /// Nothing: the entry holds a string longer than any reader accepts
    /// ([`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)).
    OverLimit,
    /// Nothing: the row is not the node's (a stale hint).
    Stale,
}

/// What a column's pass over entries could not apply: entries whose row was not their node's
/// (found again by the caller), and entries that did not read, with their error.
#[derive(Debug, Default)]
pub(crate) struct EntryMisses {
    pub(crate) stale: Vec<EntryRef>,
    pub(crate) rejected: Vec<(u32, DecodeError)>,
}

/// Where a client blends its interpolated members.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlendAt {
    /// The render tick.
    pub(crate) render_tick: f64,
    /// As [`EntryRead::known_floor`].
    pub(crate) known_floor: u32,
    /// How far past the newest sample members may extrapolate.
    pub(crate) max_extrapolation_ticks: f64,
}

/// A client's interpolation state of one row.
struct RowInterp<T: Replicated> {
    state: T::Interp,
    /// The tick of the newest snapshot (or the spawn) that carried the row.
    carried: u32,
    /// Whether the last blend wrote the newest samples of a row known to be still past them:
    /// until a new sample arrives every blend would write the same values, so none runs.
    settled: bool,
}

impl<T: Replicated> RowInterp<T> {
    /// Whether a blend at `at` shows every member's newest sample: the render tick is at or
    /// past the newest snapshot that carried the row (so past every member's newest sample),
    /// and the row is known still after it (so nothing extrapolates).
    fn shows_newest(&self, at: BlendAt) -> bool {
        at.render_tick >= unwrap_near(self.carried, at.render_tick)
            && tick_after(at.known_floor, self.carried)
    }
}

/// Everything a column keeps beside one value.
struct Row<T: Replicated> {
    node: NodeId,
    /// The runtime's tag (the server sets the net id with the shadow state).
    tag: u32,
    /// The server's shadow state, while the node is networked.
    shadow: Option<T::State>,
    last_changed: LastChanged,
    /// The client's interpolation state, while the node is networked and interpolated.
    interp: Option<RowInterp<T>>,
    /// The client's prediction state, while this client owns the node and predicts it (then
    /// it has no interpolation state).
    pred: Option<Box<RowPrediction<T>>>,
}

/// The values of every node holding a `T`, with their rows (see the [module docs](self)).
pub(crate) struct Column<T: Replicated> {
    values: Vec<T>,
    rows: Vec<Row<T>>,
    /// Rows with a prediction state.
    predicted: usize,
}

impl<T: Replicated> Column<T> {
    /// An empty column.
    pub(crate) fn new() -> Self {
        Self {
            values: Vec::new(),
            rows: Vec::new(),
            predicted: 0,
        }
    }

    /// Adds `value` for `node`; returns its row.
    pub(crate) fn push(&mut self, node: NodeId, value: T) -> u32 {
        self.values.push(value);
        self.rows.push(Row {
            node,
            tag: 0,
            shadow: None,
            last_changed: LastChanged::default(),
            interp: None,
            pred: None,
        });
        row_index(self.values.len() - 1)
    }

    /// The values.
    pub(crate) fn values(&self) -> &[T] {
        &self.values
    }

    /// The value of `row`, mutably.
    pub(crate) fn value_mut(&mut self, row: u32) -> Option<&mut T> {
        self.values.get_mut(row as usize)
    }

    /// Every row's node with its value.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (NodeId, &T)> + '_ {
        self.rows.iter().map(|r| r.node).zip(&self.values)
    }

    /// Every row's node with its value, mutably.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (NodeId, &mut T)> + '_ {
        self.rows.iter().map(|r| r.node).zip(&mut self.values)
    }

    /// Every predicted row: its node, value and prediction state (none visited when no row has
    /// one).
    fn predicted_mut(&mut self) -> impl Iterator<Item = Rows<'_, T>> {
        let n = if self.predicted == 0 {
            0
        } else {
            self.rows.len()
        };
        self.values
            .iter_mut()
            .zip(&mut self.rows)
            .take(n)
            .filter_map(|(value, row)| Some((row.node, value, row.pred.as_deref_mut()?)))
    }

    /// The nodes a simulation step advances with their values: every row when `all` (the
    /// server), else the predicted ones.
    pub(crate) fn simulated_mut(
        &mut self,
        all: bool,
    ) -> impl Iterator<Item = (NodeId, &mut T)> + '_ {
        self.rows
            .iter()
            .zip(&mut self.values)
            .filter(move |(r, _)| all || r.pred.is_some())
            .map(|(r, v)| (r.node, v))
    }

    /// Replaces the value of `row`, keeping the runtime's state (a shadow state compares the
    /// new value with what was sent).
    pub(crate) fn replace(&mut self, row: u32, value: T) {
        if let Some(slot) = self.values.get_mut(row as usize) {
            *slot = value;
        }
    }
}

impl<T: Replicated> Column<T> {
    /// Reads a snapshot entry into `row`: through its interpolation state if it has one
    /// ([`Interpolated::read_buffered`](crate::replicated::Interpolated::read_buffered)), else as
    /// [`ErasedColumn::read`].
    #[inline]
    fn read_entry(
        &mut self,
        row: u32,
        r: &mut NetReader<'_>,
        at: &mut EntryRead<'_>,
    ) -> Result<(), DecodeError> {
        if T::PREDICTS && self.predicted > 0 {
            if let Some(pred) = self
                .rows
                .get_mut(row as usize)
                .and_then(|m| m.pred.as_mut())
            {
                // Predicted: the server's values go straight into the value, confirmed once
                // every snapshot of the frame is in (see `predicted`).
                pred.carried(at.tick);
                return self.read(row, r, at.changed);
            }
        }
        if !T::INTERPOLATED {
            // No interpolation state to look at: the value alone (its row stays untouched).
            return self.read(row, r, at.changed);
        }
        let (Some(value), Some(meta)) = (
            self.values.get_mut(row as usize),
            self.rows.get_mut(row as usize),
        ) else {
            return Err(DecodeError::Protocol(ProtocolViolation::UnknownNode));
        };
        match meta.interp.as_mut() {
            Some(interp) => {
                if tick_diff(at.tick, interp.carried) > HORIZON as i32 {
                    // Carried by no snapshot for over 2³⁰ ticks, and not restarted by a blend
                    // (see `blend`): restarted from the value shown, as of the tick before.
                    interp.carried = at.tick.wrapping_sub(1);
                    interp.state = value.new_interp(interp.carried);
                }
                let known = tick_max(interp.carried, at.known_floor);
                interp.settled = false;
                value.read_buffered(&mut interp.state, r, known, at.tick, at.changed)?;
                interp.carried = tick_max(interp.carried, at.tick);
                Ok(())
            }
            None => read_value(value, r, at.changed),
        }
    }
}

fn row_index(index: usize) -> u32 {
    u32::try_from(index).unwrap_or_else(|_| panic!("a column holds more than u32::MAX values"))
}

/// Reads a state into `value` ([`Apply::read`]), recording changed `on_change` members in
/// `changed` unless it is empty ([`Apply::read_tracked`]).
#[inline]
fn read_value<T: Apply>(
    value: &mut T,
    r: &mut NetReader<'_>,
    changed: &mut [u64],
) -> Result<(), DecodeError> {
    if changed.is_empty() {
        value.read(r)
    } else {
        value.read_tracked(r, changed)
    }
}

/// The change ticks of a shadow state `S` of a `T`.
fn last_changed_of<S, T: Capture<S> + Replicated>(state: &S) -> LastChanged {
    let of = |audience| {
        let last = T::last_changed_for(state, audience);
        let gap = change_gap(last, T::changed_before(state, last, audience));
        (last, gap)
    };
    let others = of(Audience::NonOwner);
    // Without owner conditions the owner receives what others do.
    let owner = match T::OWNER_CONDITIONS {
        false => others,
        true => of(Audience::Owner),
    };
    LastChanged {
        last: [owner.0, others.0],
        gap: [owner.1, others.1],
    }
}

/// How far `before` is before `last` (0: no change before it), at most [`MAX_CHANGE_GAP`].
pub(crate) fn change_gap(last: u32, before: Option<u32>) -> u16 {
    before.map_or(0, |b| {
        u16::try_from(last.wrapping_sub(b)).unwrap_or(MAX_CHANGE_GAP)
    })
}

/// A [`Column`] without its type: what the scene and the runtime call.
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
    /// Drops every row's runtime state (shadows and interpolation): the runtime stopped or
    /// changed role, and the nodes are plain nodes again.
    fn clear_runtime(&mut self);

    /// Server: gives `row` a shadow state of its current value, every member stamped `tick`,
    /// and the tag `tag`. Returns its change ticks.
    fn start_shadow(&mut self, row: u32, tag: u32, tick: u32) -> LastChanged;
    /// Server: drops `row`'s shadow state (the node is no longer networked).
    fn stop_shadow(&mut self, row: u32);
    /// Server: whether `row` has a shadow state.
    fn has_shadow(&self, row: u32) -> bool;
    /// Server: compares every row that has a shadow state with it, stamps changed members
    /// with `tick`, and appends each changed row to `changed`.
    /// `column` is this column's index in the scene (for [`Changed::at`]).
    fn capture(&mut self, tick: u32, column: u32, changed: &mut Vec<Changed>);
    /// Server: moves every change tick of `row`'s shadow state older than `floor` up to it
    /// ([`Capture::age`]). Returns its change ticks, `None` if it has no shadow state.
    fn age_shadow(&mut self, row: u32, floor: u32) -> Option<LastChanged>;
    /// Server: a snapshot entry's state of `row` ([`Capture::write_since_for`]) if `row` is
    /// `node`'s; returns whether it was (a stale row writes nothing).
    fn write_since_for(
        &self,
        row: u32,
        node: NodeId,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) -> bool;
    /// Server: appends a snapshot entry (tag, length, [`write_since_for`](Self::write_since_for)'s
    /// state) for every request to `w`, in one pass, and what came of each to `written`;
    /// `scratch` makes room for long lengths.
    fn write_states(
        &self,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    );
    /// Server: a spawn's full state of `row` ([`Capture::write_full_for`]); nothing if it
    /// has no shadow state.
    fn write_full_for(&self, row: u32, audience: Audience, w: &mut NetWriter);

    /// The full state of `row`'s current value, every member (as a spawn for everyone).
    fn write_current(&self, row: u32, w: &mut NetWriter);
    /// Client: reads a state into `row`'s value ([`Apply::read`], or
    /// [`Apply::read_tracked`] when `changed` is not empty).
    fn read(
        &mut self,
        row: u32,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError>;
    /// Client: applies one snapshot entry's state `bytes` (all of them) to `row` with
    /// its interpolation state (if any), then runs the `on_change` hooks of the members it
    /// changed; `changed` is scratch for the hooked types (grown once, at spawn). Returns
    /// `false`, reading nothing, if `row` is not `node`'s (a stale hint).
    fn apply_entry(
        &mut self,
        row: u32,
        node: NodeId,
        bytes: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) -> Result<bool, DecodeError>;
    /// Client: applies every entry of `entries` (their bytes in `snapshot`) as
    /// [`apply_entry`](Self::apply_entry) does, in one pass; what it could not apply goes to
    /// `misses`.
    fn apply_entries(
        &mut self,
        entries: &[EntryRef],
        snapshot: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
        misses: &mut EntryMisses,
    );
    /// Client: runs the `on_change` hooks `changed` names on `row`'s value.
    fn run_on_change(&mut self, row: u32, changed: &[u64]);
    /// Client: gives `row` an interpolation state starting from its current value at `tick`
    /// (nothing if the type has no interpolated member or the row has one already).
    fn start_interp(&mut self, row: u32, tick: u32);
    /// Client: every interpolated row snaps to its newest samples and clears its buffers.
    fn snap_interps(&mut self);
    /// Client: writes every interpolated row's samples at the render tick into its value. A
    /// row that settled (its newest samples were written, and it is known still past them)
    /// is skipped until a new sample arrives or the buffers snap.
    fn blend(&mut self, at: BlendAt);

    /// Client: `row` is predicted from now on (if its type has a predicted member), confirmed
    /// as it is at `tick`, with `history` ticks of history (a power of two); it stops
    /// interpolating. Returns whether it is predicted.
    fn start_prediction(&mut self, row: u32, tick: u32, history: usize) -> bool;
    /// Client: `row` is no longer predicted (it interpolates again once started); returns
    /// whether it was.
    fn stop_prediction(&mut self, row: u32) -> bool;
    /// See [`Scene::restore_confirmed`](super::Scene::restore_confirmed).
    fn predict_restore_confirmed(&mut self) -> Option<NodeId>;
    /// See [`Scene::confirm_predicted`](super::Scene::confirm_predicted).
    fn predict_confirm(&mut self, known_floor: u32, present: Option<u32>, out: &mut Confirmation);
    /// See [`Scene::restore_predicted_at`](super::Scene::restore_predicted_at).
    fn predict_restore_at(&mut self, tick: u32, smoothing: bool);
    /// See [`Scene::record_predicted`](super::Scene::record_predicted).
    fn predict_record(&mut self, tick: u32);
    /// See [`Scene::end_correction`](super::Scene::end_correction).
    fn predict_end_correction(&mut self, tick: u32);
    /// See [`Scene::show_predicted`](super::Scene::show_predicted).
    fn predict_show(&mut self, fade: f32);
    /// See [`Scene::check_predicted`](super::Scene::check_predicted).
    fn predict_check(&mut self, tick: u32) -> Option<(NodeId, &'static str)>;
    /// See [`Scene::restore_history`](super::Scene::restore_history).
    fn predict_restore_history(&mut self, tick: u32);
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
        if self.rows.swap_remove(row).pred.is_some() {
            self.predicted -= 1;
        }
        self.rows.get(row).map(|r| r.node)
    }

    fn value_mut(&mut self, row: u32) -> Option<&mut dyn Any> {
        Some(self.values.get_mut(row as usize)?)
    }

    fn clear_runtime(&mut self) {
        for row in &mut self.rows {
            row.tag = 0;
            row.shadow = None;
            row.last_changed = LastChanged::default();
            row.interp = None;
            row.pred = None;
        }
        self.predicted = 0;
    }

    fn start_shadow(&mut self, row: u32, tag: u32, tick: u32) -> LastChanged {
        let (Some(value), Some(meta)) = (
            self.values.get(row as usize),
            self.rows.get_mut(row as usize),
        ) else {
            return LastChanged::default();
        };
        let state = value.new_state(tick);
        meta.last_changed = last_changed_of::<_, T>(&state);
        meta.shadow = Some(state);
        meta.tag = tag;
        meta.last_changed
    }

    fn stop_shadow(&mut self, row: u32) {
        if let Some(meta) = self.rows.get_mut(row as usize) {
            meta.shadow = None;
            meta.last_changed = LastChanged::default();
        }
    }

    fn has_shadow(&self, row: u32) -> bool {
        self.rows
            .get(row as usize)
            .is_some_and(|r| r.shadow.is_some())
    }

    fn capture(&mut self, tick: u32, column: u32, changed: &mut Vec<Changed>) {
        for (index, (value, row)) in self.values.iter().zip(&mut self.rows).enumerate() {
            let Some(state) = row.shadow.as_mut() else {
                continue;
            };
            if value.capture(state, tick) {
                row.last_changed = last_changed_of::<_, T>(state);
                changed.push(Changed {
                    tag: row.tag,
                    last_changed: row.last_changed,
                    at: ValueSlot {
                        column,
                        row: row_index(index),
                    },
                });
            }
        }
    }

    fn age_shadow(&mut self, row: u32, floor: u32) -> Option<LastChanged> {
        let meta = self.rows.get_mut(row as usize)?;
        let state = meta.shadow.as_mut()?;
        T::age(state, floor);
        meta.last_changed = last_changed_of::<_, T>(state);
        Some(meta.last_changed)
    }

    #[inline]
    fn write_since_for(
        &self,
        row: u32,
        node: NodeId,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) -> bool {
        match self.rows.get(row as usize) {
            Some(meta) if meta.node == node => {
                if let Some(state) = meta.shadow.as_ref() {
                    T::write_since_for(state, since, audience, w);
                }
                true
            }
            _ => false,
        }
    }

    fn write_states(
        &self,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    ) {
        for r in requests {
            let Some(meta) = self.rows.get(r.row as usize).filter(|m| m.node == r.node) else {
                written.push(StateWritten::Stale);
                continue;
            };
            let start = w.len();
            w.write_tagged(r.tag, scratch, |w| {
                if let Some(state) = meta.shadow.as_ref() {
                    T::write_since_for(state, r.since, r.audience, w);
                }
            });
            written.push(match w.take_over_limit() {
                true => {
                    w.truncate(start);
                    StateWritten::OverLimit
                }
                false => StateWritten::Entry {
                    end: u32::try_from(w.len()).unwrap_or(u32::MAX),
                },
            });
        }
    }

    fn write_full_for(&self, row: u32, audience: Audience, w: &mut NetWriter) {
        if let Some(state) = self.rows.get(row as usize).and_then(|r| r.shadow.as_ref()) {
            T::write_full_for(state, audience, w);
        }
    }

    fn write_current(&self, row: u32, w: &mut NetWriter) {
        if let Some(value) = self.values.get(row as usize) {
            T::write_full(&value.new_state(0), w);
        }
    }

    fn read(
        &mut self,
        row: u32,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        let value = self
            .values
            .get_mut(row as usize)
            .ok_or(DecodeError::Protocol(ProtocolViolation::UnknownNode))?;
        read_value(value, r, changed)
    }

    #[inline]
    fn apply_entry(
        &mut self,
        row: u32,
        node: NodeId,
        bytes: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) -> Result<bool, DecodeError> {
        if self.rows.get(row as usize).map(|r| r.node) != Some(node) {
            return Ok(false);
        }
        let mut r = NetReader::new(bytes);
        let EntryAt { tick, known_floor } = at;
        if !T::ON_CHANGE {
            let mut read = EntryRead {
                tick,
                known_floor,
                changed: &mut [],
            };
            self.read_entry(row, &mut r, &mut read)?;
            return r.finish().map(|()| true);
        }
        // Hooks run once the whole entry is applied.
        let n = T::STATE_COUNT;
        if changed.len() < n {
            changed.resize(n, 0);
        }
        let changed = &mut changed[..n];
        changed.fill(0);
        let mut read = EntryRead {
            tick,
            known_floor,
            changed,
        };
        self.read_entry(row, &mut r, &mut read)?;
        r.finish()?;
        self.run_on_change(row, read.changed);
        Ok(true)
    }

    fn apply_entries(
        &mut self,
        entries: &[EntryRef],
        snapshot: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
        misses: &mut EntryMisses,
    ) {
        for e in entries {
            match self.apply_entry(e.row, e.node, e.bytes(snapshot), at, changed) {
                Ok(true) => {}
                Ok(false) => misses.stale.push(*e),
                Err(error) => misses.rejected.push((e.tag, error)),
            }
        }
    }

    fn run_on_change(&mut self, row: u32, changed: &[u64]) {
        if let Some(value) = self.values.get_mut(row as usize) {
            value.run_on_change(changed);
        }
    }

    fn start_interp(&mut self, row: u32, tick: u32) {
        if !T::INTERPOLATED {
            return;
        }
        let (Some(value), Some(meta)) = (
            self.values.get(row as usize),
            self.rows.get_mut(row as usize),
        ) else {
            return;
        };
        if meta.interp.is_none() && meta.pred.is_none() {
            meta.interp = Some(RowInterp {
                state: value.new_interp(tick),
                carried: tick,
                settled: false,
            });
        }
    }

    fn snap_interps(&mut self) {
        if !T::INTERPOLATED {
            return;
        }
        for (value, row) in self.values.iter_mut().zip(&mut self.rows) {
            if let Some(interp) = row.interp.as_mut() {
                value.snap_interp(&mut interp.state);
                interp.settled = false;
            }
        }
    }

    fn blend(&mut self, at: BlendAt) {
        if !T::INTERPOLATED {
            return;
        }
        for (value, row) in self.values.iter_mut().zip(&mut self.rows) {
            let Some(interp) = row.interp.as_mut() else {
                continue;
            };
            if interp.settled {
                if tick_diff(at.known_floor, interp.carried) > HORIZON as i32 {
                    // Still (and showing its newest value) for over 2³⁰ ticks: its samples
                    // would soon be too old to order against new ones (serial-number order
                    // holds within 2³¹ ticks). They restart from the value shown, at the
                    // tick up to which it is known still. Once per 2³⁰ ticks per row.
                    interp.carried = at.known_floor;
                    interp.state = value.new_interp(at.known_floor);
                }
                continue;
            }
            interp.settled = interp.shows_newest(at);
            let known = tick_max(interp.carried, at.known_floor);
            value.blend(
                &interp.state,
                at.render_tick,
                known,
                at.max_extrapolation_ticks,
            );
        }
    }
    fn start_prediction(&mut self, row: u32, tick: u32, history: usize) -> bool {
        if !T::PREDICTS {
            return false;
        }
        let (Some(value), Some(meta)) = (
            self.values.get(row as usize),
            self.rows.get_mut(row as usize),
        ) else {
            return false;
        };
        if meta.pred.is_none() {
            meta.pred = Some(Box::new(RowPrediction::new(value, tick, history)));
            meta.interp = None;
            self.predicted += 1;
        }
        true
    }

    fn stop_prediction(&mut self, row: u32) -> bool {
        let stopped = self
            .rows
            .get_mut(row as usize)
            .is_some_and(|meta| meta.pred.take().is_some());
        if stopped {
            self.predicted -= 1;
        }
        stopped
    }

    fn predict_restore_confirmed(&mut self) -> Option<NodeId> {
        predicted::restore_confirmed(self.predicted_mut())
    }

    fn predict_confirm(&mut self, known_floor: u32, present: Option<u32>, out: &mut Confirmation) {
        predicted::confirm(self.predicted_mut(), known_floor, present, out);
    }

    fn predict_restore_at(&mut self, tick: u32, smoothing: bool) {
        predicted::restore_at(self.predicted_mut(), tick, smoothing);
    }

    fn predict_record(&mut self, tick: u32) {
        predicted::record(self.predicted_mut(), tick);
    }

    fn predict_end_correction(&mut self, tick: u32) {
        predicted::end_correction(self.predicted_mut(), tick);
    }

    fn predict_show(&mut self, fade: f32) {
        predicted::show(self.predicted_mut(), fade);
    }

    fn predict_check(&mut self, tick: u32) -> Option<(NodeId, &'static str)> {
        predicted::check(self.predicted_mut(), tick)
    }

    fn predict_restore_history(&mut self, tick: u32) {
        predicted::restore_history(self.predicted_mut(), tick);
    }
}
