#![allow(clippy::unwrap_used, clippy::float_cmp)]
//! Floats compare by their bits in change detection and `on_change` hooks: a NaN member is sent
//! once, not every tick, and fires its hook once; `-0.0` after `0.0` is a change; interpolating
//! towards an infinite sample shows the sample, never NaN. In plain and interpolated members and
//! inside `NetCodec` derives.

use glam::Vec3;
use mf_net::prelude::*;
use mf_net::replication::NetId;
use mf_net_tests::harness::{Mp, World};

/// A `NetCodec` value holding a float, sent as one member.
#[derive(NetCodec, Debug, Default, Clone, PartialEq)]
struct Reading {
    value: f32,
    #[net(skip)]
    local: u8,
}

#[derive(Replicated, Debug, Default)]
struct Probe {
    #[replicated(on_change = Probe::level_changed)]
    level: f32,
    #[replicated(on_change = Probe::reading_changed)]
    reading: Reading,
    #[replicated(interpolate)]
    position: Vec3,
    level_hooks: u32,
    reading_hooks: u32,
}

impl Probe {
    fn level_changed(&mut self) {
        self.level_hooks += 1;
    }

    fn reading_changed(&mut self) {
        self.reading_hooks += 1;
    }
}

const PROBE: SceneIndex = SceneIndex::new(0);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("probe", |scene, root| {
            scene.set_value(root, Probe::default()).map(drop)
        })
        .unwrap();
    scenes
}

fn probe(mp: &mut Mp, node: NodeId) -> &mut Probe {
    let handle = mp.scene().net_ref::<Probe>(node).unwrap();
    mp.scene_mut().get_mut(handle).unwrap()
}

fn client_probe(world: &mut World) -> &mut Probe {
    let client = &mut world.clients[0];
    let node = client.node(NetId::new(1).unwrap()).unwrap();
    probe(client, node)
}

fn spawned() -> (World, NodeId) {
    let mut world = World::new(1, library);
    let root = world.root();
    let node = world.server.spawn(PROBE, root, PeerId::SERVER).unwrap();
    world.step(3);
    (world, node)
}

/// The bytes of the server's last snapshot: 9 when idle (header, flags, terminator).
fn last_snapshot(world: &World) -> usize {
    world.server.stats().last_snapshot_bytes
}

#[test]
fn a_nan_member_is_sent_once_and_fires_its_hook_once() {
    let (mut world, node) = spawned();
    probe(&mut world.server, node).level = f32::NAN;
    probe(&mut world.server, node).reading.value = f32::NAN;
    world.step(10);
    assert_eq!(
        last_snapshot(&world),
        9,
        "idle again: the NaN is not resent"
    );
    let copy = client_probe(&mut world);
    assert!(copy.level.is_nan() && copy.reading.value.is_nan());
    assert_eq!((copy.level_hooks, copy.reading_hooks), (1, 1));
    // The same NaN written again is no change either.
    probe(&mut world.server, node).level = f32::NAN;
    world.step(3);
    assert_eq!(last_snapshot(&world), 9);
    assert_eq!(client_probe(&mut world).level_hooks, 1);
}

#[test]
fn negative_zero_after_zero_is_a_change() {
    let (mut world, node) = spawned();
    probe(&mut world.server, node).level = -0.0;
    probe(&mut world.server, node).reading.value = -0.0;
    world.step(3);
    let copy = client_probe(&mut world);
    assert!(copy.level.is_sign_negative() && copy.reading.value.is_sign_negative());
    assert_eq!((copy.level_hooks, copy.reading_hooks), (1, 1));
}

#[test]
fn a_skipped_field_is_no_change() {
    let (mut world, node) = spawned();
    probe(&mut world.server, node).reading.local = 7;
    for _ in 0..3 {
        world.step(1);
        assert_eq!(
            last_snapshot(&world),
            9,
            "not sent: it is not part of the encoding"
        );
    }
    assert_eq!(client_probe(&mut world).reading_hooks, 0);
}

#[test]
fn an_interpolated_member_held_at_infinity_shows_infinity_not_nan() {
    let (mut world, node) = spawned();
    for x in 1..=5 {
        probe(&mut world.server, node).position = Vec3::new(x as f32, 0.0, 0.0);
        world.step(1);
    }
    probe(&mut world.server, node).position = Vec3::new(f32::INFINITY, 0.0, f32::NEG_INFINITY);
    for _ in 0..30 {
        world.step(1);
        let shown = client_probe(&mut world).position;
        assert!(!shown.is_nan(), "{shown}");
    }
    let shown = client_probe(&mut world).position;
    assert_eq!(shown, Vec3::new(f32::INFINITY, 0.0, f32::NEG_INFINITY));
}
