#![allow(clippy::unwrap_used)]
//! `#[replicated(quantize(min = .., max = .., bits = ..))]`: round-trip error, clamping, NaN,
//! pinned bytes, no resend for changes below one step, convergence over `Multiplayer` (plain
//! and interpolated members), schema hash and registry dump, and zero allocations; and the same
//! for `quantize(smallest_three, bits = ..)` rotations (`Quat`).

use glam::{Quat, Vec3};
use mf_net::codec::quantize::{Quantization, Quantize, QuantizeRotation};
use mf_net::codec::NetCodec;
use mf_net::prelude::*;
use mf_net::replication::{MemberInfo, ReplicationRegistry, SnapshotEncoding};
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::World;
use proptest::prelude::*;

const POS: Quantization = Quantization::new(-100.0, 100.0, 16);
const THROTTLE: Quantization = Quantization::new(0.0, 1.0, 8);
const ALTITUDE: Quantization = Quantization::new(-1000.0, 1000.0, 20);
const HEADING: Quantization = Quantization::new(0.0, 360.0, 12);

#[derive(Replicated, Debug, Clone, PartialEq, Default)]
struct Drone {
    #[replicated(quantize(min = -100.0, max = 100.0, bits = 16))]
    position: Vec3,
    #[replicated(quantize(min = 0, max = 1, bits = 8))]
    throttle: f32,
    #[replicated(quantize(min = -1000.0, max = 1000.0, bits = 20))]
    altitude: f64,
    #[replicated]
    health: i32,
}

/// The same members as [`Drone`] but unquantized: a different schema.
#[derive(Replicated, Debug, Clone, PartialEq, Default)]
struct PlainDrone {
    #[replicated]
    position: Vec3,
}

/// Interpolated and quantized.
#[derive(Replicated, Debug, Clone, PartialEq, Default)]
struct Glider {
    #[replicated(interpolate, quantize(min = -100.0, max = 100.0, bits = 16))]
    position: Vec3,
    #[replicated(quantize(min = 0.0, max = 360.0, bits = 12), on_change = Glider::turned)]
    heading: f32,
    turns: u32,
}

impl Glider {
    fn turned(&mut self) {
        self.turns += 1;
    }
}

const DRONE: SceneIndex = SceneIndex::new(0);
const GLIDER: SceneIndex = SceneIndex::new(1);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("drone", |scene, root| {
            scene.set_value(root, Drone::default())
        })
        .unwrap();
    scenes
        .register("glider", |scene, root| {
            scene.set_value(root, Glider::default())
        })
        .unwrap();
    scenes
}

/// The value `v` comes back as.
fn bucket_f32(q: &Quantization, v: f32) -> f32 {
    let mut w = NetWriter::new();
    v.encode_quantized(q, &mut w);
    let mut r = NetReader::new(w.as_slice());
    let back = f32::decode_quantized(q, &mut r).unwrap();
    r.finish().unwrap();
    back
}

fn bucket_vec3(q: &Quantization, v: Vec3) -> Vec3 {
    Vec3::new(bucket_f32(q, v.x), bucket_f32(q, v.y), bucket_f32(q, v.z))
}

fn since<T: Replicated>(s: &T::State, tick: u32) -> Vec<u8> {
    let mut w = NetWriter::new();
    T::write_since(s, tick, &mut w);
    w.into_vec()
}

