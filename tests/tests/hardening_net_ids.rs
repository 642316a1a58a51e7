#![allow(clippy::unwrap_used)]
//! Net ids never run out: past `u32::MAX` the server hands out ids freed by despawns again, but
//! only once every client has acknowledged a snapshot from after the despawn, and refuses a
//! spawn it has no ids for instead of repeating one.

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::{MultiplayerError, NetId};
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::harness::{messages, Mp, World};

mod replication_common;
use replication_common::{library, Body, BODY, TANK};

/// Three ids a tank (root, gun, sight); room for three tanks below `u32::MAX` (never an id:
/// one past a spawn's last id must fit a `u32`).
const FIRST: u32 = u32::MAX - 9;

fn world(conditions: Option<NetworkConditions>) -> World {
    let config = MultiplayerConfig {
        first_net_id: FIRST,
        // Patient enough for the lossy run.
        peer_timeout: Duration::from_secs(30),
        ..MultiplayerConfig::default()
    };
    World::with(2, config, conditions, 7, library)
}

fn body(mp: &mut Mp, node: NodeId) -> &mut Body {
    let handle = mp.scene().net_ref::<Body>(node).unwrap();
    mp.scene_mut().get_mut(handle).unwrap()
}

fn first_id(mp: &Mp, node: NodeId) -> u32 {
    mp.net_id(node).unwrap().get()
}

fn runs_past_the_last_id(conditions: Option<NetworkConditions>) {
    let mut world = world(conditions);
    let root = world.root();
    let tanks: Vec<NodeId> = (0..3)
        .map(|_| world.server.spawn(TANK, root, PeerId::SERVER).unwrap())
        .collect();
    assert_eq!(first_id(&world.server, tanks[2]), u32::MAX - 3);
    assert_eq!(
        world.server.spawn(TANK, root, PeerId::SERVER),
        Err(MultiplayerError::NetIdsExhausted),
        "no id is handed out twice"
    );
    world.step(10);
    world.assert_converged();

    // The first tank goes; its ids are not reused while a client may still refer to them.
    world.server.despawn(tanks[0]);
    world.step(1);
    assert_eq!(
        world.server.spawn(TANK, root, PeerId::SERVER),
        Err(MultiplayerError::NetIdsExhausted)
    );
    world.step(120);
    let again = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    assert_eq!(
        first_id(&world.server, again),
        FIRST,
        "the freed ids, reused"
    );
    body(&mut world.server, again).x = 42;
    body(&mut world.server, tanks[1]).y = 7;
    world.step(30);
    world.assert_converged();
    for client in &mut world.clients {
        let copy = client.node(NetId::new(FIRST).unwrap()).unwrap();
        assert_eq!(body(client, copy).x, 42);
        assert_eq!(body(client, copy).hp, 100, "a fresh tank, not the old one");
    }
    // A late joiner gets the reused ids too.
    world.connect_client();
    world.step(30);
    world.assert_converged();
}

#[test]
fn ids_past_the_last_are_freed_ones_reused_safely() {
    runs_past_the_last_id(None);
}

#[test]
fn ids_are_reused_safely_on_a_lossy_network() {
    runs_past_the_last_id(Some(NetworkConditions {
        loss: 0.2,
        duplication: 0.1,
        latency: Duration::from_millis(40),
        jitter: Duration::from_millis(30),
        reorder: 0.1,
    }));
}

#[test]
fn a_node_that_outlives_its_group_keeps_its_id() {
    let mut world = world(None);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    for _ in 0..2 {
        world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    }
    world.step(5);
    // On the server, the gun moves out of its tank, then the tank goes: the gun keeps its id,
    // only the tank's other two come back (the tree move is the server's own: clients do not
    // mirror it, which is why nothing is compared with them here).
    let gun = world.server.scene().child(tank, "gun").unwrap();
    world.server.scene_mut().reparent(gun, root).unwrap();
    world.server.despawn(tank);
    world.step(120);
    assert_eq!(first_id(&world.server, gun), FIRST + 1);
    assert_eq!(
        world.server.spawn(TANK, root, PeerId::SERVER),
        Err(MultiplayerError::NetIdsExhausted),
        "two ids are free, but not three in a row"
    );
    let a = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    let b = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    assert_eq!(
        (first_id(&world.server, a), first_id(&world.server, b)),
        (FIRST, FIRST + 2)
    );
    assert_eq!(
        world.server.spawn(BODY, root, PeerId::SERVER),
        Err(MultiplayerError::NetIdsExhausted)
    );
}

