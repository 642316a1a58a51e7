#![allow(clippy::unwrap_used)]
//! Spawners (scene index −2): typed spawn data travels in the spawn, every client runs its own
//! spawn function with it (instances whose shape depends on the data), late joiners get the
//! spawn replayed with its data, the fingerprint covers spawner names, parents and data types,
//! and misuse is refused without leaving anything behind.

use mf_net::prelude::*;
use mf_net::replication::{MultiplayerError, MultiplayerEvent, Spawner};
use mf_net::scene::SceneError;
mod replication_common;

use mf_net_tests::harness::{drain, networked, Mp, World};
use replication_common::{library, Body, Gun};

/// Spawn data: the instance's name, a position and one gun per entry.
#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Loadout {
    name: String,
    x: i32,
    guns: Vec<u16>,
}

/// The spawn function: a `Body` root named after the data, one `Gun` child per entry.
fn build(scene: &mut Scene, parent: NodeId, data: &Loadout) -> Result<NodeId, SceneError> {
    let root = scene.add(parent, &data.name)?;
    scene.set_value(
        root,
        Body {
            x: data.x,
            ..Body::default()
        },
    )?;
    for (i, &ammo) in data.guns.iter().enumerate() {
        scene.insert(root, &format!("gun{i}"), Gun { ammo })?;
    }
    Ok(root)
}

fn add_level(mp: &mut Mp) {
    let root = mp.scene().root();
    mp.scene_mut().add(root, "level").unwrap();
}

fn setup(mp: &mut Mp) {
    add_level(mp);
    mp.register_spawner("players", "/root/level", build)
        .unwrap();
}

fn players(mp: &Mp) -> Spawner<Loadout> {
    mp.spawner::<Loadout>("players").unwrap()
}

fn world(clients: usize) -> World {
    World::with_setup(
        clients,
        MultiplayerConfig::default(),
        None,
        0,
        library,
        setup,
    )
}

fn body(mp: &mut Mp, node: NodeId) -> &mut Body {
    let handle = mp.scene().net_ref::<Body>(node).unwrap();
    mp.scene_mut().get_mut(handle).unwrap()
}

#[test]
fn a_spawner_spawn_reaches_every_client_with_its_data() {
    let mut world = world(3);
    assert_eq!(world.server.peers().len(), 3);
    for client in &mut world.clients {
        drain(client);
    }
    let spawner = players(&world.server);
    let ann = Loadout {
        name: "ann".into(),
        x: 7,
        guns: vec![3, 4],
    };
    let root = world
        .server
        .spawn_with(spawner, &ann, PeerId::SERVER)
        .unwrap();
    // Configured in the same frame: the spawn carries this state too.
    body(&mut world.server, root).hp = 55;
    assert_eq!(
        world.server.scene().path(root).as_deref(),
        Some("/root/level/ann")
    );
    let ids: Vec<u32> = networked(&world.server)
        .iter()
        .map(|(id, _)| id.get())
        .collect();
    assert_eq!(ids, [1, 2, 3], "root and two guns");
    // A second instance with another shape: ids follow on.
    let bob = Loadout {
        name: "bob".into(),
        x: -1,
        guns: vec![],
    };
    let bob_root = world
        .server
        .spawn_with(spawner, &bob, PeerId::SERVER)
        .unwrap();
    assert_eq!(world.server.net_id(bob_root).unwrap().get(), 4);
    world.step(3);
    world.assert_converged();
    for client in &mut world.clients {
        let copy = client.scene().find("/root/level/ann").unwrap();
        assert_eq!(body(client, copy).x, 7);
        assert_eq!(body(client, copy).hp, 55);
        assert_eq!(client.scene().children(copy).len(), 2);
        let events = drain(client);
        for (node, id) in [
            (copy, 1),
            (client.scene().find("/root/level/bob").unwrap(), 4),
        ] {
            assert!(events.contains(&MultiplayerEvent::NodeSpawned {
                node,
                net_id: NetId::new(id).unwrap()
            }));
        }
    }

    // Changes after the spawn travel in snapshots, as for any spawn.
    body(&mut world.server, root).y = 12;
    world.step(3);
    world.assert_converged();

    // Late join: the spawner spawn is replayed with its data, and a despawned gun is absent.
    let gun = world.server.scene().child(root, "gun0").unwrap();
    world.server.despawn(gun);
    world.step(2);
    let late = world.connect_client();
    world.step(4);
    world.assert_converged();
    let client = &mut world.clients[late];
    let copy = client.scene().find("/root/level/ann").unwrap();
    assert_eq!(body(client, copy).y, 12);
    assert!(client.scene().child(copy, "gun0").is_none());
    assert!(client.scene().child(copy, "gun1").is_some());

    // Despawn works as for any spawn.
    world.server.despawn(root);
    world.step(3);
    world.assert_converged();
    for client in &world.clients {
        assert!(client.scene().find("/root/level/ann").is_none());
        assert!(client.scene().find("/root/level/bob").is_some());
    }
}

