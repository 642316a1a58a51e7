#![allow(clippy::unwrap_used)]
//! An entity travels whole: its replicated components together, its `Networked` children with
//! it (`ChildOf` kept), in one spawn; changes to any of them converge, and a despawn removes
//! the entity tree. At 30 % loss, with two clients.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::query::{Has, With};
use bevy_ecs::world::World;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_bevy::prelude::*;
use mf_net_bevy::ReplicatedComponents;

mod common;

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Ship {
    #[replicated]
    x: i32,
}

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Hull {
    #[replicated]
    armor: i32,
}

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Turret {
    #[replicated]
    angle: i32,
}

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Tow {
    #[replicated]
    towed: NetEntity,
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            33_333_333,
        )))
        .replicate::<Ship>()
        .replicate::<Hull>()
        .replicate::<Turret>()
        .replicate::<Tow>();
    app
}

/// A server and one client over a perfect loopback (not joined yet).
fn server_and_client() -> (App, Vec<App>) {
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, None, 1);
    let mut clients = vec![app()];
    common::start_client(&mut clients[0], &net, None, 2);
    (server, clients)
}

/// Every ship on `app`: its value, its hull, and its turrets' angles (sorted).
fn ships(app: &mut App) -> Vec<(Ship, Option<Hull>, Vec<i32>)> {
    let world = app.world_mut();
    let mut ships = world.query::<(Entity, &Ship, Option<&Hull>)>();
    let mut turrets = world.query::<(&Turret, &ChildOf)>();
    let mut out: Vec<_> = ships
        .iter(world)
        .map(|(e, ship, hull)| {
            let mut angles: Vec<i32> = turrets
                .iter(world)
                .filter(|(_, parent)| parent.parent() == e)
                .map(|(t, _)| t.angle)
                .collect();
            angles.sort_unstable();
            (ship.clone(), hull.cloned(), angles)
        })
        .collect();
    out.sort_by_key(|(ship, ..)| ship.x);
    out
}

#[test]
fn an_entity_with_two_components_and_children_arrives_whole_and_leaves_whole() {
    let lossy = NetworkConditions::perfect().with_loss(0.3);
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, Some(lossy), 3);
    let mut clients: Vec<App> = (0..2u64)
        .map(|i| {
            let mut client = app();
            common::start_client(&mut client, &net, Some(lossy), i + 7);
            client
        })
        .collect();
    common::run(&mut server, &mut clients, 30);

    // Two ships with hulls, each with turrets as children; the second has no hull.
    let world = server.world_mut();
    let first = world
        .spawn((Ship { x: 1 }, Hull { armor: 5 }, Networked))
        .id();
    for angle in [10, 20] {
        world.spawn((Turret { angle }, Networked, ChildOf(first)));
    }
    let second = world.spawn((Ship { x: 2 }, Networked)).id();
    world.spawn((Turret { angle: 30 }, Networked, ChildOf(second)));
    common::run(&mut server, &mut clients, 40);
    let want = ships(&mut server);
    assert_eq!(
        want,
        [
            (Ship { x: 1 }, Some(Hull { armor: 5 }), vec![10, 20]),
            (Ship { x: 2 }, None, vec![30]),
        ]
    );
    for (i, client) in clients.iter_mut().enumerate() {
        assert_eq!(ships(client), want, "client {i}");
    }
    // One group each: the second ship's turret has the id after its ship's.
    let ids = |app: &mut App| {
        let world = app.world_mut();
        let mut q = world.query::<(&NetworkId, Option<&Ship>)>();
        let mut ids: Vec<(u32, bool)> = q
            .iter(world)
            .map(|(id, s)| (id.0.get(), s.is_some()))
            .collect();
        ids.sort_unstable();
        ids
    };
    let server_ids = ids(&mut server);
    assert_eq!(
        server_ids.len(),
        5,
        "3 entities' ids, and the hull beside the first ship"
    );
    for client in &mut clients {
        assert_eq!(ids(client), server_ids);
    }

    // Changes to a component beside another, and to a child.
    let world = server.world_mut();
    world.get_mut::<Hull>(first).unwrap().armor = 2;
    let mut turrets = world.query_filtered::<&mut Turret, With<ChildOf>>();
    for mut turret in turrets.iter_mut(world) {
        turret.angle += 1;
    }
    common::run(&mut server, &mut clients, 40);
    let want = ships(&mut server);
    assert_eq!(want[0].1, Some(Hull { armor: 2 }));
    for client in &mut clients {
        assert_eq!(ships(client), want);
    }

    // The first ship goes, its turrets with it.
    server.world_mut().despawn(first);
    common::run(&mut server, &mut clients, 40);
    for client in &mut clients {
        assert_eq!(ships(client), [(Ship { x: 2 }, None, vec![31])]);
        let world = client.world_mut();
        assert_eq!(world.query::<&Turret>().iter(world).count(), 1);
    }
}

/// A recursive hand-over of an entity's node gives the peer the entity's components and its
/// children that travelled with it, on the server and on the client, and
/// every one of them shows it in its `NetOwner`. (The core took a node's descendants from its
/// own scene only: under Bevy, the hull and the turret kept the server's authority, and the
/// turret's `NetOwner` the server.)
#[test]
fn a_recursive_hand_over_gives_the_entity_and_its_children() {
    let (mut server, mut clients) = server_and_client();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;

    let world = server.world_mut();
    let ship = world
        .spawn((Ship { x: 1 }, Hull { armor: 5 }, Networked))
        .id();
    world.spawn((Turret { angle: 10 }, Networked, ChildOf(ship)));
    common::run(&mut server, &mut clients, 10);
    server.world_mut().net(|mp| {
        mp.set_authority(entity_node(ship).unwrap(), peer, true)
            .unwrap();
    });
    common::run(&mut server, &mut clients, 10);

    for (app, name) in [(&mut server, "server"), (&mut clients[0], "client")] {
        let world = app.world_mut();
        let mut q = world.query::<(Entity, &NetOwner)>();
        let owners: Vec<PeerId> = q.iter(world).map(|(_, o)| o.0).collect();
        assert_eq!(
            owners,
            [peer, peer],
            "{name}: the ship's and the turret's NetOwner"
        );
        let entities: Vec<Entity> = world
            .query_filtered::<Entity, With<Networked>>()
            .iter(world)
            .collect();
        assert_eq!(entities.len(), 2, "{name}");
        world.net(|mp| {
            let types = mp.store().world().resource::<ReplicatedComponents>();
            let nodes: Vec<NodeId> = entities
                .iter()
                .flat_map(|&e| {
                    [
                        types.node_of::<Ship>(e),
                        types.node_of::<Hull>(e),
                        types.node_of::<Turret>(e),
                    ]
                })
                .flatten()
                .filter(|&n| mp.net_id(n).is_some())
                .collect();
            assert_eq!(nodes.len(), 3, "{name}: ship, hull, turret");
            for node in nodes {
                assert_eq!(mp.authority(node), peer, "{name}: {node:?}");
            }
        });
    }
}

/// A reference set before a frame's fixed step (in `PreUpdate` or `FixedUpdate`, say) to an
/// entity spawned `Networked` in the same frame names it on clients. (The fixed tick captured
/// the reference before the new entity was networked, in `PostUpdate`: it went out as none,
/// and as the value never changed again, clients kept none for good.)
#[test]
fn a_reference_to_an_entity_spawned_in_the_same_frame_arrives() {
    let (mut server, mut clients) = server_and_client();
    let tug = server.world_mut().spawn((Tow::default(), Networked)).id();
    common::run(&mut server, &mut clients, 10);
    // What a system before the fixed step would do (here, between two frames).
    let world = server.world_mut();
    let barge = world.spawn((Ship { x: 7 }, Networked)).id();
    world.get_mut::<Tow>(tug).unwrap().towed = NetEntity::from(barge);
    common::run(&mut server, &mut clients, 10);
    let world = clients[0].world_mut();
    let towed = world.query::<&Tow>().single(world).unwrap().towed;
    let barge = world
        .query_filtered::<Entity, With<Ship>>()
        .single(world)
        .unwrap();
    assert_eq!(towed, NetEntity::from(barge));
}

