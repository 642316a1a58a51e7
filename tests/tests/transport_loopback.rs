//! The in-process loopback transport: connections, refusals, disconnect reasons, ordering, peer
//! ids and stats.

#![allow(clippy::unwrap_used)]

use mf_net::transport::loopback::{ListenError, LoopbackNetwork, LoopbackTransport};
use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

/// An owned copy of a transport event, so tests can collect and compare them.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Connected(PeerId, u32),
    Disconnected(PeerId, DisconnectReason),
    Received(PeerId, Channel, Vec<u8>),
}

fn drain(transport: &mut impl Transport) -> Vec<Event> {
    let mut events = Vec::new();
    while let Some(event) = transport.poll_event() {
        events.push(match event {
            TransportEvent::Connected { peer, connect_data } => {
                Event::Connected(peer, connect_data)
            }
            TransportEvent::Disconnected { peer, reason } => Event::Disconnected(peer, reason),
            TransportEvent::Received {
                peer,
                channel,
                data,
            } => Event::Received(peer, channel, data.to_vec()),
        });
    }
    events
}

/// Connects a client to `name` and polls both ends' `Connected` events; returns the client and
/// the id the server gave it.
fn join(
    network: &LoopbackNetwork,
    server: &mut LoopbackTransport,
    name: &str,
    connect_data: u32,
) -> (LoopbackTransport, PeerId) {
    let mut client = network.connect(name, connect_data);
    assert_eq!(
        drain(&mut client),
        vec![Event::Connected(PeerId::SERVER, 0)]
    );
    let events = drain(server);
    let [Event::Connected(peer, data)] = events[..] else {
        panic!("expected one Connected on the server, got {events:?}");
    };
    assert_eq!(data, connect_data);
    (client, peer)
}

#[test]
fn server_with_eight_clients_answers_each() {
    let network = LoopbackNetwork::new();
    let mut server = network.listen("arena:7777", 8).expect("free name");
    assert!(server.is_server());

    let mut clients: Vec<LoopbackTransport> = (0..8)
        .map(|i| network.connect("arena:7777", 1000 + i))
        .collect();

    // The server sees eight connections with fresh ids and each client's connect data.
    let events = drain(&mut server);
    let expected: Vec<Event> = (0..8)
        .map(|i| Event::Connected(PeerId(2 + i as u64), 1000 + i))
        .collect();
    assert_eq!(events, expected);
    assert_eq!(server.peer_count(), 8);
    for client in &mut clients {
        assert!(!client.is_server());
        assert_eq!(drain(client), vec![Event::Connected(PeerId::SERVER, 0)]);
    }

    // Each client asks on both channels.
    for (i, client) in clients.iter_mut().enumerate() {
        let ask = format!("question {i}");
        client
            .send(PeerId::SERVER, Channel::Reliable, ask.as_bytes())
            .unwrap();
        client
            .send(PeerId::SERVER, Channel::Unreliable, &[i as u8])
            .unwrap();
        client.flush();
    }

    // The server answers each sender, on the channel it asked on.
    let mut asked = 0;
    while let Some(event) = server.poll_event() {
        let TransportEvent::Received {
            peer,
            channel,
            data,
        } = event
        else {
            panic!("unexpected {event:?}");
        };
        let mut answer = b"answer to ".to_vec();
        answer.extend_from_slice(data);
        server.send(peer, channel, &answer).unwrap();
        asked += 1;
    }
    assert_eq!(asked, 16);
    server.flush();

    for (i, client) in clients.iter_mut().enumerate() {
        assert_eq!(
            drain(client),
            vec![
                Event::Received(
                    PeerId::SERVER,
                    Channel::Reliable,
                    format!("answer to question {i}").into_bytes()
                ),
                Event::Received(PeerId::SERVER, Channel::Unreliable, {
                    let mut v = b"answer to ".to_vec();
                    v.push(i as u8);
                    v
                }),
            ]
        );
    }
}

