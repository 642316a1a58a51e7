#![allow(clippy::unwrap_used)]
//! `Interpolate` for the provided types (exact ends, linear blends and extrapolation,
//! shortest-path normalized slerp that is never extrapolated), a user type with it as a
//! `#[replicated(interpolate)]` member, and `InterpolationBuffer` basics: blending between
//! samples, the 32-sample ring, stale samples, holding and capped extrapolation per type.

use glam::{Quat, Vec2, Vec3, Vec4};
use mf_net::interpolation::{Interpolate, InterpolationBuffer};
use mf_net::prelude::*;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The rotation angle between `a` and `b` (either cover), accurate for small angles.
fn angle(a: Quat, b: Quat) -> f32 {
    let d = a.conjugate() * b;
    2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
}

/// A deterministic spread of rotations: axes over the sphere, angles over a full turn.
fn rotations() -> Vec<Quat> {
    let mut out = Vec::new();
    for i in 0..12 {
        for j in 0..6 {
            let (theta, phi) = (i as f32 * 0.53, j as f32 * 0.61 - 1.5);
            let axis = Vec3::new(phi.cos() * theta.cos(), phi.sin(), phi.cos() * theta.sin());
            out.push(Quat::from_axis_angle(
                axis.normalize(),
                i as f32 * 0.57 - 3.1,
            ));
        }
    }
    out
}

/// The factors the edge-case tests sweep.
const FACTORS: [f32; 9] = [0.0, 1e-7, 0.1, 0.25, 0.4999, 0.5, 0.75, 0.9999999, 1.0];

// ---------------------------------------------------------------------------------------------
// Interpolate
// ---------------------------------------------------------------------------------------------

#[test]
fn factor_zero_and_one_are_exact_for_every_provided_type() {
    let floats = [0.1_f32, -7.3, 1e-20, 3.4e38, -0.0, 12_345.678, 0.7];
    for &a in &floats {
        for &b in &floats {
            assert_eq!(a.interpolate(&b, 0.0), a, "f32 {a} → {b} at 0");
            assert_eq!(a.interpolate(&b, 1.0), b, "f32 {a} → {b} at 1");
            let (a, b) = (f64::from(a) * 1.1, f64::from(b) / 3.0);
            assert_eq!(a.interpolate(&b, 0.0), a, "f64 {a} → {b} at 0");
            assert_eq!(a.interpolate(&b, 1.0), b, "f64 {a} → {b} at 1");
        }
    }
    let vectors = [
        Vec4::new(0.1, -2.5, 1e6, 0.7),
        Vec4::new(-0.3, 0.2, -1e-6, 9.9),
        Vec4::ZERO,
    ];
    for &a in &vectors {
        for &b in &vectors {
            assert_eq!(a.interpolate(&b, 0.0), a);
            assert_eq!(a.interpolate(&b, 1.0), b);
            let (a3, b3) = (a.truncate(), b.truncate());
            assert_eq!(a3.interpolate(&b3, 0.0), a3);
            assert_eq!(a3.interpolate(&b3, 1.0), b3);
            let (a2, b2) = (a3.truncate(), b3.truncate());
            assert_eq!(a2.interpolate(&b2, 0.0), a2);
            assert_eq!(a2.interpolate(&b2, 1.0), b2);
        }
    }
    for &a in &rotations() {
        for &b in &rotations() {
            assert_eq!(a.interpolate(&b, 0.0), a);
            assert_eq!(a.interpolate(&b, 1.0), b);
            assert_eq!(a.interpolate(&-b, 1.0), -b, "exactly `to`, whichever cover");
        }
    }
}

#[test]
fn linear_types_blend_and_extrapolate_along_the_line() {
    assert_eq!(1.0_f32.interpolate(&3.0, 0.5), 2.0);
    assert_eq!(1.0_f32.interpolate(&3.0, 2.5), 6.0);
    assert_eq!(1.0_f64.interpolate(&3.0, 1.25), 3.5);
    let (a, b) = (Vec2::new(0.0, 4.0), Vec2::new(2.0, 0.0));
    assert_eq!(a.interpolate(&b, 0.25), Vec2::new(0.5, 3.0));
    assert_eq!(a.interpolate(&b, 2.0), Vec2::new(4.0, -4.0));
    let (a, b) = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(2.0, 4.0, 6.0));
    assert_eq!(a.interpolate(&b, 0.5), Vec3::new(1.5, 3.0, 4.5));
    assert_eq!(a.interpolate(&b, 1.5), Vec3::new(2.5, 5.0, 7.5));
    let (a, b) = (Vec4::ZERO, Vec4::ONE);
    assert_eq!(a.interpolate(&b, 0.75), Vec4::splat(0.75));
    // Steady in `t`: equal steps of `t` give equal steps of value, across the 0.5 seam.
    let (a, b) = (Vec3::new(-5.0, 0.5, 100.0), Vec3::new(7.0, -0.25, 40.0));
    let step = (b - a) / 64.0;
    for i in 0..=128 {
        let v = a.interpolate(&b, i as f32 / 64.0);
        assert!((v - (a + step * i as f32)).length() < 1e-4, "{i}: {v}");
    }
    const { assert!(<f32 as Interpolate>::EXTRAPOLATE) };
    const { assert!(<f64 as Interpolate>::EXTRAPOLATE) };
    const { assert!(<Vec2 as Interpolate>::EXTRAPOLATE) };
    const { assert!(<Vec3 as Interpolate>::EXTRAPOLATE) };
    const { assert!(<Vec4 as Interpolate>::EXTRAPOLATE) };
}

