#![allow(clippy::unwrap_used)]
//! Misconfigurations of prediction that used to fail silently are reported once each, as
//! `MultiplayerEvent::Misconfigured`, to game code without a tracing subscriber, naming the
//! fix; and correct usage raises none:
//!
//! - a client that owns a predicted node but never runs a `Simulation`;
//! - a server that receives inputs but never runs `Simulation::run`;
//! - `Simulation::run` before any `begin_frame`;
//! - `begin_frame` with a zero `dt`, frame after frame;
//! - an owner writing a plain (not predicted) member of its predicted node every frame.

use std::time::Duration;

use mf_net::prediction::Simulation;
use mf_net::prelude::*;
use mf_net::replication::{Misconfiguration, MultiplayerEvent, ZERO_DT_FRAMES};
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::harness::{Mp, World};

mod prediction_common;
use prediction_common::*;

/// The misconfigurations `mp` reported (its other events are drained too).
fn misconfigurations(mp: &mut Mp) -> Vec<Misconfiguration> {
    std::iter::from_fn(|| mp.next_event())
        .filter_map(|event| match event {
            MultiplayerEvent::Misconfigured(found) => Some(found),
            _ => None,
        })
        .collect()
}

fn link() -> Option<NetworkConditions> {
    Some(NetworkConditions::laggy(
        Duration::from_millis(50),
        Duration::ZERO,
    ))
}

/// A server and a client over a 50 ms link, the client owning a player (spawned, not yet
/// arrived).
fn world() -> World {
    let mut world = World::with(1, MultiplayerConfig::default(), link(), 7, library);
    world.dt = TICK;
    let owner = world.clients[0].local_peer_id();
    let root = world.root();
    world.server.spawn(PLAYER, root, owner).unwrap();
    world
}

/// `frames` frames: the server, then the client; each runs its simulation if it has one.
fn run(
    world: &mut World,
    frames: usize,
    server_sim: Option<&mut Simulation<Walk>>,
    client_sim: Option<&mut Simulation<Walk>>,
) {
    let (mut server_sim, mut client_sim) = (server_sim, client_sim);
    for _ in 0..frames {
        let dt = world.dt;
        world.server.begin_frame(dt);
        if let Some(sim) = server_sim.as_deref_mut() {
            sim.run(&mut world.server, |_| Walk::default(), walk);
        }
        world.server.end_frame();
        let client = &mut world.clients[0];
        client.begin_frame(dt);
        if let Some(sim) = client_sim.as_deref_mut() {
            sim.run(client, |_| Walk { dir: 1 }, walk);
        }
        client.end_frame();
    }
}

#[test]
fn correct_usage_raises_nothing() {
    let mut game = Game::new(MultiplayerConfig::default(), link());
    for frame in 0..300 {
        game.frame([1, 0, -1][frame % 3], walk);
    }
    assert_eq!(misconfigurations(&mut game.world.server), []);
    assert_eq!(misconfigurations(&mut game.world.clients[0]), []);
    assert!(game.client().stats().prediction.ticks_predicted > 300);
}

#[test]
fn a_client_that_owns_a_predicted_node_but_runs_no_simulation_is_told_once() {
    let mut world = world();
    let mut server_sim = Simulation::new();
    run(&mut world, 120, Some(&mut server_sim), None);
    let found = misconfigurations(&mut world.clients[0]);
    let [Misconfiguration::PredictedNodeNotSimulated { net_id, type_name }] = found[..] else {
        panic!("{found:?}");
    };
    let player = world
        .server
        .owned_by::<Player>(world.clients[0].local_peer_id());
    assert_eq!(
        Some(net_id),
        world
            .server
            .net_id(player.into_iter().next().unwrap().node())
    );
    assert!(type_name.contains("Player"), "{type_name}");
    let text = found[0].to_string();
    assert!(text.contains("Simulation::run"), "{text}");
    run(&mut world, 60, Some(&mut server_sim), None);
    assert_eq!(misconfigurations(&mut world.clients[0]), [], "once");
    assert_eq!(misconfigurations(&mut world.server), []);
}

#[test]
fn a_server_that_receives_inputs_but_runs_no_simulation_is_told_once() {
    let mut world = world();
    let mut client_sim = Simulation::new();
    run(&mut world, 120, None, Some(&mut client_sim));
    let peer = world.clients[0].local_peer_id();
    let found = misconfigurations(&mut world.server);
    assert_eq!(found, [Misconfiguration::InputsNotSimulated { peer }]);
    assert!(
        found[0].to_string().contains("Simulation::run"),
        "{}",
        found[0]
    );
    run(&mut world, 60, None, Some(&mut client_sim));
    assert_eq!(misconfigurations(&mut world.server), [], "once");
    assert_eq!(misconfigurations(&mut world.clients[0]), []);
}

