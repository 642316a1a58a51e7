#![allow(clippy::unwrap_used)]
//! Bevy's `Transform` travels through `NetTransform`: the server's moves and turns reach the
//! client's `Transform`, within the quantization's step, and no further once they stop.

use std::time::Duration;

use bevy_app::{App, Update};
use bevy_ecs::query::With;
use bevy_ecs::system::Query;
use bevy_math::{Quat, Vec3};
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bevy_transform::components::Transform;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_bevy::prelude::*;

mod common;

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default(), NetTransformPlugin))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            33_333_333,
        )));
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
