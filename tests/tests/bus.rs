//! Message bus over loopback: typed dispatch, drops, fingerprints, broadcast, send failures.

#![allow(clippy::unwrap_used)]

use mf_net::bus::{
    BusEvent, BusSendError, DropReason, MessageBus, MessageRegistry, RegistryError,
    FIRST_RESERVED_ID,
};
use mf_net::prelude::*;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::{SendError, TransportEvent};

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Chat {
    text: String,
}

#[derive(NetCodec, Debug, Clone, Copy, PartialEq)]
struct Move {
    dx: i32,
    dy: i32,
}

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Unhandled {
    x: u8,
}

fn registry() -> MessageRegistry {
    let mut r = MessageRegistry::new(3);
    r.register::<Chat>().unwrap();
    r.register::<Move>().unwrap();
    r.register::<Unhandled>().unwrap();
    r
}

#[derive(Default)]
struct Log {
    chats: Vec<(PeerId, String)>,
    moves: Vec<Move>,
}

type Server = MessageBus<LoopbackTransport, Log>;
type Client = MessageBus<LoopbackTransport, Log>;

fn pump(server: &mut Server, server_log: &mut Log, clients: &mut [(Client, Log)]) {
    for _ in 0..3 {
        server.poll(server_log);
        server.flush();
        for (client, log) in clients.iter_mut() {
            client.poll(log);
            client.flush();
        }
    }
}

fn drain(bus: &mut mf_net::bus::BusCore<LoopbackTransport>) -> Vec<BusEvent> {
    std::iter::from_fn(|| bus.next_event()).collect()
}

fn setup(name: &str, clients: usize) -> (LoopbackNetwork, Server, Log, Vec<(Client, Log)>) {
    let net = LoopbackNetwork::new();
    let mut server = Server::server(net.listen(name, 16).unwrap(), registry());
    let mut log = Log::default();
    let mut cs: Vec<(Client, Log)> = (0..clients)
        .map(|_| {
            let t = net.connect(name, registry().fingerprint());
            let mut c = Client::client(t, registry());
            c.subscribe(|_, ctx, chat: &Chat, log: &mut Log| {
                log.chats.push((ctx.sender, chat.text.clone()));
            })
            .unwrap();
            (c, Log::default())
        })
        .collect();
    pump(&mut server, &mut log, &mut cs);
    (net, server, log, cs)
}

#[test]
fn typed_dispatch_reaches_handlers_with_state_and_handlers_can_answer() {
    let (_net, mut server, mut log, mut clients) = setup("dispatch", 2);
    server
        .subscribe(|bus, ctx, chat: &Chat, log: &mut Log| {
            log.chats.push((ctx.sender, chat.text.clone()));
            let echo = Chat {
                text: format!("echo: {}", chat.text),
            };
            bus.broadcast(&echo, Channel::Reliable, Some(ctx.sender))
                .unwrap();
        })
        .unwrap();
    server
        .subscribe(|_, _, m: &Move, log: &mut Log| log.moves.push(*m))
        .unwrap();
    // A second handler on the same type runs too.
    server
        .subscribe(|_, _, m: &Move, log: &mut Log| {
            log.moves.push(Move {
                dx: -m.dx,
                dy: -m.dy,
            })
        })
        .unwrap();

    assert_eq!(server.peers().len(), 2);
    let first = server.peers()[0];
    let (c0, _) = &mut clients[0];
    c0.set_tick(42);
    c0.send(
        PeerId::SERVER,
        &Chat { text: "hi".into() },
        Channel::Reliable,
    )
    .unwrap();
    c0.send(PeerId::SERVER, &Move { dx: 1, dy: 2 }, Channel::Unreliable)
        .unwrap();
    pump(&mut server, &mut log, &mut clients);

    assert_eq!(log.chats, vec![(first, "hi".to_string())]);
    assert_eq!(
        log.moves,
        vec![Move { dx: 1, dy: 2 }, Move { dx: -1, dy: -2 }]
    );
    assert!(
        clients[0].1.chats.is_empty(),
        "the sender is excepted from the echo"
    );
    assert_eq!(
        clients[1].1.chats,
        vec![(PeerId::SERVER, "echo: hi".to_string())]
    );
    assert_eq!(server.stats().messages_dispatched, 2);
    assert_eq!(server.stats().dropped(), 0);
}

