#![allow(clippy::unwrap_used)]
//! Inputs, client-side prediction with rollback, and the determinism check, deterministic over
//! `SimulatedTransport` (every frame steps the server, then each client, with the same step
//! function on both ends):
//!
//! - at 150 ms RTT with jitter and 10 % loss, the owning client's predicted position moves in
//!   the frame of the key press (0 frames), and equals the server's exactly once it stops;
//! - a deterministic step with nothing in the way: no rollback for a simulated minute;
//! - a wall only the server knows: the client is corrected within a round trip and a tick, and
//!   the position it shows never jumps by more than the smoothing allows per frame;
//! - 30 % loss of the client's packets: once the clock has learned the loss, the server has
//!   its input on time for over 99.9 % of ticks;
//! - the determinism check names the member of a step that reads a random number, and finds
//!   nothing wrong with a player that starts being predicted while its owner walks (spawned
//!   late, or handed over), over four seeds;
//! - a rollback every tick allocates nothing in steady state;
//! - 60 ± 40 ms of jitter with loss, duplication and reordering: at most 1 % of inputs
//!   missing, exact convergence;
//! - an input delay, owners predicting while others interpolate, a handed-over player, and a
//!   frozen client running on only for the repeat limit;
//! - a client's or the server's `Simulation` replaced mid-walk (a level reload) carries on,
//!   over a clean link and a 50 ms one, and converges exactly, its first rollback
//!   re-simulating ticks from before it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mf_net::prediction::{Simulation, Step};
use mf_net::prelude::*;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::{Mp, World};

mod prediction_common;
use prediction_common::*;

/// The player type's stable name (its module path within the crate, then its name).
const PLAYER_TYPE: &str = "prediction_common::Player";

fn bad_network() -> NetworkConditions {
    NetworkConditions::laggy(Duration::from_millis(75), Duration::from_millis(10)).with_loss(0.1)
}

#[test]
fn the_owner_sees_its_input_at_once_and_ends_where_the_server_does() {
    let mut game = Game::new(MultiplayerConfig::default(), Some(bad_network()));
    let start = game.client_x();
    assert_eq!(start, game.server_x(), "at rest, both agree");
    // The key goes down: the position moves in this very frame.
    game.frame(1, walk);
    assert_eq!(game.client_x(), start + SPEED, "0 frames of input latency");
    for _ in 0..60 {
        game.frame(1, walk);
    }
    assert!(
        game.client_x() > game.server_x(),
        "the client is ahead of the server"
    );
    // Released: once everything has arrived, the two agree exactly.
    for _ in 0..60 {
        game.frame(0, walk);
    }
    assert_eq!(game.client_x(), game.server_x());
    let walked = game.walked as f32 * SPEED;
    assert_eq!(game.client_x(), start + walked, "every input applied once");
    assert!(
        game.walked >= 55,
        "{} steps sampled in 61 frames",
        game.walked
    );
    let stats = game.client().stats().prediction;
    assert!(stats.ticks_predicted >= 200, "{stats:?}");
    let inputs = game
        .world
        .server
        .peer_stats(game.client().local_peer_id())
        .unwrap()
        .inputs;
    assert!(inputs.on_time > 150, "{inputs:?}");
}

#[test]
fn a_deterministic_step_never_rolls_back() {
    let mut game = Game::new(MultiplayerConfig::default(), Some(bad_network()));
    let before = game.client().stats().prediction;
    // A minute of walking back and forth, changing direction every 20 ticks.
    for frame in 0..1800 {
        let dir = [1, 0, -1, 1][(frame / 20) % 4];
        game.frame(dir, walk);
    }
    let after = game.client().stats().prediction;
    eprintln!("minute: {before:?} -> {after:?}");
    assert_eq!(after.rollbacks, before.rollbacks, "{after:?}");
    assert!(
        after.confirmations > before.confirmations + 1000,
        "{after:?}"
    );
    for _ in 0..30 {
        game.frame(0, walk);
    }
    assert_eq!(game.client_x(), game.server_x());
}