#[test]
fn quaternions_are_never_extrapolated() {
    const { assert!(!<Quat as Interpolate>::EXTRAPOLATE) };
    let (a, b) = (Quat::from_rotation_z(0.1), Quat::from_rotation_z(0.4));
    assert_eq!(a.interpolate(&b, 1.5), b);
    assert_eq!(a.interpolate(&b, 100.0), b);
}

#[test]
fn slerp_takes_the_short_path_for_q_and_minus_q() {
    let all = rotations();
    for &a in &all {
        for &b in &all {
            let total = angle(a, b);
            assert!(total <= std::f32::consts::PI + 1e-4);
            for &t in &FACTORS[1..FACTORS.len() - 1] {
                let q = a.interpolate(&b, t);
                let q_neg = a.interpolate(&-b, t);
                assert!(angle(q, q_neg) < 1e-4, "{a} → ±{b} at {t}: {q} vs {q_neg}");
                // On the short arc, at the fraction `t` of it.
                let (to_a, to_b) = (angle(a, q), angle(q, b));
                assert!((to_a + to_b - total).abs() < 1e-3, "{a} → {b} at {t}");
                assert!((to_a - t * total).abs() < 1e-3, "{a} → {b} at {t}");
            }
        }
    }
    // The textbook case: 350° about an axis is −10°; halfway is −5°, not 175°.
    let a = Quat::IDENTITY;
    let b = Quat::from_rotation_y(350_f32.to_radians());
    let mid = a.interpolate(&b, 0.5);
    assert!(
        angle(mid, Quat::from_rotation_y(-5_f32.to_radians())) < 1e-4,
        "{mid}"
    );
}

#[test]
fn slerp_results_are_normalized() {
    let all = rotations();
    for &a in &all {
        for &b in &all {
            for &t in &FACTORS[1..FACTORS.len() - 1] {
                let q = a.interpolate(&b, t);
                assert!((q.length() - 1.0).abs() < 1e-6, "{a} → {b} at {t}: |{q}|");
            }
        }
    }
    // Inputs that drifted from unit length still blend to a unit quaternion.
    let (a, b) = (
        Quat::from_rotation_x(0.3) * 1.01,
        Quat::from_rotation_y(1.0) * 0.98,
    );
    for &t in &FACTORS[1..FACTORS.len() - 1] {
        assert!((a.interpolate(&b, t).length() - 1.0).abs() < 1e-6);
    }
}

// ---------------------------------------------------------------------------------------------
// A user type
// ---------------------------------------------------------------------------------------------

/// A position and a rotation blended together: the position extrapolates, the rotation is
/// held (`Quat`'s implementation clamps `t`).
#[derive(NetCodec, Debug, Clone, Copy, PartialEq, Default)]
struct Pose {
    position: Vec3,
    rotation: Quat,
}

impl Interpolate for Pose {
    fn interpolate(&self, to: &Self, t: f32) -> Self {
        Pose {
            position: self.position.interpolate(&to.position, t),
            rotation: self.rotation.interpolate(&to.rotation, t),
        }
    }
}

#[derive(Replicated, Default)]
struct Body {
    #[replicated(interpolate)]
    pose: Pose,
    #[replicated(interpolate)]
    speed: f64,
    #[replicated]
    name: String,
}

#[test]
fn user_types_can_be_interpolated_members() {
    let flags: Vec<(&str, bool)> = Body::MEMBERS
        .iter()
        .map(|m| (m.name, m.interpolate))
        .collect();
    assert_eq!(flags, [("pose", true), ("speed", true), ("name", false)]);

    let mut poses = InterpolationBuffer::new();
    let pose = |x: f32, angle: f32| Pose {
        position: Vec3::new(x, 0.0, 0.0),
        rotation: Quat::from_rotation_y(angle),
    };
    poses.push(10, pose(1.0, 0.0));
    poses.push(11, pose(2.0, 0.2));
    let mid = poses.sample(10.5, 11, 15.0).unwrap();
    assert_eq!(mid.position, Vec3::new(1.5, 0.0, 0.0));
    assert!(angle(mid.rotation, Quat::from_rotation_y(0.1)) < 1e-5);
    // Late data: the position keeps going, the rotation holds.
    let ahead = poses.sample(13.0, 11, 15.0).unwrap();
    assert_eq!(ahead.position, Vec3::new(4.0, 0.0, 0.0));
    assert_eq!(ahead.rotation, Quat::from_rotation_y(0.2));
}

