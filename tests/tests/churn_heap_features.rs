#![allow(clippy::unwrap_used)]
//! Heap under spawn churn, per feature a node can have (the sequel to `replication_churn_heap`,
//! which covers plain, owned, called and hidden nodes): at a stationary population (every
//! despawn replaced by a spawn in the same tick, some nodes never despawned), the live heap of
//! the server and its clients together (measured with the counting allocator: bytes allocated
//! and not freed meanwhile) must not grow by more than [`LIMIT`] over [`TICKS`] ticks after a
//! warm-up of [`WARM_UP`] ticks, in either snapshot encoding. The features:
//!
//! - nodes that move every tick, with interpolated and quantized members;
//! - grid interest with moving foci (and update tiers bit-packed): nodes enter and leave the
//!   clients' views all the time while they are churned;
//! - hierarchy: scenes with children, some spawned under other instances, children despawned
//!   alone, roots despawned with their subtrees;
//! - prediction and lag compensation: players owned and predicted by clients, handed between
//!   them, the server recording a `LagHistory` and asking it at the clients' view ticks;
//! - spawners (spawn data kept for late joiners) and clients joining and leaving every few
//!   ticks, each owning a player spawned when it joins.
//!
//! A leak shows as growth that keeps coming in later windows: a growing `Vec` as steps at
//! doubling intervals, a table reaching its bound as steps that stop. None of these features
//! leaked when this was written: over 18 000 ticks in release (and again over a lossy link),
//! each scenario's heap grew by some tens of KB in the first few thousand ticks (tables and
//! maps reaching their size: the most nodes a client saw at once, the largest snapshot) and
//! by at most 10 KB over the last 10 000, in steps that stop; clients joining and leaving
//! 3 840 times left the server 5 KB larger than after 960 sessions (under 2 bytes a session,
//! and slowing: 4.5 KB more after 15 360). So the tests here are guards, each a few seconds
//! in debug.
//!
//! `CHURN_HEAP_WINDOWS=n` makes each test print the cumulative growth over `n` windows of
//! [`WINDOW`] ticks instead of asserting: to tell a plateau from linear growth (in release:
//! `CHURN_HEAP_WINDOWS=60 cargo test --release -p mf-net-tests --test churn_heap_features --
//! --nocapture`).

use std::time::Duration;

use glam::{Quat, Vec3};
use mf_net::prediction::{LagHistory, Simulation, Step};
use mf_net::prelude::*;
use mf_net::replication::interest::GridInterest;
use mf_net::replication::{MultiplayerEvent, SnapshotEncoding, Spawner};
use mf_net::scene::SceneError;
use mf_net_tests::alloc_counter::{is_counting, measure};
use mf_net_tests::harness::{Mp, World};
use mf_net_tests::rng::Rng;

/// Ticks of warm-up: every table reaches its size for the population (300 were not enough
/// for the movers: their peers' tables grew by 110 KB over the next 300 ticks, and no more).
const WARM_UP: usize = 600;
/// Ticks measured after warm-up.
const TICKS: usize = 300;
/// The allowed growth of the live heap over [`TICKS`].
const LIMIT: i64 = 64 * 1024;
/// Ticks per window with `CHURN_HEAP_WINDOWS`.
const WINDOW: usize = 300;

/// A thing that moves every tick: quantized, interpolated, and both.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Mover {
    #[replicated(quantize(min = -512.0, max = 512.0, bits = 16))]
    position: Vec3,
    #[replicated(quantize(smallest_three, bits = 12))]
    rotation: Quat,
    #[replicated(interpolate)]
    velocity: Vec3,
    #[replicated(interpolate, quantize(min = -100.0, max = 100.0, bits = 16))]
    heading: f32,
}

/// A thing on the XZ plane (the grid's positions; a tank's root; a spawner's instance).
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Body {
    #[replicated]
    x: f32,
    #[replicated]
    z: f32,
    #[replicated]
    hp: i32,
}

/// A tank's child.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Gun {
    #[replicated]
    ammo: u16,
}

/// A player, predicted by its owner and interpolated by everyone else.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Player {
    #[replicated(predict, interpolate)]
    x: f32,
    #[replicated]
    hp: i32,
}