// ---------------------------------------------------------------------------------------------
// The codec
// ---------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn f64_round_trip_is_within_half_a_step(
        (min, span) in (-1e4f64..1e4, 1e-3f64..1e4),
        bits in 1u32..=32,
        t in 0.0f64..=1.0,
    ) {
        let q = Quantization::new(min, min + span, bits);
        let v = min + span * t;
        let mut w = NetWriter::new();
        v.encode_quantized(&q, &mut w);
        prop_assert_eq!(w.len(), bits.div_ceil(8) as usize);
        let back = f64::decode_quantized(&q, &mut NetReader::new(w.as_slice())).unwrap();
        let tolerance = q.step() / 2.0 * (1.0 + 1e-9) + 1e-12 * (min.abs() + span);
        prop_assert!((back - v).abs() <= tolerance, "{v} -> {back}, step {}", q.step());
        // The decoded value is in the same bucket: re-sending it sends the same bytes.
        prop_assert!(back.quantized_eq(&v, &q));
    }

    #[test]
    fn f32_and_vec3_round_trip_is_within_half_a_step(
        bits in 1u32..=20,
        (x, y, z) in (-100.0f32..=100.0, -100.0f32..=100.0, -100.0f32..=100.0),
    ) {
        let q = Quantization::new(-100.0, 100.0, bits);
        // Half a step, plus the f32 rounding of the decoded value.
        let tolerance = (q.step() / 2.0) as f32 + 100.0 * f32::EPSILON;
        let v = Vec3::new(x, y, z);
        let mut w = NetWriter::new();
        v.encode_quantized(&q, &mut w);
        prop_assert_eq!(w.len(), 3 * bits.div_ceil(8) as usize);
        let back = Vec3::decode_quantized(&q, &mut NetReader::new(w.as_slice())).unwrap();
        prop_assert!((back - v).abs().max_element() <= tolerance, "{v} -> {back}");
        prop_assert!(back.quantized_eq(&v, &q));
        prop_assert_eq!(bucket_f32(&q, x), back.x);
    }
}

#[test]
fn values_out_of_range_clamp_to_the_ends_exactly() {
    assert_eq!(bucket_f32(&POS, 250.0), 100.0);
    assert_eq!(bucket_f32(&POS, -1e30), -100.0);
    assert_eq!(bucket_f32(&POS, f32::INFINITY), 100.0);
    assert_eq!(bucket_f32(&POS, f32::NEG_INFINITY), -100.0);
    assert_eq!(bucket_f32(&POS, 100.0), 100.0);
    assert_eq!(bucket_f32(&POS, -100.0), -100.0);
    let mut w = NetWriter::new();
    Vec3::new(-500.0, 0.0, 500.0).encode_quantized(&POS, &mut w);
    // Bucket 0, the middle one (32768 = 0x8000: 0.0 rounds up from 32767.5), the last one.
    assert_eq!(w.as_slice(), &[0x00, 0x00, 0x00, 0x80, 0xff, 0xff]);
}

#[test]
fn nan_decodes_as_min() {
    assert_eq!(bucket_f32(&POS, f32::NAN), -100.0);
    assert_eq!(bucket_f32(&THROTTLE, f32::NAN), 0.0);
    assert!(f32::NAN.quantized_eq(&-100.0, &POS));
    let mut w = NetWriter::new();
    f64::NAN.encode_quantized(&ALTITUDE, &mut w);
    assert_eq!(w.as_slice(), &[0, 0, 0]);
}

// ---------------------------------------------------------------------------------------------
// The derive
// ---------------------------------------------------------------------------------------------