#[test]
fn a_spawn_despawned_in_its_own_frame_gives_its_ids_back() {
    let mut world = world(None);
    let root = world.root();
    for _ in 0..2 {
        world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    }
    // Spawned and freed before the end of the frame: never sent, and its ids were lost.
    let gone = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    assert_eq!(first_id(&world.server, gone), u32::MAX - 3);
    world.server.despawn(gone);
    world.step(120);
    let again = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    assert_eq!(first_id(&world.server, again), u32::MAX - 3);
    world.step(10);
    world.assert_converged();
}

#[test]
fn a_despawn_takes_the_nodes_under_it_whatever_ids_they_were_given() {
    let mut world = world(None);
    let root = world.root();
    let tanks: Vec<NodeId> = (0..3)
        .map(|_| world.server.spawn(TANK, root, PeerId::SERVER).unwrap())
        .collect();
    world.step(10);
    // Ids handed out again are lower than those of nodes spawned before: a body under the
    // last tank takes the second tank's ids, and a body under that one the first tank's.
    world.server.despawn(tanks[1]);
    world.step(120);
    let under_tank = world.server.spawn(BODY, tanks[2], PeerId::SERVER).unwrap();
    assert_eq!(first_id(&world.server, under_tank), FIRST + 3);
    world.server.despawn(tanks[0]);
    world.step(120);
    let under_body = world
        .server
        .spawn(BODY, under_tank, PeerId::SERVER)
        .unwrap();
    assert_eq!(first_id(&world.server, under_body), FIRST);
    assert!(first_id(&world.server, tanks[2]) > FIRST + 3);
    world.step(30);
    world.assert_converged();
    for client in &world.clients {
        assert!(client.node(NetId::new(FIRST).unwrap()).is_some());
    }

    world.server.despawn(tanks[2]);
    world.step(30);
    world.assert_converged();
    for client in &world.clients {
        for id in [FIRST, FIRST + 3, u32::MAX - 3] {
            assert_eq!(
                client.node(NetId::new(id).unwrap()),
                None,
                "net id {id} went with the tank it was spawned under"
            );
        }
    }
}

/// The first net id and tick set through `config_mut` after the `Multiplayer` was made, before
/// the server starts, count as if they had been passed to it (they were ignored: the offline
/// server made with the `Multiplayer` kept id 1 and tick 0). Once the server has run, they no
/// longer count: a new start goes on from its tick and ids.
#[test]
fn the_first_net_id_and_tick_set_before_the_start_count() {
    const TICK: u32 = u32::MAX - 100;
    let before_start: fn(&mut Mp) = |mp| {
        mp.config_mut().first_net_id = FIRST;
        mp.config_mut().first_tick = TICK;
    };
    let config = MultiplayerConfig::default();
    let mut world = World::with_setup(1, config, None, 3, library, before_start);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    assert_eq!(first_id(&world.server, tank), FIRST);
    world.step(10);
    world.assert_converged();
    assert!(world.clients[0].node(NetId::new(FIRST).unwrap()).is_some());
    let ran = world.server.tick().wrapping_sub(TICK);
    assert!((10..20).contains(&ran), "{ran} ticks from the first");

    world.server.stop();
    world.server.config_mut().first_net_id = 1;
    world.server.config_mut().first_tick = 0;
    let listen = world.net.listen("again", 4).unwrap();
    world
        .server
        .start_server(Box::new(listen), messages())
        .unwrap();
    assert_eq!(world.server.tick(), TICK.wrapping_add(ran));
    let another = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    assert_eq!(first_id(&world.server, another), FIRST + 3);
}
