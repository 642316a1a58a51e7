#![allow(clippy::unwrap_used)]
//! Interest from components: `NetGrid` places groups by their root entity's place in the world
//! (its `Transform` composed with its ancestors'), and each client's focus is its `NetFocus`
//! entity, placed the same way; a client sees what is near its player, and what it sees follows
//! the player as it moves; a networked child is where its parent carries it.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bevy_transform::components::Transform;
use mf_net::prelude::*;
use mf_net::replication::interest::GridInterest;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_bevy::prelude::*;
use mf_net_bevy::ReplicatedComponents;

mod common;

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Crate {
    #[replicated]
    label: i32,
}

/// A second replicated component, inserted later.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Paint {
    #[replicated]
    color: u32,
}

/// A ship, by its label.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Ship {
    #[replicated]
    label: i32,
}

/// A ship's turret, a networked child of the ship.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Turret {
    #[replicated]
    angle: i32,
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default(), NetTransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            33_333_333,
        )))
        .replicate::<Crate>()
        .replicate::<Paint>()
        .replicate::<Ship>()
        .replicate::<Turret>();
    app
}

/// The crates `app` has, by label.
fn crates(app: &mut App) -> Vec<i32> {
    let world = app.world_mut();
    let mut labels: Vec<i32> = world
        .query::<&Crate>()
        .iter(world)
        .map(|c| c.label)
        .collect();
    labels.sort_unstable();
    labels
}

/// The ships `app` has, by label.
fn ships(app: &mut App) -> Vec<i32> {
    let world = app.world_mut();
    let mut labels: Vec<i32> = world
        .query::<&Ship>()
        .iter(world)
        .map(|s| s.label)
        .collect();
    labels.sort_unstable();
    labels
}

/// How many turrets `app` has.
fn turrets(app: &mut App) -> usize {
    let world = app.world_mut();
    world.query::<&Turret>().iter(world).count()
}

/// A ship labelled `label` at `x`, with a networked turret one unit ahead of it (its
/// `Transform` local to the ship), on the server: the ship and the turret.
fn ship_with_turret(world: &mut bevy_ecs::world::World, label: i32, x: f32) -> (Entity, Entity) {
    let at = Transform::from_xyz(x, 0.0, 0.0);
    let ship = world
        .spawn((Ship { label }, at, NetTransform::default(), Networked))
        .id();
    let ahead = Transform::from_xyz(1.0, 0.0, 0.0);
    let turret = (Turret { angle: 7 }, ahead, NetTransform::default());
    let turret = world.spawn((turret, Networked, ChildOf(ship))).id();
    (ship, turret)
}

/// How many networked entities `app` has.
fn networked(app: &mut App) -> usize {
    let world = app.world_mut();
    world.query::<&NetworkId>().iter(world).count()
}

/// Crate 1 near x = 0 and crate 2 near x = 100, on the server.
fn spawn_crates(world: &mut bevy_ecs::world::World) {
    for (label, x) in [(1, 2.0), (2, 102.0)] {
        let at = Transform::from_xyz(x, 0.0, 0.0);
        world.spawn((Crate { label }, at, NetTransform::default(), Networked));
    }
}

/// A networked entity of `peer` at `x` (a player, with `NetFocus`).
fn owned(peer: PeerId, x: f32) -> (Transform, NetTransform, Networked, NetOwner) {
    let at = Transform::from_xyz(x, 0.0, 0.0);
    (at, NetTransform::default(), Networked, NetOwner(peer))
}

/// A gridded server of `net` with one client joined: the apps and the client's peer.
fn one_client(net: &LoopbackNetwork) -> (App, Vec<App>, PeerId) {
    let mut server = gridded_server(net);
    let mut clients = vec![app()];
    common::start_client(&mut clients[0], net, None, 0);
    common::run(&mut server, &mut clients, 5);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    (server, clients, peer)
}

/// A gridded server of `net` with two clients joined, [`spawn_crates`], and each client's
/// player (its focus), at x = 0 and x = 100, all arrived: the apps and the players.
fn two_players(net: &LoopbackNetwork) -> (App, Vec<App>, Vec<Entity>) {
    let mut server = gridded_server(net);
    let mut clients = vec![app(), app()];
    for client in &mut clients {
        common::start_client(client, net, None, 0);
    }
    common::run(&mut server, &mut clients, 5);
    let peers: Vec<PeerId> = clients
        .iter()
        .map(|c| c.world().resource::<NetStatus>().local_peer)
        .collect();
    let world = server.world_mut();
    spawn_crates(world);
    let players: Vec<Entity> = peers
        .iter()
        .zip([0.0, 100.0])
        .map(|(&peer, x)| world.spawn((owned(peer, x), NetFocus)).id())
        .collect();
    common::run(&mut server, &mut clients, 20);
    (server, clients, players)
}