/// A player's input of one tick.
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Walk {
    dir: i8,
}

/// A spawner's data: the instance's name and position, a gun per entry.
#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Loadout {
    name: String,
    x: i32,
    guns: Vec<u16>,
}

/// Scene 0: a [`Mover`].
const MOVER: SceneIndex = SceneIndex::new(0);
/// Scene 1: a [`Body`].
const BODY: SceneIndex = SceneIndex::new(1);
/// Scene 2: a [`Body`] with a `gun` ([`Gun`]) and a plain `turret` holding a `sight` ([`Gun`]).
const TANK: SceneIndex = SceneIndex::new(2);
/// Scene 3: a [`Player`].
const PLAYER: SceneIndex = SceneIndex::new(3);

/// The spawnable scenes every peer registers.
fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("mover", |scene, root| {
            scene.set_value(root, Mover::default())
        })
        .unwrap();
    scenes
        .register("body", |scene, root| scene.set_value(root, Body::default()))
        .unwrap();
    scenes.register("tank", build_tank).unwrap();
    scenes
        .register("player", |scene, root| {
            scene.set_value(root, Player::default())
        })
        .unwrap();
    scenes
}

/// The `tank` scene.
fn build_tank(scene: &mut Scene, root: NodeId) -> Result<(), SceneError> {
    let body = Body {
        hp: 100,
        ..Body::default()
    };
    scene.set_value(root, body)?;
    scene.insert(root, "gun", Gun { ammo: 10 })?;
    let turret = scene.add(root, "turret")?;
    scene.insert(turret, "sight", Gun::default())?;
    Ok(())
}

/// The spawner's function: a [`Body`] named after the data, a [`Gun`] child per entry.
fn build_loadout(scene: &mut Scene, parent: NodeId, data: &Loadout) -> Result<NodeId, SceneError> {
    let root = scene.add(parent, &data.name)?;
    let body = Body {
        x: data.x as f32,
        ..Body::default()
    };
    scene.set_value(root, body)?;
    for (i, &ammo) in data.guns.iter().enumerate() {
        scene.insert(root, &format!("gun{i}"), Gun { ammo })?;
    }
    Ok(root)
}

/// Every peer's setup: a `level` node, and the `loadouts` spawner under it.
fn setup(mp: &mut Mp) {
    let root = mp.scene().root();
    mp.scene_mut().add(root, "level").unwrap();
    mp.register_spawner("loadouts", "/root/level", build_loadout)
        .unwrap();
}

/// The first net id: a client's table by net id grows up to id `4 × live + 4096` (then ids
/// past it are searched), and a server hands out fresh ids until they run out. From 1, the
/// ids of these churns took up to 1 100 ticks to reach that bound, the table growing by some
/// 100 KB a client meanwhile: from here they reach it within the warm-up, as on a server that
/// has run for a while.
const FIRST_NET_ID: u32 = 4096;

/// A server and `clients` clients over a perfect loopback, snapshots in `encoding`.
fn world(clients: usize, encoding: SnapshotEncoding) -> World {
    let config = MultiplayerConfig {
        snapshot_encoding: encoding,
        first_net_id: FIRST_NET_ID,
        ..MultiplayerConfig::default()
    };
    World::with_setup(clients, config, None, 0, library, setup)
}

/// Drains every peer's events.
fn drain_all(world: &mut World) {
    for mp in std::iter::once(&mut world.server).chain(&mut world.clients) {
        while mp.next_event().is_some() {}
    }
}

/// A random index of `live` past its first `stay` (the nodes never despawned).
fn churned(rng: &mut Rng, live: &[NodeId], stay: usize) -> usize {
    stay + rng.below((live.len() - stay) as u64) as usize
}

/// The `n` of `CHURN_HEAP_WINDOWS`, if set.
fn windows() -> Option<usize> {
    std::env::var("CHURN_HEAP_WINDOWS").ok()?.parse().ok()
}