#[test]
fn a_message_no_receiver_could_read_is_not_sent() {
    let (_net, mut server, mut log, mut clients) = setup("over-limit", 2);
    let long = Chat {
        text: "x".repeat(mf_net::wire::MAX_STRING_BYTES + 1),
    };
    let peer = clients[0].0.peers()[0];
    assert_eq!(
        clients[0].0.send(peer, &long, Channel::Reliable),
        Err(BusSendError::Transport(SendError::OverLimit))
    );
    assert_eq!(server.broadcast(&long, Channel::Reliable, None), Ok(0));
    assert_eq!(server.stats().send_failures, 2);
    // Nothing arrived, nothing was dropped as malformed, and the next message goes out.
    let short = Chat { text: "ok".into() };
    server.broadcast(&short, Channel::Reliable, None).unwrap();
    pump(&mut server, &mut log, &mut clients);
    for (client, client_log) in &clients {
        assert_eq!(client_log.chats.len(), 1);
        assert_eq!(client.stats().dropped_malformed, 0);
    }
}

#[test]
fn broadcast_with_except_counts_accepting_peers() {
    let (_net, mut server, mut log, mut clients) = setup("broadcast", 3);
    let skip = server.peers()[1];
    let n = server
        .broadcast(&Chat { text: "all".into() }, Channel::Reliable, Some(skip))
        .unwrap();
    assert_eq!(n, 2);
    pump(&mut server, &mut log, &mut clients);
    let got: Vec<usize> = clients.iter().map(|(_, l)| l.chats.len()).collect();
    assert_eq!(got.iter().sum::<usize>(), 2);
    let n = server
        .broadcast(&Chat { text: "all".into() }, Channel::Reliable, None)
        .unwrap();
    assert_eq!(n, 3);
}

#[test]
fn header_is_seven_bytes_little_endian_then_payload() {
    let net = LoopbackNetwork::new();
    let mut raw_server = net.listen("header", 4).unwrap();
    let mut client = Client::client(net.connect("header", registry().fingerprint()), registry());
    client.poll(&mut Log::default());
    client.set_tick(0x0403_0201);
    client
        .send(PeerId::SERVER, &Move { dx: 1, dy: -1 }, Channel::Reliable)
        .unwrap();
    client.flush();
    let mut packets = Vec::new();
    while let Some(ev) = raw_server.poll_event() {
        if let TransportEvent::Received { data, .. } = ev {
            packets.push(data.to_vec());
        }
    }
    let move_id = registry().id_of::<Move>().unwrap();
    assert_eq!(move_id, 1);
    assert_eq!(
        packets,
        vec![vec![
            3, 1, 0, 0x01, 0x02, 0x03, 0x04, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff
        ]]
    );
}

/// A hand-driven client that speaks raw bytes.
fn raw_client(net: &LoopbackNetwork, name: &str) -> LoopbackTransport {
    net.connect(name, registry().fingerprint())
}

