//! What `#[replicated(interpolate)]` requires of a member's type, as a trait whose message
//! names the attribute (like `replication::member` does for `#[replicated]`).

use super::{Interpolate, InterpolationBuffer};

/// [`Interpolate`], as a `#[replicated(interpolate)]` member needs it. The derive asserts it
/// at the field's type and reaches the member's [`InterpolationBuffer`] only through it (each
/// use spanned at the field's type, so a type without `Interpolate` is reported there with a
/// message about the attribute); it has a blanket implementation and nothing implements it by
/// hand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated(interpolate)]` member: it does not implement \
               `Interpolate`",
    label = "not `Interpolate`",
    note = "clients blend interpolated members between snapshots, which needs \
            `mf_net::interpolation::Interpolate`: use a type that has it (`f32`, `f64` and, with \
            mf-net's `glam` feature, `glam::Vec2`, `Vec3`, `Vec4` and `Quat`), or implement it \
            for your own type",
    note = "or remove `interpolate` (write `#[replicated]`): the member then snaps to each \
            snapshot's value"
)]
pub trait MemberInterpolate: Sized {
    /// [`Interpolate::EXTRAPOLATE`].
    const EXTRAPOLATE: bool;

    /// A buffer holding the member's current value as its first sample, at `tick` (the spawn
    /// state's tick). The buffer's one allocation.
    fn new_buffer(&self, tick: u32) -> InterpolationBuffer<Self>;

    /// [`InterpolationBuffer::push_with_hold`] of a decoded value; whether it was added.
    fn push_member(
        buffer: &mut InterpolationBuffer<Self>,
        known_until: u32,
        tick: u32,
        value: Self,
    ) -> bool;

    /// Writes [`InterpolationBuffer::sample`] at `render_tick` into `self` (nothing when the
    /// buffer is empty).
    fn blend_member(
        &mut self,
        buffer: &InterpolationBuffer<Self>,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    );

    /// Snaps `self` to the buffer's newest sample, then drops every older sample (the clock
    /// snapped): the newest stays, at its tick, so that a later change of a member still since
    /// then resumes from it ([`InterpolationBuffer::retain_newest`]).
    fn snap_member(&mut self, buffer: &mut InterpolationBuffer<Self>);

    /// Moves `self` by `weight` times the offset `from − to`, with [`Interpolate`] alone (a
    /// `#[replicated(predict, interpolate)]` member's error smoothing; see
    /// [`Predicted::smooth_predicted`](crate::replication::Predicted::smooth_predicted)).
    fn smooth_member(&mut self, from: &Self, to: &Self, weight: f32);
}

impl<T: Interpolate> MemberInterpolate for T {
    const EXTRAPOLATE: bool = T::EXTRAPOLATE;

    #[inline]
    fn new_buffer(&self, tick: u32) -> InterpolationBuffer<Self> {
        let mut buffer = InterpolationBuffer::new();
        buffer.push(tick, self.clone());
        buffer
    }

    #[inline]
    fn push_member(
        buffer: &mut InterpolationBuffer<Self>,
        known_until: u32,
        tick: u32,
        value: Self,
    ) -> bool {
        buffer.push_with_hold(known_until, tick, value)
    }

    #[inline]
    fn blend_member(
        &mut self,
        buffer: &InterpolationBuffer<Self>,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    ) {
        if let Some(value) = buffer.sample(render_tick, known_until, max_extrapolation_ticks) {
            *self = value;
        }
    }

    #[inline]
    fn snap_member(&mut self, buffer: &mut InterpolationBuffer<Self>) {
        if let Some((_, newest)) = buffer.newest() {
            self.clone_from(newest);
        }
        buffer.retain_newest();
    }

    #[inline]
    fn smooth_member(&mut self, from: &Self, to: &Self, weight: f32) {
        // `to + 2·((from + self)/2 − to)` = `self + (from − to)`.
        let shifted = to.interpolate(&from.interpolate(self, 0.5), 2.0);
        *self = self.interpolate(&shifted, weight);
    }
}