#[test]
fn a_simulation_run_before_any_frame_is_told_once() {
    let mut client = Mp::new(library(), MultiplayerConfig::default());
    let mut sim = Simulation::<Walk>::new();
    for _ in 0..3 {
        sim.run(&mut client, |_| Walk::default(), walk);
    }
    let found = misconfigurations(&mut client);
    assert_eq!(found, [Misconfiguration::SimulationWithoutFrames]);
    assert!(found[0].to_string().contains("begin_frame"), "{}", found[0]);
    client.begin_frame(TICK);
    sim.run(&mut client, |_| Walk::default(), walk);
    client.end_frame();
    assert_eq!(misconfigurations(&mut client), []);
}

#[test]
fn a_zero_frame_time_frame_after_frame_is_told_once() {
    let mut game = Game::new(MultiplayerConfig::default(), link());
    for _ in 0..ZERO_DT_FRAMES - 1 {
        game.frame_with(0, walk, Duration::ZERO);
    }
    assert_eq!(misconfigurations(&mut game.world.clients[0]), [], "not yet");
    for _ in 0..ZERO_DT_FRAMES * 2 {
        game.frame_with(0, walk, Duration::ZERO);
    }
    let found = misconfigurations(&mut game.world.clients[0]);
    assert_eq!(found, [Misconfiguration::ZeroFrameTime]);
    assert!(found[0].to_string().contains("dt"), "{}", found[0]);
    assert_eq!(misconfigurations(&mut game.world.server), []);
}

/// The step, and on the client game code that also moves the player's plain `hp` every frame
/// (as if it were its position).
fn write_hp_every_frame(game: &mut Game, frames: usize) {
    for _ in 0..frames {
        game.frame(1, walk);
        let client = &mut game.world.clients[0];
        let mine = client.owned::<Player>().next().unwrap();
        client.scene_mut().get_mut(mine).unwrap().hp += 1;
    }
}

/// A predicted player whose aim is the owner's own: the server does not send it back to it.
#[derive(Replicated, Debug, Default)]
struct Aimer {
    #[replicated(predict)]
    x: f32,
    #[replicated(skip_owner)]
    aim: f32,
}

fn aimers() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("aimer", |scene, root| {
            scene.set_value(root, Aimer::default())
        })
        .unwrap();
    scenes
}

fn walk_aimers(step: &mut mf_net::prediction::Step<'_, Walk>) {
    for (_, aimer, input) in step.simulated_mut::<Aimer>() {
        aimer.x += f32::from(input.map_or(0, |i| i.dir));
    }
}

#[test]
fn an_owner_writing_its_skip_owner_member_every_frame_is_fine() {
    let mut world = World::with(1, MultiplayerConfig::default(), link(), 7, aimers);
    world.dt = TICK;
    let owner = world.clients[0].local_peer_id();
    let root = world.root();
    world.server.spawn(SceneIndex::new(0), root, owner).unwrap();
    let (mut server_sim, mut client_sim) = (Simulation::new(), Simulation::new());
    for _ in 0..120 {
        world.server.begin_frame(TICK);
        server_sim.run(&mut world.server, |_| Walk::default(), walk_aimers);
        world.server.end_frame();
        let client = &mut world.clients[0];
        client.begin_frame(TICK);
        client_sim.run(client, |_| Walk { dir: 1 }, walk_aimers);
        if let Some(mine) = client.owned::<Aimer>().next() {
            client.scene_mut().get_mut(mine).unwrap().aim += 1.0;
        }
        client.end_frame();
    }
    assert!(world.clients[0].stats().prediction.ticks_predicted > 60);
    assert_eq!(misconfigurations(&mut world.clients[0]), []);
}

#[test]
fn an_owner_writing_a_plain_member_every_frame_is_told_once() {
    let mut game = Game::new(MultiplayerConfig::default(), link());
    // Written once: nothing to say.
    write_hp_every_frame(&mut game, 1);
    for _ in 0..60 {
        game.frame(0, walk);
    }
    assert_eq!(misconfigurations(&mut game.world.clients[0]), []);
    write_hp_every_frame(&mut game, 60);
    let found = misconfigurations(&mut game.world.clients[0]);
    let [Misconfiguration::PlainMemberWritten { type_name, .. }] = found[..] else {
        panic!("{found:?}");
    };
    assert!(type_name.contains("Player"), "{type_name}");
    assert!(
        found[0].to_string().contains("#[replicated(predict)]"),
        "{}",
        found[0]
    );
    write_hp_every_frame(&mut game, 60);
    assert_eq!(misconfigurations(&mut game.world.clients[0]), [], "once");
}