/// A networked ship (x 1) with a hull (armor 5), and a turret (angle 10) under it.
fn armed_ship(world: &mut World) -> Entity {
    let ship = world
        .spawn((Ship { x: 1 }, Hull { armor: 5 }, Networked))
        .id();
    world.spawn((Turret { angle: 10 }, Networked, ChildOf(ship)));
    ship
}

/// A replicated component removed from a networked entity leaves the entity and its other
/// components on clients. (A client despawned the whole entity, with its children, which the
/// server went on replicating.)
#[test]
fn a_component_removed_from_an_entity_leaves_the_rest() {
    let (mut server, mut clients) = server_and_client();
    let ship = armed_ship(server.world_mut());
    common::run(&mut server, &mut clients, 10);
    assert_eq!(
        ships(&mut clients[0]),
        [(Ship { x: 1 }, Some(Hull { armor: 5 }), vec![10])]
    );
    server.world_mut().entity_mut(ship).remove::<Hull>();
    server.world_mut().get_mut::<Ship>(ship).unwrap().x = 2;
    common::run(&mut server, &mut clients, 10);
    assert_eq!(ships(&mut clients[0]), [(Ship { x: 2 }, None, vec![10])]);
}

/// The entity holding a `Hull` on `app`, with its `Ship` if any and its `NetOwner`; the turret
/// angles under it; whether the tug tows it.
fn hull_entity(app: &mut App) -> (Option<Ship>, Hull, Option<PeerId>, Vec<i32>, bool) {
    let world = app.world_mut();
    let (e, ship, hull, owner) = world
        .query::<(Entity, Option<&Ship>, &Hull, Option<&NetOwner>)>()
        .single(world)
        .unwrap();
    let (ship, hull, owner) = (ship.cloned(), hull.clone(), owner.map(|o| o.0));
    let mut turrets = world.query::<(&Turret, &ChildOf)>();
    let angles = turrets
        .iter(world)
        .filter(|(_, c)| c.parent() == e)
        .map(|(t, _)| t.angle)
        .collect();
    let towed = world.query::<&Tow>().single(world).unwrap().towed;
    (ship, hull, owner, angles, towed == NetEntity::from(e))
}

/// Removing any replicated component of a networked entity, the one it was networked with
/// first included, leaves the same entity on clients: its other components, what a client added
/// to it, its children under it, the references to it, each component's authority, and the
/// relevance set for it; a hand-over and a `set_relevant` made in the frame of the removal hold.
/// (Removing the entity's first networked component networked the entity again: clients
/// despawned their copy and made a new one, without what they had added to it.)
#[test]
fn an_entity_keeps_its_entity_on_clients_whichever_component_is_removed() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let ship = armed_ship(world);
    world.spawn((Tow { towed: ship.into() }, Networked));
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
    let world = clients[0].world_mut();
    let copy = world
        .query_filtered::<Entity, With<Hull>>()
        .single(world)
        .unwrap();
    world.entity_mut(copy).insert(Marked);

    server.world_mut().entity_mut(ship).remove::<Ship>();
    server.world_mut().get_mut::<Hull>(ship).unwrap().armor = 6;
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let hull = types.node_of::<Hull>(ship).unwrap();
        mp.set_authority(hull, peer, false).unwrap();
        mp.set_relevant(entity_node(ship).unwrap(), peer, true)
            .unwrap();
    });
    common::run(&mut server, &mut clients, 10);
    let shown = (
        None,
        Hull { armor: 6 },
        Some(PeerId::SERVER),
        vec![10],
        true,
    );
    assert_eq!(hull_entity(&mut clients[0]), shown);
    assert!(
        clients[0].world().get::<Marked>(copy).is_some(),
        "the same entity"
    );
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let hull = types.node_of::<Hull>(ship).unwrap();
        assert_eq!(mp.authority(hull), peer);
        let own = entity_node(ship).unwrap();
        assert_eq!(mp.relevance_set(own, peer), Some(true));
    });
    clients[0].world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let hull = types.node_of::<Hull>(copy).unwrap();
        assert_eq!(mp.authority(hull), peer, "the client's hull");
    });
}

/// The networked children of an entity that is no longer `Networked` stay on clients, as
/// roots; made `Networked` again, the entity comes back, and they go under it again.
#[test]
fn the_children_of_an_entity_no_longer_networked_stay_on_clients() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let ship = world.spawn((Ship { x: 1 }, Networked)).id();
    world.spawn((Turret { angle: 10 }, Networked, ChildOf(ship)));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(ships(&mut clients[0]), [(Ship { x: 1 }, None, vec![10])]);
    server.world_mut().entity_mut(ship).remove::<Networked>();
    common::run(&mut server, &mut clients, 10);
    let angles = |app: &mut App| {
        let world = app.world_mut();
        let mut turrets = world.query::<(&Turret, Option<&ChildOf>)>();
        let found: Vec<_> = turrets
            .iter(world)
            .map(|(t, c)| (t.angle, c.is_some()))
            .collect();
        found
    };
    assert!(ships(&mut clients[0]).is_empty());
    assert_eq!(angles(&mut clients[0]), [(10, false)]);
    server.world_mut().entity_mut(ship).insert(Networked);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(ships(&mut clients[0]), [(Ship { x: 1 }, None, vec![10])]);
    assert_eq!(angles(&mut clients[0]), [(10, true)]);
}

/// A `Networked` child spawned under an entity networked already arrives under the parent's
/// copy, goes with it in a recursive hand-over, and leaves with it. (It went as a root of its
/// own, without its `ChildOf`.)
#[test]
fn a_child_added_under_a_networked_entity_arrives_under_it() {
    let (mut server, mut clients) = server_and_client();
    let ship = server.world_mut().spawn((Ship { x: 1 }, Networked)).id();
    common::run(&mut server, &mut clients, 10);
    let turret = server
        .world_mut()
        .spawn((Turret { angle: 10 }, Networked, ChildOf(ship)))
        .id();
    common::run(&mut server, &mut clients, 10);
    assert_eq!(ships(&mut clients[0]), [(Ship { x: 1 }, None, vec![10])]);
    let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let (ship, turret) = (
            entity_node(ship).unwrap(),
            types.node_of::<Turret>(turret).unwrap(),
        );
        mp.set_authority(ship, peer, true).unwrap();
        assert_eq!(mp.authority(turret), peer);
    });
    server.world_mut().despawn(ship);
    common::run(&mut server, &mut clients, 10);
    let world = clients[0].world_mut();
    assert_eq!(world.query::<&Turret>().iter(world).count(), 0);
}

/// Every turret on `app`, by angle: its `NetOwner`, and whether it is a root (no `ChildOf`).
fn turret_owners(app: &mut App) -> Vec<(i32, Option<PeerId>, bool)> {
    let world = app.world_mut();
    let mut q = world.query::<(&Turret, Option<&NetOwner>, Has<ChildOf>)>();
    let mut out: Vec<_> = q
        .iter(world)
        .map(|(t, owner, child)| (t.angle, owner.map(|o| o.0), !child))
        .collect();
    out.sort_unstable_by_key(|(angle, ..)| *angle);
    out
}

