//! Interest at scale (issue 25's scenario): one server and 256 clients over an in-process
//! loopback network, 10 000 bodies, `GridInterest` sized so that each client sees about a
//! fifteenth of the world, every client's player walking across it. A measuring program that
//! prints the server's tick times (median, mean, 99th percentile, worst): what matters here is
//! the tail, which divan's summaries do not give.
//!
//! - The world is a square of side 194 on the XZ plane; cells are 10 wide and a client sees
//!   2 cells around its player's (5 × 5 cells: about 1/15 of the world), with one cell of
//!   hysteresis.
//! - Every body is its own spawn group (as players, projectiles and pickups are), so that
//!   relevance is decided per body.
//! - Each frame is one network tick: the bodies move (all, or a different tenth each tick),
//!   the players walk, then the server's `begin_frame` + `end_frame` is timed (the acks, the
//!   capture, relevance for the clients whose turn it is, the snapshots), then the clients run
//!   untimed.
//! - Each client is evaluated every 30 ticks (`set_interest_policy(.., 30)`), and every 3 in a
//!   second run; a third run builds the world again beside one twice as large (20 000 bodies
//!   on a side √2 longer, so each client sees as much as before), times one tick of each in
//!   turn, and prints how the median changed: taken in turn, both worlds are measured in the
//!   same phase of a machine whose speed drifts by up to 2× from minute to minute; a fourth
//!   run does the same with two worlds of 10 000 bodies, one sending byte-format snapshots and
//!   one bit-packed (the default encoding), and prints how many times the byte format's median
//!   the bit-packed one's is.
//! - Each load first runs 70 ticks untimed: its first ticks fill every client's ring of 64 sent
//!   snapshots with lists of a new size, touching fresh memory.
//! - Each run prints, per tick, the relevance spawns and despawns, the bytes sent and the
//!   entries encoded: walking into a new cell, a client gets the bodies of a new row of cells
//!   and loses those of an old one, so relevance changes every tick somewhere.
//!
//! Run: `cargo bench -p mf-net-benches --bench interest_scale` (a few minutes here); `-- quick`,
//! or run as a test, for 32 clients and 2000 bodies. In the environment, `BITS=1` sends
//! bit-packed snapshots in the first three runs (issue 25's figures are the byte format's,
//! which they send otherwise), and `ONLY_LOAD=100` (or `10`) runs only that load of the first
//! world (with `WORLD=2`, of the doubled world), for profiles and A/B runs (the server's frame
//! is the out-of-line `server_frame`, so a profile tells it from the clients'); `STILL=bodies`,
//! `STILL=players` or `STILL=all` keeps those where they are, to see what the rest of a load
//! costs; `PACES=4` (or any count) has client `i` run its frame every `1 + i % 4` measured
//! ticks, so that the clients stand 1 to 4 ticks behind the server in no particular order, as
//! clients at different round trips do (by default every client runs every tick).
//! Nothing here is asserted: the figures go to `benches/README.md`.

use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::replication::interest::GridInterest;
use mf_net::replication::{NetworkStats, SnapshotEncoding};
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net_benches::{client_runs, running_as_test, BoxEntity};

/// Untimed ticks of each load before the timed ones.
const WARM_UP: usize = 70;

/// A player: where its client's interest is measured from.
#[derive(Replicated, Debug, Clone, PartialEq, Default)]
struct Player {
    #[replicated]
    position: Vec3,
}

type Mp = Multiplayer<LoopbackTransport>;

/// The side of the world of 10 000 bodies (a world of `n` bodies at the same density has a
/// side of `SIDE * sqrt(n / 10 000)`).
const SIDE: f32 = 194.0;
const BODY: SceneIndex = SceneIndex::new(0);
const PLAYER: SceneIndex = SceneIndex::new(1);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("body", |scene, root| {
            let body = BoxEntity {
                position: Vec3::ZERO,
                rotation: Quat::IDENTITY,
                health: 100,
            };
            scene.set_value(root, body)
        })
        .expect("a fresh library");
    scenes
        .register("player", |scene, root| {
            scene.set_value(root, Player::default())
        })
        .expect("a fresh library");
    scenes
}

/// A body's or a player's position.
fn position(scene: &Scene, node: NodeId) -> Option<[f32; 3]> {
    if let Some(body) = scene.net_ref::<BoxEntity>(node).and_then(|h| scene.get(h)) {
        return Some(body.position.to_array());
    }
    let player = scene.net_ref::<Player>(node).and_then(|h| scene.get(h))?;
    Some(player.position.to_array())
}