/// Runs `tick` for [`WARM_UP`] ticks, then asserts that the live heap grows by less than
/// [`LIMIT`] over [`TICKS`] more (or, with `CHURN_HEAP_WINDOWS`, prints the growth by window).
fn assert_flat<S>(what: &str, state: &mut S, mut tick: impl FnMut(&mut S)) {
    assert!(is_counting(), "the counting allocator is not installed");
    for _ in 0..WARM_UP {
        tick(state);
    }
    if let Some(n) = windows() {
        print_windows(what, state, n, tick);
        return;
    }
    let ((), info) = measure(|| {
        for _ in 0..TICKS {
            tick(state);
        }
    });
    let grew = info.bytes_current;
    eprintln!("{what}: the live heap grew by {grew} bytes over {TICKS} ticks");
    assert!(
        grew < LIMIT,
        "{what}: the live heap grew by {grew} bytes over {TICKS} ticks (limit {LIMIT})"
    );
}

/// Prints the cumulative growth of the live heap after each of `n` windows of [`WINDOW`]
/// ticks.
fn print_windows<S>(what: &str, state: &mut S, n: usize, mut tick: impl FnMut(&mut S)) {
    let mut total = 0;
    let mut line = String::new();
    for _ in 0..n {
        let ((), info) = measure(|| {
            for _ in 0..WINDOW {
                tick(state);
            }
        });
        total += info.bytes_current;
        line.push_str(&format!(" {total}"));
    }
    eprintln!("{what}: cumulative growth every {WINDOW} ticks:{line}");
}

/// Both encodings.
const ENCODINGS: [SnapshotEncoding; 2] = [SnapshotEncoding::Bits, SnapshotEncoding::Bytes];

// 1. Moving nodes with interpolated and quantized members.

/// Movers alive at once, the first [`STAY`] never despawned.
const MOVERS: usize = 120;
/// Nodes never despawned (of every population here).
const STAY: usize = 20;

/// Churned movers, all moving.
struct Movers {
    world: World,
    live: Vec<NodeId>,
    rng: Rng,
    tick: u32,
}

/// One tick: eight movers replaced, every mover moved, every peer's frame.
fn movers_tick(m: &mut Movers) {
    let root = m.world.root();
    for _ in 0..8 {
        let i = churned(&mut m.rng, &m.live, STAY);
        assert!(m.world.server.despawn(m.live[i]));
        m.live[i] = m.world.server.spawn(MOVER, root, PeerId::SERVER).unwrap();
    }
    m.tick += 1;
    let t = m.tick as f32 * 0.05;
    for (k, (_, mover)) in m.world.server.scene_mut().iter_mut::<Mover>().enumerate() {
        let phase = t + k as f32 * 0.1;
        mover.position = Vec3::new(phase.sin() * 400.0, phase.cos() * 100.0, k as f32);
        mover.rotation = Quat::from_rotation_y(phase);
        mover.velocity = Vec3::new(phase.cos(), 0.0, phase.sin());
        mover.heading = (phase * 7.0).sin() * 90.0;
    }
    m.world.frame();
    drain_all(&mut m.world);
}

#[test]
fn churned_moving_interpolated_and_quantized_nodes_keep_the_heap_flat() {
    for encoding in ENCODINGS {
        let mut world = world(2, encoding);
        let root = world.root();
        let live = (0..MOVERS)
            .map(|_| world.server.spawn(MOVER, root, PeerId::SERVER).unwrap())
            .collect();
        let rng = Rng(0x5EED_0001);
        let mut m = Movers {
            world,
            live,
            rng,
            tick: 0,
        };
        assert_flat(&format!("movers, {encoding:?}"), &mut m, movers_tick);
        m.world.step(10);
        m.world.assert_converged();
    }
}

// 2. Grid interest with moving foci.

/// Bodies alive at once (besides the players).
const BODIES: usize = 150;
/// Update tiers by distance, for the bit-packed run.
const TIERS: &[(u32, u32)] = &[(1, 1), (3, 2), (u32::MAX, 4)];

/// A [`Body`]'s position, for the grid.
fn position(scene: &Scene, node: NodeId) -> Option<[f32; 3]> {
    let body = scene.get(scene.net_ref::<Body>(node)?)?;
    Some([body.x, 0.0, body.z])
}

/// Churned bodies crossing cells, and each client's player (its focus) wandering.
struct Grid {
    world: World,
    live: Vec<NodeId>,
    players: Vec<NodeId>,
    rng: Rng,
    tick: u32,
}