#[test]
fn spawner_misuse_is_refused_and_leaves_nothing_behind() {
    let mut world = world(1);
    let spawner = players(&world.server);
    let data = Loadout {
        name: "x".into(),
        x: 0,
        guns: vec![1],
    };
    // Only the server spawns; registering happens before starting.
    assert_eq!(
        world.clients[0].spawn_with(spawner, &data, PeerId::SERVER),
        Err(MultiplayerError::NotServer)
    );
    assert_eq!(
        world
            .server
            .register_spawner("late", "/root", build)
            .map(|s| s.index()),
        Err(MultiplayerError::AlreadyStarted)
    );
    assert_eq!(
        world.server.spawn_with(spawner, &data, PeerId(999)),
        Err(MultiplayerError::UnknownPeer(PeerId(999)))
    );
    // The data type is part of the handle.
    assert!(world.server.spawner::<u32>("players").is_none());
    assert!(world.server.spawner::<Loadout>("nobody").is_none());

    let mut offline = Mp::new(library(), MultiplayerConfig::default());
    let first = offline
        .register_spawner("a", "/root/missing", build)
        .unwrap();
    assert_eq!(
        offline
            .register_spawner("a", "/root", build)
            .map(|s| s.index()),
        Err(MultiplayerError::DuplicateSpawner("a".into()))
    );
    assert_eq!(
        offline.spawn_with(first, &data, PeerId::SERVER),
        Err(MultiplayerError::NoSuchPath("/root/missing".into()))
    );
    // A function returning something else than the one child it added: undone.
    let liar = offline
        .register_spawner("liar", "/root", |scene, parent, _: &Loadout| {
            scene.add(parent, "one")?;
            scene.add(parent, "two")?;
            Ok(parent)
        })
        .unwrap();
    let root = offline.scene().root();
    assert_eq!(
        offline.spawn_with(liar, &data, PeerId::SERVER),
        Err(MultiplayerError::SpawnerRoot(root))
    );
    assert!(offline.scene().children(root).is_empty());
    // A failing function: its error, and what it added is removed.
    let failing = offline
        .register_spawner("failing", "/root", |scene, parent, _: &Loadout| {
            scene.add(parent, "half")?;
            Err(SceneError::InvalidName("/".into()))
        })
        .unwrap();
    assert_eq!(
        offline.spawn_with(failing, &data, PeerId::SERVER),
        Err(MultiplayerError::Scene(SceneError::InvalidName("/".into())))
    );
    assert!(offline.scene().children(root).is_empty());
    // A handle of another instance with another data type at that index.
    let mut other = Mp::new(library(), MultiplayerConfig::default());
    let wrong: Spawner<u32> = other
        .register_spawner("n", "/root", |scene, parent, n: &u32| {
            scene.add(parent, &n.to_string())
        })
        .unwrap();
    assert_eq!(
        offline.spawn_with(wrong, &5, PeerId::SERVER),
        Err(MultiplayerError::UnknownSpawner(0))
    );
    // The same spawner offline works and numbers ids.
    let ok = other.spawn_with(wrong, &5, PeerId::SERVER).unwrap();
    assert_eq!(other.scene().path(ok).as_deref(), Some("/root/5"));
    assert_eq!(other.net_id(ok), NetId::new(1));
}

