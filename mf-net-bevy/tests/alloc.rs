#![allow(clippy::unwrap_used)]
//! The adapter's frames, once warm, allocate nothing: the core's receive, tick and send with
//! the world lent, and the adapter's systems around them (transforms, prediction, messages),
//! for a server moving 100 entities with transforms and echoing a client's ping each frame,
//! and a client interpolating them and predicting its walker. The whole `App::update` of both
//! apps is counted (Bevy's own
//! schedule, with these minimal plugins, allocates nothing either).

use std::time::Duration;

use bevy_app::{App, Update};
use bevy_ecs::component::Component;
use bevy_ecs::message::{MessageReader, MessageWriter};
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Query, Res, ResMut};
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bevy_transform::components::Transform;
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::Channel;
use mf_net_bevy::prelude::*;
use mf_net_tests::alloc_counter::measure;

mod common;

#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Walk {
    dir: i8,
}

/// A walker each client predicts, and the game's step that moves it.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Walker {
    #[replicated(predict)]
    z: f32,
}

fn walk(inputs: Res<'_, StepInputs<Walk>>, mut walkers: Query<'_, '_, &mut Walker>) {
    for (entity, input) in &inputs.entities {
        if let Ok(mut walker) = walkers.get_mut(*entity) {
            walker.z += f32::from(input.map_or(0, |i| i.dir));
        }
    }
}

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Body {
    #[replicated(interpolate)]
    x: f32,
    #[replicated]
    hits: i32,
}

fn drift(mut bodies: Query<'_, '_, (&mut Body, &mut Transform)>) {
    for (mut body, mut transform) in &mut bodies {
        body.x += 0.25;
        transform.translation.z += 0.5;
    }
}

/// A ping, echoed by the server.
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Ping {
    n: u32,
}

/// The pings a client sent, and the echoes it heard.
#[derive(Resource, Default)]
struct Pings {
    sent: u32,
    echoed: u32,
}

fn ping(mut out: MessageWriter<'_, NetSend<Ping>>, mut pings: ResMut<'_, Pings>) {
    pings.sent += 1;
    let message = Ping { n: pings.sent };
    out.write(NetSend {
        to: SendTo::Server,
        message,
    });
}

fn echo(
    mut heard: MessageReader<'_, '_, NetReceived<Ping>>,
    mut out: MessageWriter<'_, NetSend<Ping>>,
) {
    for ping in heard.read() {
        let to = SendTo::Peer(ping.from);
        out.write(NetSend {
            to,
            message: ping.message,
        });
    }
}

fn hear_echo(mut heard: MessageReader<'_, '_, NetReceived<Ping>>, mut pings: ResMut<'_, Pings>) {
    pings.echoed += u32::try_from(heard.read().count()).unwrap();
}

/// Starts `app` with a registry of its message types: as the server of `net`, or its client.
fn start(app: &mut App, net: &LoopbackNetwork, server: bool) {
    let registry = app
        .world()
        .resource::<NetMessageTypes>()
        .registry(1)
        .unwrap();
    app.world_mut().net(|mp| {
        if server {
            let listen = net.listen("game", 16).unwrap();
            mp.start_server(Box::new(listen), registry).unwrap();
        } else {
            let open = |data| -> Box<dyn Transport> { Box::new(net.connect("game", data)) };
            mp.start_client(open, registry).unwrap();
        }
    });
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        TimePlugin,
        MfNetPlugin::default(),
        NetTransformPlugin,
        NetPredictionPlugin::<Walk, Walker>::default(),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
        33_333_333,
    )))
    .replicate::<Body>()
    .replicate::<Walker>()
    .add_net_message::<Ping>(Channel::Reliable)
    .add_systems(NetStep, walk);
    app
}

#[test]
fn the_adapter_and_the_core_allocate_nothing_in_steady_state() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    server.add_systems(Update, (drift, echo));
    start(&mut server, &net, true);
    let mut client = app();
    client
        .init_resource::<Pings>()
        .add_systems(Update, (ping, hear_echo));
    start(&mut client, &net, false);
    for _ in 0..10 {
        server.update();
        client.update();
    }
    for i in 0..100 {
        let at = Transform::from_xyz(i as f32, 0.0, 0.0);
        server
            .world_mut()
            .spawn((Body::default(), at, NetTransform::default(), Networked));
    }
    let peer = client.world().resource::<NetStatus>().local_peer;
    server
        .world_mut()
        .spawn((Walker::default(), Networked, NetOwner(peer)));
    client.insert_resource(LocalInput(Walk { dir: 1 }));
    for _ in 0..200 {
        server.update();
        client.update();
    }
    let walked = |app: &mut App| {
        let world = app.world_mut();
        world.query::<&Walker>().single(world).unwrap().z
    };
    let before = walked(&mut client);
    let echoed = client.world().resource::<Pings>().echoed;
    let mut counted = 0;
    for _ in 0..60 {
        let (_, info) = measure(|| {
            server.update();
            client.update();
        });
        counted += info.count_total;
    }
    assert_eq!(counted, 0, "allocations in 60 frames of both apps");
    assert!(
        walked(&mut client) > before,
        "the client predicted its walker meanwhile"
    );
    let pings = client.world().resource::<Pings>();
    assert!(
        pings.echoed >= echoed + 50,
        "the server echoed the client's pings meanwhile ({} then {})",
        echoed,
        pings.echoed
    );
}