#[test]
fn a_wall_only_the_server_knows_is_corrected_within_a_round_trip_and_a_tick() {
    let mut config = MultiplayerConfig::default();
    config.prediction.smoothing = Duration::ZERO;
    config.prediction.lead_margin = 0;
    let mut game = Game::new(config, Some(bad_network()));
    // Walk up to the wall, stop, then take one step into it.
    for _ in 0..(WALL / SPEED) as usize {
        game.frame(1, walk_into_wall);
    }
    for _ in 0..30 {
        game.frame(0, walk_into_wall);
    }
    assert_eq!((game.client_x(), game.server_x()), (WALL, WALL));
    let rollbacks = game.client().stats().prediction.rollbacks;
    game.frame(1, walk_into_wall);
    assert_eq!(game.client_x(), WALL + SPEED, "predicted through the wall");
    let mut frames = 0;
    while game.client_x() != WALL {
        game.frame(0, walk_into_wall);
        frames += 1;
        assert!(frames < 30, "never corrected");
    }
    // The round trip as the server measures it (150 ms of latency, jitter, and each end seeing
    // a packet at its next frame), plus a tick: the margin the client's inputs arrive early by.
    let peer = game.client().local_peer_id();
    let rtt = game.world.server.peer_stats(peer).unwrap().round_trip_time;
    let lead = game.client().stats().prediction.input_lead;
    let took = TICK * frames;
    eprintln!("corrected after {frames} frames ({took:?}), rtt {rtt:?}, lead {lead}");
    assert!(
        took <= rtt + TICK,
        "corrected after {took:?}; rtt {rtt:?}, lead {lead}"
    );
    assert_eq!(game.client().stats().prediction.rollbacks, rollbacks + 1);
    let miss = game.client_sim.last_misprediction().expect("rolled back");
    assert_eq!(miss.member, "x");
    // Named as every peer knows it: by net id and type, not this client's local handle.
    let net_id = game.world.server.net_id(game.server_player.node());
    assert_eq!((miss.net_id, miss.type_name), (net_id, PLAYER_TYPE));
    let (shown, debug) = (miss.to_string(), format!("{miss:?}"));
    let id = net_id.unwrap();
    assert!(shown.contains(&format!("`{PLAYER_TYPE}` {id}")), "{shown}");
    assert!(
        debug.contains(&format!("net_id: Some({})", id.get())),
        "{debug}"
    );
    assert!(
        !shown.contains("NodeId") && !debug.contains("NodeId"),
        "{debug}"
    );
}

/// How far the server knocks players back, every [`KNOCK_EVERY`] ticks.
const KNOCK: f32 = 5.0;
const KNOCK_EVERY: u32 = 50;

/// Walking, with a knock-back of walking players that only the server's step knows about.
fn walk_and_get_knocked_back(step: &mut Step<'_, Walk>) {
    walk_then(step, |player, tick, dir| {
        if tick % KNOCK_EVERY == 0 && dir != 0 {
            player.x -= KNOCK;
        }
    });
}

/// The largest change of the owner's shown position from one frame to the next while it walks
/// for 150 frames (three knock-backs), and its stats.
fn largest_shown_jump(smoothing: Duration) -> (f32, mf_net::prediction::PredictionStats) {
    let mut config = MultiplayerConfig::default();
    config.prediction.smoothing = smoothing;
    let mut game = Game::new(config, Some(bad_network()));
    let mut shown = game.client_x();
    let mut largest = 0f32;
    for _ in 0..150 {
        game.frame(1, walk_and_get_knocked_back);
        let x = game.client_x();
        largest = largest.max((x - shown).abs());
        shown = x;
    }
    for _ in 0..30 {
        game.frame(0, walk_and_get_knocked_back);
    }
    assert_eq!(
        game.client_x(),
        game.server_x(),
        "at rest, the correction has faded"
    );
    (largest, game.client().stats().prediction)
}

#[test]
fn corrections_are_smoothed_not_snapped() {
    let smoothing = MultiplayerConfig::default().prediction.smoothing;
    let (smoothed, stats) = largest_shown_jump(smoothing);
    assert!(stats.rollbacks >= 3, "{stats:?}");
    // A frame moves the shown position by at most a step, plus the share of the correction
    // that fades in one frame.
    let fade = TICK.as_secs_f32() / smoothing.as_secs_f32();
    let allowed = SPEED + KNOCK * fade + 1e-3;
    assert!(
        smoothed <= allowed,
        "jumped {smoothed} in a frame (allowed {allowed})"
    );
    // Without smoothing, the knock-back shows as one jump.
    let (snapped, _) = largest_shown_jump(Duration::ZERO);
    assert!(snapped >= KNOCK - SPEED, "{snapped}");
    eprintln!("smoothing: largest jump {smoothed} (allowed {allowed}), snapped {snapped}");
}

