#![allow(clippy::unwrap_used)]
//! An entity travels whole: its replicated components together, its `Networked` children with
//! it (`ChildOf` kept), in one spawn; changes to any of them converge, and a despawn removes
//! the entity tree. At 30 % loss, with two clients.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::query::With;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_bevy::prelude::*;

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

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            33_333_333,
        )))
        .replicate::<Ship>()
        .replicate::<Hull>()
        .replicate::<Turret>();
    app
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
