//! Zero allocations in steady state through the secure layer: 8 admitted clients send on both
//! channels, the server echoes, for 1000 rounds over loopback and 1000 over the bad-network
//! simulator (whose duplicates the replay window drops), counted by the thread-local counting
//! allocator.

#![allow(clippy::unwrap_used)]

mod secure_common;

use std::time::Duration;

use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net::transport::Transport;
use mf_net_secure::{SecureClient, SecureServer, ServerConfig};
use mf_net_tests::alloc_counter;
use mf_net_tests::echo::round;
use secure_common::{token, KEY, NOW, PROTOCOL};

const CLIENTS: usize = 8;

/// A secure server and its clients over `network`, each end wrapped by `wrap` first.
fn secure<T: Transport>(
    network: &LoopbackNetwork,
    wrap: impl Fn(LoopbackTransport, u64) -> T,
) -> (SecureServer<T>, Vec<SecureClient<T>>) {
    let address = "loopback:alloc".parse().unwrap();
    let config = ServerConfig::new(PROTOCOL, KEY, vec!["loopback:alloc".parse().unwrap()]);
    let server = SecureServer::new(
        wrap(network.listen("alloc", CLIENTS).unwrap(), 1),
        config,
        NOW,
    )
    .unwrap();
    let clients = (0..CLIENTS)
        .map(|i| {
            let inner = wrap(network.connect("alloc", 0), 100 + i as u64);
            SecureClient::new(inner, token(i as u64, &address))
        })
        .collect();
    (server, clients)
}

#[test]
fn secure_loopback_rounds_allocate_nothing() {
    let network = LoopbackNetwork::new();
    let (mut server, mut clients) = secure(&network, |t, _| t);
    for _ in 0..100 {
        round(&mut server, &mut clients, Duration::ZERO);
    }
    assert!(clients.iter().all(SecureClient::is_admitted));
    let echoes = alloc_counter::assert_no_alloc("1000 secure loopback rounds", || {
        let mut echoes = 0;
        for _ in 0..1000 {
            echoes += round(&mut server, &mut clients, Duration::ZERO);
        }
        echoes
    });
    assert_eq!(echoes, 1000 * CLIENTS * 2);
    let stats = server.secure_stats();
    assert_eq!(
        (stats.admitted, stats.dropped_tampered),
        (CLIENTS as u64, 0)
    );
}

#[test]
fn secure_simulated_rounds_allocate_nothing() {
    let network = LoopbackNetwork::new();
    let conditions = NetworkConditions {
        loss: 0.1,
        duplication: 0.1,
        latency: Duration::from_millis(50),
        jitter: Duration::from_millis(30),
        reorder: 0.1,
    };
    let (mut server, mut clients) = secure(&network, |t, seed| {
        SimulatedTransport::new(t, conditions, seed)
    });
    // As in `alloc_transport`: headroom for the peaks of packets in flight, then a warm-up.
    network.reserve_buffers(1024, 512);
    server.inner_mut().reserve(512, 512);
    for client in &mut clients {
        client.inner_mut().reserve(128, 512);
    }
    // A client's loopback inbox grows the first time jitter bunches more packets into one
    // frame than ever before (a 40-byte queue slot each, not covered by `reserve_buffers`): the
    // warm-up is long enough for this seed's peaks.
    let frame = Duration::from_millis(16);
    for _ in 0..2000 {
        round(&mut server, &mut clients, frame);
    }
    assert!(clients.iter().all(SecureClient::is_admitted));
    let echoes = alloc_counter::assert_no_alloc("1000 secure simulated rounds", || {
        let mut echoes = 0;
        for _ in 0..1000 {
            echoes += round(&mut server, &mut clients, frame);
        }
        echoes
    });
    assert!(echoes > 1000 * CLIENTS, "{echoes}");
    assert!(
        server.secure_stats().dropped_replayed > 0,
        "duplicates were dropped"
    );
}