#[test]
fn thirty_percent_loss_still_delivers_nearly_every_input_on_time() {
    let lossy = NetworkConditions::laggy(Duration::from_millis(40), Duration::from_millis(5))
        .with_loss(0.3);
    let mut game = Game::split(MultiplayerConfig::default(), None, Some(lossy));
    let peer = game.client().local_peer_id();
    // The clock first learns how far ahead the loss needs it (a few inputs go missing
    // meanwhile, each followed by a jump ahead); then a minute is measured.
    let start = game.world.server.peer_stats(peer).unwrap().inputs;
    for frame in 0..600 {
        game.frame(if frame % 40 < 20 { 1 } else { -1 }, walk);
    }
    let before = game.world.server.peer_stats(peer).unwrap().inputs;
    for frame in 0..1800 {
        game.frame(if frame % 40 < 20 { 1 } else { -1 }, walk);
    }
    let after = game.world.server.peer_stats(peer).unwrap().inputs;
    let on_time = after.on_time - before.on_time;
    let missing = after.missing - before.missing;
    let ratio = on_time as f64 / (on_time + missing) as f64;
    let learning = before.missing - start.missing;
    eprintln!(
        "30%: {on_time} on time, {missing} missing, {after:?}; {learning} missing while learning"
    );
    assert!(learning <= 10, "{learning} missing in the first 20 s");
    assert!(
        ratio >= 0.999,
        "{on_time} on time, {missing} missing: {ratio}"
    );
    assert!(on_time >= 1790, "{after:?}");
}

static DICE: AtomicU32 = AtomicU32::new(1);

/// A step that reads a random number: a second run of a tick differs from the first.
fn walk_with_dice(step: &mut Step<'_, Walk>) {
    let roll = DICE.fetch_add(1, Ordering::Relaxed) % 7;
    for (_, player, _) in step.simulated_mut::<Player>() {
        player.x += roll as f32 * 0.001;
    }
}

#[test]
fn the_determinism_check_finds_a_step_that_reads_a_random_number() {
    let mut config = MultiplayerConfig::default();
    config.prediction.check_determinism = true;
    let mut game = Game::new(config, Some(bad_network()));
    for _ in 0..30 {
        game.frame(1, walk);
    }
    let (found, stats) = (
        game.client_sim.divergence(),
        game.client().stats().prediction,
    );
    assert_eq!(found, None, "the walk is deterministic: {stats:?}");
    assert_eq!(stats.rollbacks, 0);
    game.frame(0, walk_with_dice);
    game.frame(0, walk_with_dice);
    let found = game.client_sim.divergence().expect("found");
    assert_eq!(found.member, "x");
    let net_id = game.world.server.net_id(game.server_player.node());
    assert_eq!((found.net_id, found.type_name), (net_id, PLAYER_TYPE));
    let (shown, debug) = (found.to_string(), format!("{found:?}"));
    assert!(
        shown.contains(&format!("`{PLAYER_TYPE}` {}", net_id.unwrap())),
        "{shown}"
    );
    assert!(
        !shown.contains("NodeId") && !debug.contains("NodeId"),
        "{debug}"
    );
    assert!(game.client().stats().prediction.divergences > 0);
}

/// The server nudges every player each tick: every confirmation differs from the prediction.
fn walk_and_drift(step: &mut Step<'_, Walk>) {
    walk_then(step, |player, _, _| player.x += 0.001);
}

#[test]
fn a_rollback_every_tick_allocates_nothing() {
    let mut game = Game::new(MultiplayerConfig::default(), None);
    for frame in 0..200 {
        game.frame(if frame % 10 < 5 { 1 } else { 0 }, walk_and_drift);
    }
    let before = game.client().stats().prediction;
    assert_no_alloc("prediction with a rollback every tick", || {
        for frame in 0..200 {
            game.frame(if frame % 10 < 5 { 1 } else { 0 }, walk_and_drift);
        }
    });
    let after = game.client().stats().prediction;
    eprintln!("alloc: {before:?} -> {after:?}");
    assert!(after.rollbacks >= before.rollbacks + 190, "{after:?}");
}

