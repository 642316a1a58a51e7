#![allow(clippy::unwrap_used)]
//! Interest behind the spatial index (`GridInterest` with cells): every client's view exact
//! under 30 % loss while clients and bodies cross cells and bodies come and go; a body crossing
//! a cell edge back and forth every tick; a client teleporting across the world; a group nested
//! under another coming and going with it, and placed again with it when it moves; no
//! allocation on the server in steady state while groups enter and leave views; a policy that
//! answers by cell distance decided from the index's cells at evaluations.
//!
//! "Exact" is checked two ways: each client has exactly the server's relevant groups with the
//! server's states, and the server's relevance is what the grid says (a body within the radius
//! of a client's player is relevant to it; one beyond the radius plus hysteresis is not).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::interest::{Cell, GridInterest, InterestPolicy, InterestQuery, Relevance};
use mf_net::replication::SnapshotEncoding;
use mf_net::store::Store;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::alloc_counter::{is_counting, measure};
use mf_net_tests::harness::World;

/// A body on the XZ plane (players are bodies too, owned by their client).
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Body {
    #[replicated]
    x: f32,
    #[replicated]
    z: f32,
    #[replicated]
    hp: i32,
}

const BODY: SceneIndex = SceneIndex::new(0);
const CELL: f32 = 10.0;

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("body", |scene, root| scene.set_value(root, Body::default()))
        .unwrap();
    scenes
}

fn position(scene: &Scene, node: NodeId) -> Option<[f32; 3]> {
    let body = scene.get(scene.net_ref::<Body>(node)?)?;
    Some([body.x, 0.0, body.z])
}

fn grid(radius: u32, hysteresis: u32, grace: Duration) -> GridInterest {
    GridInterest {
        cell_size: CELL,
        radius_cells: radius,
        hysteresis_cells: hysteresis,
        grace,
        position,
        tiers: &[],
    }
}

fn lossy() -> NetworkConditions {
    NetworkConditions {
        loss: 0.3,
        duplication: 0.05,
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(20),
        reorder: 0.1,
    }
}

fn spawn(world: &mut World, x: f32, z: f32, owner: PeerId) -> NodeId {
    let root = world.root();
    let node = world.server.spawn(BODY, root, owner).unwrap();
    place(world, node, x, z);
    node
}

fn body(world: &mut World, node: NodeId) -> &mut Body {
    let handle = world.server.scene().net_ref::<Body>(node).unwrap();
    world.server.scene_mut().get_mut(handle).unwrap()
}

fn place(world: &mut World, node: NodeId, x: f32, z: f32) {
    let b = body(world, node);
    (b.x, b.z) = (x, z);
}

/// A player for every client, where `at` says, each the focus of its client's interest.
fn players(world: &mut World, at: impl Fn(usize) -> (f32, f32)) -> Vec<NodeId> {
    (0..world.clients.len())
        .map(|c| {
            let peer = world.clients[c].local_peer_id();
            let (x, z) = at(c);
            let player = spawn(world, x, z, peer);
            world.server.set_focus(peer, Some(player)).unwrap();
            player
        })
        .collect()
}

/// The Chebyshev distance in cells between two nodes of the server.
fn cells_apart(world: &World, a: NodeId, b: NodeId) -> u64 {
    let grid = grid(0, 0, Duration::ZERO);
    let at = |n| position(world.server.scene(), n).unwrap();
    grid.cell_distance(at(a), at(b))
}

/// Panics unless every client sees exactly what is relevant to it, and the server's relevance
/// agrees with the grid (`radius`, `hysteresis`) for every body not owned by the client.
fn assert_exact(world: &World, players: &[NodeId], radius: u64, hysteresis: u64) {
    let scene = world.server.scene();
    let bodies: Vec<NodeId> = scene.iter::<Body>().map(|(n, _)| n.node()).collect();
    for (c, &player) in players.iter().enumerate() {
        world.assert_sees_exactly_what_is_relevant(c);
        let peer = world.clients[c].local_peer_id();
        for &b in bodies.iter().filter(|&&b| b != player) {
            let apart = cells_apart(world, b, player);
            let relevant = world.server.is_relevant(b, peer);
            assert!(
                apart > radius || relevant,
                "client {c}: {apart} cells, not relevant"
            );
            assert!(
                apart <= radius + hysteresis || !relevant,
                "client {c}: {apart} cells, relevant"
            );
        }
    }
}

