#![allow(clippy::unwrap_used)]
//! Game messages as Bevy messages: systems write `NetSend` and read `NetReceived`, each type on
//! its channel, over a server and two clients.

use std::time::Duration;

use bevy_app::{App, Update};
use bevy_ecs::message::MessageReader;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::ResMut;
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::Channel;
use mf_net_bevy::prelude::*;

mod common;

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Chat {
    text: String,
}

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Ping {
    n: u32,
}

/// What an app heard, in order: each message with its sender.
#[derive(Resource, Default)]
struct Heard(Vec<(PeerId, String)>);

fn hear_chat(mut chats: MessageReader<'_, '_, NetReceived<Chat>>, mut heard: ResMut<'_, Heard>) {
    for chat in chats.read() {
        heard.0.push((chat.from, chat.message.text.clone()));
    }
}

fn hear_ping(mut pings: MessageReader<'_, '_, NetReceived<Ping>>, mut heard: ResMut<'_, Heard>) {
    for ping in pings.read() {
        heard
            .0
            .push((ping.from, format!("ping {}", ping.message.n)));
    }
}

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default()))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
            16,
        )))
        .init_resource::<Heard>()
        .add_net_message::<Chat>(Channel::Reliable)
        .add_net_message::<Ping>(Channel::Unreliable)
        .add_systems(Update, (hear_chat, hear_ping));
    app
}

/// The app's message registry (its network message types).
fn registry(app: &App) -> mf_net::bus::MessageRegistry {
    let types = app.world().resource::<NetMessageTypes>();
    types.registry(1).unwrap()
}

/// A server of `net`, started.
fn server(net: &LoopbackNetwork) -> App {
    let mut server = app();
    let registry = registry(&server);
    let listen = net.listen("game", 8).unwrap();
    server
        .world_mut()
        .net(|mp| mp.start_server(Box::new(listen), registry))
        .unwrap();
    server
}

fn start_client(app: &mut App, net: &LoopbackNetwork) {
    let registry = registry(app);
    app.world_mut().net(|mp| {
        let open = |data| -> Box<dyn Transport> { Box::new(net.connect("game", data)) };
        mp.start_client(open, registry).unwrap();
    });
}

/// A server and two clients, joined.
fn joined() -> (App, Vec<App>, [PeerId; 2]) {
    let net = LoopbackNetwork::new();
    let mut server = server(&net);
    let mut clients = vec![app(), app()];
    for client in &mut clients {
        start_client(client, &net);
    }
    common::run(&mut server, &mut clients, 10);
    let peer = |app: &App| app.world().resource::<NetStatus>().local_peer;
    let peers = [peer(&clients[0]), peer(&clients[1])];
    (server, clients, peers)
}

fn send<M: NetCodec + Send + Sync + 'static>(app: &mut App, to: SendTo, message: M) {
    app.world_mut().write_message(NetSend { to, message });
}

fn heard(app: &mut App) -> Vec<(PeerId, String)> {
    std::mem::take(&mut app.world_mut().resource_mut::<Heard>().0)
}

/// Clients send to the server, which hears each message with its sender; the server sends to
/// all, to one client and to all but one, and each client hears what was meant for it.
#[test]
fn messages_go_each_way_with_their_sender() {
    let (mut server, mut clients, [first, second]) = joined();
    send(&mut clients[0], SendTo::Server, Chat { text: "hi".into() });
    send(&mut clients[1], SendTo::All, Ping { n: 7 });
    common::run(&mut server, &mut clients, 5);
    let mut got = heard(&mut server);
    got.sort();
    assert_eq!(
        got,
        [(first, "hi".to_owned()), (second, "ping 7".to_owned())]
    );

    send(&mut server, SendTo::All, Chat { text: "all".into() });
    send(
        &mut server,
        SendTo::Peer(second),
        Chat { text: "you".into() },
    );
    let but = Chat {
        text: "not the first".into(),
    };
    send(&mut server, SendTo::AllBut(first), but);
    common::run(&mut server, &mut clients, 5);
    let from_server = |texts: &[&str]| -> Vec<(PeerId, String)> {
        texts
            .iter()
            .map(|t| (PeerId::SERVER, (*t).to_owned()))
            .collect()
    };
    assert_eq!(heard(&mut clients[0]), from_server(&["all"]));
    assert_eq!(
        heard(&mut clients[1]),
        from_server(&["all", "you", "not the first"])
    );
}

/// Offline, a message goes nowhere; a client started again hears the server on its new
/// connection (the adapter subscribes each type to every bus the core starts).
#[test]
fn a_client_started_again_hears_the_server() {
    let mut offline = app();
    send(
        &mut offline,
        SendTo::All,
        Chat {
            text: "nobody".into(),
        },
    );
    offline.update();
    assert_eq!(heard(&mut offline), []);

    let net = LoopbackNetwork::new();
    let mut server = server(&net);
    let mut clients = vec![app()];
    start_client(&mut clients[0], &net);
    common::run(&mut server, &mut clients, 10);
    // Stopped and started again between two frames.
    clients[0].world_mut().net(|mp| mp.stop());
    start_client(&mut clients[0], &net);
    common::run(&mut server, &mut clients, 10);
    send(
        &mut server,
        SendTo::All,
        Chat {
            text: "again".into(),
        },
    );
    common::run(&mut server, &mut clients, 5);
    assert_eq!(
        heard(&mut clients[0]),
        [(PeerId::SERVER, "again".to_owned())]
    );
}