#[test]
fn snapshot_entry_bytes_are_pinned() {
    let mut d = Drone {
        health: 100,
        ..Drone::default()
    };
    let mut s = d.new_state(0);
    d.position = Vec3::new(-100.0, 0.0, 100.0);
    assert!(d.capture(&mut s, 1));
    // Mask (bit 0), then 3 × 2 bytes: buckets 0, 32768, 65535.
    assert_eq!(
        since::<Drone>(&s, 0),
        [0b0001, 0x00, 0x00, 0x00, 0x80, 0xff, 0xff]
    );
    d.throttle = 1.0;
    d.altitude = 1000.0;
    assert!(d.capture(&mut s, 2));
    // Throttle: 1 byte (8 bits); altitude: 3 bytes (20 bits, last bucket 0x0f_ffff).
    assert_eq!(since::<Drone>(&s, 1), [0b0110, 0xff, 0xff, 0xff, 0x0f]);
    // The full state: mask + 6 + 1 + 3 + 4 (health, an unquantized i32).
    let mut w = NetWriter::new();
    Drone::write_full(&s, &mut w);
    assert_eq!(w.len(), 1 + 6 + 1 + 3 + 4);
    let mut back = Drone::default();
    back.read(&mut NetReader::new(w.as_slice())).unwrap();
    // The middle bucket is not 0.0 (65535 buckets have no middle one): 32768 is one half-step
    // above it.
    assert_eq!(
        back.position,
        Vec3::new(-100.0, POS.value(32_768) as f32, 100.0)
    );
    assert!(back.position.y > 0.0 && back.position.y < POS.step() as f32);
    assert_eq!(
        (back.throttle, back.altitude, back.health),
        (1.0, 1000.0, 100)
    );
}

#[test]
fn changes_below_one_step_are_not_sent() {
    // A value in the middle of its bucket, and moves of less than half a step either way.
    let centre = POS.value(40_000) as f32;
    let step = POS.step() as f32;
    let throttle = THROTTLE.value(100) as f32;
    let altitude = ALTITUDE.value(500_000);
    let mut d = Drone {
        position: Vec3::splat(centre),
        throttle,
        altitude,
        ..Drone::default()
    };
    let mut s = d.new_state(0);
    for (tick, nudge) in [0.2f32, -0.3, 0.4, -0.1].into_iter().enumerate() {
        d.position = Vec3::splat(centre + nudge * step);
        d.throttle = throttle + nudge * THROTTLE.step() as f32;
        d.altitude = altitude + f64::from(nudge) * ALTITUDE.step();
        assert!(!d.capture(&mut s, tick as u32 + 1), "nudge {nudge}");
    }
    assert_eq!(since::<Drone>(&s, 0), [0]);
    // A whole step is a change, of that member only.
    d.position.y = centre + step;
    assert!(d.capture(&mut s, 9));
    let bytes = since::<Drone>(&s, 0);
    assert_eq!(bytes.len(), 7);
    assert_eq!(bytes[0], 0b0001);
    assert_eq!(&bytes[3..5], &40_001u16.to_le_bytes());
}

#[test]
fn schema_hash_and_members_carry_the_quantization() {
    assert_ne!(Drone::SCHEMA_HASH, PlainDrone::SCHEMA_HASH);
    assert_eq!(
        Drone::MEMBERS[0],
        MemberInfo {
            name: "position",
            type_name: <Vec3 as NetCodec>::NAME,
            schema_hash: <Vec3 as NetCodec>::SCHEMA_HASH,
            interpolate: false,
            predict: false,
            condition: MemberCondition::Always,
            initial_only: false,
            on_change: None,
            quantize: Some(POS),
        }
    );
    assert_eq!(Drone::MEMBERS[1].quantize, Some(THROTTLE));
    assert_eq!(Drone::MEMBERS[2].quantize, Some(ALTITUDE));
    assert_eq!(Drone::MEMBERS[3].quantize, None);
    assert_eq!(Glider::MEMBERS[1].quantize, Some(HEADING));
    let dump = ReplicationRegistry::global().dump();
    assert!(
        dump.contains("position: Vec3 (schema 0x")
            && dump.contains(", quantize(min = -100.0, max = 100.0, bits = 16)\n")
            && dump.contains(", interpolate, quantize(min = -100.0, max = 100.0, bits = 16)\n")
            && dump.contains(
                ", on_change = Glider::turned, quantize(min = 0.0, max = 360.0, bits = 12)\n"
            ),
        "{dump}"
    );
}

use mf_net::replication::MemberCondition;

// ---------------------------------------------------------------------------------------------
// Over `Multiplayer`
// ---------------------------------------------------------------------------------------------

