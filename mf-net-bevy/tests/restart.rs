#![allow(clippy::unwrap_used)]
//! Stopping and starting again, in the same apps: a client started again gets the server's
//! world once, as it is; a server started again serves what it has then, and its entities
//! keep what they are on its side while it is offline.

use std::collections::BTreeMap;
use std::time::Duration;

use bevy_app::App;
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::message::Messages;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::prelude::*;
use mf_net::replication::NetId;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_bevy::prelude::*;

mod common;

/// A ship, and a rock aimed at it with a pebble on it.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Ship {
    #[replicated]
    hp: i32,
}

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Rock {
    #[replicated]
    near: NetEntity,
}

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Pebble {
    #[replicated]
    size: i32,
}

fn app() -> App {
    let mut app = App::new();
    let frame = Duration::from_nanos(33_333_333);
    app.add_plugins((TimePlugin, MfNetPlugin::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(frame))
        .replicate::<Ship>()
        .replicate::<Rock>()
        .replicate::<Pebble>();
    app
}

/// What `app`'s world shows: each networked entity by net id, with what it holds and names,
/// by net id.
fn view(app: &mut App) -> BTreeMap<NetId, String> {
    let world = app.world_mut();
    let mut q = world.query::<(
        Entity,
        &NetworkId,
        Option<&Ship>,
        Option<&Rock>,
        Option<&Pebble>,
        Option<&ChildOf>,
    )>();
    let rows: Vec<_> = q
        .iter(world)
        .map(|(e, id, s, r, p, c)| (e, id.0, s.cloned(), r.cloned(), p.cloned(), c.cloned()))
        .collect();
    let id_of = |e: Option<Entity>| e.and_then(|e| world.get::<NetworkId>(e)).map(|i| i.0);
    rows.into_iter()
        .map(|(_, id, ship, rock, pebble, parent)| {
            let near = rock.map(|r| id_of(r.near.0));
            let parent = id_of(parent.map(|c| c.parent()));
            let text = format!("{ship:?} near {near:?} {pebble:?} under {parent:?}");
            (id, text)
        })
        .collect()
}

/// A server with a ship, a rock aimed at it and a pebble on the rock.
fn server(net: &LoopbackNetwork) -> (App, Entity) {
    let mut server = app();
    common::start_server(&mut server, net, None, 0);
    let world = server.world_mut();
    let ship = world.spawn((Ship { hp: 100 }, Networked)).id();
    let near = NetEntity::from(ship);
    let rock = world.spawn((Rock { near }, Networked)).id();
    world.spawn((Pebble { size: 3 }, Networked, ChildOf(rock)));
    (server, ship)
}

/// [`server`], and a client that has what it serves: the apps and the ship.
fn served(net: &LoopbackNetwork) -> (App, Vec<App>, Entity) {
    let (mut server, ship) = server(net);
    let mut clients = vec![client(net)];
    common::run(&mut server, &mut clients, 10);
    (server, clients, ship)
}

fn client(net: &LoopbackNetwork) -> App {
    let mut client = app();
    common::start_client(&mut client, net, None, 0);
    client
}

/// Starts the stopped `server` again on `net`, and its client, and lets it join.
fn start_again(server: &mut App, clients: &mut [App], net: &LoopbackNetwork) {
    common::start_server(server, net, None, 0);
    common::start_client(&mut clients[0], net, None, 0);
    common::run(server, clients, 10);
}

#[test]
fn a_client_started_again_gets_the_world_once_as_it_is() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, ship) = served(&net);
    let want = view(&mut server);
    assert_eq!(want.len(), 3, "{want:?}");
    assert_eq!(view(&mut clients[0]), want);

    // Stopped, the client forgets the server's entities.
    clients[0].world_mut().net(|mp| mp.stop());
    clients[0].update();
    assert_eq!(view(&mut clients[0]), BTreeMap::new());
    let world = clients[0].world_mut();
    let left = world.query::<&Ship>().iter(world).count();
    assert_eq!(left, 0, "the ship's copy is gone");

    // Meanwhile the ship is hit; started again, the client gets the world as it is now.
    server.world_mut().get_mut::<Ship>(ship).unwrap().hp = 90;
    common::run(&mut server, &mut clients, 3);
    common::start_client(&mut clients[0], &net, None, 0);
    common::run(&mut server, &mut clients, 10);
    let want = view(&mut server);
    assert!(want.values().any(|v| v.contains("hp: 90")), "{want:?}");
    assert_eq!(view(&mut clients[0]), want);
    let world = clients[0].world_mut();
    assert_eq!(world.query::<&Ship>().iter(world).count(), 1, "one copy");

    // And it follows changes again.
    server.world_mut().get_mut::<Ship>(ship).unwrap().hp = 80;
    common::run(&mut server, &mut clients, 5);
    assert_eq!(view(&mut clients[0]), view(&mut server));
}