#[test]
fn packets_arrive_at_flush_in_send_order_per_channel() {
    let network = LoopbackNetwork::new();
    let (mut server, mut client) = network.pair(5);
    assert_eq!(drain(&mut server), vec![Event::Connected(PeerId(2), 5)]);
    drain(&mut client);

    for i in 0..50u8 {
        let channel = if i % 3 == 0 {
            Channel::Unreliable
        } else {
            Channel::Reliable
        };
        client.send(PeerId::SERVER, channel, &[i]).unwrap();
    }
    assert_eq!(client.queued_packets(), 50);
    assert!(
        drain(&mut server).is_empty(),
        "nothing arrives before flush"
    );
    client.flush();
    assert_eq!(client.queued_packets(), 0);

    let events = drain(&mut server);
    assert_eq!(events.len(), 50);
    let expected: Vec<Event> = (0..50u8)
        .map(|i| {
            let channel = if i % 3 == 0 {
                Channel::Unreliable
            } else {
                Channel::Reliable
            };
            Event::Received(PeerId(2), channel, vec![i])
        })
        .collect();
    assert_eq!(events, expected);
}

#[test]
fn refused_connections() {
    let network = LoopbackNetwork::new();

    // Nobody listening.
    let mut lonely = network.connect("nowhere", 1);
    assert_eq!(
        lonely.send(PeerId::SERVER, Channel::Reliable, b"x"),
        Err(SendError::NotConnected),
        "the failure has not been polled yet"
    );
    assert_eq!(
        drain(&mut lonely),
        vec![Event::Disconnected(
            PeerId::SERVER,
            DisconnectReason::ConnectFailed
        )]
    );
    assert_eq!(
        lonely.send(PeerId::SERVER, Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );

    // A full server.
    let mut server = network.listen("small", 2).unwrap();
    let (_a, a_id) = join(&network, &mut server, "small", 0);
    let (_b, _) = join(&network, &mut server, "small", 0);
    let mut c = network.connect("small", 0);
    assert_eq!(
        drain(&mut c),
        vec![Event::Disconnected(
            PeerId::SERVER,
            DisconnectReason::ServerFull
        )]
    );
    assert!(
        drain(&mut server).is_empty(),
        "a refused client is not seen"
    );
    assert_eq!(server.peer_count(), 2);

    // A slot frees when a client leaves; the newcomer gets a new id.
    server.disconnect(a_id, DisconnectReason::Kicked);
    let (_d, d_id) = join(&network, &mut server, "small", 0);
    assert_eq!(d_id, PeerId(4), "the refused connection used no id");

    // The name is taken while the server lives, and free once it is dropped.
    assert_eq!(
        network.listen("small", 2).err(),
        Some(ListenError::NameTaken)
    );
    assert!(network.is_listening("small"));
    drop(server);
    assert!(!network.is_listening("small"));
    let _again = network.listen("small", 2).expect("the name is free again");
}

#[test]
fn disconnect_reasons_reach_the_other_side_after_queued_packets() {
    let network = LoopbackNetwork::new();
    let mut server = network.listen("s", 8).unwrap();
    let (mut kicked, kicked_id) = join(&network, &mut server, "s", 0);
    let (mut leaver, leaver_id) = join(&network, &mut server, "s", 0);
    let (mut bystander, bystander_id) = join(&network, &mut server, "s", 0);

    // Queued, unflushed reliable packets go before the disconnect.
    for i in 0..3u8 {
        server.send(kicked_id, Channel::Reliable, &[i]).unwrap();
    }
    server
        .send(bystander_id, Channel::Reliable, b"stay")
        .unwrap();
    server.disconnect(kicked_id, DisconnectReason::Kicked);
    assert_eq!(
        drain(&mut kicked),
        vec![
            Event::Received(PeerId::SERVER, Channel::Reliable, vec![0]),
            Event::Received(PeerId::SERVER, Channel::Reliable, vec![1]),
            Event::Received(PeerId::SERVER, Channel::Reliable, vec![2]),
            Event::Disconnected(PeerId::SERVER, DisconnectReason::Kicked),
        ]
    );
    assert!(
        drain(&mut bystander).is_empty(),
        "other peers' packets still wait for flush"
    );
    server.flush();
    assert_eq!(
        drain(&mut bystander),
        vec![Event::Received(
            PeerId::SERVER,
            Channel::Reliable,
            b"stay".to_vec()
        )]
    );
    assert!(
        drain(&mut server).is_empty(),
        "no event for one's own disconnect"
    );

    // A client leaving with an application reason.
    leaver
        .send(PeerId::SERVER, Channel::Reliable, b"bye")
        .unwrap();
    leaver.disconnect(PeerId::SERVER, DisconnectReason::Custom(7));
    assert_eq!(
        drain(&mut server),
        vec![
            Event::Received(leaver_id, Channel::Reliable, b"bye".to_vec()),
            Event::Disconnected(leaver_id, DisconnectReason::Custom(7)),
        ]
    );
    assert!(drain(&mut leaver).is_empty());

    // A dropped client looks like a normal close.
    drop(bystander);
    assert_eq!(
        drain(&mut server),
        vec![Event::Disconnected(bystander_id, DisconnectReason::Closed)]
    );
    assert_eq!(server.peer_count(), 0);

    // A dropped server shuts every client down.
    let (mut one, _) = join(&network, &mut server, "s", 0);
    let (mut two, _) = join(&network, &mut server, "s", 0);
    drop(server);
    for client in [&mut one, &mut two] {
        assert_eq!(
            drain(client),
            vec![Event::Disconnected(
                PeerId::SERVER,
                DisconnectReason::Shutdown
            )]
        );
        assert_eq!(
            client.send(PeerId::SERVER, Channel::Reliable, b"x"),
            Err(SendError::UnknownPeer)
        );
    }
}

#[test]
fn nothing_more_from_a_peer_after_disconnecting_it() {
    let network = LoopbackNetwork::new();
    let mut server = network.listen("s", 8).unwrap();
    let (mut client, id) = join(&network, &mut server, "s", 0);
    client
        .send(PeerId::SERVER, Channel::Reliable, b"late")
        .unwrap();
    client.flush();
    // The server kicks the client before polling its packet: the packet is not reported, and
    // neither is the client's later disconnect.
    server.disconnect(id, DisconnectReason::Kicked);
    assert!(drain(&mut server).is_empty());
    assert_eq!(
        drain(&mut client),
        vec![Event::Disconnected(
            PeerId::SERVER,
            DisconnectReason::Kicked
        )]
    );
}

#[test]
fn sends_to_unknown_and_stale_peers_fail_cleanly() {
    let network = LoopbackNetwork::new();
    let mut server = network.listen("s", 8).unwrap();
    assert_eq!(
        server.send(PeerId(2), Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    assert_eq!(
        server.send(PeerId::SERVER, Channel::Unreliable, b"x"),
        Err(SendError::UnknownPeer)
    );

    let (mut client, id) = join(&network, &mut server, "s", 0);
    assert!(server.is_connected(id));
    assert_eq!(
        server.send(PeerId(99), Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );

    // The client leaves: until the server polls that, the peer is closing; then it is stale.
    client.disconnect(PeerId::SERVER, DisconnectReason::Closed);
    assert_eq!(
        server.send(id, Channel::Reliable, b"x"),
        Err(SendError::NotConnected)
    );
    assert_eq!(
        drain(&mut server),
        vec![Event::Disconnected(id, DisconnectReason::Closed)]
    );
    assert_eq!(
        server.send(id, Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    assert!(!server.is_connected(id));
    assert_eq!(
        client.send(PeerId::SERVER, Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer),
        "the client disconnected itself"
    );
    // Disconnecting again, or an unknown peer, does nothing.
    server.disconnect(id, DisconnectReason::Kicked);
    server.disconnect(PeerId(1234), DisconnectReason::Kicked);
    client.disconnect(PeerId::SERVER, DisconnectReason::Closed);
    assert!(drain(&mut server).is_empty());
    assert!(drain(&mut client).is_empty());
}

#[test]
fn peer_ids_are_never_reused() {
    let network = LoopbackNetwork::new();
    let mut server = network.listen("s", 1).unwrap();
    let mut seen = Vec::new();
    for round in 0..10 {
        let (mut client, id) = join(&network, &mut server, "s", round);
        assert!(!seen.contains(&id), "{id} reused");
        seen.push(id);
        // Alternate who ends the connection.
        if round % 2 == 0 {
            server.disconnect(id, DisconnectReason::Kicked);
            assert_eq!(
                drain(&mut client),
                vec![Event::Disconnected(
                    PeerId::SERVER,
                    DisconnectReason::Kicked
                )]
            );
        } else {
            drop(client);
            assert_eq!(
                drain(&mut server),
                vec![Event::Disconnected(id, DisconnectReason::Closed)]
            );
        }
        // A message for the old id cannot reach the next client.
        assert!(server.send(id, Channel::Reliable, b"x").is_err());
    }
    let expected: Vec<PeerId> = (2..12).map(PeerId).collect();
    assert_eq!(seen, expected);
}

#[test]
fn stats_count_packets_and_bytes() {
    let network = LoopbackNetwork::new();
    let (mut server, mut client) = network.pair(0);
    drain(&mut server);
    drain(&mut client);
    assert_eq!(client.stats(), TransportStats::default());

    client
        .send(PeerId::SERVER, Channel::Reliable, &[0; 10])
        .unwrap();
    client
        .send(PeerId::SERVER, Channel::Unreliable, &[0; 5])
        .unwrap();
    client.flush();
    server.send(PeerId(2), Channel::Reliable, &[0; 7]).unwrap();
    server.flush();
    drain(&mut server);
    drain(&mut client);

    assert_eq!(
        client.stats(),
        TransportStats {
            bytes_sent: 15,
            bytes_received: 7,
            packets_sent: 2,
            packets_received: 1,
        }
    );
    assert_eq!(
        server.stats(),
        TransportStats {
            bytes_sent: 7,
            bytes_received: 15,
            packets_sent: 1,
            packets_received: 2,
        }
    );
    // Refused sends are not counted.
    let _ = server.send(PeerId(77), Channel::Reliable, &[0; 100]);
    assert_eq!(server.stats().bytes_sent, 7);
}

#[test]
fn empty_and_large_packets() {
    let network = LoopbackNetwork::new();
    let (mut server, mut client) = network.pair(0);
    drain(&mut server);
    drain(&mut client);
    let big = vec![0xAB; 100_000];
    client.send(PeerId::SERVER, Channel::Reliable, &[]).unwrap();
    client
        .send(PeerId::SERVER, Channel::Unreliable, &big)
        .unwrap();
    client.flush();
    assert_eq!(
        drain(&mut server),
        vec![
            Event::Received(PeerId(2), Channel::Reliable, vec![]),
            Event::Received(PeerId(2), Channel::Unreliable, big),
        ]
    );
    network.set_max_packet_size(1000);
    assert_eq!(
        client.send(PeerId::SERVER, Channel::Reliable, &[0; 1001]),
        Err(SendError::TooLarge)
    );
}

#[test]
fn separate_networks_do_not_see_each_other() {
    let a = LoopbackNetwork::new();
    let b = LoopbackNetwork::new();
    let _server = a.listen("game", 4).unwrap();
    let mut client = b.connect("game", 0);
    assert_eq!(
        drain(&mut client),
        vec![Event::Disconnected(
            PeerId::SERVER,
            DisconnectReason::ConnectFailed
        )]
    );
    // A clone of a network handle is the same network.
    let mut client = a.clone().connect("game", 0);
    assert_eq!(
        drain(&mut client),
        vec![Event::Connected(PeerId::SERVER, 0)]
    );
}
