//! The bad-network decorator over the loopback: loss and duplication on the unreliable channel
//! only, latency, jitter and reordering, reliable order, peer tracking and determinism.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net::transport::{Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent};

const MS: Duration = Duration::from_millis(1);
const FRAME: Duration = Duration::from_millis(16);

type SimClient = SimulatedTransport<LoopbackTransport>;

/// A loopback server and a client whose sends go through the simulator, both connected.
fn setup(conditions: NetworkConditions, seed: u64) -> (LoopbackTransport, SimClient) {
    let network = LoopbackNetwork::new();
    let (mut server, client) = network.pair(0);
    let mut client = SimulatedTransport::new(client, conditions, seed);
    assert_eq!(
        client.send(PeerId::SERVER, Channel::Reliable, b"early"),
        Err(SendError::UnknownPeer),
        "not connected before its Connected event has been polled"
    );
    assert!(matches!(
        server.poll_event(),
        Some(TransportEvent::Connected { .. })
    ));
    assert!(matches!(
        client.poll_event(),
        Some(TransportEvent::Connected {
            peer: PeerId::SERVER,
            ..
        })
    ));
    assert!(client.is_connected(PeerId::SERVER));
    (server, client)
}

/// A packet as the server saw it: when, on which channel, what.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Arrival {
    at: Duration,
    channel: Channel,
    data: Vec<u8>,
}

