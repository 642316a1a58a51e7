#![allow(clippy::unwrap_used)]
//! Heap under spawn churn (issue 21, defect 3): 100 spawns and 100 despawns every tick, a server
//! and one client over loopback at the default tick rate. After warm-up the live heap of both
//! (measured with the counting allocator: bytes allocated and not freed meanwhile) must not
//! grow by more than 64 KB. Freed net ids used to pile up, one record per despawn, while fresh
//! ids lasted: about 18 bytes per despawn (3.7 MB over 200 000 despawns, 12.6 MB over five
//! minutes of this churn); and the ids of a node spawned and despawned within one frame were
//! never freed at all, each leaving a gap that kept the freed runs around it from merging.
//!
//! Five minutes at 30 ticks a second are 9000 ticks: too slow for a debug test. The growth was
//! linear in despawns, so this runs [`TICKS`] ticks (60 000 despawns) after warm-up: a leak of
//! 1.1 bytes per despawn would already exceed the limit (the old code: 1.1 MB).
//!
//! Bit-packed snapshots (issue 26) kept each node's value history inline in a hash map (some
//! 180 bytes an entry): the churn's tombstones made it grow once, by 380 KB, within the
//! measured ticks. The map now holds each node's place among the records.

use mf_net::prelude::*;
use mf_net::replication::SnapshotEncoding;
use mf_net_tests::alloc_counter::{is_counting, measure};
use mf_net_tests::harness::World;
use mf_net_tests::rng::Rng;

mod replication_common;
mod rpc_common;
use replication_common::{library, BODY};
use rpc_common::{Pawn, PawnRpcs};

/// Spawns and despawns per tick.
const CHURN: usize = 100;
/// Nodes alive at once (each lives about ten ticks, despawned at random).
const LIVE: usize = 1000;
/// Ticks measured after warm-up.
const TICKS: usize = 600;
/// The allowed growth of the live heap.
const LIMIT: i64 = 64 * 1024;

/// One tick of churn: [`CHURN`] random live nodes despawned, [`CHURN`] spawned, every peer's
/// frame.
fn churn(world: &mut World, live: &mut [NodeId], rng: &mut Rng) {
    let root = world.root();
    for _ in 0..CHURN {
        let i = rng.below(live.len() as u64) as usize;
        assert!(world.server.despawn(live[i]));
        live[i] = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    }
    world.frame();
}

#[test]
fn spawn_churn_keeps_the_heap_flat() {
    assert!(is_counting(), "the counting allocator is not installed");
    // Bit-packed: the encoding that keeps the most per node (each node's recent values on
    // both ends, kept for the next node once it is despawned).
    let mut world = World::with_encoding(1, SnapshotEncoding::Bits, library);
    assert_eq!(world.server.tick_rate(), 30, "the default tick rate");
    let root = world.root();
    let mut live: Vec<NodeId> = (0..LIVE)
        .map(|_| world.server.spawn(BODY, root, PeerId::SERVER).unwrap())
        .collect();
    let mut rng = Rng(0x5EED_C4A2);
    // Warm-up: every table reaches its size for this population.
    for _ in 0..300 {
        churn(&mut world, &mut live, &mut rng);
    }
    let ((), info) = measure(|| {
        for _ in 0..TICKS {
            churn(&mut world, &mut live, &mut rng);
        }
    });
    let despawns = TICKS * CHURN;
    assert!(
        info.bytes_current < LIMIT,
        "the live heap grew by {} bytes over {despawns} despawns (limit {LIMIT})",
        info.bytes_current,
    );
    world.step(4);
    world.assert_converged();
    assert_eq!(
        world.clients[0]
            .scene()
            .iter::<replication_common::Body>()
            .count(),
        LIVE
    );
}

/// The same churn with what else a game keeps per node, in either encoding: two clients, each
/// node owned by one of them (authority), moved by its owner's RPCs and hit by the server's,
/// and hidden from the other client by manual relevance half of the time. The heap of the
/// server and both clients must not grow either. A bit-packed client kept the values of every
/// despawned node that had changed in its last second as the node's floor when that second's
/// table was overwritten, and never forgot them: its heap grew by some 25 bytes a despawn
/// (370 KB over these ticks).
#[test]
fn churn_of_owned_called_and_hidden_nodes_keeps_the_heap_flat() {
    assert!(is_counting(), "the counting allocator is not installed");
    for encoding in [SnapshotEncoding::Bits, SnapshotEncoding::Bytes] {
        let mut world = World::with_encoding(2, encoding, rpc_common::library);
        let peers = [
            world.clients[0].local_peer_id(),
            world.clients[1].local_peer_id(),
        ];
        let mut live: Vec<NodeId> = (0..LIVE / 4)
            .map(|i| pawn(&mut world, peers[i % 2]))
            .collect();
        let mut rng = Rng(0x5EED_C4A3);
        for _ in 0..300 {
            owned_churn(&mut world, &mut live, &mut rng);
        }
        let ((), info) = measure(|| {
            for _ in 0..TICKS {
                owned_churn(&mut world, &mut live, &mut rng);
            }
        });
        assert!(
            info.bytes_current < LIMIT,
            "{encoding:?}: the live heap grew by {} bytes (limit {LIMIT})",
            info.bytes_current
        );
        world.step(4);
        for c in 0..2 {
            world.assert_sees_exactly_what_is_relevant(c);
        }
    }
}

/// One tick of churn among the clients' pawns: a quarter of [`CHURN`] despawned, as many
/// spawned for either client, half of them hidden from the other; eight pawns hit by the
/// server and moved by their owners; every peer's frame, and their events drained.
fn owned_churn(world: &mut World, live: &mut [NodeId], rng: &mut Rng) {
    let peers = [
        world.clients[0].local_peer_id(),
        world.clients[1].local_peer_id(),
    ];
    for _ in 0..CHURN / 4 {
        let i = rng.below(live.len() as u64) as usize;
        assert!(world.server.despawn(live[i]));
        let owner = rng.below(2) as usize;
        live[i] = pawn(world, peers[owner]);
        if rng.chance(50) {
            let other = peers[1 - owner];
            world.server.set_relevant(live[i], other, false).unwrap();
        }
    }
    for _ in 0..8 {
        let node = live[rng.below(live.len() as u64) as usize];
        let handle = world.server.scene().net_ref::<Pawn>(node).unwrap();
        world.server.rpc(handle).hit(1).unwrap();
        let id = world.server.net_id(node).unwrap();
        let owner = usize::from(world.server.authority(node) != peers[0]);
        let client = &mut world.clients[owner];
        if let Some(copy) = client.node(id) {
            let handle = client.scene().net_ref::<Pawn>(copy).unwrap();
            client.rpc(handle).move_by(1).unwrap();
        }
    }
    world.frame();
    for mp in std::iter::once(&mut world.server).chain(&mut world.clients) {
        while mp.next_event().is_some() {}
    }
}

/// A pawn owned by `owner`.
fn pawn(world: &mut World, owner: PeerId) -> NodeId {
    let root = world.root();
    world.server.spawn(rpc_common::PAWN, root, owner).unwrap()
}
