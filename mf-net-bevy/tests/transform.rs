#![allow(clippy::unwrap_used)]
//! Bevy's `Transform` travels through `NetTransform`: the server's moves and turns reach the
//! client's `Transform`, within the quantization's step, and no further once they stop.

use std::time::Duration;

use bevy_app::{App, Update};
use bevy_ecs::component::Component;
use bevy_ecs::query::With;
use bevy_ecs::system::Query;
use bevy_math::{Quat, Vec3};
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bevy_transform::components::Transform;
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_bevy::prelude::*;

mod common;

/// What a ship networked before its `NetTransform` holds.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Ship {
    #[replicated]
    hp: i32,
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default(), NetTransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            33_333_333,
        )))
        .replicate::<Ship>();
    app
}

/// The server's system: every networked body moves and turns a little each frame, until it
/// has moved 100 times.
fn fly(mut bodies: Query<'_, '_, &mut Transform, With<Networked>>) {
    for mut transform in &mut bodies {
        if transform.translation.x < 25.0 {
            transform.translation += Vec3::new(0.25, 0.125, -0.5);
            transform.rotate(Quat::from_rotation_y(0.05));
        }
    }
}

#[test]
fn the_servers_transforms_reach_the_clients_within_the_quantization() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    server.add_systems(Update, fly);
    common::start_server(&mut server, &net, None, 0);
    let mut client = app();
    common::start_client(&mut client, &net, None, 0);
    for _ in 0..5 {
        server.update();
        client.update();
    }
    for i in 0..3u8 {
        let start = Transform::from_xyz(f32::from(i) * 10.0, 2.0, 0.0);
        server
            .world_mut()
            .spawn((start, NetTransform::default(), Networked));
    }
    let poses = |app: &mut App| {
        let world = app.world_mut();
        let mut q = world.query::<(&NetworkId, &Transform)>();
        let mut v: Vec<_> = q.iter(world).map(|(id, t)| (id.0, *t)).collect();
        v.sort_by_key(|(id, _)| *id);
        v
    };
    // Mid-flight the client is behind (interpolated); once the bodies stop it shows where they
    // are, within one quantization step.
    for _ in 0..20 {
        server.update();
        client.update();
    }
    let (ahead, behind) = (poses(&mut server), poses(&mut client));
    assert_eq!(ahead.len(), 3);
    assert!(behind[0].1.translation.x < ahead[0].1.translation.x);
    for _ in 0..150 {
        server.update();
        client.update();
    }
    let (want, got) = (poses(&mut server), poses(&mut client));
    assert_eq!(want.len(), got.len());
    for ((id, a), (other, b)) in want.iter().zip(&got) {
        assert_eq!(id, other);
        assert!(a.translation.x >= 25.0, "{id}: still flying");
        let off = (a.translation - b.translation).abs().max_element();
        assert!(
            off <= 1.0 / 128.0,
            "{id}: {} vs {}",
            a.translation,
            b.translation
        );
        assert!(
            a.rotation.angle_between(b.rotation) < 0.01,
            "{id}: rotation"
        );
    }
}

/// The ships' translations on `app`.
fn ship_translations(app: &mut App) -> Vec<Vec3> {
    let world = app.world_mut();
    let mut q = world.query_filtered::<&Transform, With<NetworkId>>();
    q.iter(world).map(|t| t.translation).collect()
}

/// A still entity's place reaches the client when it gets its `NetTransform`: given with
/// `Networked` later, or inserted after it was networked (its `Transform` never changes).
#[test]
fn a_net_transform_given_to_a_still_entity_carries_its_place() {
    for later in [false, true] {
        let net = LoopbackNetwork::new();
        let mut server = app();
        common::start_server(&mut server, &net, None, 0);
        let mut clients = vec![app()];
        common::start_client(&mut clients[0], &net, None, 0);
        let place = Vec3::new(5.0, 6.0, 7.0);
        let ship = server
            .world_mut()
            .spawn(Transform::from_translation(place))
            .id();
        common::run(&mut server, &mut clients, 5);
        let mut entity = server.world_mut().entity_mut(ship);
        match later {
            false => entity.insert((NetTransform::default(), Networked)),
            true => entity.insert((Ship { hp: 3 }, Networked)),
        };
        common::run(&mut server, &mut clients, 5);
        if later {
            let world = server.world_mut();
            world.entity_mut(ship).insert(NetTransform::default());
        }
        common::run(&mut server, &mut clients, 30);
        let stand_in = server.world().get::<NetTransform>(ship).unwrap();
        assert_eq!(
            stand_in.translation.to_array(),
            place.to_array(),
            "later: {later}"
        );
        let shown = ship_translations(&mut clients[0]);
        assert_eq!(shown.len(), 1, "later: {later}");
        let off = (shown[0] - place).abs().max_element();
        assert!(off <= 1.0 / 128.0, "later: {later}: {}", shown[0]);
    }
}
