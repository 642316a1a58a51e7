#![allow(clippy::unwrap_used)]
//! Ten thousand idle bodies set moving in the same tick (an explosion scatters its debris).
//!
//! The bit-packed server keeps each node's recent values in a ring sized by how often the node
//! changes: one record while it is idle, 32 once it changes every tick. When every ring grew
//! in the same tick, the server wrote tens of megabytes in that tick, and the one buffer
//! holding every ring was reallocated and copied as it grew: 68 MB allocated and a 37 ms tick
//! for these bodies, against 5.7 MB for the byte format (which sizes its send lists for the
//! burst in that tick too). Rings now grow by at most a mebibyte a tick, in pages that are
//! never copied.

use mf_net::prelude::*;
use mf_net::replication::SnapshotEncoding;
use mf_net_tests::alloc_counter::{is_counting, measure};
use mf_net_tests::harness::World;

mod replication_common;
use replication_common::{library, Body, BODY};

/// Bodies spawned, [`SPAWNS_PER_FRAME`] a frame.
const BODIES: usize = 10_000;
/// Bodies spawned a frame.
const SPAWNS_PER_FRAME: usize = 100;

/// The most bytes the server allocates in one tick while every body, idle for 40 frames,
/// moves every frame for [`BODIES`]' rings to have grown, in `encoding`.
fn worst_tick_heap(encoding: SnapshotEncoding) -> u64 {
    assert!(is_counting(), "the counting allocator is not installed");
    let mut world = World::with_encoding(1, encoding, library);
    let root = world.root();
    let mut bodies = Vec::with_capacity(BODIES);
    for _ in 0..BODIES / SPAWNS_PER_FRAME {
        for _ in 0..SPAWNS_PER_FRAME {
            bodies.push(world.server.spawn(BODY, root, PeerId::SERVER).unwrap());
        }
        world.frame();
    }
    world.step(40);
    let mut worst = 0;
    for _ in 0..40 {
        for &body in &bodies {
            let handle = world.server.scene().net_ref::<Body>(body).unwrap();
            world.server.scene_mut().get_mut(handle).unwrap().x += 1;
        }
        let dt = world.dt;
        let ((), tick) = measure(|| {
            world.server.begin_frame(dt);
            world.server.end_frame();
        });
        worst = worst.max(tick.bytes_total);
        for client in &mut world.clients {
            client.begin_frame(dt);
            client.end_frame();
        }
    }
    world.step(2);
    world.assert_converged();
    worst
}

#[test]
fn bodies_set_moving_at_once_cost_the_bit_packed_server_little_more_heap_in_a_tick() {
    /// Bytes the bit-packed server may allocate in one tick beyond the byte format's worst:
    /// a mebibyte of ring growth, and the slack of a page and the lists of free regions.
    const LIMIT: u64 = 3 << 19;
    let bytes = worst_tick_heap(SnapshotEncoding::Bytes);
    let bits = worst_tick_heap(SnapshotEncoding::Bits);
    assert!(
        bits <= bytes + LIMIT,
        "the bit-packed server allocated {bits} bytes in one tick, the byte format {bytes} \
         (limit {LIMIT} beyond it)"
    );
}
