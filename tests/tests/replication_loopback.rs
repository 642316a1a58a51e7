#![allow(clippy::unwrap_used)]
//! `Multiplayer` over a perfect loopback, frame by frame: a server and three clients through
//! spawn, change, despawn (root; descendant alone), late join with an absent descendant,
//! authority, bind, leaving, kicks, `stop`, the handshake refusal and every timeout.

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::interest::{InterestPolicy, InterestQuery};
use mf_net::replication::{MultiplayerError, MultiplayerEvent, NetId, ReplicationRegistry};
use mf_net::scene::SceneShape;
use mf_net::schema::hash_u64;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::DisconnectReason;
mod replication_common;

use mf_net_tests::harness::{drain, messages, networked, refusals, Dyn, Mp, World};
use replication_common::{library, Body, Gun, BODY, TANK};

fn body(mp: &mut Mp, node: NodeId) -> &mut Body {
    let handle = mp.scene().net_ref::<Body>(node).unwrap();
    mp.scene_mut().get_mut(handle).unwrap()
}

fn gun_of(mp: &Mp, root: NodeId) -> Option<NodeId> {
    mp.scene().child(root, "gun")
}

#[test]
fn spawn_change_and_despawn_reach_three_clients() {
    let mut world = World::new(3, library);
    assert_eq!(world.server.peers().len(), 3);
    for client in &mut world.clients {
        assert!(client.is_client());
        assert!(drain(client)
            .iter()
            .any(|e| matches!(e, MultiplayerEvent::ConnectedToServer { .. })));
    }
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    // Configured in the same frame: the spawn carries this state.
    body(&mut world.server, tank).x = 5;
    let ids: Vec<u32> = networked(&world.server)
        .iter()
        .map(|(id, _)| id.get())
        .collect();
    assert_eq!(ids, [1, 2, 3], "root, gun, sight in depth-first order");
    world.step(3);
    world.assert_converged();
    for client in &mut world.clients {
        let copy = client.node(NetId::new(1).unwrap()).unwrap();
        assert_eq!(client.scene().path(copy), world.server.scene().path(tank));
        assert_eq!(body(client, copy).x, 5);
        assert!(drain(client).iter().any(
            |e| matches!(e, MultiplayerEvent::NodeSpawned { net_id, .. } if net_id.get() == 1)
        ));
    }
    assert_eq!(world.clients[0].stats().spawns, 1);

    // Changes on several nodes.
    body(&mut world.server, tank).y = -3;
    body(&mut world.server, tank).local = 99; // not replicated
    let gun = gun_of(&world.server, tank).unwrap();
    let h = world.server.scene().net_ref::<Gun>(gun).unwrap();
    world.server.scene_mut().get_mut(h).unwrap().ammo = 3;
    world.step(3);
    world.assert_converged();
    let copy = world.clients[1].node(NetId::new(1).unwrap()).unwrap();
    assert_eq!(body(&mut world.clients[1], copy).local, 0);

    // A descendant freed alone is despawned alone.
    assert!(world.server.despawn(gun));
    world.step(3);
    world.assert_converged();
    for client in &mut world.clients {
        let copy = client.node(NetId::new(1).unwrap()).unwrap();
        assert!(gun_of(client, copy).is_none(), "the client freed its gun");
        assert!(client.node(NetId::new(2).unwrap()).is_none());
    }
    let sent = world.server.stats().despawns;
    assert_eq!(sent, 1);

    // Freeing the root sends one despawn; its descendants go with it.
    world.server.scene_mut().remove(tank);
    world.step(3);
    world.assert_converged();
    assert_eq!(world.server.stats().despawns, sent + 1);
    for client in &mut world.clients {
        assert!(networked(client).is_empty());
        assert_eq!(client.scene().len(), 1, "only the root is left");
        assert!(drain(client)
            .iter()
            .any(|e| matches!(e, MultiplayerEvent::NodeDespawned { net_id } if net_id.get() == 1)));
    }
}