/// A recursive `set_authority` hands over the networked descendants reached through networked
/// entities; a networked entity under a plain (not networked) one is a root of its own. A
/// turret (angle 20) under a plain mount under a ship arrives as a root on clients (without
/// `ChildOf`), stays the server's when the ship is handed over recursively (the turret right
/// under the ship goes with it), and is handed over with its own node.
#[test]
fn a_networked_entity_under_a_plain_one_is_a_root_of_its_own() {
    let (mut server, mut clients) = server_and_client();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    let world = server.world_mut();
    let ship = world.spawn((Ship { x: 1 }, Networked)).id();
    let mount = world.spawn(ChildOf(ship)).id();
    let below = (Turret { angle: 20 }, Networked, ChildOf(mount));
    let below = world.spawn(below).id();
    world.spawn((Turret { angle: 10 }, Networked, ChildOf(ship)));
    common::run(&mut server, &mut clients, 10);
    let server_side = Some(PeerId::SERVER);
    let want = [(10, server_side, false), (20, server_side, true)];
    assert_eq!(turret_owners(&mut clients[0]), want);

    server
        .world_mut()
        .net(|mp| mp.set_authority(entity_node(ship).unwrap(), peer, true))
        .unwrap();
    common::run(&mut server, &mut clients, 10);
    assert_eq!(server.world().get::<NetOwner>(ship), Some(&NetOwner(peer)));
    let want = [(10, Some(peer), false), (20, server_side, true)];
    assert_eq!(turret_owners(&mut clients[0]), want);
    let on_server: Vec<_> = turret_owners(&mut server).iter().map(|t| t.1).collect();
    assert_eq!(on_server, [Some(peer), server_side]);

    server
        .world_mut()
        .net(|mp| mp.set_authority(entity_node(below).unwrap(), peer, true))
        .unwrap();
    common::run(&mut server, &mut clients, 10);
    let want = [(10, Some(peer), false), (20, Some(peer), true)];
    assert_eq!(turret_owners(&mut clients[0]), want);
}

/// A networked entity given another parent, or none, is networked again where it now is:
/// clients hold it under the new parent's copy (or as a root), and it outlives the old parent.
/// (Clients kept it under the old parent, and despawned it with that one while the server went
/// on replicating it.)
#[test]
fn a_networked_entity_given_another_parent_follows_it() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let first = armed_ship(world);
    let turret = world.query::<(Entity, &Turret)>().single(world).unwrap().0;
    let second = world.spawn((Ship { x: 2 }, Networked)).id();
    common::run(&mut server, &mut clients, 10);
    let armed = |x, hull, turrets: &[i32]| (Ship { x }, hull, turrets.to_vec());
    let hull = Some(Hull { armor: 5 });
    assert_eq!(
        ships(&mut clients[0]),
        [armed(1, hull.clone(), &[10]), armed(2, None, &[])]
    );
    server
        .world_mut()
        .entity_mut(turret)
        .insert(ChildOf(second));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(
        ships(&mut clients[0]),
        [armed(1, hull.clone(), &[]), armed(2, None, &[10])]
    );
    server.world_mut().despawn(first);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(ships(&mut clients[0]), [armed(2, None, &[10])]);
    // Detached: a root, which outlives its old parent too.
    server.world_mut().entity_mut(turret).remove::<ChildOf>();
    server.world_mut().despawn(second);
    common::run(&mut server, &mut clients, 10);
    assert!(ships(&mut clients[0]).is_empty());
    let world = clients[0].world_mut();
    let turrets: Vec<_> = world
        .query::<(&Turret, Option<&ChildOf>)>()
        .iter(world)
        .map(|(t, c)| (t.angle, c.is_some()))
        .collect();
    assert_eq!(turrets, [(10, false)]);
}

/// A recursive hand-over in the frame a child stops being `Networked` does not reach the
/// grandchildren under it, on the server or on clients: they no longer go with the entity (they
/// are roots from the frame's end on). (They took the new authority with them; then, since each
/// networked entity is a group of its own, they took it on clients alone, which walked the
/// subtree as they had been told it.)
#[test]
fn a_recursive_hand_over_skips_what_a_child_no_longer_networked_held() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let ship = world.spawn((Ship { x: 1 }, Networked)).id();
    let hull = world
        .spawn((Hull { armor: 5 }, Networked, ChildOf(ship)))
        .id();
    let turret = world
        .spawn((Turret { angle: 10 }, Networked, ChildOf(hull)))
        .id();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
    server.world_mut().entity_mut(hull).remove::<Networked>();
    server.world_mut().net(|mp| {
        mp.set_authority(entity_node(ship).unwrap(), peer, true)
            .unwrap();
    });
    common::run(&mut server, &mut clients, 10);
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let (ship, turret) = (
            types.node_of::<Ship>(ship).unwrap(),
            types.node_of::<Turret>(turret).unwrap(),
        );
        assert_eq!(mp.authority(ship), peer);
        assert_eq!(mp.authority(turret), PeerId::SERVER);
    });
    let world = clients[0].world_mut();
    let (turret, owner) = world.query::<(&Turret, &NetOwner)>().single(world).unwrap();
    assert_eq!((turret.angle, owner.0), (10, PeerId::SERVER));
    world.net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let mut turrets = mp.store().world().try_query::<(Entity, &Turret)>().unwrap();
        let e = turrets.iter(mp.store().world()).next().unwrap().0;
        let node = types.node_of::<Turret>(e).unwrap();
        assert_eq!(mp.authority(node), PeerId::SERVER, "the client's turret");
    });
}

/// A server whose clients time out after `timeout_frames` silent frames, despawning what a
/// leaving client owned if `despawn_owned`, and two clients (not joined yet).
fn server_and_two_clients(despawn_owned: bool, timeout_frames: u32) -> (App, Vec<App>) {
    let net = LoopbackNetwork::new();
    let mut server = app();
    server.world_mut().net(|mp| {
        let config = mp.config_mut();
        config.peer_timeout = Duration::from_nanos(33_333_333) * timeout_frames;
        config.despawn_owned_on_disconnect = despawn_owned;
    });
    common::start_server(&mut server, &net, None, 1);
    let mut clients = vec![app(), app()];
    for (seed, client) in (2..).zip(clients.iter_mut()) {
        common::start_client(client, &net, None, seed);
    }
    (server, clients)
}

/// The server's frames after the first client falls silent until it times out, with its ship
/// (a hull, a turret under it, all its own) losing its `Ship` in frame `remove_at`;
/// then ten more frames. Returns that count, and the apps.
fn owner_times_out(despawn_owned: bool, remove_at: Option<usize>) -> (usize, App, Vec<App>) {
    let (mut server, mut clients) = server_and_two_clients(despawn_owned, 20);
    common::run(&mut server, &mut clients, 10);
    let owner = clients[0].world_mut().net(|mp| mp.local_peer_id());
    let world = server.world_mut();
    let ship = armed_ship(world);
    world.entity_mut(ship).insert(NetOwner(owner));
    common::run(&mut server, &mut clients, 10);
    let mut frames = 0;
    while server.world_mut().net(|mp| mp.peers().contains(&owner)) {
        if remove_at == Some(frames) {
            server.world_mut().entity_mut(ship).remove::<Ship>();
        }
        common::run(&mut server, &mut clients[1..], 1);
        frames += 1;
        assert!(frames < 100, "the silent client times out");
    }
    common::run(&mut server, &mut clients[1..], 10);
    (frames, server, clients)
}

/// Every hull on `app`, with whether its entity is `Networked` and its `NetOwner`.
fn hulls(app: &mut App) -> Vec<(Hull, bool, Option<PeerId>)> {
    let world = app.world_mut();
    let mut hulls = world.query::<(&Hull, Option<&Networked>, Option<&NetOwner>)>();
    hulls
        .iter(world)
        .map(|(h, n, o)| (h.clone(), n.is_some(), o.map(|o| o.0)))
        .collect()
}