#[test]
fn an_input_delay_holds_the_input_back_on_both_ends_alike() {
    let mut config = MultiplayerConfig::default();
    config.prediction.input_delay = 2;
    let mut game = Game::new(config, Some(bad_network()));
    let start = game.client_x();
    game.frame(1, walk);
    assert_eq!(game.client_x(), start, "the press is two ticks away");
    game.frame(0, walk);
    assert_eq!(game.client_x(), start);
    game.frame(0, walk);
    assert_eq!(game.client_x(), start + SPEED, "applied at its tick");
    for _ in 0..30 {
        game.frame(0, walk);
    }
    assert_eq!(
        (game.client_x(), game.server_x()),
        (start + SPEED, start + SPEED)
    );
    assert_eq!(game.client().stats().prediction.rollbacks, 0);
}

/// A server and two clients on a perfect loopback, each client owning one player.
fn two_players() -> (World, [NodeId; 2]) {
    let mut world = World::new(2, library);
    world.dt = TICK;
    let root = world.root();
    let owners = [
        world.clients[0].local_peer_id(),
        world.clients[1].local_peer_id(),
    ];
    let players = owners.map(|owner| world.server.spawn(PLAYER, root, owner).unwrap());
    (world, players)
}

/// One frame of `world`: the server, then each client pressing its `dirs` entry; `walked` sums
/// the directions each client sampled (see [`Game::walked`]).
fn frame_all(
    world: &mut World,
    sims: &mut [Simulation<Walk>; 3],
    dirs: [i8; 2],
    walked: &mut [i32; 2],
) {
    let dt = world.dt;
    let [server_sim, sims @ ..] = sims;
    world.server.begin_frame(dt);
    server_sim.run(&mut world.server, |_| Walk::default(), walk);
    world.server.end_frame();
    let each = world.clients.iter_mut().zip(sims).zip(dirs).zip(walked);
    for (((client, sim), dir), walked) in each {
        client.begin_frame(dt);
        let sample = |_| {
            *walked += i32::from(dir);
            Walk { dir }
        };
        sim.run(client, sample, walk);
        client.end_frame();
    }
}

/// `client`'s copy of the server's `node`, by net id.
fn x_on(world: &World, client: usize, node: NodeId) -> f32 {
    let id = world.server.net_id(node).unwrap();
    let mp = &world.clients[client];
    let local = mp.node(id).unwrap();
    mp.scene()
        .get(mp.scene().net_ref::<Player>(local).unwrap())
        .unwrap()
        .x
}

#[test]
fn only_the_owner_predicts_and_the_others_interpolate() {
    let (mut world, players) = two_players();
    let mut sims = [Simulation::new(), Simulation::new(), Simulation::new()];
    let mut walked = [0; 2];
    for _ in 0..30 {
        frame_all(&mut world, &mut sims, [0, 0], &mut walked);
    }
    // Client 0 walks: it sees itself move at once; client 1 sees it later, behind the server.
    frame_all(&mut world, &mut sims, [1, 0], &mut walked);
    assert!(walked[0] >= 1);
    assert_eq!(x_on(&world, 0, players[0]), walked[0] as f32 * SPEED);
    assert_eq!(x_on(&world, 1, players[0]), 0.0);
    for _ in 0..10 {
        frame_all(&mut world, &mut sims, [1, 0], &mut walked);
    }
    let (owner, other) = (x_on(&world, 0, players[0]), x_on(&world, 1, players[0]));
    let server = world
        .server
        .scene()
        .get(world.server.scene().net_ref::<Player>(players[0]).unwrap())
        .unwrap()
        .x;
    assert!(
        owner > server && server > other,
        "{owner} > {server} > {other}"
    );
    // Client 1 does not predict client 0's player: its step never moves it.
    assert_eq!(x_on(&world, 1, players[1]), 0.0);
    for _ in 0..30 {
        frame_all(&mut world, &mut sims, [0, 0], &mut walked);
    }
    let steps = walked[0] as f32 * SPEED;
    assert!(walked[0] >= 10, "{walked:?}");
    assert_eq!(x_on(&world, 0, players[0]), steps);
    assert_eq!(x_on(&world, 1, players[0]), steps);
    assert_eq!(world.clients[1].stats().prediction.rollbacks, 0);
}