fn spawn<T: Replicated + 'static>(world: &mut World, scene: SceneIndex) -> (NetRef<T>, NetRef<T>) {
    let root = world.root();
    let node = world.server.spawn(scene, root, PeerId::SERVER).unwrap();
    let h = world.server.scene().net_ref::<T>(node).unwrap();
    world.step(2);
    let id = world.server.net_id(node).unwrap();
    let copy = world.clients[0].node(id).unwrap();
    (h, world.clients[0].scene().net_ref::<T>(copy).unwrap())
}

#[test]
fn a_client_converges_to_the_quantized_values() {
    let mut world = World::new(1, library);
    let (drone, drone_copy) = spawn::<Drone>(&mut world, DRONE);
    let (glider, glider_copy) = spawn::<Glider>(&mut world, GLIDER);
    for frame in 0..60 {
        let t = frame as f32 * 0.37;
        let d = world.server.scene_mut().get_mut(drone).unwrap();
        d.position = Vec3::new(t.sin() * 50.0, t * 1.3, -t);
        d.throttle = t.cos().abs();
        d.altitude = f64::from(t) * 12.345;
        let g = world.server.scene_mut().get_mut(glider).unwrap();
        g.position = Vec3::new(t, -t * 0.5, 3.0 + t.sin());
        g.heading = (t * 40.0) % 360.0;
        world.frame();
    }
    // Let the interpolation buffer reach its newest sample.
    world.step(30);
    world.assert_converged();
    let server = world.server.scene().get(drone).unwrap().clone();
    let client = world.clients[0].scene().get(drone_copy).unwrap().clone();
    assert_eq!(client.position, bucket_vec3(&POS, server.position));
    assert_ne!(client.position, server.position, "the client sees buckets");
    assert_eq!(client.throttle, bucket_f32(&THROTTLE, server.throttle));
    assert_eq!(
        client.altitude,
        ALTITUDE.value(ALTITUDE.index(server.altitude))
    );
    let server = world.server.scene().get(glider).unwrap().clone();
    let client = world.clients[0].scene().get(glider_copy).unwrap().clone();
    assert_eq!(client.position, bucket_vec3(&POS, server.position));
    assert_eq!(client.heading, bucket_f32(&HEADING, server.heading));
    assert!(client.turns > 0);
}

#[test]
fn sub_step_changes_keep_the_snapshot_idle() {
    // The byte format's sizes (the bit-packed idle snapshot is the same 9 bytes).
    let mut world = World::with_encoding(1, SnapshotEncoding::Bytes, library);
    let (drone, drone_copy) = spawn::<Drone>(&mut world, DRONE);
    let centre = POS.value(12_345) as f32;
    let step = POS.step() as f32;
    world.server.scene_mut().get_mut(drone).unwrap().position = Vec3::splat(centre);
    world.step(3);
    // One changed quantized Vec3: header + flags + terminator (9 B) + net id, length, mask
    // (3 B) + 3 × 2 B.
    world.server.scene_mut().get_mut(drone).unwrap().position = Vec3::splat(centre + step);
    world.frame();
    assert_eq!(world.clients[0].stats().last_snapshot_bytes, 9 + 3 + 6);
    world.server.scene_mut().get_mut(drone).unwrap().position = Vec3::splat(centre);
    world.step(2);
    for frame in 0..30 {
        let nudge = if frame % 2 == 0 { 0.3 } else { -0.3 };
        world.server.scene_mut().get_mut(drone).unwrap().position =
            Vec3::splat(centre + nudge * step);
        world.frame();
        assert_eq!(
            world.clients[0].stats().last_snapshot_bytes,
            9,
            "frame {frame}"
        );
    }
    assert_eq!(
        world.clients[0].scene().get(drone_copy).unwrap().position,
        Vec3::splat(centre)
    );
}