/// A client that times out in the frame its entity loses the component it was networked with
/// first loses what it owned as in any other frame: despawned with the default settings,
/// handed to the server with `despawn_owned_on_disconnect` off. (When such a removal networked
/// the entity again, the server refused to, with the authority of a peer gone: it stayed, no
/// longer `Networked`.)
#[test]
fn a_client_timing_out_as_its_entity_loses_a_component_loses_it_as_ever() {
    // The frame it times out in, when nothing else happens.
    let (last, ..) = owner_times_out(true, None);
    let (_, mut server, mut clients) = owner_times_out(true, Some(last - 1));
    assert_eq!(hulls(&mut server), []);
    assert_eq!(hulls(&mut clients[1]), []);
    let turrets = |app: &mut App| app.world_mut().query::<&Turret>().iter(app.world()).count();
    assert_eq!((turrets(&mut server), turrets(&mut clients[1])), (0, 0));

    let (last, ..) = owner_times_out(false, None);
    let (_, mut server, mut clients) = owner_times_out(false, Some(last - 1));
    let kept = (Hull { armor: 5 }, true, Some(PeerId::SERVER));
    assert_eq!(hulls(&mut server), std::slice::from_ref(&kept));
    assert_eq!(hulls(&mut clients[1]), [kept]);
    assert_eq!((turrets(&mut server), turrets(&mut clients[1])), (1, 1));
}

/// A `Networked` child spawned under an entity in the frame that entity loses the component it
/// was networked with first arrives under it, with its own owner's authority (the server's),
/// as a child added at any other time. (When such a removal networked the entity again, the
/// child went as a root of its own: its parent's nodes were on their way out.)
#[test]
fn a_child_added_as_its_parent_loses_a_component_arrives_under_it() {
    let (mut server, mut clients) = server_and_client();
    let peer = {
        common::run(&mut server, &mut clients, 10);
        clients[0].world_mut().net(|mp| mp.local_peer_id())
    };
    let ship = armed_ship(server.world_mut());
    server.world_mut().entity_mut(ship).insert(NetOwner(peer));
    common::run(&mut server, &mut clients, 10);
    let world = server.world_mut();
    world.entity_mut(ship).remove::<Ship>();
    world.spawn((Turret { angle: 20 }, Networked, ChildOf(ship)));
    common::run(&mut server, &mut clients, 10);
    let want = [(10, true, peer), (20, true, PeerId::SERVER)];
    for app in [&mut server, &mut clients[0]] {
        let world = app.world_mut();
        let hull = world
            .query_filtered::<Entity, With<Hull>>()
            .single(world)
            .unwrap();
        let mut turrets = world.query::<(&Turret, Option<&ChildOf>, &NetOwner)>();
        let mut under: Vec<_> = turrets
            .iter(world)
            .map(|(t, c, o)| (t.angle, c.map(ChildOf::parent) == Some(hull), o.0))
            .collect();
        under.sort_unstable();
        assert_eq!(under, want);
    }
}

/// A recursive hand-over, in the frame after an entity was networked again under the entity
/// handed over (its spawn not sent yet), reaches it. (The hand-over passed it by: it looked
/// only at the nodes already sent.)
#[test]
fn a_recursive_hand_over_reaches_an_entity_just_networked_again_under_it() {
    let (mut server, mut clients) = server_and_client();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
    let world = server.world_mut();
    let (first, second) = (
        world.spawn((Ship { x: 1 }, Networked)).id(),
        world.spawn((Ship { x: 2 }, Networked)).id(),
    );
    let turret = world
        .spawn((Turret { angle: 10 }, Networked, ChildOf(first)))
        .id();
    common::run(&mut server, &mut clients, 10);
    // Networked again under the second ship at the frame's end; handed over with it next.
    server
        .world_mut()
        .entity_mut(turret)
        .insert(ChildOf(second));
    common::run(&mut server, &mut clients, 1);
    server.world_mut().net(|mp| {
        mp.set_authority(entity_node(second).unwrap(), peer, true)
            .unwrap();
    });
    common::run(&mut server, &mut clients, 10);
    for app in [&mut server, &mut clients[0]] {
        let world = app.world_mut();
        let mut turrets = world.query::<(&Turret, &ChildOf, &NetOwner)>();
        let (_, parent, owner) = turrets.single(world).unwrap();
        let parent_x = world.get::<Ship>(parent.parent()).unwrap().x;
        assert_eq!((parent_x, owner.0), (2, peer));
    }
}

/// A client's mark on an entity it holds: the entity kept, not made anew.
#[derive(Component)]
struct Marked;

/// The turrets on `app`: each one's angle, whether it carries [`Marked`], and the `x` of the
/// ship it is under (none: a root).
fn turrets(app: &mut App) -> Vec<(i32, bool, Option<i32>)> {
    let world = app.world_mut();
    let mut turrets = world.query::<(&Turret, Has<Marked>, Option<&ChildOf>)>();
    let mut out: Vec<_> = turrets
        .iter(world)
        .map(|(t, marked, c)| {
            let ship = c.and_then(|c| world.get::<Ship>(c.parent())).map(|s| s.x);
            (t.angle, marked, ship)
        })
        .collect();
    out.sort_unstable();
    out
}

/// Marks every turret `app` holds.
fn mark_turrets(app: &mut App) {
    let world = app.world_mut();
    let found: Vec<Entity> = world
        .query_filtered::<Entity, With<Turret>>()
        .iter(world)
        .collect();
    for e in found {
        world.entity_mut(e).insert(Marked);
    }
}

/// Two networked ships (x 1 and 2), and a turret (angle 10) added under the first once it is
/// networked: a group of its own, under it.
fn two_ships_and_a_turret(server: &mut App, clients: &mut [App]) -> (Entity, Entity, Entity) {
    let world = server.world_mut();
    let first = world.spawn((Ship { x: 1 }, Networked)).id();
    let second = world.spawn((Ship { x: 2 }, Networked)).id();
    common::run(server, clients, 10);
    let world = server.world_mut();
    let turret = world
        .spawn((Turret { angle: 10 }, Networked, ChildOf(first)))
        .id();
    common::run(server, clients, 10);
    (first, second, turret)
}

/// Moves `turret`, under the ship `first` (x 1) on clients, under the ship `second` (x 2) as
/// `first` is despawned, then to no parent: each time, the client's turret is the one it
/// marked before, where the server's is.
fn move_turret_away(server: &mut App, clients: &mut [App], (first, second, turret): Trio) {
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(1))]);
    mark_turrets(&mut clients[0]);
    let world = server.world_mut();
    world.entity_mut(turret).insert(ChildOf(second));
    world.despawn(first);
    common::run(server, clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, true, Some(2))]);
    server.world_mut().entity_mut(turret).remove::<ChildOf>();
    common::run(server, clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, true, None)]);
}

/// Two ships and a turret.
type Trio = (Entity, Entity, Entity);

/// A networked entity moved under another parent, or to none, is moved on clients: the same
/// entity, with what the client added to it, outliving its old parent despawned in the same
/// frame, and leaving with its new one. (Clients despawned it and made a new one.)
#[test]
fn a_group_moved_to_another_parent_keeps_its_entity_on_clients() {
    let (mut server, mut clients) = server_and_client();
    let (first, second, turret) = two_ships_and_a_turret(&mut server, &mut clients);
    move_turret_away(&mut server, &mut clients, (first, second, turret));
    server
        .world_mut()
        .entity_mut(turret)
        .insert(ChildOf(second));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, true, Some(2))]);
    server.world_mut().despawn(second);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), []);
    assert_eq!(turrets(&mut server), []);
}

/// A child spawned with its parent (both networked in the same frame) is a group of its own:
/// moved under another parent, or to none, it is moved on clients, the same entity with what
/// the client added to it. (It travelled in its parent's spawn, which the core cannot take it
/// out of: it was networked again, and clients despawned it and made a new one.)
#[test]
fn a_child_spawned_with_its_parent_moves_as_the_same_entity() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let first = armed_ship(world);
    let turret = world.query::<(Entity, &Turret)>().single(world).unwrap().0;
    let second = world.spawn((Ship { x: 2 }, Networked)).id();
    common::run(&mut server, &mut clients, 10);
    move_turret_away(&mut server, &mut clients, (first, second, turret));
}