/// The runtime over a storage that lends no dense column (every value looked up by node, as in
/// an engine without one): prediction, interpolation and snapshots end exactly where they do
/// over the scene's dense columns.
#[test]
fn over_a_storage_without_dense_columns_every_peer_converges_exactly() {
    let (mut world, players) = two_players();
    world.server.scene_mut().set_dense_lending(false);
    for client in &mut world.clients {
        client.scene_mut().set_dense_lending(false);
    }
    let mut sims = [Simulation::new(), Simulation::new(), Simulation::new()];
    let mut walked = [0; 2];
    for frame in 0..120u32 {
        let dirs = [[1, 1], [1, -1], [0, 1], [-1, 1]][(frame / 20) as usize % 4];
        frame_all(&mut world, &mut sims, dirs, &mut walked);
    }
    for _ in 0..30 {
        frame_all(&mut world, &mut sims, [0, 0], &mut walked);
    }
    for (i, &player) in players.iter().enumerate() {
        let steps = walked[i] as f32 * SPEED;
        assert_ne!(walked[i], 0, "{walked:?}");
        assert_eq!(
            x_on(&world, 0, player),
            steps,
            "client 0's copy of player {i}"
        );
        assert_eq!(
            x_on(&world, 1, player),
            steps,
            "client 1's copy of player {i}"
        );
    }
}

#[test]
fn a_player_handed_to_another_client_is_predicted_there() {
    let (mut world, players) = two_players();
    let mut sims = [Simulation::new(), Simulation::new(), Simulation::new()];
    let mut walked = [0; 2];
    for _ in 0..30 {
        frame_all(&mut world, &mut sims, [0, 0], &mut walked);
    }
    let second = world.clients[1].local_peer_id();
    world
        .server
        .set_authority(players[0], second, false)
        .unwrap();
    for _ in 0..10 {
        frame_all(&mut world, &mut sims, [0, 0], &mut walked);
    }
    // Now client 1 walks both its players, at once; client 0 no longer moves the first.
    frame_all(&mut world, &mut sims, [1, 1], &mut walked);
    let steps = walked[1] as f32 * SPEED;
    assert!(walked[1] >= 1);
    assert_eq!(x_on(&world, 1, players[0]), steps);
    assert_eq!(x_on(&world, 1, players[1]), steps);
    assert_eq!(x_on(&world, 0, players[0]), 0.0);
    for _ in 0..30 {
        frame_all(&mut world, &mut sims, [0, 0], &mut walked);
    }
    for client in 0..2 {
        assert_eq!(x_on(&world, client, players[0]), steps);
    }
}

/// Handed over while it walks: the new owner had been showing it interpolated, a blend behind
/// the server's newest state, and starts predicting from that newest state, not from the
/// blend. (It started from the blend: with the player still after that, the server sent no
/// entry to correct it, and the new owner showed it where the blend was, steps behind, for
/// good.)
#[test]
fn a_player_handed_over_while_it_walks_is_predicted_from_the_servers_state() {
    let (mut world, players) = two_players();
    let mut sims = [Simulation::new(), Simulation::new(), Simulation::new()];
    let mut walked = [0; 2];
    for _ in 0..30 {
        frame_all(&mut world, &mut sims, [1, 0], &mut walked);
    }
    let second = world.clients[1].local_peer_id();
    world
        .server
        .set_authority(players[0], second, false)
        .unwrap();
    for _ in 0..60 {
        frame_all(&mut world, &mut sims, [0, 0], &mut walked);
    }
    let server = world.server.scene();
    let x = server
        .get(server.net_ref::<Player>(players[0]).unwrap())
        .unwrap()
        .x;
    assert!(x > 10.0, "it walked: {x}");
    for client in 0..2 {
        assert_eq!(x_on(&world, client, players[0]), x, "client {client}");
    }
}

