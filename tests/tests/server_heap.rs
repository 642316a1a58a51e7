#![allow(clippy::unwrap_used)]
//! The server's heap per body, measured with the counting allocator: the heap the world holds
//! after spawning [`BODIES`] bodies ([`SPAWNS_PER_FRAME`] a frame) and running [`FRAMES`] more
//! frames, less the clients' (the heap their drop gives back).
//!
//! - Per client: each client's send state kept, for each of the 64 snapshots it remembers,
//!   room to list half as many nodes again as the client had: 576 of the 626 bytes an idle
//!   body cost the server for each client, whether any snapshot carried it or not (368 MB for
//!   64 clients of 10 000 bodies). Those lists now have room for what snapshots carried.
//! - Bit-packed (issue 26): the server keeps each node's recent values to code entries against
//!   what clients acknowledged; it kept room for 32 records a node from its first, 3.4 KB
//!   for [`Body`], whether the node ever moved again or not. A node now keeps the records a
//!   baseline within reach reads, in a ring sized by the pace of its changes: one record for
//!   a node that has not changed since its spawn, eight for one changing every tenth tick.

use mf_net::prelude::*;
use mf_net::replication::SnapshotEncoding;
use mf_net_tests::alloc_counter::{is_counting, measure};
use mf_net_tests::harness::World;

mod replication_common;
use replication_common::{library, Body, BODY};

/// Bodies spawned.
const BODIES: usize = 10_000;
/// Bodies spawned a frame.
const SPAWNS_PER_FRAME: usize = 100;
/// Frames run after the spawns.
const FRAMES: usize = 40;

/// The server's heap after the spawns and frames, with `clients` clients, in `encoding`;
/// after the spawns, each body changes every `every` frames (0: never), a different
/// `1 / every` of them each frame.
fn server_heap(clients: usize, encoding: SnapshotEncoding, every: usize) -> i64 {
    assert!(is_counting(), "the counting allocator is not installed");
    let mut world = World::with_encoding(clients, encoding, library);
    let root = world.root();
    let ((), world_heap) = measure(|| {
        let mut bodies = Vec::with_capacity(BODIES);
        for _ in 0..BODIES / SPAWNS_PER_FRAME {
            for _ in 0..SPAWNS_PER_FRAME {
                bodies.push(world.server.spawn(BODY, root, PeerId::SERVER).unwrap());
            }
            world.frame();
        }
        for frame in 0..FRAMES {
            for (i, &body) in bodies.iter().enumerate() {
                if every > 0 && (i + frame) % every == 0 {
                    let handle = world.server.scene().net_ref::<Body>(body).unwrap();
                    world.server.scene_mut().get_mut(handle).unwrap().x += 1;
                }
            }
            world.frame();
        }
    });
    world.assert_converged();
    for client in &world.clients {
        assert_eq!(client.scene().iter::<Body>().count(), BODIES);
    }
    let clients = std::mem::take(&mut world.clients);
    let ((), client_heap) = measure(|| drop(clients));
    world_heap.bytes_current + client_heap.bytes_current
}

#[test]
fn an_idle_body_costs_the_server_little_heap_per_client() {
    /// Bytes an idle body may cost the server for each client beyond the first.
    const LIMIT: i64 = 160;
    let one = server_heap(1, SnapshotEncoding::Bytes, 0);
    let four = server_heap(4, SnapshotEncoding::Bytes, 0);
    let per_client = (four - one) / 3 / BODIES as i64;
    assert!(
        per_client <= LIMIT,
        "an idle body costs the server {per_client} bytes a client (limit {LIMIT}; \
         {four} bytes with four clients, {one} with one)"
    );
}

#[test]
fn an_idle_body_costs_the_bit_packed_server_little_more_heap_than_the_byte_format() {
    /// Bytes an idle body may cost the bit-packed server beyond the byte format's.
    const LIMIT: i64 = 256;
    let bytes = server_heap(1, SnapshotEncoding::Bytes, 0);
    let bits = server_heap(1, SnapshotEncoding::Bits, 0);
    let per_body = (bits - bytes) / BODIES as i64;
    assert!(
        per_body <= LIMIT,
        "an idle body costs the bit-packed server {per_body} bytes more than the byte format's \
         (limit {LIMIT}; {bits} against {bytes} bytes in all)"
    );
}

#[test]
fn a_body_changing_every_tenth_frame_costs_the_bit_packed_server_a_ring_sized_by_its_pace() {
    /// Bytes such a body may cost the bit-packed server beyond the byte format's (819 with
    /// eight records; 3386 with 32).
    const LIMIT: i64 = 1200;
    let bytes = server_heap(1, SnapshotEncoding::Bytes, 10);
    let bits = server_heap(1, SnapshotEncoding::Bits, 10);
    let per_body = (bits - bytes) / BODIES as i64;
    assert!(
        per_body <= LIMIT,
        "a body changing every tenth frame costs the bit-packed server {per_body} bytes more \
         than the byte format's (limit {LIMIT}; {bits} against {bytes} bytes in all)"
    );
}