#[test]
fn a_server_started_again_serves_what_it_has_then() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, ship) = served(&net);
    assert_eq!(view(&mut clients[0]).len(), 3);

    // Stopped: its client is disconnected and forgets what it had; the server keeps its
    // entities.
    server.world_mut().net(|mp| mp.stop());
    common::run(&mut server, &mut clients, 5);
    assert_eq!(view(&mut clients[0]), BTreeMap::new());
    assert!(!clients[0].world_mut().net(|mp| mp.is_running()));
    let world = server.world_mut();
    assert!(world.get::<Networked>(ship).is_some());

    // Offline, the server's game goes on: the ship is hit, a second ship comes, the rock is
    // aimed at it.
    server.world_mut().get_mut::<Ship>(ship).unwrap().hp = 50;
    let second = server.world_mut().spawn((Ship { hp: 7 }, Networked)).id();
    server.update();
    let world = server.world_mut();
    let mut rocks = world.query::<&mut Rock>();
    rocks.single_mut(world).unwrap().near = NetEntity::from(second);
    server.update();

    // Started again on the same network, it serves the world as it is to a client that
    // starts again.
    start_again(&mut server, &mut clients, &net);
    let want = view(&mut server);
    assert_eq!(want.len(), 4, "{want:?}");
    assert!(want.values().any(|v| v.contains("hp: 50")), "{want:?}");
    assert_eq!(view(&mut clients[0]), want);

    // And changes flow again.
    server.world_mut().get_mut::<Ship>(second).unwrap().hp = 8;
    common::run(&mut server, &mut clients, 5);
    assert_eq!(view(&mut clients[0]), view(&mut server));
}

/// The entity a client owned when its server stopped goes as when that client leaves:
/// despawned (the default), or handed to the server, which serves it once started again.
#[test]
fn what_a_client_owned_when_its_server_stopped_goes_as_when_it_leaves() {
    for despawn_owned in [true, false] {
        let net = LoopbackNetwork::new();
        let mut server = app();
        server.world_mut().net(|mp| {
            mp.config_mut().despawn_owned_on_disconnect = despawn_owned;
        });
        common::start_server(&mut server, &net, None, 0);
        let mut clients = vec![client(&net)];
        common::run(&mut server, &mut clients, 10);
        let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
        let world = server.world_mut();
        let owned = world
            .spawn((Ship { hp: 1 }, Networked, NetOwner(peer)))
            .id();
        let hull = world
            .spawn((Pebble { size: 9 }, Networked, ChildOf(owned)))
            .id();
        let kept = world.spawn((Ship { hp: 2 }, Networked)).id();
        common::run(&mut server, &mut clients, 10);
        assert_eq!(view(&mut clients[0]).len(), 3);

        server.world_mut().net(|mp| mp.stop());
        common::run(&mut server, &mut clients, 3);
        let world = server.world();
        let alive = |e: Entity| world.get_entity(e).is_ok();
        assert_eq!(
            (alive(owned), alive(hull), alive(kept)),
            (!despawn_owned, !despawn_owned, true),
            "despawn_owned_on_disconnect: {despawn_owned}"
        );
        if !despawn_owned {
            assert_eq!(
                world.get::<NetOwner>(owned),
                Some(&NetOwner(PeerId::SERVER))
            );
        }

        start_again(&mut server, &mut clients, &net);
        let want = view(&mut server);
        assert_eq!(want.len(), if despawn_owned { 1 } else { 3 }, "{want:?}");
        assert_eq!(view(&mut clients[0]), want);
    }
}

