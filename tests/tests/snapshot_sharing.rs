#![allow(clippy::unwrap_used)]
//! Encoding once for all clients, seen from outside through the server's stats: clients whose
//! acknowledgements arrive at different times (jitter) still share each tick's entries and the
//! whole snapshot, clients that own a node with owner conditions share the rest of it, a first
//! client that stands apart does not keep the others from sharing, and every client ends with
//! what it would have had alone.

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::{MultiplayerConfig, NetworkStats, SnapshotEncoding};
use mf_net::transport::simulated::NetworkConditions;
mod replication_common;

use mf_net_tests::harness::World;
use replication_common::Body;

/// A player's avatar: a position everyone gets and ammo only its owner gets.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Avatar {
    #[replicated]
    x: i32,
    #[replicated(owner_only)]
    ammo: u16,
}

const BODY: SceneIndex = SceneIndex::new(0);
const AVATAR: SceneIndex = SceneIndex::new(1);
const CLIENTS: usize = 8;
const BODIES: usize = 50;

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("body", |scene, root| scene.set_value(root, Body::default()))
        .expect("fresh library");
    scenes
        .register("avatar", |scene, root| {
            scene.set_value(root, Avatar::default())
        })
        .expect("fresh library");
    scenes
}

/// Every client's packets arrive 60 ± 40 ms late: acknowledgements of one tick arrive at
/// different ticks from different clients.
fn jitter() -> NetworkConditions {
    NetworkConditions {
        latency: Duration::from_millis(60),
        jitter: Duration::from_millis(40),
        ..NetworkConditions::perfect()
    }
}

/// [`jittery_world`] in the byte format (its shared snapshots and entries are what most of
/// these tests count; the bit-packed ones are the last tests').
fn world() -> World {
    jittery_world(SnapshotEncoding::Bytes)
}