/// A replicated component inserted into a networked entity arrives in the clients' copy of the
/// entity (the same entity), reaches a client joining later, changes, goes with a recursive
/// hand-over of the entity, cannot move on its own, and leaves when it is removed. (It was
/// never sent: only the components an entity held when it was networked were.)
#[test]
fn a_component_inserted_into_a_networked_entity_arrives_in_it() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, None, 1);
    let mut clients = vec![app()];
    common::start_client(&mut clients[0], &net, None, 2);
    let ship = server.world_mut().spawn((Ship { x: 1 }, Networked)).id();
    common::run(&mut server, &mut clients, 10);
    let world = clients[0].world_mut();
    let copy = world.query::<(Entity, &Ship)>().single(world).unwrap().0;
    world.entity_mut(copy).insert(Marked);

    server
        .world_mut()
        .entity_mut(ship)
        .insert(Hull { armor: 5 });
    common::run(&mut server, &mut clients, 10);
    let hull = Some(Hull { armor: 5 });
    assert_eq!(
        ships(&mut clients[0]),
        [(Ship { x: 1 }, hull.clone(), vec![])]
    );
    assert!(
        clients[0].world().get::<Marked>(copy).is_some(),
        "the same entity"
    );
    assert!(clients[0].world().get::<Hull>(copy).is_some());
    clients.push(app());
    common::start_client(&mut clients[1], &net, None, 3);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(ships(&mut clients[1]), [(Ship { x: 1 }, hull, vec![])]);

    server.world_mut().get_mut::<Hull>(ship).unwrap().armor = 6;
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    server.world_mut().net(|mp| {
        use mf_net::replication::MultiplayerError::NotGroupRoot;
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let (own, hull) = (
            entity_node(ship).unwrap(),
            types.node_of::<Hull>(ship).unwrap(),
        );
        assert_eq!(mp.set_parent(hull, None), Err(NotGroupRoot(hull)));
        mp.set_authority(own, peer, true).unwrap();
        assert_eq!(mp.authority(hull), peer);
    });
    common::run(&mut server, &mut clients, 10);
    for client in &mut clients {
        assert_eq!(
            ships(client),
            [(Ship { x: 1 }, Some(Hull { armor: 6 }), vec![])]
        );
    }

    server.world_mut().entity_mut(ship).remove::<Hull>();
    common::run(&mut server, &mut clients, 10);
    for client in &mut clients {
        assert_eq!(ships(client), [(Ship { x: 1 }, None, vec![])]);
    }
    assert!(
        clients[0].world().get::<Marked>(copy).is_some(),
        "the same entity"
    );
    server.world_mut().despawn(ship);
    common::run(&mut server, &mut clients, 10);
    for client in &mut clients {
        assert!(ships(client).is_empty());
    }
}

/// A recursive hand-over of an entity, then a move of its child elsewhere before the frame's
/// events are read (in the same frame on the server; in the same messages on a client that
/// stalled): the child's `NetOwner` shows the authority the hand-over gave it, on both ends.
/// (The events were read by walking down from the entity handed over, which no longer held
/// the child: its `NetOwner` kept the old owner.)
#[test]
fn a_child_moved_away_after_a_recursive_hand_over_shows_its_new_owner() {
    let (mut server, mut clients) = server_and_client();
    let (first, second, turret) = two_ships_and_a_turret(&mut server, &mut clients);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    server.world_mut().net(|mp| {
        mp.set_authority(entity_node(first).unwrap(), peer, true)
            .unwrap();
    });
    server
        .world_mut()
        .entity_mut(turret)
        .insert(ChildOf(second));
    // The client stalls while the server sends both.
    for _ in 0..10 {
        server.update();
    }
    common::run(&mut server, &mut clients, 10);
    for (app, name) in [(&mut server, "server"), (&mut clients[0], "client")] {
        assert_eq!(turret_owner(app), (peer, Some(2)), "{name}: the turret");
    }
}

/// The `NetOwner` of the one child entity on `app` (the turret), and the ship it is under.
fn turret_owner(app: &mut App) -> (PeerId, Option<i32>) {
    let world = app.world_mut();
    let mut children = world.query::<(&NetOwner, &ChildOf)>();
    let (owner, under) = children.single(world).unwrap();
    (owner.0, world.get::<Ship>(under.parent()).map(|s| s.x))
}

/// An entity networked with a hull, a ship (registered before the hull) inserted later, both on
/// clients.
fn hull_then_ship(server: &mut App, clients: &mut [App]) -> Entity {
    let hulled = server
        .world_mut()
        .spawn((Hull { armor: 5 }, Networked))
        .id();
    common::run(server, clients, 10);
    server.world_mut().entity_mut(hulled).insert(Ship { x: 1 });
    common::run(server, clients, 10);
    hulled
}

/// A recursive hand-over made right after a child was moved elsewhere, in the same frame,
/// does not reach it, on the server or on clients: the network takes the move before the
/// hand-over. (The move was taken at the frame's networking, after the hand-over had reached
/// the child under its old parent.)
#[test]
fn a_recursive_hand_over_right_after_a_move_leaves_what_moved() {
    let (mut server, mut clients) = server_and_client();
    let (first, second, turret) = two_ships_and_a_turret(&mut server, &mut clients);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    server
        .world_mut()
        .entity_mut(turret)
        .insert(ChildOf(second));
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let ship = entity_node(first).unwrap();
        let turret = types.node_of::<Turret>(turret).unwrap();
        mp.set_authority(ship, peer, true).unwrap();
        assert_eq!(mp.authority(turret), PeerId::SERVER);
    });
    common::run(&mut server, &mut clients, 10);
    for (app, name) in [(&mut server, "server"), (&mut clients[0], "client")] {
        let want = (PeerId::SERVER, Some(2));
        assert_eq!(turret_owner(app), want, "{name}: the turret");
    }
}

/// A `NetEntity` naming an entity one of whose components, inserted later, is removed names the
/// entity on a client that gets the entity only after. (The reference travelled as the entity's
/// lowest networked node, that component's, which that client never got; it travels as the
/// entity's own node now.)
#[test]
fn a_reference_to_an_entity_survives_the_removal_of_a_component_inserted_later() {
    let (mut server, mut clients) = server_and_client();
    let hulled = hull_then_ship(&mut server, &mut clients);
    // Hidden from the client, then named by a tug's reference, then its ship removed.
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    let relevant = |server: &mut App, relevant: bool| {
        server.world_mut().net(|mp| {
            let types = mp.store().world().resource::<ReplicatedComponents>();
            let hull = types.node_of::<Hull>(hulled).unwrap();
            mp.set_relevant(hull, peer, relevant).unwrap();
        });
    };
    relevant(&mut server, false);
    common::run(&mut server, &mut clients, 10);
    let towing = (
        Tow {
            towed: hulled.into(),
        },
        Networked,
    );
    server.world_mut().spawn(towing);
    common::run(&mut server, &mut clients, 10);
    server.world_mut().entity_mut(hulled).remove::<Ship>();
    common::run(&mut server, &mut clients, 10);
    relevant(&mut server, true);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(ships(&mut clients[0]), []);
    assert!(
        hull_entity(&mut clients[0]).4,
        "the tug tows the hull's entity"
    );
}

/// `set_relevant` through a component inserted into a networked entity sets the entity's
/// relevance, as through any of its components: the client loses the whole entity, then gets
/// it back whole. (It set the relevance of that component's own spawn: the client kept the
/// entity without it, and a reference to the entity, which travelled as that component's node,
/// arrived as none.)
#[test]
fn set_relevant_through_a_component_inserted_later_is_the_entitys() {
    let (mut server, mut clients) = server_and_client();
    let hulled = hull_then_ship(&mut server, &mut clients);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    let relevant = |server: &mut App, relevant: bool| {
        server.world_mut().net(|mp| {
            let types = mp.store().world().resource::<ReplicatedComponents>();
            let (ship, hull) = (
                types.node_of::<Ship>(hulled).unwrap(),
                types.node_of::<Hull>(hulled).unwrap(),
            );
            mp.set_relevant(ship, peer, relevant).unwrap();
            assert_eq!(mp.relevance_set(hull, peer), Some(relevant));
        });
    };
    relevant(&mut server, false);
    common::run(&mut server, &mut clients, 10);
    let world = clients[0].world_mut();
    assert_eq!(world.query::<&Hull>().iter(world).count(), 0);
    assert_eq!(world.query::<&Ship>().iter(world).count(), 0);
    relevant(&mut server, true);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(
        ships(&mut clients[0]),
        [(Ship { x: 1 }, Some(Hull { armor: 5 }), vec![])]
    );
}