/// A deterministic spread: the `i`th point of a low-discrepancy sequence over a world of
/// `side`.
fn spread(i: usize, side: f32) -> Vec3 {
    let golden = 0.618_034_f32;
    let x = (i as f32 * golden).fract() * side;
    let z = ((i as f32 * golden * golden) + 0.5 * (i as f32 / 997.0)).fract() * side;
    Vec3::new(x, 0.0, z)
}

struct World {
    server: Mp,
    clients: Vec<Mp>,
    bodies: Vec<NetRef<BoxEntity>>,
    players: Vec<NetRef<Player>>,
    dt: Duration,
    tick: u32,
    side: f32,
}

impl World {
    fn new(
        clients: usize,
        bodies: usize,
        every_ticks: u32,
        snapshot_encoding: SnapshotEncoding,
    ) -> Self {
        let side = SIDE * (bodies as f32 / 10_000.0).sqrt();
        let net = LoopbackNetwork::new();
        let config = MultiplayerConfig {
            snapshot_encoding,
            ..MultiplayerConfig::default()
        };
        let dt = Duration::from_secs(1) / u32::from(config.tick_rate);
        let mut server = Mp::new(library(), config);
        let listen = net.listen("interest", clients).expect("a fresh network");
        server
            .start_server(listen, MessageRegistry::new(1))
            .expect("the server starts");
        let grid = GridInterest {
            cell_size: 10.0,
            radius_cells: 2,
            hysteresis_cells: 1,
            grace: Duration::ZERO,
            position,
            tiers: &[],
        };
        server
            .set_interest_policy(grid, every_ticks)
            .expect("a server");
        let clients = (0..clients)
            .map(|_| {
                let mut client = Mp::new(library(), config);
                client
                    .start_client(
                        |data| net.connect("interest", data),
                        MessageRegistry::new(1),
                    )
                    .expect("the client starts");
                client
            })
            .collect();
        let mut world = Self {
            server,
            clients,
            bodies: Vec::new(),
            players: Vec::new(),
            dt,
            tick: 0,
            side,
        };
        world.frames(10);
        let root = world.server.scene().root();
        let peers: Vec<PeerId> = world.server.peers().to_vec();
        for (i, &peer) in peers.iter().enumerate() {
            let player = world.server.spawn_as::<Player>(PLAYER, root, peer);
            let player = player.expect("a player");
            let scene = world.server.scene_mut();
            scene.get_mut(player).expect("here").position = spread(i * 7 + 3, side);
            world
                .server
                .set_focus(peer, Some(player.node()))
                .expect("a peer");
            world.players.push(player);
        }
        for i in 0..bodies {
            let body = world
                .server
                .spawn_as::<BoxEntity>(BODY, root, PeerId::SERVER);
            let body = body.expect("a body");
            let scene = world.server.scene_mut();
            scene.get_mut(body).expect("here").position = spread(i, side);
            world.bodies.push(body);
            if i % 500 == 499 {
                world.frames(1);
            }
        }
        world.frames(60);
        world
    }

    /// Untimed frames (nothing moves).
    fn frames(&mut self, n: usize) {
        for _ in 0..n {
            self.server.begin_frame(self.dt);
            self.server.end_frame();
            for client in &mut self.clients {
                client.begin_frame(self.dt);
                client.end_frame();
            }
        }
    }

    /// Moves the bodies (every one, or a different tenth each tick) and the players (but
    /// those [`still`] keeps where they are).
    fn move_all(&mut self, all: bool) {
        self.tick += 1;
        let t = self.tick as f32 * 0.05;
        let (bodies_still, players_still) = (still("bodies"), still("players"));
        let scene = self.server.scene_mut();
        for (i, &body) in self.bodies.iter().enumerate() {
            if !bodies_still && (all || i % 10 == self.tick as usize % 10) {
                let home = spread(i, self.side);
                let at = home + Vec3::new((t + i as f32).sin(), 0.0, (t * 0.7 + i as f32).cos());
                scene.get_mut(body).expect("a body").position = at;
            }
        }
        for (i, &player) in self.players.iter().enumerate().filter(|_| !players_still) {
            let p = &mut scene.get_mut(player).expect("a player").position;
            // Walking east at 0.3 a tick (a cell in 33 ticks), wrapping around the world.
            p.x = (p.x + 0.3 + i as f32 * 0.001) % self.side;
        }
    }