/// Places the server's `node` (a [`Body`]) at `(x, z)`.
fn place(world: &mut World, node: NodeId, x: f32, z: f32) {
    let handle = world.server.scene().net_ref::<Body>(node).unwrap();
    let body = world.server.scene_mut().get_mut(handle).unwrap();
    (body.x, body.z) = (x, z);
}

/// A body owned by `owner` somewhere in the 200 × 200 square around the origin.
fn spawn_body(world: &mut World, rng: &mut Rng, owner: PeerId) -> NodeId {
    let root = world.root();
    let node = world.server.spawn(BODY, root, owner).unwrap();
    let (x, z) = (rng.below(200) as f32 - 100.0, rng.below(200) as f32 - 100.0);
    place(world, node, x, z);
    node
}

/// A world of three clients, each focused on its player, with a grid of 10-unit cells.
fn grid_world(encoding: SnapshotEncoding) -> Grid {
    let mut world = world(3, encoding);
    let grid = GridInterest {
        cell_size: 10.0,
        radius_cells: 2,
        hysteresis_cells: 1,
        grace: Duration::from_millis(100),
        position,
        tiers: if encoding == SnapshotEncoding::Bits {
            TIERS
        } else {
            &[]
        },
    };
    world.server.set_interest_policy(grid, 2).unwrap();
    let mut rng = Rng(0x5EED_0002);
    let live = (0..BODIES)
        .map(|_| spawn_body(&mut world, &mut rng, PeerId::SERVER))
        .collect();
    let players = (0..3)
        .map(|c| {
            let peer = world.clients[c].local_peer_id();
            let player = spawn_body(&mut world, &mut rng, peer);
            world.server.set_focus(peer, Some(player)).unwrap();
            player
        })
        .collect();
    Grid {
        world,
        live,
        players,
        rng,
        tick: 0,
    }
}

/// One tick: eight bodies replaced, every body drifting along x, the players circling the
/// square, every peer's frame.
fn grid_tick(g: &mut Grid) {
    for _ in 0..8 {
        let i = churned(&mut g.rng, &g.live, STAY);
        assert!(g.world.server.despawn(g.live[i]));
        g.live[i] = spawn_body(&mut g.world, &mut g.rng, PeerId::SERVER);
    }
    g.tick += 1;
    let t = g.tick as f32 * 0.02;
    for (c, &player) in g.players.iter().enumerate() {
        let a = t + c as f32 * 2.0;
        place(&mut g.world, player, a.cos() * 90.0, (a * 1.3).sin() * 90.0);
    }
    let hp = (g.tick % 50) as i32;
    for (k, (_, body)) in g.world.server.scene_mut().iter_mut::<Body>().enumerate() {
        let step = if k % 2 == 0 { 0.7 } else { -0.7 };
        body.x = (body.x + step + 100.0).rem_euclid(200.0) - 100.0;
        body.hp = hp;
    }
    g.world.frame();
    drain_all(&mut g.world);
}

#[test]
fn churned_nodes_entering_and_leaving_grid_views_keep_the_heap_flat() {
    for encoding in ENCODINGS {
        let mut g = grid_world(encoding);
        let before = g.world.server.stats().relevance_despawns;
        assert_flat(&format!("grid, {encoding:?}"), &mut g, grid_tick);
        let left = g.world.server.stats().relevance_despawns - before;
        assert!(left > 500, "{encoding:?}: only {left} groups left views");
        g.world.step(10);
        for c in 0..3 {
            g.world.assert_sees_exactly_what_is_relevant(c);
        }
    }
}

// 3. Hierarchy.

/// Tanks alive at once (some nested under others).
const TANKS: usize = 100;

/// Churned tanks.
struct Tanks {
    world: World,
    live: Vec<NodeId>,
    rng: Rng,
}

