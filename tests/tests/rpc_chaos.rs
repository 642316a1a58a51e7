#![allow(clippy::unwrap_used)]
//! Seeded chaos for RPCs: clients moving their own pawns by `authority` calls and the server
//! showing hits everywhere by `server, call_local` calls, over lossy, duplicating, reordering
//! links, with clients stalling, frames of varying length, tick rates and both encodings. Once
//! the calls stop, every call ran exactly once, in order: each pawn's `x` on the server (and,
//! replicated, on every client) is the sum of its owner's moves, and every client shows the
//! server's hits on every pawn.
//!
//! `CHAOS_SEEDS=n` (from `CHAOS_FROM`, default 0) runs `n` seeds instead of the default ones:
//! `CHAOS_SEEDS=2000 cargo test --release -p mf-net-tests --test rpc_chaos`.

use std::time::Duration;

use mf_net::prelude::*;
use mf_net_tests::harness::World;
use mf_net_tests::rng::{chaos_encoding, chaos_link, chaos_seeds, Rng};

mod rpc_common;
use rpc_common::{copy, library, pawn, spawn_pawn, Pawn, PawnRpcs};

fn run(seed: u64) {
    let mut rng = Rng::seeded(seed);
    let config = MultiplayerConfig {
        snapshot_encoding: chaos_encoding(&mut rng),
        tick_rate: [30, 60, 128][rng.below(3) as usize],
        ..MultiplayerConfig::default()
    };
    let link = chaos_link(&mut rng);
    let clients = 1 + rng.below(4) as usize;
    let mut world = World::with(clients, config, link, seed, library);
    let pawns: Vec<NetRef<Pawn>> = (0..clients)
        .map(|c| {
            let owner = world.clients[c].local_peer_id();
            spawn_pawn(&mut world, owner)
        })
        .collect();
    world.step(30);
    let mut moved = vec![0i32; clients];
    let mut stalls = vec![0u64; clients];
    for _ in 0..200 + rng.below(400) {
        for c in 0..clients {
            if stalls[c] > 0 {
                continue;
            }
            if rng.chance(30) {
                let dx = rng.below(21) as i32 - 10;
                let own = copy(&world, &world.clients[c], pawns[c]);
                world.clients[c].rpc(own).move_by(dx).unwrap();
                moved[c] += dx;
            }
            if rng.chance(1) {
                stalls[c] = rng.below(60);
            }
        }
        if rng.chance(20) {
            let target = pawns[rng.below(clients as u64) as usize];
            world
                .server
                .rpc(target)
                .hit(rng.below(5) as i32 + 1)
                .unwrap();
        }
        frame(&mut world, &mut stalls, &mut rng);
    }
    for _ in 0..300 {
        frame(&mut world, &mut stalls, &mut rng);
    }
    for (c, &handle) in pawns.iter().enumerate() {
        let on_server = pawn(&world.server, handle);
        assert_eq!(
            on_server.x, moved[c],
            "seed {seed}: pawn {c}'s moves on the server"
        );
        for (k, client) in world.clients.iter().enumerate() {
            let copy = pawn(client, copy(&world, client, handle));
            assert_eq!(
                (copy.x, copy.effects),
                (on_server.x, on_server.effects),
                "seed {seed}: pawn {c} on client {k}"
            );
        }
    }
}

/// One frame of the server and of every client not stalled (a stalled client runs no frame
/// until its stall ends, then one as long as the stall); each frame's length varies.
fn frame(world: &mut World, stalls: &mut [u64], rng: &mut Rng) {
    let dt = Duration::from_millis(20 + rng.below(30));
    world.server.begin_frame(dt);
    world.server.end_frame();
    for (client, stall) in world.clients.iter_mut().zip(stalls) {
        let dt = match *stall {
            0 => dt,
            1 => dt * 30,
            _ => {
                *stall -= 1;
                continue;
            }
        };
        *stall = 0;
        client.begin_frame(dt);
        client.end_frame();
    }
}

#[test]
fn random_calls_run_exactly_once_in_order() {
    for seed in chaos_seeds(0..32) {
        eprintln!("seed {seed}");
        run(seed);
    }
}