#[test]
fn hundred_quantized_nodes_allocate_nothing() {
    let mut world = World::new(1, library);
    let root = world.root();
    let mut handles = Vec::new();
    for i in 0..100 {
        let scene = if i % 2 == 0 { DRONE } else { GLIDER };
        handles.push(world.server.spawn(scene, root, PeerId::SERVER).unwrap());
    }
    world.step(3);
    let drones: Vec<NetRef<Drone>> = world
        .server
        .scene()
        .iter::<Drone>()
        .map(|(h, _)| h)
        .collect();
    let gliders: Vec<NetRef<Glider>> = world
        .server
        .scene()
        .iter::<Glider>()
        .map(|(h, _)| h)
        .collect();
    assert_eq!(drones.len() + gliders.len(), 100);
    let churn = |world: &mut World, frame: u32| {
        let t = frame as f32 * 0.1;
        for (i, &h) in drones.iter().enumerate() {
            let d = world.server.scene_mut().get_mut(h).unwrap();
            d.position = Vec3::new(t + i as f32, -t, t.sin());
            d.altitude = f64::from(t);
        }
        for (i, &h) in gliders.iter().enumerate() {
            let g = world.server.scene_mut().get_mut(h).unwrap();
            g.position = Vec3::new(-t, t + i as f32, t.cos());
            g.heading = (t * 10.0) % 360.0;
        }
    };
    for frame in 0..200 {
        churn(&mut world, frame);
        world.frame();
    }
    assert_no_alloc("240 frames of quantized nodes", || {
        for frame in 200..440 {
            churn(&mut world, frame);
            world.frame();
        }
    });
    world.step(30);
    world.assert_converged();
}

// ---------------------------------------------------------------------------------------------
// Smallest-three rotations: `quantize(smallest_three, bits = ..)` on a `Quat`
// ---------------------------------------------------------------------------------------------

const ROT12: Quantization = Quantization::smallest_three(12);
const ROT10: Quantization = Quantization::smallest_three(10);

#[derive(Replicated, Debug, Clone, PartialEq, Default)]
struct Turret {
    #[replicated(quantize(smallest_three, bits = 12))]
    aim: Quat,
    #[replicated(interpolate, quantize(smallest_three, bits = 10))]
    body: Quat,
    #[replicated]
    ammo: u8,
}

/// The same members unquantized, and quantized more finely: other schemas.
#[derive(Replicated, Debug, Clone, PartialEq, Default)]
struct PlainTurret {
    #[replicated]
    aim: Quat,
}

#[derive(Replicated, Debug, Clone, PartialEq, Default)]
struct FineTurret {
    #[replicated(quantize(smallest_three, bits = 16))]
    aim: Quat,
}

const TURRET: SceneIndex = SceneIndex::new(0);

fn turret_library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("turret", |scene, root| {
            scene.set_value(root, Turret::default())
        })
        .unwrap();
    scenes
}

fn encode_quat(q: &Quantization, v: Quat) -> Vec<u8> {
    let mut w = NetWriter::new();
    v.encode_quantized(q, &mut w);
    w.into_vec()
}

/// The rotation `v` comes back as.
fn rotation(q: &Quantization, v: Quat) -> Quat {
    let bytes = encode_quat(q, v);
    let mut r = NetReader::new(&bytes);
    let back = Quat::decode_quantized(q, &mut r).unwrap();
    r.finish().unwrap();
    back
}

/// The angle of the rotation from `a` to `b`, in radians, computed in `f64` (`acos` of an `f32`
/// dot product near 1 would be off by more than the 16-bit error).
fn angle(a: Quat, b: Quat) -> f64 {
    let (a, b) = (a.as_dquat().normalize(), b.as_dquat());
    let b = if a.dot(b) < 0.0 { -b } else { b };
    4.0 * ((a - b).length() / 2.0).min(1.0).asin()
}

/// `√6 / M`, `M = 2^(bits−1) − 1`: the documented bound.
fn max_angle(bits: u32) -> f64 {
    6f64.sqrt() / f64::from((1u32 << (bits - 1)) - 1)
}