/// `CLIENTS` clients over `jitter` in `encoding` and `BODIES` bodies, joined and spawned.
fn jittery_world(encoding: SnapshotEncoding) -> World {
    let config = MultiplayerConfig {
        snapshot_encoding: encoding,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with_split(CLIENTS, config, None, Some(jitter()), 7, library);
    let root = world.root();
    for _ in 0..BODIES {
        world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    }
    world.step(30);
    world
}

/// Moves every body (their `hp` never changes) and every avatar, then runs a frame.
fn move_all(world: &mut World, frame: i32) {
    let bodies: Vec<_> = world
        .server
        .scene()
        .iter::<Body>()
        .map(|(h, _)| h)
        .collect();
    for h in bodies {
        world.server.scene_mut().get_mut(h).unwrap().x = frame;
    }
    let avatars: Vec<_> = world
        .server
        .scene()
        .iter::<Avatar>()
        .map(|(h, _)| h)
        .collect();
    for h in avatars {
        let avatar = world.server.scene_mut().get_mut(h).unwrap();
        avatar.x = frame;
        avatar.ammo = frame as u16;
    }
    world.frame();
}

/// What the server's stats counted over `frames` moving frames.
fn over_moving_frames(world: &mut World, frames: i32) -> (u64, u64, u64) {
    let before: NetworkStats = *world.server.stats();
    for frame in 0..frames {
        move_all(world, frame + 1);
    }
    let after = *world.server.stats();
    (
        after.snapshots_sent - before.snapshots_sent,
        after.snapshots_shared - before.snapshots_shared,
        after.entries_encoded - before.entries_encoded,
    )
}

#[test]
fn clients_acknowledging_at_different_times_share_entries_and_snapshots() {
    let mut world = world();
    let (sent, shared, encoded) = over_moving_frames(&mut world, 150);
    assert_eq!(sent, 150 * CLIENTS as u64);
    // One entry per body per tick, not one per client and acknowledged tick: an entry since
    // any tick after the spawn carries `x` alone.
    assert_eq!(encoded, 150 * BODIES as u64);
    assert_eq!(shared, sent, "every snapshot is the tick's shared one");
    world.step(30);
    world.assert_converged();
}

/// Spawns an avatar owned by each client; returns the owners, in client order.
fn spawn_avatars(world: &mut World) -> Vec<PeerId> {
    let root = world.root();
    let owners: Vec<PeerId> = world.clients.iter().map(|c| c.local_peer_id()).collect();
    for &owner in &owners {
        world.server.spawn(AVATAR, root, owner).unwrap();
    }
    owners
}

/// Every client holds every avatar at `x == frame`, with the owner-only `ammo` (`frame`) on
/// its own alone.
fn assert_own_ammo(world: &World, owners: &[PeerId], frame: i32) {
    for (client, &me) in world.clients.iter().zip(owners) {
        for (h, avatar) in client.scene().iter::<Avatar>() {
            let mine = client.authority(h.node()) == me;
            let ammo = if mine { frame as u16 } else { 0 };
            assert_eq!((avatar.x, avatar.ammo), (frame, ammo), "owned: {mine}");
        }
    }
}

#[test]
fn owners_of_nodes_with_owner_conditions_share_the_rest_of_the_snapshot() {
    let mut world = world();
    let owners = spawn_avatars(&mut world);
    world.step(30);
    let (sent, shared, encoded) = over_moving_frames(&mut world, 150);
    assert_eq!(
        shared, sent,
        "each owner's own avatar fills a hole in the shared snapshot"
    );
    // Per tick: the bodies, each avatar for the others, each avatar for its owner.
    assert_eq!(encoded, 150 * (BODIES + 2 * CLIENTS) as u64);
    world.step(30);
    let server = world.server.scene();
    let on_server: Vec<_> = server.iter::<Avatar>().map(|(_, a)| a.clone()).collect();
    assert!(on_server.iter().all(|a| a.x == 150 && a.ammo == 150));
    assert_own_ammo(&world, &owners, 150);
}

#[test]
fn a_first_client_that_stands_apart_leaves_the_others_sharing() {
    let mut world = world();
    // The first client does not see one body: its pending nodes differ from everyone else's.
    let first = world.clients[0].local_peer_id();
    let hidden = world.server.scene().iter::<Body>().next().unwrap().0.node();
    world.server.set_relevant(hidden, first, false).unwrap();
    world.step(30);
    let (sent, shared, encoded) = over_moving_frames(&mut world, 150);
    assert_eq!(sent, 150 * CLIENTS as u64);
    // The first client's snapshot is written from it alone, and not shared; the others' from
    // the second client, and shared by the seven.
    assert_eq!(shared, 150 * (CLIENTS as u64 - 1));
    assert_eq!(encoded, 150 * BODIES as u64);
    world.step(30);
    assert_eq!(world.clients[0].scene().iter::<Body>().count(), BODIES - 1);
    for client in &world.clients[1..] {
        assert_eq!(client.scene().iter::<Body>().count(), BODIES);
    }
}

#[test]
fn clients_that_all_stand_apart_share_nothing() {
    let mut world = world();
    // Each client does not see its own one of the bodies: no two clients are owed the same
    // snapshot, and each is written for it alone.
    let bodies: Vec<NodeId> = world
        .server
        .scene()
        .iter::<Body>()
        .map(|(h, _)| h.node())
        .collect();
    for (i, client) in world.clients.iter().enumerate() {
        let peer = client.local_peer_id();
        world.server.set_relevant(bodies[i], peer, false).unwrap();
    }
    world.step(30);
    let (sent, shared, _) = over_moving_frames(&mut world, 150);
    assert_eq!(sent, 150 * CLIENTS as u64);
    assert_eq!(shared, 0, "no snapshot was the same as another");
    // Two of them stand alike again: those two share, exactly.
    let (a, b) = (
        world.clients[0].local_peer_id(),
        world.clients[1].local_peer_id(),
    );
    world.server.set_relevant(bodies[0], a, true).unwrap();
    world.server.set_relevant(bodies[1], b, true).unwrap();
    world.server.set_relevant(bodies[9], a, false).unwrap();
    world.server.set_relevant(bodies[9], b, false).unwrap();
    world.step(30);
    let (sent, shared, _) = over_moving_frames(&mut world, 150);
    assert_eq!(sent, 150 * CLIENTS as u64);
    assert_eq!(shared, 150 * 2);
    world.step(30);
    for client in &world.clients {
        assert_eq!(client.scene().iter::<Body>().count(), BODIES - 1);
    }
}

/// `CLIENTS` clients over a perfect loopback, bit-packed, and `BODIES` bodies spawned.
fn bit_packed_world() -> World {
    let config = MultiplayerConfig {
        snapshot_encoding: SnapshotEncoding::Bits,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(CLIENTS, config, None, 7, library);
    let root = world.root();
    for _ in 0..BODIES {
        world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    }
    world
}

/// Bit-packed snapshots: clients that acknowledged the same ticks get one body, written once
/// and copied; so does one that joined later, whose spawns are its baselines: it holds every
/// body as of the tick it joined, the tick the others acknowledged last.
#[test]
fn bit_packed_clients_that_acknowledged_alike_share_one_body() {
    let mut world = bit_packed_world();
    world.step(10);
    let (sent, shared, _) = over_moving_frames(&mut world, 30);
    assert_eq!(sent, 30 * CLIENTS as u64);
    assert_eq!(shared, sent, "every snapshot is the tick's one body");
    world.connect_client();
    while world.server.peers().len() <= CLIENTS {
        world.frame();
    }
    let (sent, shared, _) = over_moving_frames(&mut world, 1);
    assert_eq!(sent, CLIENTS as u64 + 1);
    assert_eq!(shared, sent, "the late client's body is the others'");
    world.step(10);
    world.assert_converged();
}

/// `CLIENTS` bit-packed clients over perfect links, every other one 67 ms away (two frames
/// further behind than the others), and `BODIES` bodies spawned.
fn two_distance_world() -> World {
    let config = MultiplayerConfig {
        snapshot_encoding: SnapshotEncoding::Bits,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(0, config, None, 7, library);
    let far = NetworkConditions {
        latency: Duration::from_millis(67),
        ..NetworkConditions::perfect()
    };
    for i in 0..CLIENTS {
        world.set_client_conditions((i % 2 == 1).then_some(far));
        world.connect_client();
    }
    let root = world.root();
    for _ in 0..BODIES {
        world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    }
    world.step(30);
    world
}

/// Makes `node` relevant, or not, to every client.
fn relevant_to_all(world: &mut World, node: NodeId, relevant: bool) {
    let peers: Vec<PeerId> = world.clients.iter().map(|c| c.local_peer_id()).collect();
    for peer in peers {
        world.server.set_relevant(node, peer, relevant).unwrap();
    }
}

/// Bit-packed snapshots to clients at two distances from the server, in turn in connection
/// order (near, far, near, ...): the near ones acknowledged the tick before, the far ones a
/// tick two frames older, so their bodies differ (each value coded against another baseline).
/// Each distance's body is written once and copied to the other clients at that distance,
/// whatever order the clients come in.
#[test]
fn bit_packed_clients_at_different_distances_share_a_body_each() {
    let mut world = two_distance_world();
    let acked = |world: &World, client: usize| {
        let peer = world.clients[client].local_peer_id();
        world.server.peer_stats(peer).unwrap().acknowledged_tick
    };
    assert_ne!(acked(&world, 0), acked(&world, 1), "two distances");
    let (sent, shared, encoded) = over_moving_frames(&mut world, 30);
    assert_eq!(sent, 30 * CLIENTS as u64);
    assert_eq!(shared, sent, "every snapshot is its distance's one body");
    // One coding per body and distance, but in the first frame: the bodies had not moved
    // before, so both distances hold the same values and one coding serves both.
    assert_eq!(encoded, (30 * 2 - 1) * BODIES as u64);
    world.step(10);
    world.assert_converged();
}

/// The same two distances under interest (one body no client sees): each client walks its
/// own nodes, the far ones finding their states after the near ones' in each node's list.
/// Still one coding per body seen and distance, and every client converges.
#[test]
fn bit_packed_clients_at_different_distances_under_interest_find_one_coding_each() {
    let mut world = two_distance_world();
    let hidden = world.server.scene().iter::<Body>().next().unwrap().0.node();
    relevant_to_all(&mut world, hidden, false);
    world.step(30);
    let (sent, _, encoded) = over_moving_frames(&mut world, 30);
    assert_eq!(sent, 30 * CLIENTS as u64);
    // As without interest: one coding per body and distance, but in the first frame.
    assert_eq!(encoded, (30 * 2 - 1) * (BODIES as u64 - 1));
    relevant_to_all(&mut world, hidden, true);
    world.step(30);
    world.assert_converged();
}

/// Bit-packed snapshots to owners of nodes with owner conditions: clients that stand alike
/// with every node still get their own bodies where one of them owns a pending node, each
/// owner its own avatar's owner-only member and no other's.
#[test]
fn bit_packed_owners_of_nodes_with_owner_conditions_get_their_own_members() {
    let mut world = bit_packed_world();
    let owners = spawn_avatars(&mut world);
    world.step(10);
    let (sent, _, _) = over_moving_frames(&mut world, 30);
    assert_eq!(sent, 30 * CLIENTS as u64);
    world.step(10);
    assert_own_ammo(&world, &owners, 30);
}

/// Bit-packed snapshots over jittery links: each client's acknowledgement of a body's last
/// change came back at a different tick, so each holds the body as of a different tick. Their
/// values are the same, so when the bodies move again every client's entry is one coding per
/// body, not one per tick the clients hold; a body no client sees is not coded.
#[test]
fn bit_packed_clients_holding_the_same_values_as_of_different_ticks_share_one_coding() {
    let mut world = jittery_world(SnapshotEncoding::Bits);
    let (_, _, encoded) = over_moving_frames(&mut world, 1);
    assert!(encoded >= BODIES as u64, "moved, and coded");
    // One body no client sees: not coded at all.
    let hidden = world.server.scene().iter::<Body>().next().unwrap().0.node();
    relevant_to_all(&mut world, hidden, false);
    world.step(30);
    let before = world.server.stats().entries_encoded;
    move_all(&mut world, 2);
    let encoded = world.server.stats().entries_encoded - before;
    assert_eq!(encoded, BODIES as u64 - 1, "one coding per body seen");
    relevant_to_all(&mut world, hidden, true);
    world.step(30);
    world.assert_converged();
}
