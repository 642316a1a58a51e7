//! The [`Interpolate`] trait and its implementations for `f32` and `f64`.

/// A value that clients can blend between two snapshots: the type of a
/// `#[replicated(interpolate)]` member, or of an [`InterpolationBuffer`]'s samples.
///
/// Implemented for `f32` and `f64` and, with the `glam` feature, for `glam::Vec2`, `Vec3` and
/// `Vec4` (linear) and `glam::Quat` (shortest-path slerp, never extrapolated). Implement it for
/// your own types, e.g. a pose that blends its position with `Vec3`'s implementation and its
/// rotation with `Quat`'s (which clamps `t`, so the pose's position extrapolates and its
/// rotation holds).
///
/// # Contract
///
/// - `a.interpolate(&b, 0.0)` is `a` and `a.interpolate(&b, 1.0)` is `b`, exactly (compared
///   with `==`): a member that sits on a sample shows that sample's value.
/// - For `0 < t < 1` the result is between `a` and `b`, moving steadily with `t`.
/// - **Extrapolation is interpolation with `t > 1`.** Past the newest sample, when data is late,
///   [`InterpolationBuffer::sample`] continues the motion of the last two samples `a` (older)
///   and `b` (newest) by calling `a.interpolate(&b, t)` with `t = 1 + elapsed / spacing`
///   (`t ≤ 1 + max_extrapolation / spacing`). For a linear type the same formula extends the
///   line past `b`, so nothing more is needed. It is never called with `t > 1` when
///   [`EXTRAPOLATE`](Self::EXTRAPOLATE) is `false`, and never with `t < 0`.
/// - Parts that must not be extrapolated (a rotation inside a transform) clamp `t` to `1` for
///   themselves; a type none of whose parts may be extrapolated sets `EXTRAPOLATE = false` and
///   is held at its newest sample instead.
///
/// ```
/// use mf_net::interpolation::Interpolate;
///
/// /// A health bar's fill: blended, but extrapolating it would show values never sent.
/// #[derive(Clone, Debug, PartialEq)]
/// struct Fill(f32);
///
/// impl Interpolate for Fill {
///     const EXTRAPOLATE: bool = false;
///
///     fn interpolate(&self, to: &Self, t: f32) -> Self {
///         Fill(self.0.interpolate(&to.0, t.clamp(0.0, 1.0)))
///     }
/// }
///
/// assert_eq!(Fill(0.0).interpolate(&Fill(1.0), 0.25), Fill(0.25));
/// assert_eq!(2.0_f32.interpolate(&4.0, 1.5), 5.0); // f32 extrapolates
/// ```
///
/// [`InterpolationBuffer`]: super::InterpolationBuffer
/// [`InterpolationBuffer::sample`]: super::InterpolationBuffer::sample
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be interpolated: it does not implement `Interpolate`",
    label = "not `Interpolate`",
    note = "`Interpolate` is implemented for `f32`, `f64` and, with mf-net's `glam` feature, \
            `glam::Vec2`, `Vec3`, `Vec4` and `Quat`; implement it for your own types to blend \
            them"
)]
pub trait Interpolate: Clone {
    /// Whether the value may be extrapolated along its last velocity when data is late.
    ///
    /// `true` (the default) for positions and other linear values; `false` for rotations
    /// (`glam::Quat`), because angular extrapolation overshoots and jitters visibly: such
    /// values hold their newest sample instead.
    const EXTRAPOLATE: bool = true;

    /// The value a fraction `t` of the way from `self` to `to`: `self` at `0`, `to` at `1`, and
    /// past `to` along the same motion for `t > 1` when [`EXTRAPOLATE`](Self::EXTRAPOLATE)
    /// (see the [contract](Self#contract)).
    fn interpolate(&self, to: &Self, t: f32) -> Self;
}

/// `a + (b − a)·t`, computed from the nearer end so that `t = 0` gives `a` and `t = 1` gives
/// `b` exactly, and `t > 1` continues the line past `b`.
macro_rules! lerp_from_nearer_end {
    ($a:expr, $b:expr, $t:expr) => {{
        let (a, b, t) = ($a, $b, $t);
        if t < 0.5 {
            a + (b - a) * t
        } else {
            b - (b - a) * (1.0 - t)
        }
    }};
}
#[cfg(feature = "glam")]
pub(super) use lerp_from_nearer_end;

