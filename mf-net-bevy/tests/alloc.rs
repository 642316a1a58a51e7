#![allow(clippy::unwrap_used)]
//! The adapter's frames, once warm, allocate nothing: the core's receive, tick and send with
//! the world lent, and the adapter's systems around them, for a server moving 100 entities and
//! a client interpolating them. The whole `App::update` of both apps is counted (Bevy's own
//! schedule, with these minimal plugins, allocates nothing either).

use std::time::Duration;

use bevy_app::{App, Update};
use bevy_ecs::component::Component;
use bevy_ecs::system::Query;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_bevy::prelude::*;
use mf_net_tests::alloc_counter::measure;

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Body {
    #[replicated(interpolate)]
    x: f32,
    #[replicated]
    hits: i32,
}

fn drift(mut bodies: Query<'_, '_, &mut Body>) {
    for mut body in &mut bodies {
        body.x += 0.25;
    }
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
            33_333_333,
        )))
        .replicate::<Body>();
    app
}

#[test]
fn the_adapter_and_the_core_allocate_nothing_in_steady_state() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    server.add_systems(Update, drift);
    let listen = net.listen("game", 4).unwrap();
    server.world_mut().net(|mp| {
        mp.start_server(Box::new(listen), MessageRegistry::new(1))
            .unwrap();
    });
    let mut client = app();
    client.world_mut().net(|mp| {
        let open = |data| -> Box<dyn Transport> { Box::new(net.connect("game", data)) };
        mp.start_client(open, MessageRegistry::new(1)).unwrap();
    });
    for _ in 0..10 {
        server.update();
        client.update();
    }
    for _ in 0..100 {
        server.world_mut().spawn((Body::default(), Networked));
    }
    for _ in 0..200 {
        server.update();
        client.update();
    }
    let mut counted = 0;
    for _ in 0..60 {
        let (_, info) = measure(|| {
            server.update();
            client.update();
        });
        counted += info.count_total;
    }
    assert_eq!(counted, 0, "allocations in 60 frames of both apps");
}