    /// One measured tick: the server's frame, timed; then the clients', untimed.
    fn tick(&mut self, all: bool) -> Duration {
        self.move_all(all);
        let start = Instant::now();
        server_frame(&mut self.server, self.dt);
        let took = start.elapsed();
        let (tick, paces) = (self.tick, paces());
        for (i, client) in (0u32..).zip(&mut self.clients) {
            if client_runs(tick, i, paces) {
                client.begin_frame(self.dt);
                client.end_frame();
            }
        }
        took
    }
}

/// The server's frame, kept out of line so that profiles can tell it from the clients'.
#[inline(never)]
fn server_frame(server: &mut Mp, dt: Duration) {
    server.begin_frame(dt);
    server.end_frame();
    // Not a tail call: the frame stays on the stack for profilers.
    std::hint::black_box(server);
}

/// Prints the median, mean, 99th percentile and worst of `ticks`; returns the median.
fn report(label: &str, mut ticks: Vec<Duration>) -> Duration {
    ticks.sort_unstable();
    let at = |q: f64| ticks[((ticks.len() - 1) as f64 * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mean = ticks.iter().sum::<Duration>() / u32::try_from(ticks.len()).unwrap_or(u32::MAX);
    println!(
        "{label}: median {:.2} ms, mean {:.2} ms, p99 {:.2} ms, worst {:.2} ms ({} ticks)",
        ms(at(0.5)),
        ms(mean),
        ms(at(0.99)),
        ms(at(1.0)),
        ticks.len()
    );
    at(0.5)
}

/// The loads: 100 % of the bodies moving each tick, or a tenth.
const LOADS: [(&str, bool); 2] = [("100 % moving", true), ("10 % moving", false)];

/// The encoding of every run but [`run_encodings`]: the byte format, as this scenario has been
/// measured since it was written (issue 25), unless `BITS` is set.
fn encoding() -> SnapshotEncoding {
    match std::env::var_os("BITS") {
        Some(_) => SnapshotEncoding::Bits,
        None => SnapshotEncoding::Bytes,
    }
}

/// Builds a world of `clients` clients and `bodies` bodies with relevance every `every` ticks,
/// snapshots in `encoding`, and says so.
fn build(clients: usize, bodies: usize, every: u32, encoding: SnapshotEncoding) -> World {
    let start = Instant::now();
    let world = World::new(clients, bodies, every, encoding);
    let seen: usize = world
        .clients
        .iter()
        .map(|c| c.stats().networked_nodes)
        .sum();
    println!(
        "{clients} clients x {bodies} bodies (side {:.0}), relevance every {every} ticks, \
         {encoding:?}: set up in {:.0} s, a client sees {} nodes on average",
        world.side,
        start.elapsed().as_secs_f64(),
        seen / clients
    );
    world
}

/// Runs `ticks` ticks of each load on a world of `bodies` bodies with relevance every `every`
/// ticks.
fn run(clients: usize, bodies: usize, every: u32, ticks: usize) {
    let mut world = build(clients, bodies, every, encoding());
    let only = only_load();
    for (label, all) in LOADS {
        if only.is_some_and(|o| o != all) {
            continue;
        }
        // Untimed first: a load's first ticks fill each client's ring of 64 sent snapshots with
        // lists of a new size, touching fresh memory (page faults, not steady-state work).
        for _ in 0..WARM_UP {
            world.tick(all);
        }
        let before = *world.server.stats();
        let times: Vec<Duration> = (0..ticks).map(|_| world.tick(all)).collect();
        report(&format!("  {label}"), times);
        per_tick(&before, world.server.stats(), ticks);
    }
}

/// Prints what the server did per tick over `ticks` ticks, from its stats `before` to `after`.
fn per_tick(before: &NetworkStats, after: &NetworkStats, ticks: usize) {
    let per_tick = |a: u64, b: u64| (a - b) as f64 / ticks as f64;
    println!(
        "    per tick: {:.0} relevance spawns, {:.0} despawns, {:.0} kB sent, {:.0} entries encoded",
        per_tick(after.relevance_spawns, before.relevance_spawns),
        per_tick(after.relevance_despawns, before.relevance_despawns),
        per_tick(after.bytes_sent, before.bytes_sent) / 1000.0,
        per_tick(after.entries_encoded, before.entries_encoded),
    );
}

/// Runs each load on a world of `bodies` bodies and on one twice as large at the same density
/// (relevance every 30 ticks), one tick of each in turn, so that both are measured in the same
/// phase of a machine whose speed drifts from minute to minute; returns how many times the
/// first world's median tick the second's is (100 % moving, 10 % moving).
fn run_doubled(clients: usize, bodies: usize, ticks: usize) -> [f64; 2] {
    let worlds = [
        build(clients, bodies, 30, encoding()),
        build(clients, bodies * 2, 30, encoding()),
    ];
    let labels = [format!("{bodies} bodies"), format!("{} bodies", bodies * 2)];
    in_turn(worlds, labels, ticks)
}

/// Runs each load on two worlds of `bodies` bodies (relevance every 30 ticks), one sending
/// byte-format snapshots and one bit-packed, one tick of each in turn (as [`run_doubled`]);
/// returns how many times the byte format's median tick the bit-packed one's is (100 %
/// moving, 10 % moving).
fn run_encodings(clients: usize, bodies: usize, ticks: usize) -> [f64; 2] {
    let encodings = [SnapshotEncoding::Bytes, SnapshotEncoding::Bits];
    let worlds = encodings.map(|e| build(clients, bodies, 30, e));
    in_turn(worlds, encodings.map(|e| format!("{e:?}")), ticks)
}

/// Runs each load on both `worlds`, one tick of each in turn after both warmed up, the first
/// world first one time and second the next (a world ticked right after the other measured
/// up to about 1 % faster than it would first); reports each world's ticks under its label
/// and returns how many times the first world's median tick the second's is (100 % moving,
/// 10 % moving).
fn in_turn(mut worlds: [World; 2], labels: [String; 2], ticks: usize) -> [f64; 2] {
    LOADS.map(|(load, all)| {
        for world in &mut worlds {
            for _ in 0..WARM_UP {
                world.tick(all);
            }
        }
        let mut times = [Vec::new(), Vec::new()];
        for tick in 0..ticks {
            let order = if tick % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                times[i].push(worlds[i].tick(all));
            }
        }
        let [first, second] = times;
        let first = report(&format!("  {load}, {}", labels[0]), first);
        let second = report(&format!("  {load}, {}", labels[1]), second);
        second.as_secs_f64() / first.as_secs_f64()
    })
}

/// `STILL=bodies` keeps the bodies where they are, `STILL=players` the players (no relevance
/// changes then but those of bodies crossing cells), `STILL=all` both: what each part of a
/// load costs.
fn still(what: &str) -> bool {
    std::env::var("STILL").is_ok_and(|s| s == what || s == "all")
}

/// `PACES=n`: client `i` runs its frame every `1 + i % n` measured ticks (1 by default: every
/// client every tick).
fn paces() -> u32 {
    let paces = std::env::var("PACES").ok().and_then(|p| p.parse().ok());
    paces.unwrap_or(1).max(1)
}

/// `ONLY_LOAD=100` or `ONLY_LOAD=10` runs that load of the first world alone (for profiles and
/// A/B runs): `Some(true)` for 100 % moving.
fn only_load() -> Option<bool> {
    match std::env::var("ONLY_LOAD").ok()?.as_str() {
        "100" => Some(true),
        "10" => Some(false),
        _ => None,
    }
}

fn main() {
    // Run as a test (`cargo test --benches`), or asked for, it runs the small world.
    let quick = running_as_test() || std::env::args().any(|a| a == "quick");
    let (clients, bodies, ticks) = if quick {
        (32, 2000, 60)
    } else {
        (256, 10_000, 150)
    };
    if only_load().is_some() {
        // `WORLD=2`: the doubled world's load instead.
        let times = if std::env::var_os("WORLD").is_some() {
            2
        } else {
            1
        };
        run(clients, bodies * times, 30, ticks);
        return;
    }
    run(clients, bodies, 30, ticks);
    run(clients, bodies, 3, ticks);
    // Twice the world at the same density: each client sees as much as before.
    let ratio = run_doubled(clients, bodies, ticks);
    println!(
        "twice the world: median x{:.2} at 100 % moving, x{:.2} at 10 % (the two worlds' ticks \
         taken in turn)",
        ratio[0], ratio[1]
    );
    // The two encodings on the same world, taken in turn.
    let ratio = run_encodings(clients, bodies, ticks);
    println!(
        "bit-packed against the byte format: median x{:.2} at 100 % moving, x{:.2} at 10 % (the \
         two worlds' ticks taken in turn)",
        ratio[0], ratio[1]
    );
}
