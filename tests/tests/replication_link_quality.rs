#![allow(clippy::unwrap_used)]
//! Link quality without new messages: the server's per-client round trip, its variation
//! (RFC 6298 `RTTVAR`) and the share of snapshots left unacknowledged, and the client's
//! loss, duplicate, reordering and arrival-jitter estimates from the snapshot ticks it
//! receives, on a perfect link, under loss, latency with jitter and duplication, and the
//! zero-allocation gate.

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::{LinkQuality, MultiplayerConfig, PeerNetworkStats, LINK_WINDOW};
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::World;
mod replication_common;

use replication_common::{library, Body, BODY};

/// A world with one client and a changing body, the server's end under `server`, the
/// client's under `client`.
fn make(server: Option<NetworkConditions>, client: Option<NetworkConditions>, seed: u64) -> World {
    let mut world = World::with_split(
        1,
        MultiplayerConfig::default(),
        server,
        client,
        seed,
        library,
    );
    let root = world.root();
    world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    world.step(4);
    world
}

/// Changes the body and runs one frame.
fn frame(world: &mut World, n: i32) {
    for (_, b) in world.server.scene_mut().iter_mut::<Body>() {
        b.x = n;
    }
    world.frame();
}

fn peer(world: &World) -> PeerNetworkStats {
    let id = world.server.peers()[0];
    *world.server.peer_stats(id).unwrap()
}

fn link(world: &World) -> LinkQuality {
    *world.clients[0].link_quality().unwrap()
}

/// Runs `windows` windows of 64 frames; returns the mean server unacknowledged ratio and the
/// mean client loss, sampled at the end of each window.
fn sample(world: &mut World, windows: usize) -> (f32, f32) {
    let (mut server, mut client) = (0.0, 0.0);
    let mut n = 0;
    for _ in 0..windows {
        for _ in 0..LINK_WINDOW {
            n += 1;
            frame(world, n);
        }
        server += peer(world).unacknowledged_ratio();
        client += link(world).loss;
    }
    (server / windows as f32, client / windows as f32)
}

#[test]
fn perfect_link_has_no_loss_and_no_jitter() {
    let mut world = World::new(1, library);
    assert!(world.server.link_quality().is_none());
    sample(&mut world, 4);
    let p = peer(&world);
    assert_eq!(p.recent_snapshots, 64);
    assert_eq!(p.recent_unacknowledged, 0);
    assert_eq!(p.snapshots_unacknowledged, 0);
    assert_eq!(p.unacknowledged_ratio(), 0.0);
    // Sent at the end of one frame, acknowledged at the start of the next: one frame.
    assert_eq!(p.round_trip_time, world.dt);
    assert!(p.round_trip_variance < Duration::from_micros(100), "{p:?}");

    let q = link(&world);
    assert_eq!(q.loss, 0.0, "{q:?}");
    assert_eq!((q.window_ticks, q.window_missing), (64, 0));
    assert_eq!(q.jitter, Duration::ZERO);
    assert_eq!(
        (q.duplicates, q.out_of_order, q.snapshots_missed),
        (0, 0, 0)
    );
    assert!(q.snapshots_received >= 4 * 64);
}

#[test]
fn twenty_percent_loss_is_estimated_at_both_ends() {
    for seed in [1, 7, 42] {
        // Loss on the server's end only: snapshots are lost, acks are not.
        let mut world = make(Some(NetworkConditions::lossy(0.2)), None, seed);
        sample(&mut world, 2);
        let (server, client) = sample(&mut world, 20);
        assert!((server - 0.2).abs() <= 0.04, "seed {seed}: server {server}");
        assert!((client - 0.2).abs() <= 0.04, "seed {seed}: client {client}");
        let q = link(&world);
        let total = (q.snapshots_missed + q.snapshots_received) as f32;
        let missed = q.snapshots_missed as f32 / total;
        assert!((missed - 0.2).abs() <= 0.03, "seed {seed}: {q:?}");
        // A lost snapshot is not late: arrivals stay on the tick grid.
        assert_eq!(q.jitter, Duration::ZERO, "seed {seed}");
        assert_eq!((q.duplicates, q.out_of_order), (0, 0), "seed {seed}");
        let p = peer(&world);
        assert!(p.snapshots_unacknowledged > 0);
        assert_eq!(p.recent_snapshots, 64);
    }
}