#[test]
fn a_client_whose_inputs_stop_runs_on_only_for_the_repeat_limit() {
    let mut game = Game::new(MultiplayerConfig::default(), Some(bad_network()));
    for _ in 0..30 {
        game.frame(1, walk);
    }
    // The client freezes (no frames at all); the server goes on.
    let frozen_at = game.server_x();
    let dt = game.world.dt;
    let mut xs = Vec::new();
    for _ in 0..60 {
        let server = &mut game.world.server;
        server.begin_frame(dt);
        game.server_sim.run(server, |_| Walk::default(), walk);
        server.end_frame();
        xs.push(game.server_x());
    }
    // What was buffered, then the last input repeated for 15 ticks, then nothing.
    let moved = (xs[59] - frozen_at) / SPEED;
    assert!((15.0..=15.0 + 8.0).contains(&moved), "ran on {moved} ticks");
    assert_eq!(xs[30], xs[59], "stopped");
    let peer = game.client().local_peer_id();
    let inputs = game.world.server.peer_stats(peer).unwrap().inputs;
    assert!(inputs.missing >= 50, "{inputs:?}");
}

#[test]
fn a_jittery_reordering_duplicating_link_still_converges_exactly() {
    jittery_link_converges(MultiplayerConfig::default());
}

#[test]
fn bit_packed_snapshots_over_a_jittery_link_still_converge_exactly() {
    jittery_link_converges(MultiplayerConfig {
        snapshot_encoding: mf_net::replication::SnapshotEncoding::Bits,
        ..MultiplayerConfig::default()
    });
}

fn jittery_link_converges(config: MultiplayerConfig) {
    let link = NetworkConditions::laggy(Duration::from_millis(60), Duration::from_millis(40))
        .with_loss(0.15)
        .with_duplication(0.05)
        .with_reorder(0.1);
    let mut game = Game::new(config, Some(link));
    let peer = game.client().local_peer_id();
    let before = game.world.server.peer_stats(peer).unwrap().inputs;
    // Thirty seconds of walking that changes direction at odd moments, then at rest.
    for frame in 0..900u32 {
        let dir = [1, 1, 0, -1, 1, -1, 0][(frame.wrapping_mul(2_654_435_761) >> 28) as usize % 7];
        game.frame(dir, walk);
    }
    for _ in 0..60 {
        game.frame(0, walk);
    }
    assert_eq!(game.client_x(), game.server_x(), "converged exactly");
    let inputs = game.world.server.peer_stats(peer).unwrap().inputs;
    let (on_time, missing) = (
        inputs.on_time - before.on_time,
        inputs.missing - before.missing,
    );
    let stats = game.client().stats().prediction;
    eprintln!("jittery link: {on_time} on time, {missing} missing, {stats:?}");
    // The clock keeps the lead above the jitter: the server rarely goes without an input.
    assert!(
        missing * 100 <= on_time,
        "{missing} missing of {on_time}: {inputs:?}"
    );
    assert_eq!(stats.divergences, 0);
}

/// Clients with the determinism check on, over a clean 50 ms link seeded with `seed`, none
/// owning a player yet; every client holds "right" from the first frame.
fn checked_world(clients: usize, seed: u64) -> (World, Vec<Simulation<Walk>>) {
    let mut config = MultiplayerConfig::default();
    config.prediction.check_determinism = true;
    let link = NetworkConditions::laggy(Duration::from_millis(50), Duration::ZERO);
    let mut world = World::with(clients, config, Some(link), seed, library);
    world.dt = TICK;
    let sims = (0..=clients).map(|_| Simulation::new()).collect();
    (world, sims)
}

/// One frame of a [`checked_world`]: every client walks right.
fn checked_frame(world: &mut World, sims: &mut [Simulation<Walk>]) {
    let dt = world.dt;
    world.server.begin_frame(dt);
    sims[0].run(&mut world.server, |_| Walk::default(), walk);
    world.server.end_frame();
    for (client, sim) in world.clients.iter_mut().zip(&mut sims[1..]) {
        client.begin_frame(dt);
        sim.run(client, |_| Walk { dir: 1 }, walk);
        client.end_frame();
    }
}

