//! [`Interpolate`] for `glam` types (feature `glam`): vectors blend linearly, quaternions slerp
//! along the shortest path and are never extrapolated.

use glam::{Quat, Vec2, Vec3, Vec4};

use super::interpolate::{lerp_from_nearer_end, Interpolate};

macro_rules! linear {
    ($($ty:ty),*) => {$(
        impl Interpolate for $ty {
            /// Component-wise linear; extrapolates linearly for `t > 1`. Between samples that
            /// are not both finite (a NaN or infinite component, where a blend would give NaN),
            /// `to`, the newer sample.
            #[inline]
            fn interpolate(&self, to: &Self, t: f32) -> Self {
                if !(self.is_finite() && to.is_finite()) {
                    return *to;
                }
                lerp_from_nearer_end!(*self, *to, t)
            }
        }
    )*};
}

linear!(Vec2, Vec3, Vec4);

/// Above this `|cos θ|` between two rotations, slerp falls back to a normalized linear blend
/// (`sin θ` is too small to divide by; the two differ by less than 0.003 there).
const NEARLY_PARALLEL: f32 = 0.9995;

impl Interpolate for Quat {
    /// Rotations are held at their newest sample rather than extrapolated: angular
    /// extrapolation overshoots and jitters visibly.
    const EXTRAPOLATE: bool = false;

    /// Spherical linear interpolation along the **shortest path** (`q` and `−q` are the same
    /// rotation; the blend takes the shorter arc), normalized. `t` is clamped to `0..=1`:
    /// `t ≤ 0` (or NaN) gives `self` and `t ≥ 1` gives `to`, exactly.
    fn interpolate(&self, to: &Self, t: f32) -> Self {
        if !(self.is_finite() && to.is_finite()) {
            // A blend with a non-finite component is NaN: hold the newer sample.
            return *to;
        }
        if t.is_nan() || t <= 0.0 {
            return *self;
        }
        if t >= 1.0 {
            return *to;
        }
        let a = Vec4::from(*self);
        let mut b = Vec4::from(*to);
        let mut cos = a.dot(b);
        if cos < 0.0 {
            // The other cover of the same rotation is the shorter way round.
            b = -b;
            cos = -cos;
        }
        let blended = if cos > NEARLY_PARALLEL {
            a + (b - a) * t
        } else {
            let theta = cos.min(1.0).acos();
            let sin = theta.sin();
            a * (((1.0 - t) * theta).sin() / sin) + b * ((t * theta).sin() / sin)
        };
        match blended.try_normalize() {
            Some(v) => Quat::from_vec4(v),
            // Degenerate inputs (zero-length quaternions): no direction to blend along.
            None if t < 0.5 => *self,
            None => *to,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rotation angle between `a` and `b` (accurate for small angles, unlike `acos`).
    fn angle(a: Quat, b: Quat) -> f32 {
        let d = a.conjugate() * b;
        2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
    }

    #[test]
    fn vector_endpoints_are_exact_and_blend_linearly() {
        let (a, b) = (Vec3::new(0.1, -2.0, 3.3), Vec3::new(0.7, 5.0, -1.1));
        assert_eq!(a.interpolate(&b, 0.0), a);
        assert_eq!(a.interpolate(&b, 1.0), b);
        assert!((a.interpolate(&b, 0.5) - (a + b) / 2.0).length() < 1e-6);
        assert!((a.interpolate(&b, 2.0) - (b * 2.0 - a)).length() < 1e-5);
        let (a, b) = (Vec2::new(1.0, 2.0), Vec2::new(3.0, -2.0));
        assert_eq!(a.interpolate(&b, 0.5), Vec2::new(2.0, 0.0));
        let (a, b) = (Vec4::splat(0.1), Vec4::splat(0.7));
        assert_eq!(a.interpolate(&b, 1.0), b);
        assert_eq!(a.interpolate(&b, 0.0), a);
    }

    #[test]
    fn quat_endpoints_are_exact_and_never_extrapolated() {
        let a = Quat::from_rotation_y(0.3);
        let b = Quat::from_rotation_x(1.2);
        assert_eq!(a.interpolate(&b, 0.0), a);
        assert_eq!(a.interpolate(&b, 1.0), b);
        assert_eq!(a.interpolate(&b, 1.7), b, "clamped, not extrapolated");
        assert_eq!(a.interpolate(&b, -0.5), a);
        assert_eq!(a.interpolate(&b, f32::NAN), a);
        const { assert!(!<Quat as Interpolate>::EXTRAPOLATE) };
        const { assert!(<Vec3 as Interpolate>::EXTRAPOLATE) };
    }

    #[test]
    fn quat_slerp_is_uniform_along_the_arc() {
        let a = Quat::from_rotation_z(0.0);
        let b = Quat::from_rotation_z(2.0);
        for i in 0..=10 {
            let t = i as f32 / 10.0;
            let q = a.interpolate(&b, t);
            let expected = Quat::from_rotation_z(2.0 * t);
            assert!(angle(q, expected) < 1e-3, "t = {t}: {q} vs {expected}");
            assert!(q.is_normalized());
        }
    }

    #[test]
    fn quat_takes_the_short_path_for_q_and_minus_q() {
        let a = Quat::from_rotation_y(0.2);
        let b = Quat::from_rotation_y(0.8);
        for to in [b, -b] {
            let mid = a.interpolate(&to, 0.5);
            assert!(
                angle(mid, Quat::from_rotation_y(0.5)) < 1e-4,
                "{mid} for target {to}"
            );
        }
        // Blending between q and −q (the same rotation) stays on it.
        let mid = a.interpolate(&-a, 0.5);
        assert!(angle(mid, a) < 1e-4);
        assert!(mid.is_normalized());
    }

    #[test]
    fn quat_nearly_parallel_uses_a_normalized_blend() {
        let a = Quat::from_rotation_x(0.0);
        let b = Quat::from_rotation_x(1e-3);
        let q = a.interpolate(&b, 0.5);
        assert!(q.is_normalized());
        assert!(angle(q, Quat::from_rotation_x(5e-4)) < 1e-5);
        // Zero quaternions cannot be normalized: the nearer end is returned.
        let z = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        assert_eq!(z.interpolate(&z, 0.25), z);
    }

    fn unit_quat() -> impl Strategy<Value = Quat> {
        (
            -1.0_f32..1.0,
            -1.0_f32..1.0,
            -1.0_f32..1.0,
            -1.0_f32..1.0,
            any::<bool>(),
        )
            .prop_filter_map("non-zero", |(x, y, z, w, flip)| {
                let q = Vec4::new(x, y, z, w).try_normalize()?;
                let q = Quat::from_vec4(q);
                Some(if flip { -q } else { q })
            })
    }

    proptest! {
        #[test]
        fn quat_slerp_is_normalized_and_short(
            a in unit_quat(),
            b in unit_quat(),
            t in 0.0_f32..=1.0,
        ) {
            let q = a.interpolate(&b, t);
            prop_assert!(q.is_normalized(), "{q}");
            // On the short arc: the angles to both ends add up to the angle between them.
            let (total, to_a, to_b) = (angle(a, b), angle(a, q), angle(q, b));
            prop_assert!((to_a + to_b - total).abs() < 2e-3, "{to_a} + {to_b} vs {total}");
            prop_assert!((to_a - t * total).abs() < 2e-3, "{to_a} vs {t} * {total}");
            prop_assert!(total <= std::f32::consts::PI + 1e-3);
        }
    }
}