/// A server of `net` whose clients see the cells of 10 units next to their player's.
fn gridded_server(net: &LoopbackNetwork) -> App {
    let mut server = app();
    common::start_server(&mut server, net, None, 0);
    server.world_mut().net(|mp| {
        let grid = GridInterest {
            cell_size: 10.0,
            radius_cells: 1,
            hysteresis_cells: 0,
            grace: Duration::ZERO,
            position: |_, _| None,
            tiers: &[],
        };
        mp.set_interest_policy(NetGrid(grid), 1).unwrap();
    });
    server
}

#[test]
fn each_client_sees_what_is_near_its_player_and_it_follows_the_player() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, players) = two_players(&net);
    assert_eq!(crates(&mut clients[0]), [1]);
    assert_eq!(crates(&mut clients[1]), [2]);
    // Each sees its crate and its own player, not the other player.
    assert_eq!(networked(&mut clients[0]), 2);
    assert_eq!(networked(&mut clients[1]), 2);

    // Player 0 flies to the other crate: client 0 loses crate 1, gets crate 2 and player 1.
    let world = server.world_mut();
    world
        .get_mut::<Transform>(players[0])
        .unwrap()
        .translation
        .x = 98.0;
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [2]);
    assert_eq!(networked(&mut clients[0]), 3);
    assert_eq!(crates(&mut clients[1]), [2]);
    assert_eq!(networked(&mut clients[1]), 3);
}

/// A component inserted into a networked entity is relevant to a client exactly when its
/// entity is: a crate the client owns, far beyond its reach, keeps the paint inserted later,
/// though the server has authority over the paint. (The paint's own spawn was asked about on
/// its own: out of reach, and not the client's, it never went.)
#[test]
fn a_component_inserted_later_is_relevant_as_its_entity_is() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, peer) = one_client(&net);
    let world = server.world_mut();
    let player = (NetTransform::default(), Networked, NetOwner(peer), NetFocus);
    world.spawn((Transform::default(), player));
    let far = Transform::from_xyz(100.0, 0.0, 0.0);
    let owned = (NetTransform::default(), Networked, NetOwner(peer));
    let boat = world.spawn((Crate { label: 1 }, far, owned)).id();
    common::run(&mut server, &mut clients, 10);
    assert_eq!(crates(&mut clients[0]), [1], "its own crate, out of reach");
    server
        .world_mut()
        .entity_mut(boat)
        .insert(Paint { color: 7 });
    server.update();
    server.world_mut().net(|mp| {
        let types = mp.store().world().resource::<ReplicatedComponents>();
        let paint = types.node_of::<Paint>(boat).unwrap();
        mp.set_authority(paint, PeerId::SERVER, false).unwrap();
    });
    common::run(&mut server, &mut clients, 10);
    let world = clients[0].world_mut();
    let paints: Vec<u32> = world
        .query::<&Paint>()
        .iter(world)
        .map(|p| p.color)
        .collect();
    assert_eq!(paints, [7]);
}

/// A server stopped and started again keeps its grid, and the client of its next run given the
/// player a client of the first run had (under the same peer id: a new listener numbers its
/// clients from the start) sees what is near that player.
#[test]
fn a_server_started_again_keeps_its_grid_and_sets_each_focus_anew() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, peer) = one_client(&net);
    server
        .world_mut()
        .net(|mp| mp.config_mut().despawn_owned_on_disconnect = false);
    let world = server.world_mut();
    spawn_crates(world);
    let player = world.spawn((owned(peer, 0.0), NetFocus)).id();
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [1]);

    // Stopped, the player goes to the server; started again, to the new client.
    server.world_mut().net(|mp| mp.stop());
    common::run(&mut server, &mut clients, 3);
    common::start_server(&mut server, &net, None, 0);
    common::start_client(&mut clients[0], &net, None, 0);
    common::run(&mut server, &mut clients, 5);
    let again = clients[0].world().resource::<NetStatus>().local_peer;
    assert_eq!(again, peer, "the same peer id");
    let node = entity_node(player).unwrap();
    server
        .world_mut()
        .net(|mp| mp.set_authority(node, again, true).unwrap());
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [1]);
}