impl Interpolate for f32 {
    /// Linear; extrapolates linearly for `t > 1`. Between samples that are not both finite
    /// (NaN or infinite, where a blend would give NaN), `to`, the newer sample.
    #[inline]
    fn interpolate(&self, to: &Self, t: f32) -> Self {
        if !(self.is_finite() && to.is_finite()) {
            return *to;
        }
        lerp_from_nearer_end!(*self, *to, t)
    }
}

impl Interpolate for f64 {
    /// Linear (in `f64`); extrapolates linearly for `t > 1`. Between samples that are not both
    /// finite, `to`, the newer sample.
    #[inline]
    fn interpolate(&self, to: &Self, t: f32) -> Self {
        if !(self.is_finite() && to.is_finite()) {
            return *to;
        }
        lerp_from_nearer_end!(*self, *to, f64::from(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn endpoints_are_exact() {
        for (a, b) in [(0.1_f32, 0.7), (-3.3, 1e7), (1e-30, -1e-30), (5.0, 5.0)] {
            assert_eq!(a.interpolate(&b, 0.0), a);
            assert_eq!(a.interpolate(&b, 1.0), b);
            let (a, b) = (f64::from(a), f64::from(b));
            assert_eq!(a.interpolate(&b, 0.0), a);
            assert_eq!(a.interpolate(&b, 1.0), b);
        }
        // The naive `a + (b - a) * t` misses `b` here; the nearer-end form does not.
        let (a, b) = (1e8_f32, 1.0_f32);
        assert_ne!(a + (b - a) * 1.0, b);
        assert_eq!(a.interpolate(&b, 1.0), b);
    }

    #[test]
    fn non_finite_samples_hold_the_newer_one_instead_of_blending_to_nan() {
        let inf = f32::INFINITY;
        assert_eq!(inf.interpolate(&inf, 0.5), inf);
        assert_eq!(1.0_f32.interpolate(&inf, 0.5), inf);
        assert_eq!(inf.interpolate(&1.0, 0.5), 1.0);
        assert!(f32::NAN.interpolate(&f32::NAN, 0.5).is_nan());
        assert_eq!(f32::NAN.interpolate(&2.0, 0.25), 2.0);
        assert_eq!(f64::NEG_INFINITY.interpolate(&-3.0, 0.9), -3.0);
    }

    #[test]
    fn blends_and_extrapolates_linearly() {
        assert_eq!(2.0_f32.interpolate(&4.0, 0.5), 3.0);
        assert_eq!(2.0_f32.interpolate(&4.0, 0.25), 2.5);
        assert_eq!(2.0_f32.interpolate(&4.0, 2.0), 6.0);
        assert_eq!(2.0_f64.interpolate(&4.0, 1.5), 5.0);
        assert_eq!((-1.0_f64).interpolate(&1.0, 0.75), 0.5);
        // Equal ends: any `t` gives the value itself.
        assert_eq!(7.5_f32.interpolate(&7.5, 3.7), 7.5);
    }

    proptest! {
        #[test]
        fn f32_endpoints_and_bounds(a in -1e6_f32..1e6, b in -1e6_f32..1e6, t in 0.0_f32..=1.0) {
            prop_assert_eq!(a.interpolate(&b, 0.0), a);
            prop_assert_eq!(a.interpolate(&b, 1.0), b);
            let v = a.interpolate(&b, t);
            let slack = 1e-6 * (a.abs() + b.abs()).max(1.0);
            prop_assert!(v >= a.min(b) - slack && v <= a.max(b) + slack, "{v} outside {a}..{b}");
        }

        #[test]
        fn f32_is_monotonic_in_t(a in -1e3_f32..1e3, b in -1e3_f32..1e3,
                                 t0 in 0.0_f32..2.0, dt in 0.0_f32..1.0) {
            let (v0, v1) = (a.interpolate(&b, t0), a.interpolate(&b, t0 + dt));
            let slack = 1e-4;
            if b >= a {
                prop_assert!(v1 >= v0 - slack, "{v0} then {v1}");
            } else {
                prop_assert!(v1 <= v0 + slack, "{v0} then {v1}");
            }
        }

        #[test]
        fn f64_matches_the_line(a in -1e9_f64..1e9, b in -1e9_f64..1e9, t in 0.0_f32..3.0) {
            let v = a.interpolate(&b, t);
            let line = a + (b - a) * f64::from(t);
            prop_assert!((v - line).abs() <= 1e-6 * (a.abs() + b.abs()).max(1.0));
        }
    }
}