/// Two entities swapping places in one frame (the child made a root, its parent put under it)
/// are moved on clients, the same entities. (The parent's move came first and was refused, its
/// new parent inside its subtree until the child's own move: it was networked again, and
/// clients made a new one.)
#[test]
fn two_entities_swapping_places_in_a_frame_keep_their_entities() {
    // The moves are made in the order of the entities: either one's first.
    for child_first in [false, true] {
        swap_places(child_first);
    }
}

/// A ship and a turret under it, the turret spawned first if `child_first`, swap places.
fn swap_places(child_first: bool) {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let (turret, ship) = match child_first {
        true => {
            let turret = world.spawn((Turret { angle: 10 }, Networked)).id();
            (turret, world.spawn((Ship { x: 1 }, Networked)).id())
        }
        false => {
            let ship = world.spawn((Ship { x: 1 }, Networked)).id();
            (world.spawn((Turret { angle: 10 }, Networked)).id(), ship)
        }
    };
    world.entity_mut(turret).insert(ChildOf(ship));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(1))]);
    let world = clients[0].world_mut();
    let all: Vec<Entity> = world
        .query_filtered::<Entity, With<Networked>>()
        .iter(world)
        .collect();
    for e in all {
        world.entity_mut(e).insert(Marked);
    }
    let world = server.world_mut();
    world.entity_mut(turret).remove::<ChildOf>();
    world.entity_mut(ship).insert(ChildOf(turret));
    common::run(&mut server, &mut clients, 10);
    let world = clients[0].world_mut();
    let (ship, marked, under) = world
        .query::<(&Ship, Has<Marked>, &ChildOf)>()
        .single(world)
        .unwrap();
    assert_eq!((ship.x, marked), (1, true), "child first: {child_first}");
    assert_eq!(
        world.get::<Turret>(under.parent()),
        Some(&Turret { angle: 10 })
    );
    assert_eq!(turrets(&mut clients[0]), [(10, true, None)]);
}

/// The children spawned with an entity that stops being `Networked` stay on clients as the
/// same entities, roots now. (They travelled in its spawn: clients despawned them with it, and
/// the server networked them again as new entities.)
#[test]
fn a_child_spawned_with_an_entity_no_longer_networked_stays_the_same_entity() {
    let (mut server, mut clients) = server_and_client();
    let ship = armed_ship(server.world_mut());
    common::run(&mut server, &mut clients, 10);
    mark_turrets(&mut clients[0]);
    server.world_mut().entity_mut(ship).remove::<Networked>();
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, true, None)]);
    assert!(ships(&mut clients[0]).is_empty());
}

/// A child spawned with its parent takes its own `NetOwner`'s authority, or else its parent's.
/// (It took its parent's either way, and its `NetOwner` was overwritten with it.)
#[test]
fn a_child_spawned_with_its_parent_takes_its_own_owner_or_its_parents() {
    let (mut server, mut clients) = server_and_client();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    let world = server.world_mut();
    let ship = world.spawn((Ship { x: 1 }, Networked, NetOwner(peer))).id();
    let inherits = world
        .spawn((Turret { angle: 10 }, Networked, ChildOf(ship)))
        .id();
    let own = (Turret { angle: 20 }, Networked, NetOwner(PeerId::SERVER));
    let owns = world.spawn((own, ChildOf(ship))).id();
    common::run(&mut server, &mut clients, 10);
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let turret = |e| types.node_of::<Turret>(e).unwrap();
        let (inherits, owns) = (turret(inherits), turret(owns));
        assert_eq!(mp.authority(inherits), peer);
        assert_eq!(mp.authority(owns), PeerId::SERVER);
    });
    let world = clients[0].world_mut();
    let mut owners: Vec<(i32, PeerId)> = world
        .query::<(&Turret, &NetOwner)>()
        .iter(world)
        .map(|(t, o)| (t.angle, o.0))
        .collect();
    owners.sort_unstable_by_key(|&(angle, _)| angle);
    assert_eq!(owners, [(10, peer), (20, PeerId::SERVER)]);
}

/// A networked entity moved under a parent spawned in the same frame, its old parent despawned
/// in that frame too, arrives under the new parent, the same entity.
#[test]
fn a_group_moved_under_a_parent_spawned_in_the_same_frame_arrives_under_it() {
    let (mut server, mut clients) = server_and_client();
    let (first, _, turret) = two_ships_and_a_turret(&mut server, &mut clients);
    mark_turrets(&mut clients[0]);
    let world = server.world_mut();
    let third = world.spawn((Ship { x: 3 }, Networked)).id();
    world.entity_mut(turret).insert(ChildOf(third));
    world.despawn(first);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, true, Some(3))]);
}

/// A networked entity moved under a parent a client does not have leaves that client, and
/// comes back under the parent with it.
#[test]
fn a_group_moved_under_a_parent_a_client_lacks_leaves_it_and_comes_back_with_it() {
    let (mut server, mut clients) = server_and_client();
    let peer = {
        common::run(&mut server, &mut clients, 10);
        clients[0].world_mut().net(|mp| mp.local_peer_id())
    };
    let (_, second, turret) = two_ships_and_a_turret(&mut server, &mut clients);
    let relevant = |server: &mut App, yes: bool| {
        server.world_mut().net(|mp| {
            let types = mp.store().world().resource::<ReplicatedComponents>();
            let ship = types.node_of::<Ship>(second).unwrap();
            mp.set_relevant(ship, peer, yes).unwrap();
        });
    };
    relevant(&mut server, false);
    common::run(&mut server, &mut clients, 10);
    let xs = |app: &mut App| ships(app).into_iter().map(|s| s.0.x).collect::<Vec<_>>();
    assert_eq!(xs(&mut clients[0]), [1]);
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(1))]);
    server
        .world_mut()
        .entity_mut(turret)
        .insert(ChildOf(second));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), []);
    relevant(&mut server, true);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(xs(&mut clients[0]), [1, 2]);
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(2))]);
}

/// A networked entity of its own under an entity that stops being networked (no longer
/// `Networked`) stays on clients as a root: the same entity. (Clients despawned it and made a
/// new one.) Under an entity left with no replicated component, it stays under that entity's
/// copy, which stays too. (The entity was no longer networked; the child stayed as a root.)
#[test]
fn a_group_under_an_entity_no_longer_networked_stays_on_clients_as_it_was() {
    for lose_all in [false, true] {
        let (mut server, mut clients) = server_and_client();
        let (first, ..) = two_ships_and_a_turret(&mut server, &mut clients);
        mark_turrets(&mut clients[0]);
        let mut ship = server.world_mut().entity_mut(first);
        match lose_all {
            false => ship.remove::<Networked>(),
            true => ship.remove::<Ship>(),
        };
        common::run(&mut server, &mut clients, 10);
        assert_eq!(turrets(&mut clients[0]), [(10, true, None)], "{lose_all}");
        let world = clients[0].world_mut();
        let mut under = world.query_filtered::<&ChildOf, With<Turret>>();
        let parent = under.iter(world).next().map(ChildOf::parent);
        let networked = parent.is_some_and(|p| world.get::<Networked>(p).is_some());
        assert_eq!(networked, lose_all, "under the emptied entity");
    }
}