/// One tick: six tanks replaced (a quarter spawned under another tank, so despawned with it,
/// maybe before their own turn), a few guns despawned alone or changed, every peer's frame.
fn tanks_tick(t: &mut Tanks) {
    let root = t.world.root();
    for _ in 0..6 {
        let i = churned(&mut t.rng, &t.live, STAY);
        // A nested tank may have gone with its parent already.
        t.world.server.despawn(t.live[i]);
        let other = t.live[t.rng.below(TANKS as u64) as usize];
        let nested = t.rng.chance(25) && t.world.server.scene().contains(other);
        let parent = if nested { other } else { root };
        t.live[i] = t.world.server.spawn(TANK, parent, PeerId::SERVER).unwrap();
    }
    for _ in 0..10 {
        let tank = t.live[t.rng.below(TANKS as u64) as usize];
        let scene = t.world.server.scene();
        let Some(gun) = scene
            .contains(tank)
            .then(|| scene.child(tank, "gun"))
            .flatten()
        else {
            continue;
        };
        if t.rng.chance(20) {
            assert!(t.world.server.despawn(gun));
        } else {
            let handle = scene.net_ref::<Gun>(gun).unwrap();
            t.world.server.scene_mut().get_mut(handle).unwrap().ammo += 1;
        }
    }
    t.world.frame();
    drain_all(&mut t.world);
}

#[test]
fn churned_scenes_with_children_keep_the_heap_flat() {
    for encoding in ENCODINGS {
        let mut world = world(2, encoding);
        let root = world.root();
        let live = (0..TANKS)
            .map(|_| world.server.spawn(TANK, root, PeerId::SERVER).unwrap())
            .collect();
        let rng = Rng(0x5EED_0003);
        let mut t = Tanks { world, live, rng };
        assert_flat(&format!("tanks, {encoding:?}"), &mut t, tanks_tick);
        t.world.step(10);
        t.world.assert_converged();
    }
}

// 4. Prediction and lag compensation.

/// Players alive at once.
const PLAYERS: usize = 60;

/// Churned players owned by two clients, predicted by their owners, handed between them.
struct Predicted {
    world: World,
    server_sim: Simulation<Walk>,
    client_sims: [Simulation<Walk>; 2],
    history: LagHistory<Player, f32>,
    live: Vec<NodeId>,
    rng: Rng,
    tick: u32,
    /// Rewinds the server's step found a player at.
    rewinds: u64,
}

/// The step, the same on every peer: each simulated player walks by its input.
fn walk(step: &mut Step<'_, Walk>) {
    for (_, player, input) in step.simulated_mut::<Player>() {
        player.x += f32::from(input.map_or(0, |i| i.dir)) * 0.5;
    }
}

/// The clients' peers.
fn peers(world: &World) -> Vec<PeerId> {
    world.clients.iter().map(Mp::local_peer_id).collect()
}

/// One tick: four players replaced, two handed to another owner, the server's step (which
/// records the history and rewinds every player to each client's view), every client's
/// predicted step.
fn predicted_tick(p: &mut Predicted) {
    let peers = peers(&p.world);
    let root = p.world.root();
    for _ in 0..4 {
        let i = churned(&mut p.rng, &p.live, STAY);
        assert!(p.world.server.despawn(p.live[i]));
        let owner = peers[p.rng.below(2) as usize];
        p.live[i] = p.world.server.spawn(PLAYER, root, owner).unwrap();
    }
    for _ in 0..2 {
        let node = p.live[p.rng.below(PLAYERS as u64) as usize];
        let owner = [peers[0], peers[1], PeerId::SERVER][p.rng.below(3) as usize];
        p.world.server.set_authority(node, owner, true).unwrap();
    }
    p.tick += 1;
    let dt = p.world.dt;
    server_step(p, &peers, dt);
    let dir = if (p.tick / 20) % 2 == 0 { 1 } else { -1 };
    for (client, sim) in p.world.clients.iter_mut().zip(&mut p.client_sims) {
        client.begin_frame(dt);
        sim.run(client, |_| Walk { dir }, walk);
        client.end_frame();
    }
    drain_all(&mut p.world);
}

/// The server's frame: its step walks, records the history, and finds every player where
/// each client saw it.
fn server_step(p: &mut Predicted, peers: &[PeerId], dt: Duration) {
    let (history, rewinds, live) = (&mut p.history, &mut p.rewinds, &p.live);
    let server = &mut p.world.server;
    server.begin_frame(dt);
    p.server_sim.run(
        server,
        |_| Walk::default(),
        |step| {
            walk(step);
            history.record(step.scene(), step.tick());
            for &peer in peers {
                let Some(view) = step.view_tick(peer) else {
                    continue;
                };
                let found = live.iter().filter(|&&n| history.at(n, view).is_some());
                *rewinds += found.count() as u64;
            }
        },
    );
    server.end_frame();
}

