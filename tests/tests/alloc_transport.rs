//! Zero allocations in steady state: loopback send + flush + poll, and the same through the
//! bad-network simulator, counted by the thread-local counting allocator.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net::transport::{Channel, Transport, TransportEvent};
use mf_net_tests::alloc_counter;
use mf_net_tests::echo::round;

const CLIENTS: usize = 8;

fn connect_all(network: &LoopbackNetwork) -> (LoopbackTransport, Vec<LoopbackTransport>) {
    let server = network.listen("alloc", CLIENTS).unwrap();
    let clients = (0..CLIENTS)
        .map(|i| network.connect("alloc", i as u32))
        .collect();
    (server, clients)
}

#[test]
fn loopback_rounds_allocate_nothing() {
    let network = LoopbackNetwork::new();
    let (mut server, mut clients) = connect_all(&network);
    for _ in 0..100 {
        round(&mut server, &mut clients, Duration::ZERO);
    }
    let echoes = alloc_counter::assert_no_alloc("1000 loopback rounds", || {
        let mut echoes = 0;
        for _ in 0..1000 {
            echoes += round(&mut server, &mut clients, Duration::ZERO);
        }
        echoes
    });
    assert_eq!(echoes, 1000 * CLIENTS * 2);
    // The clients' first round was refused: their Connected events were polled after it.
    assert_eq!(server.stats().packets_received, 1099 * CLIENTS as u64 * 2);
}

#[test]
fn thousands_of_packets_in_flight_with_large_ones_allocate_nothing_once_warm() {
    // A server's tick under heavy relevance churn: per client, hundreds of small spawns and
    // despawns and one large snapshot, more than 4 096 packets in flight in all.
    let network = LoopbackNetwork::new();
    let (mut server, mut clients) = connect_all(&network);
    let (small, large) = ([5u8; 40], vec![6u8; 12_000]);
    let mut peers = Vec::new();
    while let Some(event) = server.poll_event() {
        if let TransportEvent::Connected { peer, .. } = event {
            peers.push(peer);
        }
    }
    assert_eq!(peers.len(), CLIENTS);
    let tick = |server: &mut LoopbackTransport, clients: &mut [LoopbackTransport]| {
        for &peer in &peers {
            for _ in 0..700 {
                server.send(peer, Channel::Reliable, &small).unwrap();
            }
            server.send(peer, Channel::Unreliable, &large).unwrap();
        }
        server.flush();
        let mut received = 0;
        for client in clients.iter_mut() {
            while let Some(event) = client.poll_event() {
                received += usize::from(matches!(event, TransportEvent::Received { .. }));
            }
        }
        received
    };
    for _ in 0..3 {
        tick(&mut server, &mut clients);
    }
    let received = alloc_counter::assert_no_alloc("10 ticks of 5 608 packets", || {
        (0..10)
            .map(|_| tick(&mut server, &mut clients))
            .sum::<usize>()
    });
    assert_eq!(received, 10 * CLIENTS * 701);
}

#[test]
fn simulated_rounds_allocate_nothing() {
    let network = LoopbackNetwork::new();
    let (server, clients) = connect_all(&network);
    let conditions = NetworkConditions {
        loss: 0.1,
        duplication: 0.1,
        latency: Duration::from_millis(50),
        jitter: Duration::from_millis(30),
        reorder: 0.1,
    };
    let mut server = SimulatedTransport::new(server, conditions, 1);
    let mut clients: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(i, c)| SimulatedTransport::new(c, conditions, 100 + i as u64))
        .collect();
    // Jitter and loss make the number of packets in flight wander, and every new peak would
    // take one more pooled buffer: reserve headroom for the peaks (a real game sizes this from
    // its send rate and latency), then warm up.
    network.reserve_buffers(512, 256);
    server.reserve(256, 256);
    for client in &mut clients {
        client.reserve(64, 256);
    }
    let frame = Duration::from_millis(16);
    for _ in 0..300 {
        round(&mut server, &mut clients, frame);
    }
    let echoes = alloc_counter::assert_no_alloc("1000 simulated rounds", || {
        let mut echoes = 0;
        for _ in 0..1000 {
            echoes += round(&mut server, &mut clients, frame);
        }
        echoes
    });
    // Reliable echoes all arrive (1000 per client, give or take those in flight); unreliable
    // ones are lost on the way there and back and sometimes doubled.
    assert!(echoes > 1000 * CLIENTS, "{echoes}");
    assert!(server.simulation_stats().dropped > 0);
    assert!(server.simulation_stats().duplicated > 0);
}