fn receive(server: &mut LoopbackTransport, now: Duration, log: &mut Vec<Arrival>) {
    while let Some(event) = server.poll_event() {
        match event {
            TransportEvent::Received { channel, data, .. } => log.push(Arrival {
                at: now,
                channel,
                data: data.to_vec(),
            }),
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Advances the client until nothing is in flight, collecting what arrives.
fn settle(
    server: &mut LoopbackTransport,
    client: &mut SimClient,
    dt: Duration,
    log: &mut Vec<Arrival>,
) {
    for _ in 0..10_000 {
        client.advance(dt);
        client.flush();
        receive(server, client.now(), log);
        if client.in_flight() == 0 {
            return;
        }
    }
    panic!("packets never settled");
}

fn seq_of(arrival: &Arrival) -> u16 {
    u16::from_le_bytes([arrival.data[1], arrival.data[2]])
}

fn packet(kind: u8, seq: u16) -> [u8; 3] {
    let [a, b] = seq.to_le_bytes();
    [kind, a, b]
}

#[test]
fn reliable_exactly_once_in_order_while_unreliable_is_lost_and_duplicated() {
    let conditions = NetworkConditions {
        loss: 0.3,
        duplication: 0.2,
        latency: 30 * MS,
        jitter: 40 * MS,
        reorder: 0.1,
    };
    let (mut server, mut client) = setup(conditions, 7);
    let mut log = Vec::new();
    const N: u16 = 1000;
    for seq in 0..N {
        client
            .send(PeerId::SERVER, Channel::Reliable, &packet(b'R', seq))
            .unwrap();
        client
            .send(PeerId::SERVER, Channel::Unreliable, &packet(b'U', seq))
            .unwrap();
        client.advance(FRAME);
        client.flush();
        receive(&mut server, client.now(), &mut log);
    }
    settle(&mut server, &mut client, FRAME, &mut log);

    // Reliable: every packet exactly once, in order.
    let reliable: Vec<u16> = log
        .iter()
        .filter(|a| a.channel == Channel::Reliable)
        .map(seq_of)
        .collect();
    assert_eq!(reliable, (0..N).collect::<Vec<_>>());

    // Unreliable: lost and duplicated as counted, and reordered.
    let stats = client.simulation_stats();
    let unreliable: Vec<u16> = log
        .iter()
        .filter(|a| a.channel == Channel::Unreliable)
        .map(seq_of)
        .collect();
    assert_eq!(stats.accepted, 2 * u64::from(N));
    assert!(
        (200..400).contains(&stats.dropped),
        "about 30 % lost: {stats:?}"
    );
    assert!(
        (90..190).contains(&stats.duplicated),
        "about 20 % of the rest doubled: {stats:?}"
    );
    assert_eq!(
        unreliable.len() as u64,
        u64::from(N) - stats.dropped + stats.duplicated
    );
    let mut counts = vec![0u32; N as usize];
    for &seq in &unreliable {
        counts[seq as usize] += 1;
    }
    let missing = counts.iter().filter(|&&c| c == 0).count() as u64;
    let doubled = counts.iter().filter(|&&c| c == 2).count() as u64;
    assert!(counts.iter().all(|&c| c <= 2));
    assert_eq!(missing, stats.dropped);
    assert_eq!(doubled, stats.duplicated);
    let out_of_order = unreliable.windows(2).filter(|w| w[1] < w[0]).count();
    assert!(
        out_of_order > 0,
        "jitter and reordering shuffle unreliable packets"
    );
    assert_eq!(stats.send_failures, 0);
    assert_eq!(stats.discarded, 0);
    assert_eq!(
        stats.delivered,
        u64::from(N) + u64::from(N) - stats.dropped + stats.duplicated
    );
    // What reached the wire is what the inner transport counted.
    assert_eq!(client.stats().packets_sent, stats.delivered);
}

#[test]
fn nothing_arrives_before_the_latency_has_passed() {
    let latency = 100 * MS;
    let (mut server, mut client) = setup(NetworkConditions::laggy(latency, Duration::ZERO), 1);
    let mut log = Vec::new();
    client
        .send(PeerId::SERVER, Channel::Reliable, b"reliable")
        .unwrap();
    client
        .send(PeerId::SERVER, Channel::Unreliable, b"unreliable")
        .unwrap();
    assert_eq!(client.in_flight(), 2);
    for _ in 0..99 {
        client.advance(MS);
        client.flush();
        receive(&mut server, client.now(), &mut log);
        assert!(log.is_empty(), "arrived early at {:?}", client.now());
    }
    client.advance(MS);
    // Due packets reach the inner transport in `advance`, and the wire at the next flush.
    receive(&mut server, client.now(), &mut log);
    assert!(log.is_empty());
    client.flush();
    receive(&mut server, client.now(), &mut log);
    assert_eq!(
        log,
        vec![
            Arrival {
                at: latency,
                channel: Channel::Reliable,
                data: b"reliable".to_vec()
            },
            Arrival {
                at: latency,
                channel: Channel::Unreliable,
                data: b"unreliable".to_vec()
            },
        ]
    );
}

#[test]
fn jitter_keeps_reliable_order_but_shuffles_unreliable() {
    let conditions = NetworkConditions::laggy(20 * MS, 200 * MS);
    let (mut server, mut client) = setup(conditions, 99);
    let mut log = Vec::new();
    const N: u16 = 300;
    for seq in 0..N {
        client
            .send(PeerId::SERVER, Channel::Reliable, &packet(b'R', seq))
            .unwrap();
        client
            .send(PeerId::SERVER, Channel::Unreliable, &packet(b'U', seq))
            .unwrap();
        client.advance(5 * MS);
        client.flush();
        receive(&mut server, client.now(), &mut log);
    }
    settle(&mut server, &mut client, 5 * MS, &mut log);

    let reliable: Vec<&Arrival> = log
        .iter()
        .filter(|a| a.channel == Channel::Reliable)
        .collect();
    assert_eq!(
        reliable.iter().map(|a| seq_of(a)).collect::<Vec<_>>(),
        (0..N).collect::<Vec<_>>()
    );
    // The delays really vary: sent every 5 ms, but arrivals are bunched and spread.
    let delays: Vec<Duration> = reliable
        .iter()
        .map(|a| a.at - 5 * MS * u32::from(seq_of(a)))
        .collect();
    let (min, max) = (delays.iter().min().unwrap(), delays.iter().max().unwrap());
    assert!(*min >= 20 * MS);
    assert!(
        *max - *min > 100 * MS,
        "jitter spreads delays: {min:?}..{max:?}"
    );

    let unreliable: Vec<u16> = log
        .iter()
        .filter(|a| a.channel == Channel::Unreliable)
        .map(seq_of)
        .collect();
    assert_eq!(unreliable.len(), N as usize, "no loss configured");
    assert!(unreliable.windows(2).any(|w| w[1] < w[0]));
    let mut sorted = unreliable.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..N).collect::<Vec<_>>());
}

fn recorded_run(seed: u64) -> Vec<Arrival> {
    let (mut server, mut client) = setup(NetworkConditions::poor(), seed);
    let mut log = Vec::new();
    for seq in 0..400u16 {
        let channel = if seq % 4 == 0 {
            Channel::Reliable
        } else {
            Channel::Unreliable
        };
        client
            .send(PeerId::SERVER, channel, &packet(b'P', seq))
            .unwrap();
        client.advance(FRAME);
        client.flush();
        receive(&mut server, client.now(), &mut log);
    }
    settle(&mut server, &mut client, FRAME, &mut log);
    log
}

#[test]
fn same_seed_same_deliveries_different_seed_different_deliveries() {
    let a = recorded_run(42);
    let b = recorded_run(42);
    let c = recorded_run(43);
    assert!(!a.is_empty());
    assert_eq!(
        a, b,
        "same seed, same inputs: same delivery, times included"
    );
    assert_ne!(a, c, "another seed gives another delivery");
}

#[test]
fn disconnect_delivers_waiting_reliable_packets_first() {
    let (mut server, mut client) = setup(
        NetworkConditions::laggy(Duration::from_secs(1), Duration::ZERO),
        3,
    );
    for i in 0..5u8 {
        client
            .send(PeerId::SERVER, Channel::Reliable, &[b'R', i])
            .unwrap();
        client
            .send(PeerId::SERVER, Channel::Unreliable, &[b'U', i])
            .unwrap();
    }
    assert_eq!(client.in_flight(), 10);
    client.disconnect(PeerId::SERVER, DisconnectReason::Closed);
    assert_eq!(client.in_flight(), 0);
    assert!(!client.is_connected(PeerId::SERVER));

    let mut events = Vec::new();
    while let Some(event) = server.poll_event() {
        events.push(match event {
            TransportEvent::Received { data, .. } => format!("{}{}", data[0] as char, data[1]),
            TransportEvent::Disconnected { reason, .. } => format!("gone: {reason}"),
            TransportEvent::Connected { .. } => "connected".to_owned(),
        });
    }
    assert_eq!(events, ["R0", "R1", "R2", "R3", "R4", "gone: closed"]);
    let stats = client.simulation_stats();
    assert_eq!(stats.delivered, 5);
    assert_eq!(stats.discarded, 5, "waiting unreliable packets are dropped");
    assert_eq!(
        client.send(PeerId::SERVER, Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
}

#[test]
fn a_server_side_simulator_tracks_many_peers() {
    let network = LoopbackNetwork::new();
    let server = network.listen("sim", 8).unwrap();
    let mut server =
        SimulatedTransport::new(server, NetworkConditions::laggy(50 * MS, Duration::ZERO), 5);
    let mut clients: Vec<LoopbackTransport> = (0..4).map(|i| network.connect("sim", i)).collect();
    let mut peers = Vec::new();
    while let Some(event) = server.poll_event() {
        if let TransportEvent::Connected { peer, .. } = event {
            peers.push(peer);
        }
    }
    assert_eq!(peers, [PeerId(2), PeerId(3), PeerId(4), PeerId(5)]);
    for client in &mut clients {
        while client.poll_event().is_some() {}
    }

    for &peer in &peers {
        server.send(peer, Channel::Reliable, b"welcome").unwrap();
    }
    // One client leaves before its packet is due: the packet is discarded.
    clients[1].disconnect(PeerId::SERVER, DisconnectReason::Closed);
    assert!(matches!(
        server.poll_event(),
        Some(TransportEvent::Disconnected {
            peer: PeerId(3),
            reason: DisconnectReason::Closed
        })
    ));
    assert_eq!(
        server.send(PeerId(3), Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    assert_eq!(server.simulation_stats().discarded, 1);

    server.advance(50 * MS);
    server.flush();
    for (i, client) in clients.iter_mut().enumerate() {
        let got = client.poll_event();
        if i == 1 {
            assert_eq!(got, None);
        } else {
            assert_eq!(
                got,
                Some(TransportEvent::Received {
                    peer: PeerId::SERVER,
                    channel: Channel::Reliable,
                    data: b"welcome"
                })
            );
        }
    }
}

#[test]
fn both_ends_simulated_make_a_symmetric_link() {
    let network = LoopbackNetwork::new();
    let (server, client) = network.pair(0);
    let conditions = NetworkConditions::laggy(40 * MS, Duration::ZERO);
    let mut server = SimulatedTransport::new(server, conditions, 1);
    let mut client = SimulatedTransport::new(client, conditions, 2);
    while server.poll_event().is_some() {}
    while client.poll_event().is_some() {}

    // A ping answered at once: the round trip is twice the one-way latency.
    client
        .send(PeerId::SERVER, Channel::Unreliable, b"ping")
        .unwrap();
    let mut round_trip = None;
    for frame in 1..=20u32 {
        for end in [&mut server as &mut dyn Transport, &mut client] {
            end.advance(10 * MS);
            end.flush();
        }
        while let Some(event) = server.poll_event() {
            if let TransportEvent::Received { peer, .. } = event {
                server.send(peer, Channel::Unreliable, b"pong").unwrap();
            }
        }
        server.flush();
        while let Some(event) = client.poll_event() {
            if let TransportEvent::Received { data: b"pong", .. } = event {
                round_trip.get_or_insert(10 * MS * frame);
            }
        }
    }
    assert_eq!(round_trip, Some(80 * MS));
}