/// A client whose spawner is registered with another data type.
fn odd_setup(mp: &mut Mp) {
    add_level(mp);
    mp.register_spawner("players", "/root/level", |scene, parent, n: &u32| {
        scene.add(parent, &n.to_string())
    })
    .unwrap();
}

/// A client whose spawner puts its nodes elsewhere.
fn elsewhere_setup(mp: &mut Mp) {
    add_level(mp);
    mp.register_spawner("players", "/root", build).unwrap();
}

#[test]
fn the_fingerprint_covers_spawners() {
    let mut world = world(1);
    for (setup, expect) in [
        (odd_setup as fn(&mut Mp), "u32"),
        (elsewhere_setup, "spawner:players@/root`"),
        (add_level, "first extra: `spawner:players@/root/level`"),
    ] {
        let odd = world.connect_client_setup(library(), setup);
        world.step(4);
        let client = &mut world.clients[odd];
        assert!(drain(client).contains(&MultiplayerEvent::Disconnected {
            reason: DisconnectReason::ProtocolMismatch
        }));
        let text = client.refusal().unwrap();
        assert!(text.contains(expect), "{text}");
    }
    assert_eq!(world.server.peers().len(), 1);
}

/// A client whose spawn function fails for some data (it diverged from the server's).
fn picky_setup(mp: &mut Mp) {
    add_level(mp);
    mp.register_spawner("players", "/root/level", |scene, parent, data: &Loadout| {
        if data.name == "zed" {
            return Err(SceneError::InvalidName(data.name.clone()));
        }
        build(scene, parent, data)
    })
    .unwrap();
}

#[test]
fn a_client_whose_spawn_function_fails_reports_it_and_carries_on() {
    let mut world = world(0);
    let picky = world.connect_client_setup(library(), picky_setup);
    world.step(4);
    drain(&mut world.clients[picky]);
    let spawner = players(&world.server);
    let zed = world
        .server
        .spawn_with(
            spawner,
            &Loadout {
                name: "zed".into(),
                x: 1,
                guns: vec![9],
            },
            PeerId::SERVER,
        )
        .unwrap();
    let amy = world
        .server
        .spawn_with(
            spawner,
            &Loadout {
                name: "amy".into(),
                x: 2,
                guns: vec![],
            },
            PeerId::SERVER,
        )
        .unwrap();
    world.step(3);
    body(&mut world.server, zed).x = 100;
    body(&mut world.server, amy).x = 200;
    world.step(3);
    let client = &mut world.clients[picky];
    let events = drain(client);
    assert!(events.contains(&MultiplayerEvent::SpawnFailed {
        net_id: NetId::new(1).unwrap()
    }));
    assert_eq!(client.stats().spawn_failures, 1);
    let level = client.scene().find("/root/level").unwrap();
    assert_eq!(client.scene().children(level).len(), 1, "zed was undone");
    let copy = client.scene().find("/root/level/amy").unwrap();
    assert_eq!(body(client, copy).x, 200, "later changes still arrive");
    assert!(client.stats().snapshots_applied > 0);
    let peer = client.local_peer_id();
    assert!(world.server.peers().contains(&peer), "still connected");
}

