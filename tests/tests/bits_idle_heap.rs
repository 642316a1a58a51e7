#![allow(clippy::unwrap_used)]
//! The server's heap for idle bodies in the bit-packed encoding (issue 26). The server keeps
//! each node's recent values to code entries against what clients acknowledged; it kept room
//! for 32 records a node from its first, 3.4 KB for [`Body`] (beside the 1.8 KB a node of the
//! byte format's server costs) whether the node ever moved again or not. A node now keeps the
//! records a baseline within reach reads: one for a node that has not changed since.
//!
//! Measured with the counting allocator: the heap the world holds after spawning
//! [`BODIES`] bodies and running [`FRAMES`] frames with nothing moving, less the client's (the
//! heap its drop gives back), in each encoding.

use mf_net::prelude::*;
use mf_net::replication::SnapshotEncoding;
use mf_net_tests::alloc_counter::{is_counting, measure};
use mf_net_tests::harness::World;

mod replication_common;
use replication_common::{library, Body, BODY};

/// Bodies spawned.
const BODIES: usize = 10_000;
/// Frames run after the spawns.
const FRAMES: usize = 40;
/// What an idle body may cost the bit-packed server beyond the byte format's, in bytes.
const LIMIT_PER_BODY: i64 = 256;

/// The server's heap after the spawns and frames, in `encoding`.
fn server_heap(encoding: SnapshotEncoding) -> i64 {
    let mut world = World::with_encoding(1, encoding, library);
    let root = world.root();
    let ((), world_heap) = measure(|| {
        for _ in 0..BODIES {
            world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
        }
        for _ in 0..FRAMES {
            world.frame();
        }
    });
    world.assert_converged();
    assert_eq!(world.clients[0].scene().iter::<Body>().count(), BODIES);
    let clients = std::mem::take(&mut world.clients);
    let ((), client_heap) = measure(|| drop(clients));
    world_heap.bytes_current + client_heap.bytes_current
}

#[test]
fn idle_bodies_cost_the_bit_packed_server_little_more_heap_than_the_byte_format() {
    assert!(is_counting(), "the counting allocator is not installed");
    let bytes = server_heap(SnapshotEncoding::Bytes);
    let bits = server_heap(SnapshotEncoding::Bits);
    let per_body = (bits - bytes) / BODIES as i64;
    assert!(
        per_body <= LIMIT_PER_BODY,
        "an idle body costs the bit-packed server {per_body} bytes more than the byte format's \
         (limit {LIMIT_PER_BODY}; {bits} against {bytes} bytes in all)"
    );
}
