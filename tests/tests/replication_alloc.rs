#![allow(clippy::unwrap_used)]
//! Zero-allocation gate for replication: a server and a client over loopback, 100 replicated
//! nodes changing every frame (capture, snapshot encode, send, decode, apply, ack), and RPCs both
//! ways every 10 frames (plain-number arguments: encode into the bus writer, send, checks,
//! decode, dispatch), 240 frames after warm-up: 0 bytes allocated.

use mf_net::prelude::*;
use mf_net::replication::SnapshotEncoding;
use mf_net_tests::alloc_counter::assert_no_alloc;
mod replication_common;

use mf_net_tests::harness::World;
use replication_common::{Body, BODY};

/// A node both ends call RPCs on (only this binary links it).
#[derive(Replicated, Default)]
struct Beacon {
    #[replicated]
    level: u32,
    reports: u64,
    signals: u64,
}

#[rpcs]
impl Beacon {
    /// Client → server.
    #[rpc(any_peer)]
    fn report(&mut self, a: u32, b: i64) {
        self.reports += u64::from(a) + b.unsigned_abs();
    }

    /// Server → clients.
    #[rpc(server)]
    fn signal(&mut self, n: u32, f: f32) {
        self.signals += u64::from(n) + f as u64;
    }
}

/// Scene 2, after the shared ones: one [`Beacon`].
const BEACON: SceneIndex = SceneIndex::new(2);

fn library() -> SceneLibrary {
    let mut scenes = replication_common::library();
    scenes
        .register("beacon", |scene, root| {
            scene.set_value(root, Beacon::default())
        })
        .unwrap();
    scenes
}

/// Every 10 frames: one RPC each way.
fn calls(world: &mut World, server: NetRef<Beacon>, client: NetRef<Beacon>, frame: i32) {
    if frame % 10 == 0 {
        world.server.rpc(server).signal(2, 1.0).unwrap();
        world.clients[0].rpc(client).report(3, -4).unwrap();
    }
}

fn churn(world: &mut World, handles: &[NetRef<Body>], frame: i32) {
    for (i, &h) in handles.iter().enumerate() {
        let b = world.server.scene_mut().get_mut(h).unwrap();
        b.x = frame + i as i32;
        b.y = -frame;
    }
}

#[test]
fn hundred_changing_nodes_for_240_frames_allocate_nothing() {
    hundred_changing_nodes_allocate_nothing(SnapshotEncoding::Bytes);
}

#[test]
fn hundred_changing_nodes_in_bit_packed_snapshots_allocate_nothing() {
    hundred_changing_nodes_allocate_nothing(SnapshotEncoding::Bits);
}

fn hundred_changing_nodes_allocate_nothing(snapshot_encoding: SnapshotEncoding) {
    let config = MultiplayerConfig {
        snapshot_encoding,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(1, config, None, 0, library);
    let root = world.root();
    for _ in 0..100 {
        world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    }
    let handles: Vec<NetRef<Body>> = world
        .server
        .scene()
        .iter::<Body>()
        .map(|(h, _)| h)
        .collect();
    assert_eq!(handles.len(), 100);
    let beacon = world.server.spawn(BEACON, root, PeerId::SERVER).unwrap();
    let beacon = world.server.scene().net_ref::<Beacon>(beacon).unwrap();
    world.step(3);
    let id = world.server.net_id(beacon.node()).unwrap();
    let copy = world.clients[0].node(id).unwrap();
    let copy = world.clients[0].scene().net_ref::<Beacon>(copy).unwrap();
    // Warm-up: every ring entry, queue and writer reaches its steady size.
    for frame in 0..200 {
        churn(&mut world, &handles, frame);
        calls(&mut world, beacon, copy, frame);
        world.frame();
    }
    world.assert_converged();
    let applied = world.clients[0].stats().snapshots_applied;
    let (reports, signals) = (
        world.server.scene().get(beacon).unwrap().reports,
        world.clients[0].scene().get(copy).unwrap().signals,
    );
    assert_no_alloc("240 replicated frames", || {
        for frame in 200..440 {
            churn(&mut world, &handles, frame);
            calls(&mut world, beacon, copy, frame);
            world.frame();
        }
    });
    world.assert_converged();
    assert_eq!(world.clients[0].stats().snapshots_applied, applied + 240);
    // 24 calls each way ran in the measured frames.
    assert_eq!(
        world.server.scene().get(beacon).unwrap().reports,
        reports + 24 * 7
    );
    assert_eq!(
        world.clients[0].scene().get(copy).unwrap().signals,
        signals + 24 * 3
    );
    assert_eq!(
        world.server.stats().rpcs_failed + world.server.stats().rpcs_dropped,
        0
    );
    let peer = world.clients[0].local_peer_id();
    // The newest ack is one frame behind (it reaches the server next frame).
    assert_eq!(
        world.server.peer_stats(peer).unwrap().acknowledged_tick,
        world.server.tick() - 1
    );
}