/// A point that wanders over cells: around `i`'s home, `reach` away, once every `period`
/// frames.
fn wander(i: usize, frame: usize, reach: f32, period: usize) -> (f32, f32) {
    let home = (
        (i * 37 % 11) as f32 * 9.0 - 50.0,
        (i * 53 % 13) as f32 * 8.0 - 50.0,
    );
    let phase = (frame % period) as f32 / period as f32 + i as f32 * 0.37;
    let t = std::f32::consts::TAU * phase;
    (home.0 + reach * t.sin(), home.1 + reach * (2.0 * t).cos())
}

#[test]
fn views_are_exact_under_30_percent_loss_while_clients_and_bodies_cross_cells() {
    // Every body moves every frame: most nodes change, and each client picks its changes
    // from the nodes it has.
    views_stay_exact_while_crossing_cells(|_, _| true, SnapshotEncoding::Bytes);
}

#[test]
fn bit_packed_views_are_exact_under_30_percent_loss_while_clients_and_bodies_cross_cells() {
    views_stay_exact_while_crossing_cells(|_, _| true, SnapshotEncoding::Bits);
}

#[test]
fn views_are_exact_under_30_percent_loss_when_a_tenth_of_the_bodies_move_each_frame() {
    // Few nodes change: each change is handed to the clients that see its group.
    views_stay_exact_while_crossing_cells(|i, frame| i % 10 == frame % 10, SnapshotEncoding::Bytes);
}

