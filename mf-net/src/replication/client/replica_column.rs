//! One column of a client's runtime state: for every networked node holding a `T`, its row,
//! with the node's interpolation state while it interpolates and its prediction state while
//! this client predicts it. The values stay in the engine's store; each pass borrows the
//! store's `T`s once ([`lend`]) and loops over the rows, typed.

use super::bit_snapshot::StateType;
use super::entry::{EntryAt, EntryMisses, EntryRef};
use super::interpolation::row::{BlendAt, RowInterp};
use super::prediction::predicted::{self, ConfirmAt, Confirmation, RowPrediction};
use crate::replicated::registry::ReplicationRegistry;
use crate::replicated::{Apply, Replicated};
use crate::replication::shared::columns::RuntimeColumn;
use crate::replication::shared::each_value::{each_value, Aligned, HintedRow};
use crate::store::{lend, NodeId, Rows, Store};
use crate::wire::{DecodeError, NetReader, ProtocolViolation};

/// Makes the replica column of one type: the registry entry's runtime part a client asks for.
pub(crate) type NewReplicas = fn() -> Box<dyn ErasedReplicas>;

/// The [`NewReplicas`] of `T`.
pub(crate) fn new_replicas<T: Replicated>() -> Box<dyn ErasedReplicas> {
    let registry = ReplicationRegistry::global();
    Box::new(ReplicaColumn::<T> {
        ty: registry.id_of::<T>().map_or(0, |id| id.get()),
        rows: Vec::new(),
        predicted: 0,
        aligned: Aligned::default(),
    })
}

/// One networked node's row.
struct ReplicaRow<T: Replicated> {
    node: NodeId,
    /// The store's hint for the node's value ([`Rows::get_hinted`]).
    hint: u32,
    /// When the hint was last found valid ([`HintedRow::checked`]).
    checked: u64,
    /// While the node interpolates.
    interp: Option<RowInterp<T>>,
    /// While this client predicts the node (then it does not interpolate).
    pred: Option<Box<RowPrediction<T>>>,
}

impl<T: Replicated> HintedRow for ReplicaRow<T> {
    fn node(&self) -> NodeId {
        self.node
    }

    fn hint(&mut self) -> &mut u32 {
        &mut self.hint
    }

    fn checked(&mut self) -> &mut u64 {
        &mut self.checked
    }
}

/// The rows of every networked node holding a `T`.
struct ReplicaColumn<T: Replicated> {
    /// `T`'s number in the replication registry (0: not registered).
    ty: u16,
    rows: Vec<ReplicaRow<T>>,
    /// Rows with a prediction state.
    predicted: usize,
    /// Whether the rows sit beside the storage's values ([`Aligned`]).
    aligned: Aligned,
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

impl<T: Replicated> ReplicaRow<T> {
    /// Reads a snapshot entry of `tick` into `value`: through the interpolation state if the
    /// row has one, else straight into the value.
    #[inline]
    fn read_entry(
        &mut self,
        value: &mut T,
        r: &mut NetReader<'_>,
        at: EntryAt,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        if let (true, Some(pred)) = (T::PREDICTS, self.pred.as_mut()) {
            // Predicted: the server's values go straight into the value, confirmed once
            // every snapshot of the frame is in (see `predicted`).
            pred.carried(at.tick);
            return read_value(value, r, changed);
        }
        if !T::INTERPOLATED {
            return read_value(value, r, changed);
        }
        match self.interp.as_mut() {
            Some(interp) => interp.read(value, r, at, changed),
            None => read_value(value, r, changed),
        }
    }

    /// Whether a blend at `at` writes to the row's value ([`RowInterp::blends_at`]).
    #[inline]
    fn blends_at(&self, at: BlendAt) -> bool {
        self.interp
            .as_ref()
            .is_some_and(|interp| interp.blends_at(at))
    }

