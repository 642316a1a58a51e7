#![allow(clippy::unwrap_used)]
//! Seeded chaos for RPCs: clients moving their own pawns by `authority` calls and the server
//! showing hits everywhere by `server, call_local` calls, over lossy, duplicating, reordering
//! links, with clients stalling, frames of varying length, tick rates and both encodings. Once
//! the calls stop, every call ran exactly once, in order: each pawn's `x` on the server (and,
//! replicated, on every client) is the sum of its owner's moves, and every client shows the
//! server's hits on every pawn. And a ball handed from peer to peer while they move it: a move
//! runs only if its sender has the ball when it arrives, and every move made by a peer that
//! kept the ball until its calls arrived runs once.
//!
//! `CHAOS_SEEDS=n` (from `CHAOS_FROM`, default 0) runs `n` seeds instead of the default ones:
//! `CHAOS_SEEDS=2000 cargo test --release -p mf-net-tests --test rpc_chaos`.

use mf_net::prelude::*;
use mf_net_tests::harness::World;
use mf_net_tests::rng::{chaos_encoding, chaos_frame, chaos_link, chaos_seeds, Rng};

mod rpc_common;
use rpc_common::{copy, library, pawn, spawn_pawn, Pawn, PawnRpcs};

/// A world of `clients` clients for `seed`: either encoding, a tick rate of 30, 60 or 128, a
/// bad link or a perfect one (drawn before the clients' count, as the seeds were first run).
fn world(seed: u64, rng: &mut Rng, clients: impl FnOnce(&mut Rng) -> usize) -> (World, usize) {
    let config = MultiplayerConfig {
        snapshot_encoding: chaos_encoding(rng),
        tick_rate: [30, 60, 128][rng.below(3) as usize],
        ..MultiplayerConfig::default()
    };
    let link = chaos_link(rng);
    let clients = clients(rng);
    (World::with(clients, config, link, seed, library), clients)
}

fn run(seed: u64) {
    let mut rng = Rng::seeded(seed);
    let (mut world, clients) = world(seed, &mut rng, |rng| 1 + rng.below(4) as usize);
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
        chaos_frame(&mut world, &mut stalls, &mut rng);
    }
    for _ in 0..300 {
        chaos_frame(&mut world, &mut stalls, &mut rng);
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

/// One seed of a ball handed from peer to peer while they move it. Every frame, each client
/// that sees itself as the ball's authority may move it; the others' calls are refused before
/// they are sent. After each of the server's receives, every move that ran came from the
/// ball's authority of that moment. A turn that starts and ends with no call in flight (each
/// other turn ends so) runs every move its authority made, once.
fn handed_over(seed: u64) {
    let mut rng = Rng::seeded(seed);
    let (mut world, clients) = world(seed, &mut rng, |rng| 2 + rng.below(3) as usize);
    let ball = spawn_pawn(&mut world, PeerId::SERVER);
    world.step(30);
    let mut stalls = vec![0u64; clients];
    let mut drained = true;
    for turn in 0..4 + rng.below(8) {
        let peers: Vec<PeerId> = world.server.peers().to_vec();
        let to = match rng.below(peers.len() as u64 + 1) as usize {
            i if i < peers.len() => peers[i],
            _ => PeerId::SERVER,
        };
        world.server.set_authority(ball.node(), to, false).unwrap();
        let (x_before, sent) = (pawn(&world.server, ball).x, drained.then_some(0i32));
        let mut sent = sent;
        for _ in 0..20 + rng.below(120) {
            for (c, client) in world.clients.iter_mut().enumerate() {
                if stalls[c] > 0 || !rng.chance(30) {
                    continue;
                }
                let own = {
                    let id = world.server.net_id(ball.node()).unwrap();
                    let node = client.node(id).unwrap();
                    client.scene().net_ref::<Pawn>(node).unwrap()
                };
                let dx = rng.below(21) as i32 - 10;
                let mine = client.authority(own.node()) == client.local_peer_id();
                let result = client.rpc(own).move_by(dx);
                assert_eq!(
                    result.is_ok(),
                    mine,
                    "seed {seed}: only the authority sends"
                );
                if mine && client.local_peer_id() == to {
                    sent = sent.map(|s| s + dx);
                }
                if rng.chance(1) {
                    stalls[c] = rng.below(60);
                }
            }
            checked_frame(&mut world, &mut stalls, &mut rng, ball, seed);
        }
        drained = rng.chance(50);
        if drained {
            stalls.fill(0);
            for _ in 0..150 {
                checked_frame(&mut world, &mut stalls, &mut rng, ball, seed);
            }
            if let Some(sent) = sent {
                let moved = pawn(&world.server, ball).x - x_before;
                assert_eq!(moved, sent, "seed {seed}: turn {turn}'s moves by {to:?}");
            }
        }
    }
    stalls.fill(0);
    for _ in 0..300 {
        checked_frame(&mut world, &mut stalls, &mut rng, ball, seed);
    }
    let on_server = pawn(&world.server, ball).x;
    for (k, client) in world.clients.iter().enumerate() {
        let x = pawn(client, copy(&world, client, ball)).x;
        assert_eq!(x, on_server, "seed {seed}: the ball on client {k}");
    }
}

/// [`chaos_frame`], checking after the server's receive that every move that ran in it came from
/// the ball's authority.
fn checked_frame(
    world: &mut World,
    stalls: &mut [u64],
    rng: &mut Rng,
    ball: NetRef<Pawn>,
    seed: u64,
) {
    let ran = pawn(&world.server, ball).senders.len();
    let authority = world.server.authority(ball.node());
    chaos_frame(world, stalls, rng);
    let senders = &pawn(&world.server, ball).senders[ran..];
    assert!(
        senders.iter().all(|&s| s == authority),
        "seed {seed}: moves by {senders:?} ran while {authority:?} had the ball"
    );
}

#[test]
fn a_ball_handed_over_moves_only_by_its_authority() {
    for seed in chaos_seeds(0..24) {
        eprintln!("seed {seed}");
        handed_over(seed);
    }
}

#[test]
fn random_calls_run_exactly_once_in_order() {
    for seed in chaos_seeds(0..32) {
        eprintln!("seed {seed}");
        run(seed);
    }
}
