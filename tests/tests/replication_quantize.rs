#![allow(clippy::unwrap_used)]
//! `#[replicated(quantize(min = .., max = .., bits = ..))]`: round-trip error, clamping, NaN,
//! pinned bytes, no resend for changes below one step, convergence over `Multiplayer` (plain
//! and interpolated members), schema hash and registry dump, and zero allocations.

use glam::Vec3;
use mf_net::codec::quantize::{Quantization, Quantize};
use mf_net::codec::NetCodec;
use mf_net::prelude::*;
use mf_net::replication::{MemberInfo, ReplicationRegistry};
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
            scene.set_value(root, Drone::default()).map(drop)
        })
        .unwrap();
    scenes
        .register("glider", |scene, root| {
            scene.set_value(root, Glider::default()).map(drop)
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
    let mut world = World::new(1, library);
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