#[test]
fn spawned_and_freed_in_the_same_frame_sends_nothing() {
    let mut world = World::new(1, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.server.despawn(tank);
    world.step(3);
    assert_eq!(world.clients[0].stats().spawns, 0);
    assert_eq!(world.server.stats().spawns, 0);
    assert_eq!(world.server.stats().despawns, 0);
    // Ids are not reused: the next spawn starts after the dropped one.
    let next = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    assert_eq!(world.server.net_id(next).unwrap().get(), 4);
    world.step(3);
    world.assert_converged();
}

#[test]
fn late_join_gets_every_live_spawn_with_absent_descendants() {
    let mut world = World::new(1, library);
    let root = world.root();
    let first = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let second = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let third = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    world.step(2);
    body(&mut world.server, second).x = 42;
    let gun = gun_of(&world.server, second).unwrap();
    world.server.despawn(gun);
    world.server.despawn(third);
    world.step(5);
    world.assert_converged();

    let late = world.connect_client();
    world.step(4);
    world.assert_converged();
    let client = &mut world.clients[late];
    assert_eq!(
        networked(client).len(),
        5,
        "tank (3) + tank without its gun (2)"
    );
    let copy = client.node(NetId::new(4).unwrap()).unwrap();
    assert!(
        gun_of(client, copy).is_none(),
        "the despawned gun was absent"
    );
    assert_eq!(body(client, copy).x, 42);
    // The first tank is unchanged and still there.
    let _ = first;
    assert!(client.node(NetId::new(1).unwrap()).is_some());

    // Changes after the join reach it through snapshots.
    body(&mut world.server, second).hp = 7;
    world.step(3);
    world.assert_converged();
}

#[test]
fn authority_is_replicated() {
    let mut world = World::new(3, library);
    let owner = world.clients[0].local_peer_id();
    let other = world.clients[1].local_peer_id();
    assert_ne!(owner, PeerId::SERVER);
    let root = world.root();
    assert_eq!(
        world.server.spawn(TANK, root, PeerId(999)),
        Err(MultiplayerError::UnknownPeer(PeerId(999)))
    );
    let tank = world.server.spawn(TANK, root, owner).unwrap();
    world.step(3);
    assert!(!world.server.is_network_authority(tank));
    assert!(world.server.is_network_authority(root), "not networked");
    let id = NetId::new(1).unwrap();
    let gun_id = NetId::new(2).unwrap();
    for (i, client) in world.clients.iter().enumerate() {
        let copy = client.node(id).unwrap();
        assert_eq!(client.authority(copy), owner);
        assert_eq!(client.is_network_authority(copy), i == 0, "client {i}");
    }

    // Recursive by default: descendants follow.
    world.server.set_authority(tank, other, true).unwrap();
    world.step(3);
    for (i, client) in world.clients.iter().enumerate() {
        for net_id in [id, gun_id] {
            let copy = client.node(net_id).unwrap();
            assert_eq!(client.authority(copy), other);
            assert_eq!(client.is_network_authority(copy), i == 1, "client {i}");
        }
    }
    // Not recursive: only that node.
    world
        .server
        .set_authority(tank, PeerId::SERVER, false)
        .unwrap();
    world.step(3);
    let c = &world.clients[1];
    assert_eq!(c.authority(c.node(id).unwrap()), PeerId::SERVER);
    assert_eq!(c.authority(c.node(gun_id).unwrap()), other);

    // A late joiner sees per-node authority that differs from the spawn's.
    let late = world.connect_client();
    world.step(4);
    let c = &world.clients[late];
    assert_eq!(c.authority(c.node(id).unwrap()), PeerId::SERVER);
    assert_eq!(c.authority(c.node(gun_id).unwrap()), other);
    assert!(matches!(
        world.clients[0].set_authority(tank, owner, true),
        Err(MultiplayerError::NotServer)
    ));
}

fn load_level(mp: &mut Mp) -> NodeId {
    let root = mp.scene().root();
    let level = mp.scene_mut().add(root, "level").unwrap();
    mp.scene_mut()
        .insert(level, "state", Body::default())
        .unwrap()
        .node()
}

#[test]
fn bind_networks_a_node_every_peer_loads() {
    let mut world = World::new(0, library);
    let state = load_level(&mut world.server);
    for _ in 0..3 {
        let i = world.connect_client();
        load_level(&mut world.clients[i]);
    }
    world.step(4);
    world.server.bind(state).unwrap();
    assert_eq!(
        world.server.bind(state),
        Err(MultiplayerError::AlreadyNetworked(state))
    );
    body(&mut world.server, state).hp = 9;
    world.step(3);
    world.assert_converged();
    body(&mut world.server, state).x = 1234;
    world.step(3);
    world.assert_converged();
    for client in &mut world.clients {
        let copy = client.scene().find("/root/level/state").unwrap();
        assert_eq!(client.net_id(copy), NetId::new(1));
        assert_eq!(body(client, copy).x, 1234);
    }
    // A client that disconnects keeps its bound node (unbound).
    world.clients[0].stop();
    assert!(world.clients[0].scene().find("/root/level/state").is_some());
    assert!(networked(&world.clients[0]).is_empty());
}

#[test]
fn a_leaving_client_loses_its_nodes_and_frees_its_copies() {
    let mut world = World::new(2, library);
    let leaver = world.clients[0].local_peer_id();
    let root = world.root();
    let owned = world.server.spawn(TANK, root, leaver).unwrap();
    let kept = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.assert_converged();
    drain(&mut world.server);

    world.clients[0].stop();
    assert!(
        drain(&mut world.clients[0]).contains(&MultiplayerEvent::Disconnected {
            reason: DisconnectReason::Closed
        })
    );
    assert!(networked(&world.clients[0]).is_empty());
    assert_eq!(world.clients[0].scene().len(), 1, "spawned nodes freed");
    assert!(world.clients[0].is_server(), "offline again");
    world.step(3);
    assert!(
        drain(&mut world.server).contains(&MultiplayerEvent::PeerLeft {
            peer: leaver,
            reason: DisconnectReason::Closed
        })
    );
    assert!(
        !world.server.scene().contains(owned),
        "owned nodes despawned"
    );
    assert!(world.server.scene().contains(kept));
    assert_eq!(world.server.peers().len(), 1);
    let remaining = &world.clients[1..];
    for client in remaining {
        assert_eq!(networked(client).len(), 1);
    }
}

#[test]
fn a_leaving_clients_nodes_can_go_to_the_server() {
    let config = MultiplayerConfig {
        despawn_owned_on_disconnect: false,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(2, config, None, 0, library);
    let leaver = world.clients[0].local_peer_id();
    let root = world.root();
    let owned = world.server.spawn(TANK, root, leaver).unwrap();
    world.step(3);
    world.clients[0].stop();
    world.step(3);
    assert!(world.server.scene().contains(owned));
    assert_eq!(world.server.authority(owned), PeerId::SERVER);
    let c = &world.clients[1];
    assert_eq!(
        c.authority(c.node(NetId::new(1).unwrap()).unwrap()),
        PeerId::SERVER
    );
    world.clients.remove(0);
    world.assert_converged();
}

#[test]
fn kick_disconnects_with_the_reason() {
    let mut world = World::new(2, library);
    let peer = world.clients[1].local_peer_id();
    let root = world.root();
    world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    drain(&mut world.server);
    drain(&mut world.clients[1]);
    world.server.kick(peer, DisconnectReason::Kicked);
    assert!(
        drain(&mut world.server).contains(&MultiplayerEvent::PeerLeft {
            peer,
            reason: DisconnectReason::Kicked
        })
    );
    world.step(2);
    assert!(
        drain(&mut world.clients[1]).contains(&MultiplayerEvent::Disconnected {
            reason: DisconnectReason::Kicked
        })
    );
    assert!(networked(&world.clients[1]).is_empty());
    assert_eq!(world.clients[1].scene().len(), 1);
    assert_eq!(world.server.peers(), &[world.clients[0].local_peer_id()]);
    world.clients.truncate(1);
    world.assert_converged();
}

#[test]
fn stopping_the_server_keeps_its_nodes_as_plain_nodes() {
    let mut world = World::new(1, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.server.stop();
    assert!(world.server.scene().contains(tank));
    assert_eq!(world.server.net_id(tank), None);
    assert!(world.server.is_server() && !world.server.is_running());
    world.step(2);
    assert!(
        drain(&mut world.clients[0]).contains(&MultiplayerEvent::Disconnected {
            reason: DisconnectReason::Shutdown
        })
    );
    assert_eq!(world.clients[0].scene().len(), 1);
}

/// A server that stops lets each client leave as on its own: `PeerLeft`, and what it owned
/// despawned (the default) or handed to the server (kept, as a plain node like the rest).
#[test]
fn stopping_the_server_despawns_what_its_clients_owned_as_their_leaving_does() {
    for despawn_owned in [true, false] {
        let config = MultiplayerConfig {
            despawn_owned_on_disconnect: despawn_owned,
            ..MultiplayerConfig::default()
        };
        let mut world = World::with(1, config, None, 0, library);
        let peer = world.clients[0].local_peer_id();
        let root = world.root();
        let owned = world.server.spawn(TANK, root, peer).unwrap();
        let kept = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
        world.step(3);
        drain(&mut world.server);
        world.server.stop();
        let events = drain(&mut world.server);
        let left = MultiplayerEvent::PeerLeft {
            peer,
            reason: DisconnectReason::Shutdown,
        };
        assert_eq!(events.iter().filter(|&e| *e == left).count(), 1);
        let scene = world.server.scene();
        assert_eq!(scene.contains(owned), !despawn_owned, "{despawn_owned}");
        assert!(scene.contains(kept));
        assert_eq!(world.server.net_id(kept), None);
    }
}

/// A server stopped and started again spawns the same scenes as before: its instance names
/// go on from where they were, so a new tank is not named as the tank the first run left
/// (the names started again from 1: the spawn was refused as a duplicate name).
#[test]
fn a_server_started_again_names_its_spawns_anew() {
    let mut world = World::new(1, library);
    let root = world.root();
    let first = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.server.stop();
    world.step(2);
    world.clients.clear();
    let listen = world.net.listen("again", 4).unwrap();
    world
        .server
        .start_server(Box::new(listen), messages())
        .unwrap();
    let second = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    assert_ne!(first, second);
    assert!(world.server.scene().contains(first));
    assert_eq!(world.server.net_id(first), None, "a plain node now");
    world.step(3);
    assert!(world.server.net_id(second).is_some());
}

/// Hides every group from every client.
struct HideAll;

impl InterestPolicy for HideAll {
    fn relevant(&mut self, _: &InterestQuery<'_>) -> bool {
        false
    }
}

/// A server stopped and started again keeps its interest policy: what it hid from the clients
/// of its first run stays hidden from those of the next (a fresh policy would have shown them
/// everything).
#[test]
fn a_server_started_again_keeps_its_interest_policy() {
    let mut world = World::new(1, library);
    world.server.set_interest_policy(HideAll, 1).unwrap();
    let root = world.root();
    world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    assert!(networked(&world.clients[0]).is_empty());
    world.server.stop();
    world.step(2);
    world.clients.clear();
    let listen = world.net.listen("game", 4).unwrap();
    world
        .server
        .start_server(Box::new(listen), messages())
        .unwrap();
    world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.connect_client();
    world.step(5);
    assert_eq!(world.server.peers().len(), 1, "the new client joined");
    assert!(
        networked(&world.clients[0]).is_empty(),
        "the tank stays hidden"
    );
}

/// A library whose `tank` has a `Body` where the normal one has a `Gun`.
fn other_library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("body", |scene, root| scene.set_value(root, Body::default()))
        .unwrap();
    scenes
        .register("tank", |scene, root| {
            scene.set_value(root, Body::default())?;
            scene.insert(root, "gun", Body::default())?;
            let turret = scene.add(root, "turret")?;
            scene.insert(turret, "sight", Gun::default())?;
            Ok(())
        })
        .unwrap();
    scenes
}

/// The replication fingerprint covers every linked replicated type, as bit-packed entries
/// name types by their registry numbers: with no spawners and no RPCs, it is the scene shapes'
/// hash folded with the registry's fingerprint.
#[test]
fn the_replication_fingerprint_covers_the_linked_replicated_types() {
    let world = World::new(0, library);
    let shapes = SceneShape::fingerprint(&library().shapes().unwrap());
    let types = ReplicationRegistry::global().fingerprint();
    assert_eq!(world.server.fingerprint(), hash_u64(shapes, types));
}

#[test]
fn a_replication_mismatch_is_refused_naming_the_type() {
    let mut world = World::new(1, library);
    let odd = world.connect_client_with(other_library());
    world.step(4);
    let client = &mut world.clients[odd];
    assert!(drain(client).contains(&MultiplayerEvent::Disconnected {
        reason: DisconnectReason::ProtocolMismatch
    }));
    let text = client.refusal().unwrap();
    assert!(text.contains("scene `tank`"), "{text}");
    assert!(text.contains("networked node 1"), "{text}");
    assert!(text.contains("Gun") && text.contains("Body"), "{text}");
    assert_eq!(world.server.peers().len(), 1, "the good client stays");
    // The server raises an event with the same text.
    let refused = refusals(&mut world.server);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("scene `tank`"), "{refused:?}");
}

#[test]
fn a_silent_client_times_out() {
    let mut world = World::new(2, library);
    let silent = world.clients.pop().unwrap();
    let peer = silent.local_peer_id();
    drain(&mut world.server);
    // 15 s of frames (the peer timeout) without the silent client stepping: no acks.
    world.step(30 * 15 - 5);
    assert!(
        drain(&mut world.server).is_empty(),
        "not before the timeout"
    );
    world.step(10);
    assert!(
        drain(&mut world.server).contains(&MultiplayerEvent::PeerLeft {
            peer,
            reason: DisconnectReason::Timeout
        })
    );
    assert_eq!(world.server.peers().len(), 1);
    drop(silent);
}

#[test]
fn a_silent_server_times_out() {
    let mut world = World::new(1, library);
    drain(&mut world.clients[0]);
    let dt = world.dt;
    for _ in 0..(30 * 15 + 5) {
        world.clients[0].begin_frame(dt);
        world.clients[0].end_frame();
    }
    assert!(
        drain(&mut world.clients[0]).contains(&MultiplayerEvent::Disconnected {
            reason: DisconnectReason::Timeout
        })
    );
}

#[test]
fn a_client_that_never_says_hello_times_out() {
    let mut world = World::new(0, library);
    let data = mf_net::replication::connect_data(&messages()).unwrap();
    let mut raw = world.net.connect("game", data);
    let mut reason = None;
    for _ in 0..(30 * 6) {
        world.frame();
        while let Some(event) = raw.poll_event() {
            if let mf_net::transport::TransportEvent::Disconnected { reason: r, .. } = event {
                reason = Some(r);
            }
        }
    }
    assert_eq!(reason, Some(DisconnectReason::Timeout));
    assert!(world.server.peers().is_empty());
}

#[test]
fn a_client_never_welcomed_gives_up() {
    // A server transport that accepts the connection but never runs replication.
    let net = LoopbackNetwork::new();
    let mut mute = net.listen("mute", 4).unwrap();
    let mut client = Mp::new(library(), MultiplayerConfig::default());
    client
        .start_client(
            |data| -> Dyn { Box::new(net.connect("mute", data)) },
            messages(),
        )
        .unwrap();
    let dt = Duration::from_secs(1) / 30;
    let mut events = Vec::new();
    for _ in 0..(30 * 6) {
        while mute.poll_event().is_some() {}
        mute.flush();
        client.begin_frame(dt);
        client.end_frame();
        events.extend(drain(&mut client));
    }
    assert!(events.contains(&MultiplayerEvent::Disconnected {
        reason: DisconnectReason::Timeout
    }));
}

#[test]
fn offline_counts_as_the_server() {
    let mut mp = Mp::new(library(), MultiplayerConfig::default());
    assert!(mp.is_server());
    assert_eq!(mp.local_peer_id(), PeerId::SERVER);
    let root = mp.scene().root();
    let tank = mp.spawn(TANK, root, PeerId::SERVER).unwrap();
    assert!(mp.is_network_authority(tank));
    mp.begin_frame(Duration::from_millis(33));
    mp.end_frame();
    assert_eq!(mp.net_id(tank), NetId::new(1));
    assert_eq!(mp.stats().networked_nodes, 3);
}

/// The snapshot encoding changed while clients are joined applies to the clients that join
/// after: each keeps the one its handshake named, and all converge (the clients joined
/// bit-packed froze when the server switched to bytes: it no longer recorded their
/// baselines).
#[test]
fn an_encoding_changed_mid_run_is_for_the_clients_that_join_after() {
    use mf_net::replication::SnapshotEncoding::{Bits, Bytes};
    let mut world = World::new(1, library);
    let root = world.root();
    let tanks: Vec<_> = (0..5)
        .map(|_| world.server.spawn(TANK, root, PeerId::SERVER).unwrap())
        .collect();
    let go = |world: &mut World| {
        for _ in 0..20 {
            for &t in &tanks {
                body(&mut world.server, t).x += 1;
            }
            world.step(1);
        }
        world.assert_converged();
    };
    go(&mut world);
    for encoding in [Bytes, Bits, Bytes] {
        world.server.config_mut().snapshot_encoding = encoding;
        world.connect_client();
        go(&mut world);
    }
    assert_eq!(world.clients.len(), 4);
    assert_eq!(body(&mut world.server, tanks[0]).x, 80);
}

#[test]
fn a_tick_rate_changed_while_serving_applies_from_the_next_start() {
    let mut world = World::new(1, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    // A second of frames at 30 Hz: as many ticks, each tick's value on the client.
    let second = |world: &mut World| {
        let from = world.server.tick();
        for _ in 0..30 {
            body(&mut world.server, tank).x += 1;
            world.step(1);
        }
        world.step(3);
        world.assert_converged();
        world.server.tick().wrapping_sub(from)
    };
    assert_eq!(second(&mut world), 33);
    world.server.config_mut().tick_rate = 60;
    // The server goes on at the rate its client was welcomed with (it ticked twice as fast,
    // while the client's clock counted 30 ticks a second).
    assert_eq!(second(&mut world), 33);
    assert_eq!(world.server.tick_rate(), 30);
    assert_eq!(world.clients[0].tick_rate(), 30);
    world.restart();
    world.step(4);
    assert_eq!(world.server.tick_rate(), 60);
    assert_eq!(world.clients[0].tick_rate(), 60);
    assert_eq!(second(&mut world), 66);
}

/// An instance that served (or ran offline) and spawned, then ran a client session, goes on
/// from its tick and net ids when it is offline and serves again: its instances kept as plain
/// nodes keep their names, and new spawns take new ones.
#[test]
fn a_client_session_between_two_runs_of_a_server_keeps_its_instance_names() {
    for served in [true, false] {
        let net = LoopbackNetwork::new();
        let mut mp = Mp::new(library(), MultiplayerConfig::default());
        if served {
            let listen: Dyn = Box::new(net.listen("one", 4).unwrap());
            mp.start_server(listen, messages()).unwrap();
        }
        let root = mp.scene().root();
        let first = mp.spawn(BODY, root, PeerId::SERVER).unwrap();
        mp.begin_frame(Duration::from_millis(33));
        mp.end_frame();
        mp.stop();
        // A client session that ends at once: nobody listens under this name.
        let to = net.clone();
        let open = move |data| -> Dyn { Box::new(to.connect("nobody", data)) };
        mp.start_client(open, messages()).unwrap();
        for _ in 0..3 {
            mp.begin_frame(Duration::from_millis(33));
            mp.end_frame();
        }
        assert!(!mp.is_running(), "served: {served}");
        assert!(mp.scene().contains(first), "kept as a plain node");
        let offline = mp.spawn(BODY, root, PeerId::SERVER);
        assert!(offline.is_ok(), "served: {served}: {offline:?}");
        let listen: Dyn = Box::new(net.listen("two", 4).unwrap());
        mp.start_server(listen, messages()).unwrap();
        let again = mp.spawn(BODY, root, PeerId::SERVER);
        assert!(again.is_ok(), "served: {served}: {again:?}");
    }
}