    /// Blends the row's interpolated members at `at` into `value` ([`RowInterp::blend`]).
    #[inline]
    fn blend(&mut self, value: &mut T, at: BlendAt) {
        if let Some(interp) = self.interp.as_mut() {
            interp.blend(value, at);
        }
    }
}

impl<T: Replicated> ReplicaColumn<T> {
    /// Applies one entry's `bytes` to `row` and `value`, then runs the `on_change` hooks of
    /// the members it changed (`changed`: scratch, grown here once).
    #[inline]
    fn apply(
        row: &mut ReplicaRow<T>,
        value: &mut T,
        bytes: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) -> Result<(), DecodeError> {
        let mut r = NetReader::new(bytes);
        if !T::ON_CHANGE {
            row.read_entry(value, &mut r, at, &mut [])?;
            return r.finish();
        }
        // Hooks run once the whole entry is applied.
        let n = T::STATE_COUNT;
        if changed.len() < n {
            changed.resize(n, 0);
        }
        let changed = &mut changed[..n];
        changed.fill(0);
        row.read_entry(value, &mut r, at, changed)?;
        r.finish()?;
        value.run_on_change(changed);
        Ok(())
    }

    /// Calls `f` with every predicted row's node, value and prediction state; none when no
    /// row is predicted.
    fn each_predicted(
        &mut self,
        store: &mut dyn Store,
        mut f: impl FnMut(NodeId, &mut T, &mut RowPrediction<T>),
    ) {
        if self.predicted == 0 {
            return;
        }
        let (rows, aligned) = (&mut self.rows, &mut self.aligned);
        lend::<T>(store, &mut |values: &mut dyn Rows<T>| {
            each_value(
                values,
                rows,
                aligned,
                |row| row.pred.is_some(),
                |_, row, value| {
                    if let Some(pred) = row.pred.as_deref_mut() {
                        f(row.node, value, pred);
                    }
                },
            );
        });
    }
}

/// The entries of a pass over a storage that is not dense, each value looked up (a function of
/// its own, so that the dense loop inlines the entry's read at its one call).
#[inline(never)]
fn apply_looked_up<T: Replicated>(
    values: &mut dyn Rows<T>,
    rows: &mut [ReplicaRow<T>],
    entries: &[EntryRef],
    apply: &mut impl FnMut(&EntryRef, Option<(&mut ReplicaRow<T>, Option<&mut T>)>),
) {
    for e in entries {
        let found = match rows.get_mut(e.row as usize) {
            Some(row) if row.node == e.node => {
                let value = values.get_mut_hinted(e.node, &mut row.hint);
                Some((row, value))
            }
            _ => None,
        };
        apply(e, found);
    }
}

/// A [`ReplicaColumn`] without its type: what the client calls.
pub(crate) trait ErasedReplicas: RuntimeColumn {
    /// Adds a row for `node` (its value in `store` found once, for the row's hint); returns it.
    fn push(&mut self, store: &mut dyn Store, node: NodeId) -> u32;
    /// Reads a state into `node`'s value in `store` ([`Apply::read`], or
    /// [`Apply::read_tracked`] when `changed` is not empty); its row, if any, is untouched.
    fn read(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError>;
    /// Runs the `on_change` hooks `changed` names on `node`'s value.
    fn run_on_change(&mut self, store: &mut dyn Store, node: NodeId, changed: &[u64]);
    /// Applies one snapshot entry's state `bytes` (all of them) to `row` and its node's value,
    /// with its interpolation state (if any), then runs the `on_change` hooks of the members
    /// it changed; `changed` is scratch. Returns `false`, reading nothing, if `row` is not
    /// `node`'s or the node holds no `T` (a stale hint).
    fn apply_entry(
        &mut self,
        store: &mut dyn Store,
        row: u32,
        node: NodeId,
        bytes: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) -> Result<bool, DecodeError>;
    /// Applies every entry of `entries` (their bytes in `snapshot`) as
    /// [`apply_entry`](Self::apply_entry) does, in one pass; what it could not apply goes to
    /// `misses`.
    fn apply_entries(
        &mut self,
        store: &mut dyn Store,
        entries: &[EntryRef],
        snapshot: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
        misses: &mut EntryMisses,
    );
    /// `row` interpolates from now on, from its node's current value at `tick` (nothing if the
    /// type has no interpolated member, or the row interpolates or is predicted already).
    fn start_interp(&mut self, store: &mut dyn Store, row: u32, tick: u32);
    /// Every interpolated row snaps to its newest samples and clears its buffers.
    fn snap_interps(&mut self, store: &mut dyn Store);
    /// After a frame's snapshots, one pass over the rows: with `blend`, every interpolated row
    /// writes its samples at the render tick into its value (a row that settled, its newest
    /// samples written and known still past them, is skipped until a new sample arrives or
    /// the buffers snap); with `confirm`, every predicted row is confirmed
    /// (`Replicas::after_receive`) into `out`.
    fn after_receive(
        &mut self,
        store: &mut dyn Store,
        blend: Option<BlendAt>,
        confirm: Option<ConfirmAt>,
        out: &mut Confirmation,
    );
    /// Whether the type has predicted members.
    fn predicts(&self) -> bool;
    /// `row` is predicted from now on (if its type has a predicted member), confirmed as its
    /// value is at `tick` (an interpolated row's snapped to its newest samples first: the
    /// server's newest state, not the blend it showed), with `history` ticks of history (a
    /// power of two); it stops interpolating. Returns whether it is predicted.
    fn start_prediction(
        &mut self,
        store: &mut dyn Store,
        row: u32,
        tick: u32,
        history: usize,
    ) -> bool;
    /// `row` is no longer predicted; returns whether it was.
    fn stop_prediction(&mut self, row: u32) -> bool;
    /// One column of `Replicas::restore_confirmed`.
    fn restore_confirmed(&mut self, store: &mut dyn Store) -> Option<NodeId>;
    /// One column of `Replicas::roll_back_to`.
    fn roll_back_to(&mut self, store: &mut dyn Store, tick: u32, smoothing: bool);
    /// One column of `Replicas::record_predicted`.
    fn record(&mut self, store: &mut dyn Store, tick: u32, show: Option<f32>);
    /// One column of `Replicas::end_correction`.
    fn end_correction(&mut self, store: &mut dyn Store, tick: u32);
    /// One column of `Replicas::show_predicted`.
    fn show(&mut self, store: &mut dyn Store, fade: f32);
    /// One column of `Replicas::check_predicted`.
    fn check(&mut self, store: &mut dyn Store, tick: u32) -> Option<(NodeId, &'static str)>;
    /// One column of `Replicas::restore_history`.
    fn restore_history(&mut self, store: &mut dyn Store, tick: u32);
    /// How the type's states travel bit-packed ([`Replicated::LAYOUT`]), and its number in the
    /// replication registry, which bit-packed entries name it by.
    fn state_type(&self) -> StateType;
}

impl<T: Replicated> RuntimeColumn for ReplicaColumn<T> {
    fn swap_remove(&mut self, row: u32) -> Option<NodeId> {
        let row = row as usize;
        if row >= self.rows.len() {
            return None;
        }
        self.aligned.reset();
        if self.rows.swap_remove(row).pred.is_some() {
            self.predicted -= 1;
        }
        self.rows.get(row).map(|r| r.node)
    }

    fn clear(&mut self) {
        self.rows.clear();
        self.predicted = 0;
        self.aligned.reset();
    }
}

impl<T: Replicated> ErasedReplicas for ReplicaColumn<T> {
    fn push(&mut self, store: &mut dyn Store, node: NodeId) -> u32 {
        let mut hint = 0;
        lend::<T>(store, &mut |values| {
            values.get_hinted(node, &mut hint);
        });
        self.aligned.reset();
        self.rows.push(ReplicaRow {
            node,
            hint,
            checked: 0,
            interp: None,
            pred: None,
        });
        u32::try_from(self.rows.len() - 1)
            .unwrap_or_else(|_| panic!("a column holds more than u32::MAX rows"))
    }

    fn read(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        let mut result = Err(DecodeError::Protocol(ProtocolViolation::UnknownNode));
        lend::<T>(store, &mut |values| {
            if let Some(value) = values.get_mut(node) {
                result = read_value(value, r, changed);
            }
        });
        result
    }

    fn run_on_change(&mut self, store: &mut dyn Store, node: NodeId, changed: &[u64]) {
        lend::<T>(store, &mut |values| {
            if let Some(value) = values.get_mut(node) {
                value.run_on_change(changed);
            }
        });
    }

    #[inline]
    fn apply_entry(
        &mut self,
        store: &mut dyn Store,
        row: u32,
        node: NodeId,
        bytes: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
    ) -> Result<bool, DecodeError> {
        let Some(row) = self.rows.get_mut(row as usize).filter(|r| r.node == node) else {
            return Ok(false);
        };
        let mut result = Ok(false);
        lend::<T>(store, &mut |values| {
            if let Some(value) = values.get_mut_hinted(node, &mut row.hint) {
                result = Self::apply(row, value, bytes, at, changed).map(|()| true);
            }
        });
        result
    }

    fn apply_entries(
        &mut self,
        store: &mut dyn Store,
        entries: &[EntryRef],
        snapshot: &[u8],
        at: EntryAt,
        changed: &mut Vec<u64>,
        misses: &mut EntryMisses,
    ) {
        let rows = &mut self.rows;
        let lent = lend::<T>(store, &mut |values| {
            // A dense storage is indexed at the row's hint; an entry whose row or hint went
            // stale is applied afterwards, found again (`misses.stale`).
            let mut apply = |e: &EntryRef, found: Option<(&mut ReplicaRow<T>, Option<&mut T>)>| {
                let Some((row, Some(value))) = found else {
                    misses.stale.push(*e);
                    return;
                };
                if let Err(error) = Self::apply(row, value, e.bytes(snapshot), at, changed) {
                    misses.rejected.push((e.tag, error));
                }
                if T::NODE_REFS {
                    misses.take_named(e.tag);
                }
            };
            let Some(mut dense) = values.dense() else {
                return apply_looked_up(values, rows, entries, &mut apply);
            };
            for e in entries {
                let found = match rows.get_mut(e.row as usize) {
                    Some(row) if row.node == e.node => {
                        let value = dense.at_checked(e.node, row.hint, &mut row.checked);
                        Some((row, value))
                    }
                    _ => None,
                };
                apply(e, found);
            }
        });
        if !lent {
            misses.stale.extend_from_slice(entries);
        }
    }

    fn start_interp(&mut self, store: &mut dyn Store, row: u32, tick: u32) {
        if !T::INTERPOLATED {
            return;
        }
        let Some(row) = self.rows.get_mut(row as usize) else {
            return;
        };
        if row.interp.is_some() || row.pred.is_some() {
            return;
        }
        lend::<T>(store, &mut |values| {
            if let Some(value) = values.get_hinted(row.node, &mut row.hint) {
                row.interp = Some(RowInterp::new(value, tick));
            }
        });
    }

    fn snap_interps(&mut self, store: &mut dyn Store) {
        if !T::INTERPOLATED {
            return;
        }
        let (rows, aligned) = (&mut self.rows, &mut self.aligned);
        lend::<T>(store, &mut |values| {
            each_value(
                values,
                rows,
                aligned,
                |row| row.interp.is_some(),
                |_, row, value| {
                    if let Some(interp) = row.interp.as_mut() {
                        interp.snap(value);
                    }
                },
            );
        });
    }

    fn after_receive(
        &mut self,
        store: &mut dyn Store,
        blend: Option<BlendAt>,
        confirm: Option<ConfirmAt>,
        out: &mut Confirmation,
    ) {
        let blend = blend.filter(|_| T::INTERPOLATED);
        let confirm = confirm.filter(|_| self.predicted > 0);
        if blend.is_none() && confirm.is_none() {
            return;
        }
        let (rows, aligned) = (&mut self.rows, &mut self.aligned);
        lend::<T>(store, &mut |values| {
            each_value(
                values,
                rows,
                aligned,
                |row| {
                    blend.is_some_and(|at| row.blends_at(at))
                        || (confirm.is_some() && row.pred.is_some())
                },
                |_, row, value| {
                    if let Some(at) = blend {
                        row.blend(value, at);
                    }
                    if let (Some(at), Some(pred)) = (confirm, row.pred.as_deref_mut()) {
                        predicted::confirm((row.node, value, pred), at, out);
                    }
                },
            );
        });
    }

    fn predicts(&self) -> bool {
        T::PREDICTS
    }

    fn start_prediction(
        &mut self,
        store: &mut dyn Store,
        row: u32,
        tick: u32,
        history: usize,
    ) -> bool {
        if !T::PREDICTS {
            return false;
        }
        let Some(row) = self.rows.get_mut(row as usize) else {
            return false;
        };
        if row.pred.is_some() {
            return true;
        }
        let mut started = false;
        lend::<T>(store, &mut |values| {
            if let Some(value) = values.get_mut_hinted(row.node, &mut row.hint) {
                // An interpolated value shows a past blend: the server's newest state, the
                // prediction's confirmed one, is in its newest samples.
                if let Some(interp) = row.interp.as_mut() {
                    interp.snap(value);
                }
                row.pred = Some(Box::new(RowPrediction::new(value, tick, history)));
                row.interp = None;
                started = true;
            }
        });
        self.predicted += usize::from(started);
        started
    }

    fn stop_prediction(&mut self, row: u32) -> bool {
        let stopped = self
            .rows
            .get_mut(row as usize)
            .is_some_and(|r| r.pred.take().is_some());
        if stopped {
            self.predicted -= 1;
        }
        stopped
    }

    fn restore_confirmed(&mut self, store: &mut dyn Store) -> Option<NodeId> {
        let mut written = None;
        self.each_predicted(store, |node, value, pred| {
            if predicted::restore_confirmed(value, pred) {
                written.get_or_insert(node);
            }
        });
        written
    }

    fn roll_back_to(&mut self, store: &mut dyn Store, tick: u32, smoothing: bool) {
        self.each_predicted(store, |_, value, pred| {
            predicted::restore_at(value, pred, tick, smoothing);
            predicted::record(value, pred, tick);
        });
    }

    fn record(&mut self, store: &mut dyn Store, tick: u32, show: Option<f32>) {
        self.each_predicted(store, |_, value, pred| {
            predicted::record(value, pred, tick);
            if let Some(fade) = show {
                predicted::show(value, pred, fade);
            }
        });
    }

    fn end_correction(&mut self, store: &mut dyn Store, tick: u32) {
        self.each_predicted(store, |_, value, pred| {
            predicted::end_correction(value, pred, tick);
        });
    }

    fn show(&mut self, store: &mut dyn Store, fade: f32) {
        self.each_predicted(store, |_, value, pred| {
            predicted::show(value, pred, fade);
        });
    }

    fn check(&mut self, store: &mut dyn Store, tick: u32) -> Option<(NodeId, &'static str)> {
        let mut found = None;
        self.each_predicted(store, |node, value, pred| {
            if found.is_none() {
                found = predicted::check(value, pred, tick).map(|member| (node, member));
            }
        });
        found
    }

    fn restore_history(&mut self, store: &mut dyn Store, tick: u32) {
        self.each_predicted(store, |_, value, pred| {
            predicted::restore_history(value, pred, tick);
        });
    }

    fn state_type(&self) -> StateType {
        StateType {
            layout: T::LAYOUT,
            number: self.ty,
        }
    }
}