/// The entities `app`'s last update reported as [`NotReplicated`].
fn reported(app: &App) -> Vec<Entity> {
    let messages = app.world().resource::<Messages<NotReplicated>>();
    let reports = messages.iter_current_update_messages();
    reports.map(|m| m.entity).collect()
}

/// What an app networked offline is plain while it runs as a client (the server's entities
/// are what it shows), and networked again once the client stops; so is a `Networked` entity
/// spawned while it is a client. A client reports each of its own once.
#[test]
fn what_an_app_networked_offline_comes_back_when_its_client_stops() {
    let net = LoopbackNetwork::new();
    let (mut server, _) = server(&net);
    let mut offline = app();
    let mine = offline.world_mut().spawn((Ship { hp: 5 }, Networked)).id();
    offline.update();
    assert!(
        offline.world().get::<NetworkId>(mine).is_some(),
        "networked offline"
    );

    let mut clients = vec![offline];
    common::start_client(&mut clients[0], &net, None, 0);
    let mut reports = Vec::new();
    for _ in 0..10 {
        common::run(&mut server, &mut clients, 1);
        reports.extend(reported(&clients[0]));
    }
    assert_eq!(view(&mut clients[0]), view(&mut server));
    assert_eq!(reports, [mine], "reported once");
    let world = clients[0].world();
    assert!(world.get::<NetworkId>(mine).is_none());
    assert!(world.get::<Networked>(mine).is_some(), "still marked");

    let later = clients[0]
        .world_mut()
        .spawn((Ship { hp: 6 }, Networked))
        .id();
    reports.clear();
    for _ in 0..10 {
        common::run(&mut server, &mut clients, 1);
        reports.extend(reported(&clients[0]));
    }
    assert_eq!(reports, [later], "reported once");
    assert_eq!(view(&mut clients[0]), view(&mut server));
    let on_server = view(&mut server);
    assert!(on_server.values().all(|v| !v.contains("hp: 6")));

    clients[0].world_mut().net(|mp| mp.stop());
    clients[0].update();
    let shown = view(&mut clients[0]);
    assert_eq!(shown.len(), 2, "its own ships, networked again: {shown:?}");
    assert!(shown.values().any(|v| v.contains("hp: 5")), "{shown:?}");
    assert!(shown.values().any(|v| v.contains("hp: 6")), "{shown:?}");
}

/// An app that was a client, stopped, hosts a server of its own: it keeps none of the first
/// server's entities, and serves its own, with the references and children they have.
#[test]
fn a_client_that_stops_can_host() {
    let net = LoopbackNetwork::new();
    let (_first, mut clients, _) = served(&net);
    assert_eq!(view(&mut clients[0]).len(), 3);
    let mut host = clients.pop().unwrap();
    host.world_mut().net(|mp| mp.stop());
    host.update();
    assert_eq!(view(&mut host), BTreeMap::new());

    let other = LoopbackNetwork::new();
    common::start_server(&mut host, &other, None, 0);
    let world = host.world_mut();
    let ship = world.spawn((Ship { hp: 4 }, Networked)).id();
    let rock = world
        .spawn((
            Rock {
                near: NetEntity::from(ship),
            },
            Networked,
        ))
        .id();
    world.spawn((Pebble { size: 1 }, Networked, ChildOf(rock)));
    let mut guests = vec![client(&other)];
    common::run(&mut host, &mut guests, 10);
    let want = view(&mut host);
    assert_eq!(want.len(), 3, "{want:?}");
    assert_eq!(view(&mut guests[0]), want);
}