// ---------------------------------------------------------------------------------------------
// InterpolationBuffer
// ---------------------------------------------------------------------------------------------

#[test]
fn buffer_blends_between_the_samples_around_the_render_tick() {
    let mut b = InterpolationBuffer::new();
    // Uneven spacing: 0 → 10 over ticks 100..102, 10 → 40 over 102..105.
    b.push(100, Vec3::ZERO);
    b.push(102, Vec3::splat(10.0));
    b.push(105, Vec3::splat(40.0));
    let at = |tick: f64| b.sample(tick, 105, 0.0).unwrap();
    assert_eq!(at(100.0), Vec3::ZERO);
    assert_eq!(at(101.0), Vec3::splat(5.0));
    assert_eq!(at(102.0), Vec3::splat(10.0));
    assert_eq!(at(103.5), Vec3::splat(25.0));
    assert_eq!(at(105.0), Vec3::splat(40.0));
    assert_eq!(at(99.0), Vec3::ZERO, "before the oldest: the oldest");
    assert_eq!(at(-1e9), Vec3::ZERO);
    // Fine steps are continuous and monotonic.
    let mut previous = at(100.0).x;
    for i in 1..=500 {
        let x = at(100.0 + f64::from(i) / 100.0).x;
        assert!(
            x >= previous && x - previous <= 0.1 + 1e-4,
            "{i}: {previous} → {x}"
        );
        previous = x;
    }
}

#[test]
fn buffer_keeps_the_last_32_samples_in_a_ring() {
    let mut b = InterpolationBuffer::new();
    assert_eq!(InterpolationBuffer::<f32>::CAPACITY, 32);
    for tick in 1..=1000u32 {
        assert!(b.push(tick, tick as f32));
        assert!(b.len() <= 32);
        let (oldest, _) = b.oldest().unwrap();
        assert_eq!(oldest, tick.saturating_sub(31).max(1));
        // Every tick still in the ring is blended exactly.
        let mid = f64::from(oldest) + 0.5;
        if tick > oldest {
            assert_eq!(b.sample(mid, tick, 0.0), Some(oldest as f32 + 0.5));
        }
    }
    let ticks: Vec<u32> = b.iter().map(|(tick, _)| tick).collect();
    assert_eq!(ticks, (969..=1000).collect::<Vec<_>>());
    assert_eq!(b.get(0), Some((969, &969.0)));
    assert_eq!(b.get(31), Some((1000, &1000.0)));
    assert_eq!(b.newest(), Some((1000, &1000.0)));
    // Older than the ring: the oldest kept value.
    assert_eq!(b.sample(500.0, 1000, 0.0), Some(969.0));
}

#[test]
fn buffer_ignores_samples_at_or_before_the_newest_tick() {
    let mut b = InterpolationBuffer::new();
    assert!(b.push(50, 5.0_f64));
    assert!(b.push(52, 7.0));
    assert!(!b.push(52, 100.0), "duplicate");
    assert!(!b.push(51, 100.0), "reordered");
    assert!(!b.push(0, 100.0), "ancient");
    assert!(!b.push_with_hold(51, 52, 100.0));
    assert_eq!(b.len(), 2);
    assert_eq!(b.sample(51.0, 52, 0.0), Some(6.0));
    assert!(b.push(53, 8.0));
    assert_eq!(b.newest(), Some((53, &8.0)));
}

#[test]
fn buffer_holds_quaternions_and_extrapolates_vectors_for_at_most_the_cap() {
    let mut rot = InterpolationBuffer::new();
    let mut pos = InterpolationBuffer::new();
    for tick in 0..10u32 {
        rot.push(tick, Quat::from_rotation_z(0.1 * tick as f32));
        pos.push(tick, Vec2::new(tick as f32, -2.0 * tick as f32));
    }
    let cap = 4.0;
    for i in 0..100 {
        let render = 9.0 + f64::from(i) * 0.1;
        let p = pos.sample(render, 9, cap).unwrap();
        let expected = (render.min(9.0 + cap)) as f32;
        assert!(
            (p - Vec2::new(expected, -2.0 * expected)).length() < 1e-4,
            "{render}: {p}"
        );
        assert_eq!(
            rot.sample(render, 9, cap).as_ref(),
            rot.newest().map(|(_, q)| q)
        );
    }
    // Still blended between samples.
    let q = rot.sample(4.5, 9, cap).unwrap();
    assert!(angle(q, Quat::from_rotation_z(0.45)) < 1e-5);
    // Known past the newest: the position holds too.
    assert_eq!(pos.sample(12.0, 10, cap), Some(Vec2::new(9.0, -18.0)));
}