#[test]
fn a_player_spawned_while_its_owner_walks_is_not_a_divergence() {
    for seed in 1..=4 {
        let (mut world, mut sims) = checked_world(1, seed);
        for _ in 0..30 {
            checked_frame(&mut world, &mut sims);
        }
        let owner = world.clients[0].local_peer_id();
        let root = world.root();
        world.server.spawn(PLAYER, root, owner).unwrap();
        for _ in 0..60 {
            checked_frame(&mut world, &mut sims);
        }
        let stats = world.clients[0].stats().prediction;
        assert!(
            stats.ticks_predicted > 60 && stats.confirmations > 30,
            "{stats:?}"
        );
        assert_eq!(sims[1].divergence(), None, "seed {seed}: {stats:?}");
        assert_eq!(stats.divergences, 0, "seed {seed}");
    }
}

#[test]
fn a_player_handed_over_while_its_new_owner_walks_is_not_a_divergence() {
    for seed in 1..=4 {
        let (mut world, mut sims) = checked_world(2, seed);
        let first = world.clients[0].local_peer_id();
        let root = world.root();
        let player = world.server.spawn(PLAYER, root, first).unwrap();
        for _ in 0..30 {
            checked_frame(&mut world, &mut sims);
        }
        let second = world.clients[1].local_peer_id();
        world.server.set_authority(player, second, false).unwrap();
        for _ in 0..60 {
            checked_frame(&mut world, &mut sims);
        }
        let stats = world.clients[1].stats().prediction;
        assert!(stats.confirmations > 30, "{stats:?}");
        assert_eq!(sims[2].divergence(), None, "seed {seed}: {stats:?}");
        assert_eq!(stats.divergences, 0, "seed {seed}");
    }
}

/// Which end's `Simulation` the game replaces mid-walk.
#[derive(Debug, Clone, Copy)]
enum Replaced {
    Client,
    Server,
}

/// Whether `mp` reported a misconfiguration (its other events are drained too).
fn misconfigured(mp: &mut Mp) -> bool {
    std::iter::from_fn(|| mp.next_event())
        .any(|event| matches!(event, MultiplayerEvent::Misconfigured(_)))
}

#[test]
fn a_simulation_replaced_mid_walk_carries_on_and_converges_exactly() {
    let links = [
        None,
        Some(NetworkConditions::laggy(
            Duration::from_millis(50),
            Duration::ZERO,
        )),
    ];
    for link in links {
        for replaced in [Replaced::Client, Replaced::Server] {
            let case = format!("{replaced:?} over {link:?}");
            let mut game = Game::new(MultiplayerConfig::default(), link);
            let start = game.server_x();
            for _ in 0..20 {
                game.frame(1, walk);
            }
            assert!(game.client().stats().prediction.ticks_predicted > 0);
            // A level reload: the game rebuilds its state, with a fresh Simulation.
            match replaced {
                Replaced::Client => game.client_sim = Simulation::new(),
                Replaced::Server => game.server_sim = Simulation::new(),
            }
            for _ in 0..20 {
                game.frame(1, walk);
            }
            for _ in 0..60 {
                game.frame(0, walk);
            }
            assert_eq!(game.client_x(), game.server_x(), "{case}: converged");
            let walked = game.walked as f32 * SPEED;
            assert_eq!(game.server_x(), start + walked, "{case}: every input once");
            assert!(game.walked >= 35, "{case}: {} steps", game.walked);
            assert!(!misconfigured(&mut game.world.clients[0]), "{case}");
            assert!(!misconfigured(&mut game.world.server), "{case}");
        }
    }
}

#[test]
fn a_client_simulation_replaced_while_mispredicting_rolls_back_into_ticks_before_it() {
    let link = NetworkConditions::laggy(Duration::from_millis(50), Duration::ZERO);
    let mut game = Game::new(MultiplayerConfig::default(), Some(link));
    // Into the wall only the server knows: every confirmation corrects the client.
    for _ in 0..40 {
        game.frame(1, walk_into_wall);
    }
    let before = game.client().stats().prediction;
    game.client_sim = Simulation::new();
    // Its first rollback re-simulates only ticks from before it (default inputs for them).
    game.frame(1, walk_into_wall);
    let after = game.client().stats().prediction;
    assert!(after.rollbacks > before.rollbacks, "{after:?}");
    assert!(game.client_sim.last_misprediction().is_some());
    for _ in 0..20 {
        game.frame(1, walk_into_wall);
    }
    for _ in 0..60 {
        game.frame(0, walk_into_wall);
    }
    assert_eq!((game.client_x(), game.server_x()), (WALL, WALL));
}
