#![allow(clippy::unwrap_used)]
//! The server's network ticks are Bevy's fixed steps: a change a fixed-step system makes lands
//! in exactly one tick, no snapshot goes out twice for one step, and none is skipped when two
//! steps run in one frame.

use std::time::Duration;

use bevy_app::{App, FixedUpdate};
use bevy_ecs::component::Component;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Query, ResMut};
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_bevy::prelude::*;

mod common;

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Counter {
    #[replicated]
    n: i32,
}

/// Fixed steps run on the server.
#[derive(Resource, Default)]
struct Steps(u64);

fn count(mut steps: ResMut<'_, Steps>, mut counters: Query<'_, '_, &mut Counter>) {
    steps.0 += 1;
    for mut counter in &mut counters {
        counter.n += 1;
    }
}

const TICK: Duration = Duration::from_nanos(33_333_333);

fn app(frame: Duration) -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(frame))
        .replicate::<Counter>();
    app
}

#[test]
fn every_fixed_step_is_one_tick_and_one_snapshot() {
    let net = LoopbackNetwork::new();
    let mut server = app(TICK * 2);
    server
        .init_resource::<Steps>()
        .add_systems(FixedUpdate, count);
    common::start_server(&mut server, &net, None, 0);
    let mut client = app(TICK / 2);
    common::start_client(&mut client, &net, None, 0);
    for _ in 0..10 {
        server.update();
        client.update();
    }
    server.world_mut().spawn((Counter::default(), Networked));
    for _ in 0..10 {
        server.update();
        client.update();
    }

    // From here on, every update of the server runs two fixed steps.
    let stats = |app: &mut App| app.world_mut().net(|mp| (mp.tick(), *mp.stats()));
    let steps = |app: &App| app.world().resource::<Steps>().0;
    let (tick, before) = stats(&mut server);
    let first = steps(&server);
    for _ in 0..30 {
        server.update();
        client.update();
    }
    let (tick_after, after) = stats(&mut server);
    let ran = steps(&server) - first;
    assert!(ran >= 58, "two fixed steps an update: {ran}");
    assert_eq!(
        u64::from(tick_after.wrapping_sub(tick)),
        ran,
        "a tick a step"
    );
    assert_eq!(
        after.snapshots_sent - before.snapshots_sent,
        ran,
        "a snapshot a step"
    );
    assert_eq!(
        after.entries_encoded - before.entries_encoded,
        ran,
        "each step's change in its own tick"
    );
    // The client shows the server's count once the steps stop.
    server.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::ZERO));
    for _ in 0..10 {
        server.update();
        client.update();
    }
    let world = client.world_mut();
    let shown = world.query::<&Counter>().single(world).unwrap().n;
    let server_world = server.world_mut();
    let counted = server_world
        .query::<&Counter>()
        .single(server_world)
        .unwrap()
        .n;
    assert_eq!(shown, counted);
}