fn unit_quat() -> impl Strategy<Value = Quat> {
    (-1.0f32..=1.0, -1.0f32..=1.0, -1.0f32..=1.0, -1.0f32..=1.0).prop_filter_map(
        "too short to normalize",
        |(x, y, z, w)| {
            let q = Quat::from_xyzw(x, y, z, w);
            (q.length() > 0.1).then(|| q.normalize())
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn smallest_three_angular_error_is_bounded(v in unit_quat(), bits in 9u32..=16) {
        let q = Quantization::smallest_three(bits);
        let bytes = encode_quat(&q, v);
        prop_assert_eq!(bytes.len(), (2 + 3 * bits).div_ceil(8) as usize);
        let back = rotation(&q, v);
        prop_assert!((back.length() - 1.0).abs() < 1e-6, "{back} is not a unit quaternion");
        let error = angle(v, back);
        // The bound, plus the `f32` rounding of the input and of the decoded value.
        prop_assert!(error <= max_angle(bits) + 2e-6, "{v} -> {back}: {error} rad at {bits} bits");
        // The decoded rotation encodes alike (re-sending it sends the same bytes), unless two
        // components tie for the largest within a step (the decoded one may then name the
        // other); the same rotation's other quaternion always does.
        let mut m = v.to_array().map(f32::abs);
        m.sort_by(f32::total_cmp);
        if m[3] - m[2] > 4.0 / ((1u32 << (bits - 1)) - 1) as f32 {
            prop_assert!(back.quantized_eq(&v, &q));
        }
        prop_assert_eq!(encode_quat(&q, -v), bytes);
        prop_assert!((-v).quantized_eq(&v, &q));
    }

    #[test]
    fn smallest_three_decodes_any_bytes_without_panicking(
        bytes in proptest::collection::vec(any::<u8>(), 7),
        bits in 9u32..=16,
    ) {
        let q = Quantization::smallest_three(bits);
        let mut r = NetReader::new(&bytes[..q.bytes()]);
        if let Ok(back) = Quat::decode_quantized(&q, &mut r) {
            prop_assert!(back.is_finite() && (back.length() - 1.0).abs() < 1e-5, "{back}");
        }
    }
}

#[test]
fn smallest_three_bytes_are_pinned() {
    // Identity at 12 bits: largest w (index 3), x = y = z = 0 at the centre index 2047;
    // 3 | 2047 << 2 | 2047 << 14 | 2047 << 26 in 5 bytes (38 bits).
    let packed: u64 = 3 | 2047 << 2 | 2047 << 14 | 2047 << 26;
    assert_eq!(
        encode_quat(&ROT12, Quat::IDENTITY),
        &packed.to_le_bytes()[..5]
    );
    assert_eq!(
        encode_quat(&ROT12, Quat::IDENTITY),
        [0xff, 0xdf, 0xff, 0xfd, 0x1f]
    );
    assert_eq!(rotation(&ROT12, Quat::IDENTITY), Quat::IDENTITY);
    // (0.1, −0.5, 0.3, −0.8) / |..|: w is the largest and negative, so the quaternion is
    // negated; x, y, z = −0.1005, 0.5025, −0.3015 → indexes 1756, 3502, 1174.
    let v = Quat::from_xyzw(0.1, -0.5, 0.3, -0.8).normalize();
    let packed: u64 = 3 | 1756 << 2 | 3502 << 14 | 1174 << 26;
    assert_eq!(encode_quat(&ROT12, v), &packed.to_le_bytes()[..5]);
    assert_eq!(encode_quat(&ROT12, v), [0x73, 0x9b, 0x6b, 0x5b, 0x12]);
    // NaN, ±∞ and zero quaternions are sent as the identity.
    for bad in [
        Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
        Quat::from_xyzw(0.0, f32::INFINITY, 0.0, 0.0),
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    ] {
        assert_eq!(rotation(&ROT12, bad), Quat::IDENTITY, "{bad}");
    }
    // Set padding bits and the unused index 2^N − 1 are refused.
    let mut r = NetReader::new(&[0xff, 0xdf, 0xff, 0xfd, 0x3f]);
    assert!(Quat::decode_quantized(&ROT12, &mut r).is_err());
    let unused: u64 = 3 | 4095 << 2;
    let unused = unused.to_le_bytes();
    let mut r = NetReader::new(&unused[..5]);
    assert!(Quat::decode_quantized(&ROT12, &mut r).is_err());
    let mut r = NetReader::new(&[0xff, 0xdf, 0xff, 0xfd]);
    assert!(Quat::decode_quantized(&ROT12, &mut r).is_err(), "truncated");
}

/// A rotation whose sent components are at their buckets' centres, so that tiny nudges stay
/// in the bucket.
fn centred_rotation(q: &Quantization) -> Quat {
    rotation(q, Quat::from_euler(glam::EulerRot::YXZ, 0.7, -0.3, 0.2))
}

#[test]
fn smallest_three_changes_below_one_step_are_not_sent() {
    let aim = centred_rotation(&ROT12);
    let body = centred_rotation(&ROT10);
    let mut t = Turret { aim, body, ammo: 3 };
    let mut s = t.new_state(0);
    for (tick, nudge) in [1e-5f32, -2e-5, 3e-5, -1e-5].into_iter().enumerate() {
        t.aim = Quat::from_rotation_x(nudge) * aim;
        t.body = -(Quat::from_rotation_z(nudge) * body); // −q: the same rotation
        assert!(!t.capture(&mut s, tick as u32 + 1), "nudge {nudge}");
    }
    assert_eq!(since::<Turret>(&s, 0), [0]);
    // A turn of a degree is a change, of that member only: mask + 5 bytes.
    t.aim = Quat::from_rotation_y(1f32.to_radians()) * aim;
    assert!(t.capture(&mut s, 9));
    let bytes = since::<Turret>(&s, 0);
    assert_eq!(bytes[0], 0b001);
    assert_eq!(&bytes[1..], encode_quat(&ROT12, t.aim));
}

#[test]
fn smallest_three_schema_hash_and_members() {
    assert_ne!(Turret::SCHEMA_HASH, PlainTurret::SCHEMA_HASH);
    assert_ne!(FineTurret::SCHEMA_HASH, PlainTurret::SCHEMA_HASH);
    assert_eq!(Turret::MEMBERS[0].quantize, Some(ROT12));
    assert_eq!(Turret::MEMBERS[1].quantize, Some(ROT10));
    assert!(Turret::MEMBERS[1].interpolate);
    assert_eq!(
        FineTurret::MEMBERS[0].quantize,
        Some(Quantization::smallest_three(16))
    );
    assert!(ROT12.is_smallest_three() && !POS.is_smallest_three());
    assert_ne!(ROT12, Quantization::new(ROT12.min(), ROT12.max(), 12));
    let dump = ReplicationRegistry::global().dump();
    assert!(
        dump.contains("aim: Quat (schema 0x")
            && dump.contains(", quantize(smallest_three, bits = 12)\n")
            && dump.contains(", interpolate, quantize(smallest_three, bits = 10)\n"),
        "{dump}"
    );
}

fn turn(t: &mut Turret, frame: u32) {
    let a = frame as f32 * 0.05;
    t.aim = Quat::from_euler(glam::EulerRot::YXZ, a, (a * 0.7).sin(), a * 0.3);
    t.body = Quat::from_rotation_y(a * 0.5) * Quat::from_rotation_x(0.2);
}

#[test]
fn smallest_three_client_converges_and_slerps() {
    let mut world = World::new(1, turret_library);
    let (turret, copy) = spawn::<Turret>(&mut world, TURRET);
    for frame in 0..60 {
        turn(world.server.scene_mut().get_mut(turret).unwrap(), frame);
        world.frame();
        // The interpolated member blends (slerps) decoded rotations: always a unit quaternion,
        // within a step's error and a frame's turn of the server's.
        let server = world.server.scene().get(turret).unwrap().body;
        let client = world.clients[0].scene().get(copy).unwrap().body;
        assert!((client.length() - 1.0).abs() < 1e-5, "{client}");
        assert!(angle(server, client) < 0.5, "frame {frame}");
    }
    world.step(30);
    world.assert_converged();
    let server = world.server.scene().get(turret).unwrap().clone();
    let client = world.clients[0].scene().get(copy).unwrap().clone();
    assert_eq!(client.aim, rotation(&ROT12, server.aim));
    assert_eq!(client.body, rotation(&ROT10, server.body));
    assert_ne!(
        client.aim, server.aim,
        "the client sees quantized rotations"
    );
    assert!(angle(server.aim, client.aim) <= max_angle(12) + 2e-6);
    assert!(angle(server.body, client.body) <= max_angle(10) + 2e-6);
}

#[test]
fn smallest_three_sub_step_changes_keep_the_snapshot_idle() {
    // The byte format's sizes (the bit-packed idle snapshot is the same 9 bytes).
    let mut world = World::with_encoding(1, SnapshotEncoding::Bytes, turret_library);
    let (turret, copy) = spawn::<Turret>(&mut world, TURRET);
    let aim = centred_rotation(&ROT12);
    world.server.scene_mut().get_mut(turret).unwrap().aim = aim;
    world.step(3);
    // One changed 12-bit rotation: header + flags + terminator (9 B) + net id, length, mask
    // (3 B) + 5 B.
    let turned = Quat::from_rotation_z(0.1) * aim;
    world.server.scene_mut().get_mut(turret).unwrap().aim = turned;
    world.frame();
    assert_eq!(world.clients[0].stats().last_snapshot_bytes, 9 + 3 + 5);
    world.server.scene_mut().get_mut(turret).unwrap().aim = aim;
    world.step(2);
    for frame in 0..30 {
        let nudge = if frame % 2 == 0 { 2e-5 } else { -2e-5 };
        let t = world.server.scene_mut().get_mut(turret).unwrap();
        // A sub-step turn, sometimes as the other quaternion of the same rotation.
        t.aim = Quat::from_rotation_x(nudge) * aim;
        if frame % 3 == 0 {
            t.aim = -t.aim;
        }
        world.frame();
        assert_eq!(
            world.clients[0].stats().last_snapshot_bytes,
            9,
            "frame {frame}"
        );
    }
    assert_eq!(
        world.clients[0].scene().get(copy).unwrap().aim,
        rotation(&ROT12, aim)
    );
}

#[test]
fn hundred_quantized_rotations_allocate_nothing() {
    let mut world = World::new(1, turret_library);
    let root = world.root();
    for _ in 0..100 {
        world.server.spawn(TURRET, root, PeerId::SERVER).unwrap();
    }
    world.step(3);
    let turrets: Vec<NetRef<Turret>> = world
        .server
        .scene()
        .iter::<Turret>()
        .map(|(h, _)| h)
        .collect();
    assert_eq!(turrets.len(), 100);
    let churn = |world: &mut World, frame: u32| {
        for (i, &h) in turrets.iter().enumerate() {
            turn(
                world.server.scene_mut().get_mut(h).unwrap(),
                frame + i as u32,
            );
        }
    };
    for frame in 0..200 {
        churn(&mut world, frame);
        world.frame();
    }
    assert_no_alloc("240 frames of quantized rotations", || {
        for frame in 200..440 {
            churn(&mut world, frame);
            world.frame();
        }
    });
    world.step(30);
    world.assert_converged();
}