#[test]
fn the_registry_dump_lists_types_scenes_and_spawners() {
    let mut offline = Mp::new(library(), MultiplayerConfig::default());
    setup(&mut offline);
    let before = offline.registry_dump();
    assert!(before.contains("computed when starting"), "{before}");
    let world = world(0);
    let dump = world.server.registry_dump();
    assert_eq!(
        before.lines().skip(1).collect::<Vec<_>>(),
        dump.lines().skip(1).collect::<Vec<_>>(),
        "the same listing before and after starting"
    );
    let fingerprint = format!(
        "replication fingerprint {:#018x}",
        world.server.fingerprint()
    );
    assert!(dump.contains(&fingerprint), "{dump}");
    for expected in [
        "2 spawnable scene(s)",
        "scene 0 `body`: 1 networked node(s)",
        "scene 1 `tank`: 3 networked node(s)",
        "1 spawner(s)",
        "spawner 0 `players` under `/root/level`: data Loadout",
        "ammo: u16",
        "hp: u8",
        "types with RPCs",
    ] {
        assert!(dump.contains(expected), "missing {expected:?} in:\n{dump}");
    }
    // Node types carry their replicated type ids.
    let registry = mf_net::replication::ReplicationRegistry::global();
    let gun = registry.id_of::<Gun>().unwrap();
    assert!(
        dump.contains(&format!("+1 {} {gun}", registry.get(gun).unwrap().name())),
        "{dump}"
    );
}

/// Spawn data naming a networked node: a follower of a leader.
#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Follow {
    name: String,
    leader: NetRef<Body>,
}

/// What a follower's spawn function found its leader to be, kept in its `Body::local`: the
/// node at `/root/level/ann` in the scene it ran in, nothing (unresolved), or anything else
/// (a handle of another peer's).
const NAMES_ANN: u32 = 1;
const UNRESOLVED: u32 = 2;
const ELSEWHERE: u32 = 3;

/// The followers' spawn function: a `Body` root named after the data, noting what its leader
/// names here.
fn follow(scene: &mut Scene, parent: NodeId, data: &Follow) -> Result<NodeId, SceneError> {
    let seen = match data.leader {
        leader if leader.is_unresolved() => UNRESOLVED,
        leader if scene.path(leader.node()).as_deref() == Some("/root/level/ann") => NAMES_ANN,
        _ => ELSEWHERE,
    };
    let root = scene.add(parent, &data.name)?;
    scene.set_value(
        root,
        Body {
            local: seen,
            ..Body::default()
        },
    )?;
    Ok(root)
}

fn follow_setup(mp: &mut Mp) {
    setup(mp);
    mp.register_spawner("followers", "/root/level", follow)
        .unwrap();
}

/// A node reference in spawn data reaches every client's spawn function as that client's own
/// node, as an RPC argument does; a client that does not have the node gets it unresolved.
/// (It travelled as none: every client's function got it unresolved.)
#[test]
fn a_reference_in_spawn_data_names_each_clients_own_node() {
    let mut world = World::with_setup(
        2,
        MultiplayerConfig::default(),
        None,
        0,
        library,
        follow_setup,
    );
    // The clients number their nodes otherwise than the server: a server handle would name
    // another node there, or none.
    for (c, client) in world.clients.iter_mut().enumerate() {
        let root = client.scene().root();
        for i in 0..=c + 3 {
            client.scene_mut().add(root, &format!("local{i}")).unwrap();
        }
    }
    let ann = Loadout {
        name: "ann".into(),
        x: 1,
        guns: vec![2],
    };
    let leader = world
        .server
        .spawn_with(players(&world.server), &ann, PeerId::SERVER)
        .unwrap();
    world.step(3);
    let hidden_from = world.clients[1].local_peer_id();
    world
        .server
        .set_relevant(leader, hidden_from, false)
        .unwrap();
    world.step(3);
    let followers = world.server.spawner::<Follow>("followers").unwrap();
    let fan = Follow {
        name: "fan".into(),
        leader: NetRef::new(leader),
    };
    let on_server = world
        .server
        .spawn_with(followers, &fan, PeerId::SERVER)
        .unwrap();
    assert_eq!(body(&mut world.server, on_server).local, NAMES_ANN);
    world.step(3);
    let late = world.connect_client();
    world.step(4);
    for (c, client) in world.clients.iter_mut().enumerate() {
        let copy = client.scene().find("/root/level/fan").unwrap();
        let seen = body(client, copy).local;
        let want = if c == 1 { UNRESOLVED } else { NAMES_ANN };
        assert_eq!(seen, want, "client {c} (late: {late})");
    }
}
