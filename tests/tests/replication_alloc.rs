#![allow(clippy::unwrap_used)]
//! Zero-allocation gate for replication: a server and a client over loopback, 100 replicated
//! nodes changing every frame (capture, snapshot encode, send, decode, apply, ack), 240 frames
//! after warm-up: 0 bytes allocated.

use mf_net::prelude::*;
use mf_net_tests::alloc_counter::assert_no_alloc;
mod replication_common;

use mf_net_tests::harness::World;
use replication_common::{library, Body, BODY};

fn churn(world: &mut World, handles: &[NetRef<Body>], frame: i32) {
    for (i, &h) in handles.iter().enumerate() {
        let b = world.server.scene_mut().get_mut(h).unwrap();
        b.x = frame + i as i32;
        b.y = -frame;
    }
}

#[test]
fn hundred_changing_nodes_for_240_frames_allocate_nothing() {
    let mut world = World::new(1, library);
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
    // Warm-up: every ring entry, queue and writer reaches its steady size.
    for frame in 0..200 {
        churn(&mut world, &handles, frame);
        world.frame();
    }
    world.assert_converged();
    let applied = world.clients[0].stats().snapshots_applied;
    assert_no_alloc("240 replicated frames", || {
        for frame in 200..440 {
            churn(&mut world, &handles, frame);
            world.frame();
        }
    });
    world.assert_converged();
    assert_eq!(world.clients[0].stats().snapshots_applied, applied + 240);
    let peer = world.clients[0].local_peer_id();
    // The newest ack is one frame behind (it reaches the server next frame).
    assert_eq!(
        world.server.peer_stats(peer).unwrap().acknowledged_tick,
        world.server.tick() - 1
    );
}
