//! A `server, call_local` RPC that changes a replicated member reaches clients on the reliable
//! channel; snapshots travel unreliably. Under jitter a snapshot captured after the call can
//! arrive before it (the body must not apply the change a second time), and one captured
//! before the call can arrive after it (it must not undo the change). Either way clients see
//! the value change once, and the body's local effects still run.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    health: i32,
    flashes: u32, // local: effects shown
}

#[rpcs]
impl Player {
    #[rpc(server, call_local)]
    fn hit(&mut self, damage: i32) {
        self.health -= damage;
        self.flashes += 1;
    }
}

fn scenes() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("player", |scene, root| {
            scene.set_value(
                root,
                Player {
                    health: 1000,
                    ..Player::default()
                },
            )
        })
        .unwrap();
    scenes
}

type Mp = Multiplayer<Box<dyn Transport>>;

/// Health as the client showed it, frame by frame, while the server hits every 10 frames, and
/// the flashes the client showed.
fn run(seed: u64) -> (Vec<i32>, u32) {
    let net = LoopbackNetwork::new();
    let jitter = NetworkConditions {
        latency: Duration::from_millis(60),
        jitter: Duration::from_millis(50),
        ..NetworkConditions::default()
    };
    let mut server = Mp::new(scenes(), MultiplayerConfig::default());
    let listen = SimulatedTransport::new(net.listen("game", 2).unwrap(), jitter, seed);
    server
        .start_server(Box::new(listen), MessageRegistry::new(1))
        .unwrap();
    let mut client = Mp::new(scenes(), MultiplayerConfig::default());
    client
        .start_client(
            |data| -> Box<dyn Transport> { Box::new(net.connect("game", data)) },
            MessageRegistry::new(1),
        )
        .unwrap();
    let dt = Duration::from_secs(1) / 60;
    let mut shown = Vec::new();
    for frame in 0..600 {
        server.begin_frame(dt);
        client.begin_frame(dt);
        while let Some(event) = server.next_event() {
            if let MultiplayerEvent::PeerJoined(_) = event {
                let root = server.scene().root();
                server
                    .spawn(SceneIndex::new(0), root, PeerId::SERVER)
                    .unwrap();
            }
        }
        if frame > 60 && frame % 10 == 0 {
            for player in server.handles::<Player>() {
                server.rpc(player).hit(1).unwrap();
            }
        }
        if let Some((_, player)) = client.scene().iter::<Player>().next() {
            shown.push(player.health);
        }
        server.end_frame();
        client.end_frame();
    }
    let flashes = client
        .scene()
        .iter::<Player>()
        .map(|(_, p)| p.flashes)
        .sum();
    (shown, flashes)
}

#[test]
fn clients_see_a_server_rpc_change_once_whatever_the_order() {
    for seed in 1..=4 {
        let (shown, flashes) = run(seed);
        assert!(shown.len() > 400, "the client had the player");
        let hits = 1000 - shown.last().unwrap();
        assert!(hits > 40, "most hits arrived: {hits}");
        // Every call that arrived ran its body once (the last ones may still be in flight).
        assert!(
            flashes.abs_diff(hits as u32) <= 2,
            "{flashes} flashes, {hits} hits"
        );
        let undone: Vec<(i32, i32)> = shown
            .windows(2)
            .map(|w| (w[0], w[1]))
            .filter(|(before, after)| after > before)
            .collect();
        assert!(
            undone.is_empty(),
            "seed {seed}: health went back up: {undone:?}"
        );
    }
}

/// A call on a node in the frame the node is spawned, or bound, is held until its spawn went
/// out; the spawn holds the state after the call, and comes first. Clients still see the change
/// once (and the body's local effects), in both encodings, with and without a network tick in
/// the frame.
#[test]
fn a_call_held_for_its_nodes_spawn_changes_clients_once() {
    use mf_net::replication::SnapshotEncoding;
    use mf_net_tests::harness::World;
    for encoding in [SnapshotEncoding::Bits, SnapshotEncoding::Bytes] {
        for dt in [Duration::from_secs(1) / 30, Duration::from_millis(5)] {
            let mut world = World::with_encoding(1, encoding, scenes);
            world.dt = dt;
            let root = world.root();
            let mut level = Vec::new();
            for mp in std::iter::once(&mut world.server).chain(&mut world.clients) {
                let scene = mp.scene_mut();
                let node = scene.add(root, "boss").unwrap();
                let boss = Player {
                    health: 1000,
                    ..Player::default()
                };
                scene.set_value(node, boss).unwrap();
                level.push(node);
            }
            world.step(2);
            let spawned = world.server.spawn(SceneIndex::new(0), root, PeerId::SERVER);
            world.server.bind(level[0]).unwrap();
            for node in [spawned.unwrap(), level[0]] {
                let player = world.server.scene().net_ref::<Player>(node).unwrap();
                world.server.rpc(player).hit(10).unwrap();
            }
            world.step(40);
            world.assert_converged();
            let shown: Vec<(i32, u32)> = world.clients[0]
                .scene()
                .iter::<Player>()
                .map(|(_, p)| (p.health, p.flashes))
                .collect();
            assert_eq!(shown, [(990, 1), (990, 1)], "{encoding:?}, {dt:?}");
        }
    }
}