#[test]
fn symmetric_loss_adds_lost_acks_to_the_server_figure() {
    // 20 % each way: the client sees 20 % of snapshots missing, the server 1 - 0.8² = 36 %
    // unacknowledged (the snapshot or its ack lost).
    let loss = Some(NetworkConditions::lossy(0.2));
    let mut world = make(loss, loss, 3);
    sample(&mut world, 2);
    let (server, client) = sample(&mut world, 20);
    assert!((client - 0.2).abs() <= 0.04, "client {client}");
    assert!((server - 0.36).abs() <= 0.05, "server {server}");
}

#[test]
fn latency_and_jitter_show_in_round_trip_and_variance() {
    let steady = NetworkConditions::laggy(Duration::from_millis(50), Duration::ZERO);
    let mut world = make(Some(steady), Some(steady), 5);
    sample(&mut world, 4);
    let p = peer(&world);
    // 50 ms each way, delivered at the next frame (33 ms frames): at least 100 ms, at most a
    // frame more each way and for the ack.
    assert!(p.round_trip_time >= Duration::from_millis(100), "{p:?}");
    assert!(p.round_trip_time <= Duration::from_millis(200), "{p:?}");
    assert!(p.round_trip_variance < Duration::from_millis(1), "{p:?}");
    let q = link(&world);
    assert_eq!(q.jitter, Duration::ZERO, "{q:?}");
    assert_eq!(q.loss, 0.0, "{q:?}");

    let shaky = NetworkConditions::laggy(Duration::from_millis(50), Duration::from_millis(60));
    let mut world = make(Some(shaky), Some(shaky), 5);
    sample(&mut world, 4);
    let p = peer(&world);
    assert!(p.round_trip_time >= Duration::from_millis(120), "{p:?}");
    assert!(p.round_trip_time <= Duration::from_millis(320), "{p:?}");
    assert!(p.round_trip_variance >= Duration::from_millis(8), "{p:?}");
    assert!(p.round_trip_variance <= Duration::from_millis(80), "{p:?}");
    let q = link(&world);
    assert!(q.jitter >= Duration::from_millis(5), "{q:?}");
    assert!(q.jitter <= Duration::from_millis(80), "{q:?}");
}

#[test]
fn duplicates_and_reordering_are_counted_not_lost() {
    let doubled = NetworkConditions::perfect().with_duplication(0.3);
    let mut world = make(Some(doubled), None, 11);
    sample(&mut world, 8);
    let q = link(&world);
    let share = q.duplicates as f32 / q.snapshots_received as f32;
    assert!((share - 0.3).abs() <= 0.06, "{q:?}");
    assert_eq!(q.loss, 0.0, "{q:?}");
    assert_eq!(q.snapshots_missed, 0, "{q:?}");
    // The server sees every snapshot acknowledged once.
    let p = peer(&world);
    assert_eq!(p.snapshots_unacknowledged, 0, "{p:?}");

    // Held back 20 to 120 ms: overtaken by the next snapshots (frames are 33 ms).
    let reordered =
        NetworkConditions::laggy(Duration::from_millis(100), Duration::ZERO).with_reorder(0.1);
    let mut world = make(Some(reordered), None, 13);
    sample(&mut world, 8);
    let q = link(&world);
    assert!(q.out_of_order > 0, "{q:?}");
    // A reordered snapshot fills its gap when it arrives: not counted as missed.
    assert_eq!(q.snapshots_missed, 0, "{q:?}");
    // It arrives after a newer one, so it is discarded unacknowledged.
    let p = peer(&world);
    assert!(p.snapshots_unacknowledged > 0, "{p:?}");
}

#[test]
fn link_quality_allocates_nothing() {
    let poor = Some(NetworkConditions::lossy(0.2).with_duplication(0.1));
    let mut world = make(poor, poor, 17);
    sample(&mut world, 4);
    let before = link(&world).snapshots_received;
    let mut n = 1000;
    assert_no_alloc("240 frames with link statistics", || {
        for _ in 0..240 {
            n += 1;
            frame(&mut world, n);
            let p = peer(&world);
            let q = link(&world);
            std::hint::black_box((p.unacknowledged_ratio(), p.round_trip_variance, q));
        }
    });
    assert!(link(&world).snapshots_received > before + 100);
}
