//! A client's interpolation state of one row, kept in the runtime's row beside the node: the
//! buffers of its `#[replicated(interpolate)]` members, and what a snapshot entry, a blend and
//! a snap do to it. The column walks its rows (`replica_column.rs`); the clock that says where
//! to blend is [`ClientInterpolation`](super::ClientInterpolation).

use crate::replicated::Replicated;
use crate::replication::client::entry::EntryAt;
use crate::tick::{tick_after, tick_diff, tick_max, unwrap_near, HORIZON};
use crate::wire::{DecodeError, NetReader};

/// Where a client blends its interpolated members.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlendAt {
    /// The render tick.
    pub(crate) render_tick: f64,
    /// As [`EntryAt::known_floor`].
    pub(crate) known_floor: u32,
    /// How far past the newest sample members may extrapolate.
    pub(crate) max_extrapolation_ticks: f64,
}

/// A client's interpolation state of one row.
pub(crate) struct RowInterp<T: Replicated> {
    state: T::Interp,
    /// The tick of the newest snapshot (or the spawn) that carried the row.
    carried: u32,
    /// Whether the last blend wrote the newest samples of a row known to be still past them:
    /// until a new sample arrives every blend would write the same values, so none runs.
    settled: bool,
}

impl<T: Replicated> RowInterp<T> {
    /// Buffers starting from `value`, its current (spawn) value, at `tick`.
    pub(crate) fn new(value: &T, tick: u32) -> Self {
        Self {
            state: value.new_interp(tick),
            carried: tick,
            settled: false,
        }
    }

    /// Reads a snapshot entry into the buffers (interpolated members) and `value` (the others).
    #[inline]
    pub(crate) fn read(
        &mut self,
        value: &mut T,
        r: &mut NetReader<'_>,
        at: EntryAt,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        if tick_diff(at.tick, self.carried) > HORIZON as i32 {
            // Carried by no snapshot for over 2³⁰ ticks, and not restarted by a blend
            // (see `blend`): restarted from the value shown, as of the tick before.
            self.carried = at.tick.wrapping_sub(1);
            self.state = value.new_interp(self.carried);
        }
        let known = tick_max(self.carried, at.known_floor);
        self.settled = false;
        value.read_buffered(&mut self.state, r, known, at.tick, changed)?;
        self.carried = tick_max(self.carried, at.tick);
        Ok(())
    }

    /// Whether a blend at `at` writes to the value: the row has not settled, or its samples
    /// must restart (see [`blend`](Self::blend)).
    #[inline]
    pub(crate) fn blends_at(&self, at: BlendAt) -> bool {
        !self.settled || tick_diff(at.known_floor, self.carried) > HORIZON as i32
    }

    /// Whether a blend at `at` shows every member's newest sample: the render tick is at or
    /// past the newest snapshot that carried the row (so past every member's newest sample),
    /// and the row is known still after it (so nothing extrapolates).
    fn shows_newest(&self, at: BlendAt) -> bool {
        at.render_tick >= unwrap_near(self.carried, at.render_tick)
            && tick_after(at.known_floor, self.carried)
    }

    /// Writes every interpolated member's sample at `at` into `value`.
    pub(crate) fn blend(&mut self, value: &mut T, at: BlendAt) {
        if self.settled {
            if tick_diff(at.known_floor, self.carried) > HORIZON as i32 {
                // Still (and showing its newest value) for over 2³⁰ ticks: its samples
                // would soon be too old to order against new ones (serial-number order
                // holds within 2³¹ ticks). They restart from the value shown, at the
                // tick up to which it is known still. Once per 2³⁰ ticks per row.
                self.carried = at.known_floor;
                self.state = value.new_interp(at.known_floor);
            }
            return;
        }
        self.settled = self.shows_newest(at);
        let known = tick_max(self.carried, at.known_floor);
        value.blend(
            &self.state,
            at.render_tick,
            known,
            at.max_extrapolation_ticks,
        );
    }

    /// The clock snapped: every interpolated member snaps to its newest sample, which its
    /// buffer keeps at its tick while the older samples go (so that a member still since then
    /// resumes from the right moment, through a hold sample at its known tick).
    pub(crate) fn snap(&mut self, value: &mut T) {
        value.snap_interp(&mut self.state);
        self.settled = false;
    }
}