/// An entity that loses the component it was networked with first keeps, on clients, the
/// networked entities under it, those spawned with it and those added later: the same
/// entities, under it. (It was networked again: clients despawned them with it and made new
/// ones; then, the children spawned with it still.)
#[test]
fn an_entity_losing_a_component_keeps_the_groups_under_it_on_clients() {
    let (mut server, mut clients) = server_and_client();
    let ship = armed_ship(server.world_mut());
    common::run(&mut server, &mut clients, 10);
    let world = server.world_mut();
    world.spawn((Turret { angle: 20 }, Networked, ChildOf(ship)));
    common::run(&mut server, &mut clients, 10);
    mark_turrets(&mut clients[0]);
    server.world_mut().entity_mut(ship).remove::<Ship>();
    common::run(&mut server, &mut clients, 10);
    let world = clients[0].world_mut();
    let mut turrets = world.query::<(&Turret, Has<Marked>, &ChildOf)>();
    let mut found: Vec<_> = turrets
        .iter(world)
        .map(|(t, marked, c)| (t.angle, marked, world.get::<Hull>(c.parent()).is_some()))
        .collect();
    found.sort_unstable();
    assert_eq!(found, [(10, true, true), (20, true, true)]);
}

/// `set_parent` refuses what it cannot move: a node inside a group (a component beside the
/// entity's first), a parent inside the group's own subtree, a node not networked, and any call
/// on a client; a child spawned with its parent is a group of its own, and moves.
#[test]
fn set_parent_refuses_what_it_cannot_move() {
    use mf_net::replication::MultiplayerError::{
        NotGroupRoot, NotNetworked, NotServer, ParentInside,
    };
    let (mut server, mut clients) = server_and_client();
    let (first, second, turret) = two_ships_and_a_turret(&mut server, &mut clients);
    let armed = armed_ship(server.world_mut());
    let plain = server.world_mut().spawn(Ship { x: 9 }).id();
    common::run(&mut server, &mut clients, 10);
    let spawned_with = {
        let world = server.world_mut();
        let mut children = world.query::<(Entity, &ChildOf)>();
        children
            .iter(world)
            .find(|(_, c)| c.parent() == armed)
            .unwrap()
            .0
    };
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let ship = |e| entity_node(e).unwrap();
        let hull = types.node_of::<Hull>(armed).unwrap();
        let (turret, spawned_with) = (ship(turret), ship(spawned_with));
        let (first, second, armed, plain) = (ship(first), ship(second), ship(armed), ship(plain));
        assert_eq!(mp.set_parent(hull, None), Err(NotGroupRoot(hull)));
        assert_eq!(mp.set_parent(spawned_with, Some(second)), Ok(()));
        assert_eq!(mp.set_parent(first, Some(turret)), Err(ParentInside(first)));
        assert_eq!(mp.set_parent(plain, None), Err(NotNetworked(plain)));
        assert_eq!(mp.set_parent(first, Some(plain)), Err(NotNetworked(plain)));
        assert_eq!(mp.set_parent(armed, Some(second)), Ok(()));
    });
    clients[0].world_mut().net(|mp| {
        let world = mp.store().world();
        let mut ships = world.try_query::<(Entity, &Ship)>().unwrap();
        let e = ships.iter(world).next().unwrap().0;
        let node = world
            .resource::<ReplicatedComponents>()
            .node_of::<Ship>(e)
            .unwrap();
        assert_eq!(mp.set_parent(node, None), Err(NotServer));
    });
}

/// A client joining after a networked entity was moved under one networked after it (a parent
/// with a higher net id) gets it under that parent.
#[test]
fn a_client_joining_later_gets_a_moved_entity_under_its_new_parent() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, None, 1);
    let mut clients = vec![app()];
    common::start_client(&mut clients[0], &net, None, 2);
    let turret = server
        .world_mut()
        .spawn((Turret { angle: 10 }, Networked))
        .id();
    common::run(&mut server, &mut clients, 10);
    let ship = server.world_mut().spawn((Ship { x: 5 }, Networked)).id();
    common::run(&mut server, &mut clients, 10);
    server.world_mut().entity_mut(turret).insert(ChildOf(ship));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(5))]);
    clients.push(app());
    common::start_client(&mut clients[1], &net, None, 3);
    common::run(&mut server, &mut clients, 20);
    assert_eq!(turrets(&mut clients[1]), [(10, false, Some(5))]);
}

/// The relevance set for a client (`set_relevant`) stays with an entity that loses the
/// component it was networked with first. (It was networked again, and its relevance started
/// afresh: the client got the entity it was set not to have.)
#[test]
fn an_entity_losing_a_component_keeps_the_relevance_set_for_each_client() {
    let (mut server, mut clients) = server_and_client();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
    let ship = armed_ship(server.world_mut());
    common::run(&mut server, &mut clients, 10);
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let ship = types.node_of::<Ship>(ship).unwrap();
        mp.set_relevant(ship, peer, false).unwrap();
    });
    common::run(&mut server, &mut clients, 10);
    let hulls = |app: &mut App| app.world_mut().query::<&Hull>().iter(app.world()).count();
    assert_eq!(hulls(&mut clients[0]), 0);
    server.world_mut().entity_mut(ship).remove::<Ship>();
    common::run(&mut server, &mut clients, 10);
    assert_eq!(hulls(&mut clients[0]), 0);
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let hull = types.node_of::<Hull>(ship).unwrap();
        assert_eq!(mp.relevance_set(hull, peer), Some(false));
        mp.clear_relevant(hull, peer).unwrap();
        assert_eq!(mp.relevance_set(hull, peer), None);
    });
    common::run(&mut server, &mut clients, 10);
    assert_eq!(hulls(&mut clients[0]), 1);
}

/// A networked entity moved under a parent spawned in the same frame goes with that parent
/// from then on: when the parent stops being relevant to a client and becomes relevant again,
/// the client gets both back. (The server kept it as sent to the client, which had despawned
/// it with the parent.)
#[test]
fn a_group_moved_under_a_parent_spawned_in_the_same_frame_goes_with_it() {
    let (mut server, mut clients) = server_and_client();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
    let (_, _, turret) = two_ships_and_a_turret(&mut server, &mut clients);
    let world = server.world_mut();
    let third = world.spawn((Ship { x: 3 }, Networked)).id();
    world.entity_mut(turret).insert(ChildOf(third));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(3))]);
    let relevant = |server: &mut App, yes: bool| {
        server.world_mut().net(|mp| {
            let types = mp.store().world().resource::<ReplicatedComponents>();
            let ship = types.node_of::<Ship>(third).unwrap();
            mp.set_relevant(ship, peer, yes).unwrap();
        });
    };
    relevant(&mut server, false);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), []);
    relevant(&mut server, true);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(3))]);
}

/// A ship moved under its own turret (a cycle in the server's hierarchy, which Bevy does not
/// refuse) cannot move there on clients: the core refuses a parent inside the entity's own
/// subtree, and clients keep both where they were, the same entities, their values still
/// replicated. Once the turret is moved out from under the ship, the ship's next move is
/// followed again.
#[test]
fn a_move_under_its_own_child_leaves_the_entity_where_it_was_on_clients() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let ship = world.spawn((Ship { x: 1 }, Networked)).id();
    let turret = world
        .spawn((Turret { angle: 10 }, Networked, ChildOf(ship)))
        .id();
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(10, false, Some(1))]);
    mark_turrets(&mut clients[0]);
    let world = server.world_mut();
    world.entity_mut(ship).insert(ChildOf(turret));
    world.get_mut::<Turret>(turret).unwrap().angle = 20;
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(20, true, Some(1))]);
    let world = clients[0].world_mut();
    let placed: Vec<_> = world
        .query::<(&Ship, Option<&ChildOf>)>()
        .iter(world)
        .map(|(s, c)| (s.x, c.is_some()))
        .collect();
    assert_eq!(placed, [(1, false)], "the ship stays a root");
    // The cycle broken, and the ship moved again (to no parent): followed.
    let world = server.world_mut();
    world.entity_mut(turret).remove::<ChildOf>();
    world.entity_mut(ship).remove::<ChildOf>();
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(20, true, None)]);
    assert_eq!(ships(&mut clients[0]), [(Ship { x: 1 }, None, Vec::new())]);
}