/// `NetFocus` moved to another entity of the client moves its focus there; removed, the
/// client has no focus (it sees only what it owns, as before it had one); back, it has it
/// again.
#[test]
fn a_focus_follows_net_focus_moved_and_removed() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, peer) = one_client(&net);
    let world = server.world_mut();
    spawn_crates(world);
    let player = world.spawn((owned(peer, 0.0), NetFocus)).id();
    let camera = world.spawn(owned(peer, 100.0)).id();
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [1]);

    let world = server.world_mut();
    world.entity_mut(player).remove::<NetFocus>();
    world.entity_mut(camera).insert(NetFocus);
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [2], "the camera's crate");

    server.world_mut().entity_mut(camera).remove::<NetFocus>();
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [] as [i32; 0], "no focus");
    assert_eq!(networked(&mut clients[0]), 2, "its player and camera");

    server.world_mut().entity_mut(player).insert(NetFocus);
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [1]);
}

/// A client whose focus entity is handed to another client has no focus left (it saw that
/// entity's surroundings still); the other keeps the focus it had.
#[test]
fn a_focus_entity_handed_over_leaves_its_former_client_without_focus() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, players) = two_players(&net);
    let peers: Vec<PeerId> = clients
        .iter()
        .map(|c| c.world().resource::<NetStatus>().local_peer)
        .collect();
    assert_eq!(crates(&mut clients[0]), [1]);
    assert_eq!(crates(&mut clients[1]), [2]);

    let node = entity_node(players[0]).unwrap();
    server
        .world_mut()
        .net(|mp| mp.set_authority(node, peers[1], true).unwrap());
    common::run(&mut server, &mut clients, 20);
    assert_eq!(crates(&mut clients[0]), [] as [i32; 0], "no focus left");
    assert_eq!(crates(&mut clients[1]), [2], "its own player's");
}

/// A networked child's `Transform` is local to its parent: a turret one unit off a ship next to
/// the player is next to the player too (not one unit from the world's origin), and the client
/// gets the ship and its turret.
#[test]
fn a_networked_child_is_placed_where_its_parent_carries_it() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, peer) = one_client(&net);
    let world = server.world_mut();
    world.spawn((owned(peer, 500.0), NetFocus));
    ship_with_turret(world, 1, 502.0);
    common::run(&mut server, &mut clients, 30);
    assert_eq!(ships(&mut clients[0]), [1]);
    assert_eq!(turrets(&mut clients[0]), 1, "the ship's turret");
}

/// A focus entity that is a child (a seat in a vehicle) is where its parent carries it: the
/// client sees what is near the vehicle, not what is near the world's origin.
#[test]
fn a_focus_on_a_child_sees_what_is_near_its_parent() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, peer) = one_client(&net);
    let world = server.world_mut();
    let vehicle = world.spawn(owned(peer, 500.0)).id();
    world.spawn((owned(peer, 0.0), NetFocus, ChildOf(vehicle)));
    for x in [2, 503] {
        let at = Transform::from_xyz(x as f32, 0.0, 0.0);
        world.spawn((Ship { label: x }, at, NetTransform::default(), Networked));
    }
    common::run(&mut server, &mut clients, 30);
    assert_eq!(ships(&mut clients[0]), [503], "the ship near the vehicle");
}

/// A parent that moves carries its networked child, whose own `Transform` never changes: a
/// ship coming next to the player brings its turret into the client's view, and leaving takes
/// it away.
#[test]
fn a_parent_that_moves_carries_its_child_in_and_out_of_view() {
    let net = LoopbackNetwork::new();
    let (mut server, mut clients, peer) = one_client(&net);
    let world = server.world_mut();
    world.spawn((owned(peer, 500.0), NetFocus));
    let (ship, _) = ship_with_turret(world, 1, 2.0);
    common::run(&mut server, &mut clients, 20);
    assert_eq!(
        ships(&mut clients[0]),
        [] as [i32; 0],
        "far from the player"
    );
    assert_eq!(turrets(&mut clients[0]), 0);

    let mut at = server.world_mut().get_mut::<Transform>(ship).unwrap();
    at.translation.x = 502.0;
    common::run(&mut server, &mut clients, 20);
    assert_eq!(ships(&mut clients[0]), [1], "next to the player");
    assert_eq!(turrets(&mut clients[0]), 1, "carried along");

    let mut at = server.world_mut().get_mut::<Transform>(ship).unwrap();
    at.translation.x = 2.0;
    common::run(&mut server, &mut clients, 20);
    assert_eq!(ships(&mut clients[0]), [] as [i32; 0], "gone again");
    assert_eq!(turrets(&mut clients[0]), 0, "with its ship");
}