#[test]
fn churned_predicted_and_lag_compensated_players_keep_the_heap_flat() {
    for encoding in ENCODINGS {
        let mut world = world(2, encoding);
        let peers = peers(&world);
        let root = world.root();
        let live = (0..PLAYERS)
            .map(|i| world.server.spawn(PLAYER, root, peers[i % 2]).unwrap())
            .collect();
        let mut p = Predicted {
            world,
            server_sim: Simulation::new(),
            client_sims: [Simulation::new(), Simulation::new()],
            history: LagHistory::new(30, |p| p.x),
            live,
            rng: Rng(0x5EED_0004),
            tick: 0,
            rewinds: 0,
        };
        assert_flat(&format!("prediction, {encoding:?}"), &mut p, predicted_tick);
        let predicted = p.world.clients[0].stats().prediction;
        assert!(predicted.rollbacks > 50, "{encoding:?}: {predicted:?}");
        assert!(p.rewinds > 10_000, "{encoding:?}: {} rewinds", p.rewinds);
    }
}

// 5. Spawners, and clients joining and leaving.

/// Spawner instances alive at once (besides the players).
const LOADOUTS: usize = 100;
/// Clients at once, at most.
const SESSIONS: usize = 3;

/// Churned spawner instances, and clients coming and going, each owning a player.
struct Sessions {
    world: World,
    live: Vec<NodeId>,
    rng: Rng,
    /// Instances spawned (their names).
    spawned: u64,
    tick: u64,
    joins: u64,
}

/// A spawner instance owned by `owner`, with up to three guns.
fn spawn_loadout(s: &mut Sessions, owner: PeerId) -> NodeId {
    let spawner: Spawner<Loadout> = s.world.server.spawner("loadouts").unwrap();
    s.spawned += 1;
    let data = Loadout {
        name: format!("l{}", s.spawned),
        x: s.rng.below(100) as i32,
        guns: (0..s.rng.below(4)).map(|g| g as u16).collect(),
    };
    s.world.server.spawn_with(spawner, &data, owner).unwrap()
}

/// One tick: six instances replaced; every 20 ticks the oldest client leaves (once there are
/// [`SESSIONS`]) and a new one connects; a client that joins gets a player (an instance it
/// owns, despawned when it leaves); every peer's frame.
fn sessions_tick(s: &mut Sessions) {
    for _ in 0..6 {
        let i = churned(&mut s.rng, &s.live, STAY);
        assert!(s.world.server.despawn(s.live[i]));
        s.live[i] = spawn_loadout(s, PeerId::SERVER);
    }
    s.tick += 1;
    if s.tick % 20 == 0 {
        if s.world.clients.len() == SESSIONS {
            s.world.clients.remove(0).stop();
        }
        s.world.connect_client();
    }
    let dt = s.world.dt;
    s.world.server.begin_frame(dt);
    s.world.server.end_frame();
    while let Some(event) = s.world.server.next_event() {
        if let MultiplayerEvent::PeerJoined(peer) = event {
            s.joins += 1;
            spawn_loadout(s, peer);
        }
    }
    for client in &mut s.world.clients {
        client.begin_frame(dt);
        client.end_frame();
        while client.next_event().is_some() {}
    }
}

#[test]
fn churned_spawner_instances_and_clients_coming_and_going_keep_the_heap_flat() {
    for encoding in ENCODINGS {
        let mut s = Sessions {
            world: world(0, encoding),
            live: Vec::new(),
            rng: Rng(0x5EED_0005),
            spawned: 0,
            tick: 0,
            joins: 0,
        };
        s.live = (0..LOADOUTS)
            .map(|_| spawn_loadout(&mut s, PeerId::SERVER))
            .collect();
        assert_flat(&format!("sessions, {encoding:?}"), &mut s, sessions_tick);
        assert!(s.joins >= 29, "{encoding:?}: {} joins", s.joins);
        s.world.step(10);
        s.world.assert_converged();
    }
}