#[test]
fn malformed_unknown_and_unhandled_packets_are_dropped_and_counted() {
    let net = LoopbackNetwork::new();
    let mut server = Server::server(net.listen("hostile", 4).unwrap(), registry());
    server
        .subscribe(|_, _, m: &Move, log: &mut Log| log.moves.push(*m))
        .unwrap();
    let mut log = Log::default();
    let mut raw = raw_client(&net, "hostile");
    server.poll(&mut log);
    while raw.poll_event().is_some() {}
    let _ = drain(&mut server);

    let chat_id = registry().id_of::<Chat>().unwrap() as u8;
    let move_id = registry().id_of::<Move>().unwrap() as u8;
    let unhandled_id = registry().id_of::<Unhandled>().unwrap() as u8;
    let cases: Vec<(Vec<u8>, DropReason)> = vec![
        (vec![3, 1], DropReason::Malformed(DecodeError::EndOfStream)),
        (
            vec![9, move_id, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0],
            DropReason::ProtocolMismatch,
        ),
        (vec![3, 0xff, 0x0e, 0, 0, 0, 0], DropReason::UnknownId),
        (
            vec![3, unhandled_id, 0, 0, 0, 0, 0, 7],
            DropReason::NoHandler,
        ),
        (
            vec![3, chat_id, 0, 0, 0, 0, 0, 5, b'a'],
            DropReason::NoHandler,
        ),
        (
            vec![3, move_id, 0, 0, 0, 0, 0, 1, 0],
            DropReason::Malformed(DecodeError::EndOfStream),
        ),
        (
            vec![3, move_id, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 99],
            DropReason::Malformed(DecodeError::TrailingBytes),
        ),
    ];
    for (bytes, _) in &cases {
        raw.send(PeerId::SERVER, Channel::Reliable, bytes).unwrap();
    }
    // And one valid message after all of that.
    raw.send(
        PeerId::SERVER,
        Channel::Reliable,
        &[3, move_id, 0, 0, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0],
    )
    .unwrap();
    raw.flush();
    server.poll(&mut log);

    let dropped: Vec<DropReason> = drain(&mut server)
        .into_iter()
        .filter_map(|e| match e {
            BusEvent::MessageDropped { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    let expected: Vec<DropReason> = cases.iter().map(|(_, r)| *r).collect();
    assert_eq!(dropped, expected);
    let s = server.stats();
    assert_eq!(s.dropped_malformed, 3);
    assert_eq!(s.dropped_protocol_mismatch, 1);
    assert_eq!(s.dropped_unknown_id, 1);
    assert_eq!(s.dropped_no_handler, 2);
    assert_eq!(log.moves, vec![Move { dx: 5, dy: 6 }]);
}

#[test]
fn random_garbage_never_panics_the_bus() {
    let net = LoopbackNetwork::new();
    let mut server = Server::server(net.listen("garbage", 4).unwrap(), registry());
    server
        .subscribe(|_, _, c: &Chat, log: &mut Log| log.chats.push((PeerId(0), c.text.clone())))
        .unwrap();
    server
        .subscribe(|_, _, m: &Move, log: &mut Log| log.moves.push(*m))
        .unwrap();
    let mut log = Log::default();
    let mut raw = raw_client(&net, "garbage");
    server.poll(&mut log);
    while raw.poll_event().is_some() {}
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut sent = 0;
    let mut reason = None;
    for _ in 0..2000 {
        let len = (next() % 24) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if len >= 3 && next() % 2 == 0 {
            bytes[0] = 3;
            bytes[1] = (next() % 3) as u8;
            bytes[2] = 0;
        }
        if raw
            .send(PeerId::SERVER, Channel::Unreliable, &bytes)
            .is_err()
        {
            break;
        }
        sent += 1;
        raw.flush();
        server.poll(&mut log);
        while let Some(event) = raw.poll_event() {
            if let TransportEvent::Disconnected { reason: r, .. } = event {
                reason = Some(r);
            }
        }
    }
    let s = server.stats();
    assert_eq!(s.messages_received, sent);
    assert_eq!(s.messages_dispatched + s.dropped(), sent);
    assert!(s.dropped_malformed > 0);
    // Mostly garbage: the client is disconnected past the limit, with its own reason.
    assert_eq!(reason, Some(DisconnectReason::MalformedTraffic));
    assert_eq!(s.malformed_kicks, 1);
    assert!(s.dropped() > u64::from(mf_net::bus::MALFORMED_PACKET_LIMIT));
    assert!(
        sent < 2 * u64::from(mf_net::bus::MALFORMED_PACKET_LIMIT) + 10,
        "{sent}"
    );
    assert!(server.peers().is_empty());
}

#[test]
fn fingerprint_mismatch_is_refused_on_both_ends() {
    let net = LoopbackNetwork::new();
    let mut server = Server::server(net.listen("mismatch", 4).unwrap(), registry());
    let mut other = MessageRegistry::new(3);
    other.register::<Move>().unwrap(); // different order and set of types
    other.register::<Chat>().unwrap();
    assert_ne!(other.fingerprint(), registry().fingerprint());
    let mut client = Client::client(net.connect("mismatch", other.fingerprint()), other);
    let mut logs = (Log::default(), Log::default());
    for _ in 0..3 {
        server.poll(&mut logs.0);
        server.flush();
        client.poll(&mut logs.1);
        client.flush();
    }
    assert!(server.peers().is_empty());
    assert_eq!(server.stats().peers_refused, 1);
    assert!(matches!(
        drain(&mut server).as_slice(),
        [BusEvent::PeerRefused {
            reason: DisconnectReason::ProtocolMismatch,
            ..
        }]
    ));
    let client_events = drain(&mut client);
    assert!(
        client_events.contains(&BusEvent::PeerDisconnected {
            peer: PeerId::SERVER,
            reason: DisconnectReason::ProtocolMismatch
        }),
        "{client_events:?}"
    );
    assert!(client.peers().is_empty());
    // The server sent its registry before disconnecting: the client names the difference.
    assert_eq!(
        client.refusal(),
        Some("message id 0 is `Chat` on the server but `Move` on this client")
    );
}

#[test]
fn protocol_version_is_part_of_the_fingerprint() {
    let mut a = MessageRegistry::new(1);
    let mut b = MessageRegistry::new(2);
    a.register::<Chat>().unwrap();
    b.register::<Chat>().unwrap();
    assert_ne!(a.fingerprint(), b.fingerprint());
}

#[test]
fn sending_to_an_unknown_peer_fails_cleanly_and_is_counted() {
    let (_net, mut server, _log, _clients) = setup("unknown-peer", 1);
    let err = server
        .send(PeerId(999), &Chat { text: "x".into() }, Channel::Reliable)
        .unwrap_err();
    assert_eq!(err, BusSendError::Transport(SendError::UnknownPeer));
    assert_eq!(server.stats().send_failures, 1);
    assert!(drain(&mut server).iter().any(|e| matches!(
        e,
        BusEvent::SendFailed {
            peer: PeerId(999),
            error: SendError::UnknownPeer,
            ..
        }
    )));

    #[derive(NetCodec)]
    struct NeverRegistered;
    let err = server
        .send(PeerId(2), &NeverRegistered, Channel::Reliable)
        .unwrap_err();
    assert!(matches!(err, BusSendError::NotRegistered(_)));
}

#[test]
fn disconnects_reach_the_bus_and_leave_the_peer_list() {
    let (_net, mut server, mut log, mut clients) = setup("leave", 2);
    let kicked = server.peers()[0];
    let _ = drain(&mut server);
    server.disconnect(kicked, DisconnectReason::Kicked);
    assert_eq!(
        drain(&mut server),
        vec![BusEvent::PeerDisconnected {
            peer: kicked,
            reason: DisconnectReason::Kicked
        }]
    );
    pump(&mut server, &mut log, &mut clients);
    let reasons: Vec<Vec<BusEvent>> = clients.iter_mut().map(|(c, _)| drain(c)).collect();
    assert!(reasons
        .iter()
        .any(|evs| evs.contains(&BusEvent::PeerDisconnected {
            peer: PeerId::SERVER,
            reason: DisconnectReason::Kicked
        })));
    assert_eq!(server.peers().len(), 1);
    // The other client leaves on its own: the server sees it.
    let (leaving, _) = clients.remove(1);
    drop(leaving);
    pump(&mut server, &mut log, &mut clients);
    assert!(server.peers().is_empty());
}

#[test]
fn registry_ids_are_checked() {
    let mut r = MessageRegistry::new(1);
    assert_eq!(r.register_with_id::<Move>(10), Ok(10));
    assert_eq!(r.register::<Chat>(), Ok(0));
    assert!(matches!(
        r.register::<Chat>(),
        Err(RegistryError::AlreadyRegistered { id: 0, .. })
    ));
    assert!(matches!(
        r.register_with_id::<Unhandled>(10),
        Err(RegistryError::IdTaken { id: 10, .. })
    ));
    assert_eq!(
        r.register_with_id::<Unhandled>(FIRST_RESERVED_ID),
        Err(RegistryError::IdOutOfRange(FIRST_RESERVED_ID))
    );
    assert_eq!(r.register::<Unhandled>(), Ok(1));
    let names: Vec<(u16, &str)> = r.iter().map(|i| (i.id, i.name)).collect();
    assert_eq!(names, vec![(0, "Chat"), (1, "Unhandled"), (10, "Move")]);
}
