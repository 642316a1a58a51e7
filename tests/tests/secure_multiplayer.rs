//! `Multiplayer` over the secure layer: 64 clients on a simulated network losing 30 % of the
//! unreliable packets (with duplication, jitter and reordering underneath the layer) converge
//! exactly on the server's state, and the server's game code reads each admitted client's id and
//! user data through the transport.

#![allow(clippy::unwrap_used)]

mod replication_common;
mod secure_common;

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net_secure::{SecureClient, SecureServer, ServerConfig};
use mf_net_tests::harness::{differences, messages, networked};
use replication_common::{library, Body, BODY};
use secure_common::{issuer, KEY, NOW, PROTOCOL};

type Link = SimulatedTransport<LoopbackTransport>;
type Server = Multiplayer<SecureServer<Link>>;
type Client = Multiplayer<SecureClient<Link>>;

const CLIENTS: usize = 64;
const FRAME: Duration = Duration::from_millis(33);

fn conditions() -> NetworkConditions {
    NetworkConditions {
        loss: 0.3,
        duplication: 0.1,
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(30),
        reorder: 0.1,
    }
}

/// A secure server and `CLIENTS` clients, client `i` holding a token for client id `1000 + i`
/// with its name as user data.
fn world() -> (Server, Vec<Client>) {
    let net = LoopbackNetwork::new();
    let address = "loopback:secure-game".parse().unwrap();
    let config = ServerConfig::new(PROTOCOL, KEY, vec![address]).with_max_clients(CLIENTS);
    let inner =
        SimulatedTransport::new(net.listen("secure-game", CLIENTS).unwrap(), conditions(), 1);
    let mut server = Server::new(library(), MultiplayerConfig::default());
    server
        .start_server(SecureServer::new(inner, config, NOW).unwrap(), messages())
        .unwrap();
    let servers = ["loopback:secure-game".parse().unwrap()];
    let clients = (0..CLIENTS)
        .map(|i| {
            let name = format!("player-{i}");
            let token = issuer()
                .issue(1000 + i as u64, name.as_bytes(), &servers, NOW)
                .unwrap();
            let open = |data| {
                let inner = net.connect("secure-game", data);
                let inner = SimulatedTransport::new(inner, conditions(), 100 + i as u64);
                SecureClient::new(inner, token)
            };
            let mut client = Client::new(library(), MultiplayerConfig::default());
            client.start_client(open, messages()).unwrap();
            client
        })
        .collect();
    (server, clients)
}

fn frame(server: &mut Server, clients: &mut [Client]) {
    server.begin_frame(FRAME);
    server.end_frame();
    for client in clients {
        client.begin_frame(FRAME);
        client.end_frame();
    }
}

#[test]
fn sixty_four_clients_converge_over_the_secure_layer_at_30_percent_loss() {
    let (mut server, mut clients) = world();
    for _ in 0..60 {
        frame(&mut server, &mut clients);
    }
    assert_eq!(server.peers().len(), CLIENTS, "every client joined");
    let root = server.scene().root();
    for _ in 0..100 {
        server.spawn(BODY, root, PeerId::SERVER).unwrap();
    }
    for f in 0..90 {
        let handles: Vec<_> = server.scene().iter::<Body>().map(|(h, _)| h).collect();
        for (i, h) in handles.into_iter().enumerate() {
            let b = server.scene_mut().get_mut(h).unwrap();
            b.x = f * 3 + i as i32;
            b.y = -f;
        }
        frame(&mut server, &mut clients);
    }
    let mut settled = false;
    for _ in 0..150 {
        frame(&mut server, &mut clients);
        if clients.iter().all(|c| differences(&server, c).is_none()) {
            settled = true;
            break;
        }
    }
    for (i, c) in clients.iter().enumerate() {
        assert_eq!(differences(&server, c), None, "client {i}");
        assert_eq!(networked(c).len(), 100);
    }
    assert!(settled);
    let secure = server.bus().unwrap().transport().secure_stats();
    assert_eq!(secure.admitted, CLIENTS as u64);
    assert_eq!(secure.refused(), 0);
    assert_eq!(secure.dropped_tampered, 0);
    // The simulator doubles packets under the layer: the replay window drops the copies.
    assert!(secure.dropped_replayed > 0, "{secure:?}");
    let lost = server
        .bus()
        .unwrap()
        .transport()
        .inner()
        .simulation_stats()
        .dropped;
    assert!(lost > 0);
    for c in &clients {
        assert!(c.bus().unwrap().transport().is_admitted());
    }
}

#[test]
fn game_code_reads_each_clients_identity() {
    let (mut server, mut clients) = world();
    for _ in 0..60 {
        frame(&mut server, &mut clients);
    }
    let transport = server.bus().unwrap().transport();
    let mut ids: Vec<u64> = server
        .peers()
        .iter()
        .map(|&peer| {
            let who = transport.identity(peer).unwrap();
            let name = std::str::from_utf8(who.user_data()).unwrap();
            assert_eq!(name, format!("player-{}", who.client_id() - 1000));
            assert_eq!(transport.peer_of(who.client_id()), Some(peer));
            who.client_id()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1000..1000 + CLIENTS as u64).collect::<Vec<_>>());
    assert_eq!(transport.identity(PeerId::SERVER), None);
}