/// A reference to an entity that is not networked travels as none; once the entity is
/// networked, the state naming it is sent again (its component unchanged) and the client's
/// reference names the client's entity. Networked again after it stopped being `Networked`,
/// it is a new entity on the client, and the reference follows it there.
#[test]
fn a_reference_to_an_entity_networked_later_or_again_arrives() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let barge = world.spawn(Ship { x: 7 }).id();
    world.spawn((
        Tow {
            towed: barge.into(),
        },
        Networked,
    ));
    common::run(&mut server, &mut clients, 10);
    let towed = |app: &mut App| {
        let world = app.world_mut();
        let towed = world.query::<&Tow>().single(world).unwrap().towed;
        let mut ships = world.query_filtered::<Entity, With<Ship>>();
        (towed, ships.iter(world).collect::<Vec<_>>())
    };
    assert_eq!(towed(&mut clients[0]), (NetEntity(None), Vec::new()));
    for round in 0..2 {
        server.world_mut().entity_mut(barge).insert(Networked);
        common::run(&mut server, &mut clients, 10);
        let (reference, ships) = towed(&mut clients[0]);
        assert_eq!(ships.len(), 1, "round {round}");
        assert_eq!(reference, NetEntity::from(ships[0]), "round {round}");
        server.world_mut().entity_mut(barge).remove::<Networked>();
        common::run(&mut server, &mut clients, 10);
        assert_eq!(towed(&mut clients[0]).1, [], "round {round}");
    }
}

/// An entity networked again takes back, on clients, its children that stayed networked
/// while it was not (roots there meanwhile): the same entities, under its new copy. So does
/// an entity networked for the first time under which networked entities were moved.
#[test]
fn an_entity_networked_again_takes_its_networked_children_back() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let ship = world.spawn((Ship { x: 1 }, Networked)).id();
    world.spawn((Turret { angle: 10 }, Networked, ChildOf(ship)));
    let dock = world.spawn(Ship { x: 2 }).id();
    let crane = world.spawn((Turret { angle: 20 }, Networked)).id();
    common::run(&mut server, &mut clients, 10);
    server.world_mut().entity_mut(crane).insert(ChildOf(dock));
    server.world_mut().entity_mut(ship).remove::<Networked>();
    common::run(&mut server, &mut clients, 10);
    let roots = [(10, false, None), (20, false, None)];
    assert_eq!(turrets(&mut clients[0]), roots);
    mark_turrets(&mut clients[0]);
    server.world_mut().entity_mut(ship).insert(Networked);
    server.world_mut().entity_mut(dock).insert(Networked);
    common::run(&mut server, &mut clients, 10);
    let under = [(10, true, Some(1)), (20, true, Some(2))];
    assert_eq!(turrets(&mut clients[0]), under);
    // They go with it.
    server.world_mut().despawn(ship);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(turrets(&mut clients[0]), [(20, true, Some(2))]);
}

/// `Networked` removed and inserted again in one frame: nothing happens on the network. The
/// entity keeps its net id, its children stay under it on clients, and a reference to it still
/// names the client's copy.
#[test]
fn networked_removed_and_inserted_in_one_frame_changes_nothing() {
    let (mut server, mut clients) = server_and_client();
    let world = server.world_mut();
    let ship = world.spawn((Ship { x: 1 }, Networked)).id();
    world.spawn((Turret { angle: 10 }, Networked, ChildOf(ship)));
    world.spawn((Tow { towed: ship.into() }, Networked));
    common::run(&mut server, &mut clients, 10);
    mark_turrets(&mut clients[0]);
    let id = server.world().get::<NetworkId>(ship).copied();
    let world = server.world_mut();
    world.entity_mut(ship).remove::<Networked>();
    world.entity_mut(ship).insert(Networked);
    common::run(&mut server, &mut clients, 10);
    assert_eq!(server.world().get::<NetworkId>(ship).copied(), id);
    assert_eq!(turrets(&mut clients[0]), [(10, true, Some(1))]);
    let world = clients[0].world_mut();
    let towed = world.query::<&Tow>().single(world).unwrap().towed;
    let copy = world
        .query_filtered::<Entity, With<Ship>>()
        .single(world)
        .unwrap();
    assert_eq!(towed, NetEntity::from(copy));
}

/// Each authority of `app`'s ships and turrets: the entity's `NetOwner`, and its node's and
/// its components' authorities (sorted by kind).
fn authorities(app: &mut App) -> Vec<(&'static str, PeerId, Vec<PeerId>)> {
    let world = app.world_mut();
    let mut q = world.query::<(Entity, &NetOwner, Has<Ship>)>();
    let rows: Vec<(Entity, PeerId, bool)> = q.iter(world).map(|(e, o, s)| (e, o.0, s)).collect();
    world.net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let mut out: Vec<_> = rows
            .iter()
            .map(|&(e, owner, is_ship)| {
                let nodes = [
                    entity_node(e),
                    types.node_of::<Ship>(e),
                    types.node_of::<Hull>(e),
                    types.node_of::<Turret>(e),
                ];
                let world = mp.store().world();
                let held = [
                    true,
                    world.get::<Ship>(e).is_some(),
                    world.get::<Hull>(e).is_some(),
                    world.get::<Turret>(e).is_some(),
                ];
                let by: Vec<PeerId> = nodes
                    .into_iter()
                    .zip(held)
                    .filter(|(_, h)| *h)
                    .map(|(n, _)| mp.authority(n.unwrap()))
                    .collect();
                (if is_ship { "ship" } else { "turret" }, owner, by)
            })
            .collect();
        out.sort();
        out
    })
}

/// A `NetOwner` the server's game changes on a networked entity hands the entity over, on
/// every peer: its node and its components (its networked children keep theirs). One naming a
/// peer that is not joined is refused, and one a client writes is undone: both show the
/// authority again.
#[test]
fn a_net_owner_changed_on_the_server_hands_the_entity_over() {
    let (mut server, mut clients) = server_and_client();
    common::run(&mut server, &mut clients, 10);
    let peer = clients[0].world_mut().net(|mp| mp.local_peer_id());
    let ship = armed_ship(server.world_mut());
    common::run(&mut server, &mut clients, 10);
    server.world_mut().get_mut::<NetOwner>(ship).unwrap().0 = peer;
    common::run(&mut server, &mut clients, 10);
    let server_side = PeerId::SERVER;
    let mut want = vec![
        ("ship", peer, vec![peer; 3]),
        ("turret", server_side, vec![server_side; 2]),
    ];
    assert_eq!(authorities(&mut server), want);
    assert_eq!(authorities(&mut clients[0]), want);

    // Written back, while a hand-over of the turret (between two frames) has the next frame
    // show every entity's authority first.
    let world = server.world_mut();
    let turret = world
        .query_filtered::<Entity, With<Turret>>()
        .single(world)
        .unwrap();
    let node = entity_node(turret).unwrap();
    world.net(|mp| mp.set_authority(node, peer, true).unwrap());
    world.get_mut::<NetOwner>(ship).unwrap().0 = server_side;
    common::run(&mut server, &mut clients, 10);
    want = vec![
        ("ship", server_side, vec![server_side; 3]),
        ("turret", peer, vec![peer; 2]),
    ];
    assert_eq!(authorities(&mut server), want);
    assert_eq!(authorities(&mut clients[0]), want);

    // A client's write is undone.
    let world = clients[0].world_mut();
    let copy = world
        .query_filtered::<Entity, With<Ship>>()
        .single(world)
        .unwrap();
    world.get_mut::<NetOwner>(copy).unwrap().0 = peer;
    common::run(&mut server, &mut clients, 3);
    assert_eq!(authorities(&mut server), want);
    assert_eq!(authorities(&mut clients[0]), want);

    let stranger = PeerId(peer.0 + 100);
    server
        .world_mut()
        .entity_mut(ship)
        .insert(NetOwner(stranger));
    common::run(&mut server, &mut clients, 3);
    assert_eq!(authorities(&mut server), want);
    assert_eq!(authorities(&mut clients[0]), want);
}