/// 4 clients walking across the world under 30 % loss among 80 wandering bodies (those that
/// `moving(body, frame)` picks move), bodies coming and going: every view ends exact.
fn views_stay_exact_while_crossing_cells(
    moving: impl Fn(usize, usize) -> bool,
    snapshot_encoding: SnapshotEncoding,
) {
    let config = MultiplayerConfig {
        snapshot_encoding,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(4, config, Some(lossy()), 25, library);
    world
        .server
        .set_interest_policy(grid(2, 1, Duration::from_millis(100)), 3)
        .unwrap();
    let players = players(&mut world, |c| (c as f32 * 20.0 - 40.0, 0.0));
    let mut bodies: Vec<NodeId> = (0..80)
        .map(|_| spawn(&mut world, 0.0, 0.0, PeerId::SERVER))
        .collect();
    let mut next = bodies.len();
    for frame in 0..450 {
        for (i, &b) in bodies.iter().enumerate().filter(|&(i, _)| moving(i, frame)) {
            let (x, z) = wander(i, frame, 16.0, 90);
            place(&mut world, b, x, z);
            body(&mut world, b).hp = (frame + i) as i32;
        }
        for (c, &p) in players.iter().enumerate() {
            // Walking east and back across the world, a cell every ~14 frames.
            let x = ((frame as f32 * 0.7 + c as f32 * 30.0) % 160.0 - 80.0).abs() - 40.0;
            place(&mut world, p, x, c as f32 * 12.0 - 18.0);
        }
        if frame % 40 == 39 {
            // Bodies come and go.
            for _ in 0..3 {
                let gone = bodies.remove(frame % bodies.len());
                assert!(world.server.despawn(gone));
            }
            for _ in 0..4 {
                let (x, z) = wander(next, frame, 16.0, 90);
                bodies.push(spawn(&mut world, x, z, PeerId::SERVER));
                next += 1;
            }
        }
        world.frame();
    }
    let stats = *world.server.stats();
    assert!(stats.relevance_spawns > 300, "{stats:?}");
    assert!(stats.relevance_despawns > 300, "{stats:?}");
    world.step(120);
    assert_exact(&world, &players, 2, 1);
}

/// A body that crosses the edge between two cells every frame, seen by a client whose view
/// ends at that edge (`hysteresis`: 0, in and out each evaluation; 1, in for good).
fn edge_crossing(hysteresis: u32) -> (World, Vec<NodeId>) {
    let mut world = World::with(1, MultiplayerConfig::default(), Some(lossy()), 31, library);
    world
        .server
        .set_interest_policy(grid(2, hysteresis, Duration::ZERO), 1)
        .unwrap();
    let players = players(&mut world, |_| (5.0, 5.0));
    // Cell 2 is in range; cell 3 (x from 30) is not.
    let edge = spawn(&mut world, 29.5, 5.0, PeerId::SERVER);
    world.step(30);
    for frame in 0..200 {
        let x = if frame % 2 == 0 { 30.5 } else { 29.5 };
        place(&mut world, edge, x, 5.0);
        body(&mut world, edge).hp = frame;
        world.frame();
    }
    world.step(90);
    (world, players)
}

#[test]
fn a_body_crossing_a_cell_edge_every_tick_comes_and_goes_without_hysteresis() {
    let (world, players) = edge_crossing(0);
    let stats = *world.server.stats();
    assert!(stats.relevance_despawns > 50, "in and out: {stats:?}");
    assert_exact(&world, &players, 2, 0);
    // It stopped in range.
    assert_eq!(world.clients[0].scene().iter::<Body>().count(), 2);
}

#[test]
fn a_body_crossing_a_cell_edge_every_tick_stays_within_hysteresis() {
    let (world, players) = edge_crossing(1);
    assert_eq!(world.server.stats().relevance_despawns, 0);
    assert_exact(&world, &players, 2, 1);
    assert_eq!(world.clients[0].scene().iter::<Body>().count(), 2);
}

#[test]
fn a_client_teleporting_across_the_world_sees_its_new_place_within_one_turn() {
    let mut world = World::new(2, library);
    let every = 10;
    world
        .server
        .set_interest_policy(grid(1, 1, Duration::ZERO), every)
        .unwrap();
    let players = players(&mut world, |_| (5.0, 5.0));
    // Two clusters of 30 bodies, a world apart.
    for i in 0..60 {
        let (x, z) = ((i % 6) as f32 * 3.0, (i % 5) as f32 * 3.0);
        let far = if i < 30 { 0.0 } else { 1000.0 };
        spawn(&mut world, far + x, far + z, PeerId::SERVER);
    }
    world.step(every as usize + 2);
    assert_exact(&world, &players, 1, 1);
    let count = |world: &World, c: usize| world.clients[c].scene().iter::<Body>().count();
    assert_eq!(count(&world, 0), 32, "its cluster and both players");
    // Client 0's player jumps to the other cluster.
    place(&mut world, players[0], 1005.0, 1005.0);
    let sent = |world: &World| world.server.bus().unwrap().stats().messages_sent;
    let (mut messages, mut spawns, mut despawns) = (0, 0, 0);
    let frames = (1..=every as usize + 2)
        .find(|_| {
            let (before, stats) = (sent(&world), *world.server.stats());
            world.frame();
            let after = *world.server.stats();
            messages = sent(&world) - before;
            spawns = after.relevance_spawns - stats.relevance_spawns;
            despawns = after.relevance_despawns - stats.relevance_despawns;
            count(&world, 0) == 31
        })
        .unwrap();
    assert!(frames <= every as usize + 1, "{frames} frames");
    // That frame: 30 spawns in one message, 31 despawns in one message, a snapshot to each
    // client.
    assert_eq!((spawns, despawns), (30, 31));
    assert_eq!(
        messages,
        1 + 1 + 2,
        "one spawn message for the 30, one despawn message for the 31"
    );
    assert_exact(&world, &players, 1, 1);
    // Client 1 stayed: it has its cluster and no longer client 0's player.
    assert_eq!(count(&world, 1), 31);
}

#[test]
fn the_server_allocates_nothing_while_groups_enter_and_leave_views() {
    let mut world = World::new(3, library);
    world
        .server
        .set_interest_policy(grid(1, 0, Duration::ZERO), 2)
        .unwrap();
    let players = players(&mut world, |_| (0.0, 0.0));
    let bodies: Vec<NodeId> = (0..120)
        .map(|_| spawn(&mut world, 0.0, 0.0, PeerId::SERVER))
        .collect();
    // Everything moves periodically (60 frames), so that after a period every cell, list and
    // message has been seen at its largest.
    let step = |world: &mut World, frame: usize| {
        for (i, &b) in bodies.iter().enumerate() {
            let (x, z) = wander(i, frame, 20.0, 60);
            place(world, b, x, z);
            body(world, b).hp = (frame % 60) as i32;
        }
        for (c, &p) in players.iter().enumerate() {
            let (x, z) = wander(c + 200, frame, 40.0, 60);
            place(world, p, x, z);
        }
        let ((), server) = measure(|| {
            world.server.begin_frame(world.dt);
            world.server.end_frame();
        });
        for client in &mut world.clients {
            client.begin_frame(world.dt);
            client.end_frame();
        }
        server.count_total
    };
    // The in-process network's packet buffers, big enough for any message here (a buffer
    // growing is the network's allocation, not the server's).
    world.net.reserve_buffers(1024, 8192);
    for frame in 0..240 {
        step(&mut world, frame);
    }
    assert!(is_counting());
    let before = *world.server.stats();
    let allocations: u64 = (240..480).map(|frame| step(&mut world, frame)).sum();
    let after = *world.server.stats();
    assert!(
        after.relevance_spawns - before.relevance_spawns > 100,
        "{after:?}"
    );
    assert!(
        after.relevance_despawns - before.relevance_despawns > 100,
        "{after:?}"
    );
    assert_eq!(allocations, 0, "the server allocated");
    world.step(10);
    assert_exact(&world, &players, 1, 0);
}

/// The bytes the server allocates over the first 20 frames of a world where `clients`
/// clients' players stand together, each seeing its cell and one more (30 bodies and the
/// players), with `far` bodies out of every client's sight.
fn server_bytes_with(clients: usize, far: usize) -> u64 {
    let mut world = World::new(clients, library);
    world
        .server
        .set_interest_policy(grid(1, 0, Duration::ZERO), 2)
        .unwrap();
    players(&mut world, |_| (5.0, 5.0));
    for i in 0..30 {
        spawn(&mut world, 15.0, i as f32 / 4.0, PeerId::SERVER);
    }
    for i in 0..far {
        let (x, z) = ((i % 40) as f32 * 5.0, (i / 40) as f32 * 5.0);
        spawn(&mut world, 1000.0 + x, 1000.0 + z, PeerId::SERVER);
    }
    let mut bytes = 0;
    for _ in 0..20 {
        let ((), server) = measure(|| {
            world.server.begin_frame(world.dt);
            world.server.end_frame();
        });
        bytes += server.bytes_total;
        for client in &mut world.clients {
            client.begin_frame(world.dt);
            client.end_frame();
        }
    }
    assert_eq!(
        world.clients[0].scene().iter::<Body>().count(),
        30 + clients
    );
    bytes
}

#[test]
fn a_client_costs_the_server_memory_for_what_it_sees_not_for_the_world() {
    assert!(is_counting());
    // What the server allocates for each client beyond the first.
    let each = |far| (server_bytes_with(9, far) - server_bytes_with(1, far)) / 8;
    let (few, many) = (each(500), each(2500));
    // A client's standing with each group is a byte (and the groups' viewers a bit); what is
    // kept per node it has (its send state, the lists of the snapshots it was sent) grows
    // with the 39 it sees, not with the bodies it does not. Those lists were sized for every
    // node of the world: 2000 more bodies cost each client 1 MB more.
    assert!(
        many < few + 2000 * 4,
        "{few} bytes a client, {many} with 2000 more bodies"
    );
}

#[test]
fn a_group_nested_under_another_comes_and_goes_with_it() {
    let mut world = World::new(2, library);
    world
        .server
        .set_interest_policy(grid(1, 0, Duration::ZERO), 4)
        .unwrap();
    players(
        &mut world,
        |c| if c == 0 { (5.0, 5.0) } else { (505.0, 505.0) },
    );
    let carrier = spawn(&mut world, 5.0, 5.0, PeerId::SERVER);
    let nested = world.server.spawn(BODY, carrier, PeerId::SERVER).unwrap();
    place(&mut world, nested, 5.0, 5.0);
    world.step(6);
    let peers = [0, 1].map(|c| world.clients[c].local_peer_id());
    let relevant = |world: &World, node| peers.map(|p| world.server.is_relevant(node, p));
    assert_eq!(relevant(&world, nested), [true, false]);
    // Both cross the world to client 1.
    place(&mut world, carrier, 505.0, 505.0);
    place(&mut world, nested, 505.0, 505.0);
    world.step(6);
    assert_eq!(relevant(&world, nested), [false, true]);
    // The carrier leaves client 1; the nested body stays near it, but goes with its parent.
    place(&mut world, carrier, -500.0, -500.0);
    world.step(6);
    assert_eq!(relevant(&world, carrier), [false, false]);
    assert_eq!(relevant(&world, nested), [false, false]);
    for c in 0..2 {
        world.assert_sees_exactly_what_is_relevant(c);
    }
    // It comes back, and the nested body with it.
    place(&mut world, carrier, 505.0, 505.0);
    world.step(6);
    assert_eq!(relevant(&world, nested), [false, true]);
    for c in 0..2 {
        world.assert_sees_exactly_what_is_relevant(c);
    }
}

/// [`position`], relative to the bodies above `node` (each at most 64 up): a body nested under
/// another is where its carrier takes it.
fn carried(scene: &Scene, node: NodeId) -> Option<[f32; 3]> {
    let mut at = position(scene, node)?;
    let mut up = scene.parent(node);
    for _ in 0..64 {
        let Some(parent) = up else {
            break;
        };
        if let Some([x, _, z]) = position(scene, parent) {
            (at[0], at[2]) = (at[0] + x, at[2] + z);
        }
        up = scene.parent(parent);
    }
    Some(at)
}

/// A nested body whose position is relative to its carrier's: the carrier moving next to the
/// client's player (the nested body's own position never changes) puts both in the player's
/// reach at once, though the slow sweep is far from reading the nested body's cell again.
#[test]
fn a_group_nested_under_a_moving_one_is_placed_again_with_it() {
    let mut world = World::new(1, library);
    // Turns 1000 ticks apart: the sweep reads one cell a tick.
    let policy = GridInterest {
        position: carried,
        ..grid(1, 0, Duration::ZERO)
    };
    world.server.set_interest_policy(policy, 1000).unwrap();
    players(&mut world, |_| (5.0, 5.0));
    // A hundred bodies far away, ahead of the carrier in the sweep.
    for i in 0..100 {
        spawn(&mut world, 1000.0 + i as f32, 1000.0, PeerId::SERVER);
    }
    let carrier = spawn(&mut world, 505.0, 505.0, PeerId::SERVER);
    let nested = world.server.spawn(BODY, carrier, PeerId::SERVER).unwrap();
    world.step(3);
    let peer = world.clients[0].local_peer_id();
    let relevant = |world: &World, node| world.server.is_relevant(node, peer);
    assert!(!relevant(&world, carrier) && !relevant(&world, nested));
    // The carrier comes next to the player; its cell is read again at the capture, and the
    // nested body's with it. An evaluation then sees both near.
    place(&mut world, carrier, 5.0, 5.0);
    world.step(2);
    world.server.refresh_interest();
    world.step(2);
    assert!(relevant(&world, carrier), "the carrier");
    assert!(relevant(&world, nested), "the body it carries");
    world.assert_sees_exactly_what_is_relevant(0);
}

#[test]
fn authority_handed_down_a_tree_makes_each_group_in_it_relevant_to_its_new_owner() {
    let mut world = World::new(1, library);
    world
        .server
        .set_interest_policy(grid(1, 0, Duration::ZERO), 30)
        .unwrap();
    players(&mut world, |_| (5.0, 5.0));
    // A carrier the client sees, with a nested body far away that it does not.
    let carrier = spawn(&mut world, 5.0, 5.0, PeerId::SERVER);
    let nested = world.server.spawn(BODY, carrier, PeerId::SERVER).unwrap();
    place(&mut world, nested, 505.0, 505.0);
    world.step(4);
    let peer = world.clients[0].local_peer_id();
    assert!(world.server.is_relevant(carrier, peer));
    assert!(!world.server.is_relevant(nested, peer));
    // Owned groups are always relevant to their owner: at the end of the frame, not at the
    // client's next turn, and the nested group too though its parent group stays as it was.
    world.server.set_authority(carrier, peer, true).unwrap();
    world.step(2);
    assert!(world.server.is_relevant(nested, peer));
    world.assert_sees_exactly_what_is_relevant(0);
}

/// A grid that counts the questions put to it, answering by distance or not.
struct Counted {
    grid: GridInterest,
    by_distance: bool,
    asked: Arc<AtomicUsize>,
}

impl InterestPolicy for Counted {
    fn relevant(&mut self, query: &InterestQuery<'_>) -> bool {
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.grid.relevant(query)
    }

    fn update_period(&mut self, query: &InterestQuery<'_>) -> u32 {
        self.grid.update_period(query)
    }

    fn grace(&self) -> Duration {
        self.grid.grace()
    }

    fn reach_cells(&self) -> Option<u32> {
        self.grid.reach_cells()
    }

    fn distance_band(&self, cells: u64, visible: bool) -> Option<u32> {
        self.grid.distance_band(cells, visible)
    }

    fn at_distance(&self, cells: u64, visible: bool) -> Option<Relevance> {
        self.by_distance
            .then(|| self.grid.at_distance(cells, visible))
            .flatten()
    }

    fn cell_of(&mut self, store: &dyn Store, node: NodeId) -> Option<Cell> {
        self.grid.cell_of(store, node)
    }
}

/// How many questions a `Counted` grid (radius 1, hysteresis 1) is put while two clients walk
/// across a field of bodies for 90 frames, once every body is placed; the views checked exact
/// after.
fn questions_while_walking(by_distance: bool) -> usize {
    let mut world = World::new(2, library);
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = Counted {
        grid: grid(1, 1, Duration::ZERO),
        by_distance,
        asked: asked.clone(),
    };
    world.server.set_interest_policy(policy, 3).unwrap();
    let players = players(&mut world, |c| (c as f32 * 30.0, 0.0));
    for i in 0..80 {
        spawn(
            &mut world,
            (i % 10) as f32 * 6.0,
            (i / 10) as f32 * 6.0,
            PeerId::SERVER,
        );
    }
    world.step(10);
    asked.store(0, Ordering::Relaxed);
    for frame in 0..90 {
        for (c, &p) in players.iter().enumerate() {
            let x = (frame as f32 * 0.7 + c as f32 * 30.0) % 60.0;
            place(&mut world, p, x, 20.0);
        }
        world.frame();
    }
    let questions = asked.load(Ordering::Relaxed);
    world.step(10);
    assert_exact(&world, &players, 1, 1);
    questions
}

#[test]
fn a_policy_answering_by_distance_is_decided_from_the_index_at_evaluations() {
    let asked = questions_while_walking(false);
    assert!(asked > 50, "without answers by distance: {asked} questions");
    assert_eq!(questions_while_walking(true), 0, "every body has a cell");
}
