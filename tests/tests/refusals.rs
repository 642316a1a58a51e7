//! A client whose message registry differs from the server's is refused the same way on every
//! transport: `ProtocolMismatch`, a `refusal()` naming the first message type that differs,
//! and a `PeerRefused` event on the server.

#![allow(clippy::unwrap_used)]

use std::thread::sleep;
use std::time::Duration;

use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::replication::MultiplayerError;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net_enet::EnetTransport;

#[derive(NetCodec)]
struct Chat {
    text: String,
}

#[derive(NetCodec)]
struct Emote {
    id: u8,
}

/// Starts `client` (with the client's messages) over ENet to `address`.
fn start_enet_client(
    client: &mut Mp,
    address: impl std::net::ToSocketAddrs + std::fmt::Debug + Clone,
) -> Result<(), MultiplayerError> {
    client.start_client(
        |data| {
            EnetTransport::connect(address.clone(), data)
                .map(|t| -> Box<dyn Transport> { Box::new(t) })
        },
        client_messages(),
    )
}

fn scenes() -> SceneLibrary {
    SceneLibrary::new()
}

/// The server's messages.
fn server_messages() -> MessageRegistry {
    let mut messages = MessageRegistry::new(1);
    messages.register::<Chat>().unwrap();
    messages
}

/// A client built with another message where the server has `Chat`.
fn client_messages() -> MessageRegistry {
    let mut messages = MessageRegistry::new(1);
    messages.register::<Emote>().unwrap();
    messages
}

type Mp = Multiplayer<Box<dyn Transport>>;

/// Runs both until the client is disconnected; returns its reason and the server's events.
fn run(server: &mut Mp, client: &mut Mp, pause: Duration) -> (DisconnectReason, Vec<String>) {
    let dt = Duration::from_secs(1) / 60;
    let mut refused = Vec::new();
    for _ in 0..2000 {
        for mp in [&mut *server, &mut *client] {
            mp.begin_frame(dt);
        }
        while let Some(event) = server.next_event() {
            if let MultiplayerEvent::PeerRefused { refusal, .. } = event {
                refused.push(refusal);
            }
        }
        while let Some(event) = client.next_event() {
            if let MultiplayerEvent::Disconnected { reason } = event {
                return (reason, refused);
            }
        }
        for mp in [&mut *server, &mut *client] {
            mp.end_frame();
        }
        sleep(pause);
    }
    panic!("the client was never disconnected");
}

fn assert_refused(server: &mut Mp, client: &mut Mp, pause: Duration) {
    let (reason, refused) = run(server, client, pause);
    assert_eq!(reason, DisconnectReason::ProtocolMismatch);
    let text = client.refusal().expect("the client knows why");
    assert_eq!(
        text,
        "message id 0 is `Chat` on the server but `Emote` on this client"
    );
    assert_eq!(refused.len(), 1, "one event on the server: {refused:?}");
    assert!(
        refused[0].contains("message registries differ"),
        "{refused:?}"
    );
    assert!(server.peers().is_empty());
}

#[test]
fn a_message_mismatch_is_refused_alike_over_loopback() {
    let net = LoopbackNetwork::new();
    let mut server = Mp::new(scenes(), MultiplayerConfig::default());
    let listen: Box<dyn Transport> = Box::new(net.listen("game", 4).unwrap());
    server.start_server(listen, server_messages()).unwrap();
    let mut client = Mp::new(scenes(), MultiplayerConfig::default());
    client
        .start_client(
            |data| -> Box<dyn Transport> { Box::new(net.connect("game", data)) },
            client_messages(),
        )
        .unwrap();
    assert_refused(&mut server, &mut client, Duration::ZERO);
}

#[test]
fn a_message_mismatch_is_refused_alike_over_a_bad_network() {
    let net = LoopbackNetwork::new();
    let mut server = Mp::new(scenes(), MultiplayerConfig::default());
    let listen: Box<dyn Transport> = Box::new(net.listen("game", 4).unwrap());
    server.start_server(listen, server_messages()).unwrap();
    let conditions = NetworkConditions {
        loss: 0.3,
        latency: Duration::from_millis(40),
        jitter: Duration::from_millis(20),
        ..NetworkConditions::default()
    };
    let mut client = Mp::new(scenes(), MultiplayerConfig::default());
    client
        .start_client(
            |data| -> Box<dyn Transport> {
                Box::new(SimulatedTransport::new(
                    net.connect("game", data),
                    conditions,
                    3,
                ))
            },
            client_messages(),
        )
        .unwrap();
    assert_refused(&mut server, &mut client, Duration::ZERO);
}

#[test]
fn a_message_mismatch_is_refused_alike_over_enet() {
    let listen = EnetTransport::listen("127.0.0.1:0".parse().unwrap(), 4).unwrap();
    let port = listen.local_addr().unwrap().port();
    let mut server = Mp::new(scenes(), MultiplayerConfig::default());
    server
        .start_server(Box::new(listen), server_messages())
        .unwrap();
    let mut client = Mp::new(scenes(), MultiplayerConfig::default());
    start_enet_client(&mut client, ("127.0.0.1", port)).unwrap();
    assert_refused(&mut server, &mut client, Duration::from_millis(1));
}

#[test]
fn a_transport_that_cannot_be_opened_is_an_error() {
    let mut client = Mp::new(scenes(), MultiplayerConfig::default());
    let result = start_enet_client(&mut client, "no-such-host.invalid:7777");
    assert!(
        matches!(result, Err(MultiplayerError::Transport(_))),
        "{result:?}"
    );
    assert!(!client.is_running());
}

#[test]
fn a_client_where_nobody_listens_fails_to_connect_rather_than_timing_out() {
    // A port that was just free: bind it, note it, close it.
    let port = {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap().port()
    };
    let mut client = Mp::new(scenes(), MultiplayerConfig::default());
    start_enet_client(&mut client, ("127.0.0.1", port)).unwrap();
    // Passed-in time: the handshake timeout (5 s) runs out within a few frames.
    let mut reason = None;
    for _ in 0..8 {
        client.begin_frame(Duration::from_secs(1));
        client.end_frame();
        while let Some(event) = client.next_event() {
            if let MultiplayerEvent::Disconnected { reason: r } = event {
                reason = Some(r);
            }
        }
    }
    assert_eq!(reason, Some(DisconnectReason::ConnectFailed));
}
