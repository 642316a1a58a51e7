//! Spoofed ENet CONNECTs against an `EnetTransport` server over real UDP on 127.0.0.1: raw
//! 52-byte CONNECTs from plain sockets that never answer (all a server can see of a spoofed
//! source), more than every slot. A spoofed CONNECT gets at most one answer, no larger than
//! itself; handshakes that never complete free their slots; a genuine client gets in right after
//! a flood and while one goes on; one address holds at most `max_peers_per_ip` peers. And since
//! ENet's resends of the VERIFY_CONNECT are no longer sent, a client whose first answer is lost
//! gets in on its own resent CONNECT.
//!
//! Every wait is a bounded number of 1 ms steps (generous, for loaded machines), and what is
//! asserted are bytes, datagrams and events, never times. The flood is paced by steps (one
//! spoofed CONNECT per step), not by the clock, so a slow machine floods as hard per step.
//!
//! Every socket here has the IP address 127.0.0.1, so the per-address limit would refuse the
//! flood itself: the flood tests raise it ([`flood_config`]), and it is tested on its own.

use std::net::SocketAddr;
use std::thread::sleep;
use std::time::{Duration, Instant};

use mf_net::transport::{DisconnectReason, PeerId, Transport, TransportEvent};
use mf_net_benches::enet_flood::{Spoofers, CONNECT_LEN};
use mf_net_enet::{EnetConfig, EnetTransport};

/// At most this many 1 ms steps (plus the time servicing takes) per wait: about 30 s.
const MAX_STEPS: usize = 30_000;

/// A server config for floods from 127.0.0.1: the per-address limit out of the way.
fn flood_config() -> EnetConfig {
    EnetConfig::default().with_max_peers_per_ip(10_000)
}

/// What a side saw: connections and disconnections.
#[derive(Debug, Default)]
struct Log {
    connected: Vec<(PeerId, u32)>,
    disconnected: Vec<(PeerId, DisconnectReason)>,
}

/// Services `t` once: every event, then a flush.
fn step(t: &mut EnetTransport, log: &mut Log) {
    while let Some(event) = t.poll_event() {
        match event {
            TransportEvent::Connected { peer, connect_data } => {
                log.connected.push((peer, connect_data));
            }
            TransportEvent::Disconnected { peer, reason } => {
                log.disconnected.push((peer, reason));
            }
            TransportEvent::Received { .. } => {}
        }
    }
    t.flush();
}

fn listen(max_clients: usize, config: EnetConfig) -> (EnetTransport, SocketAddr) {
    let server =
        EnetTransport::listen_with("127.0.0.1:0".parse().expect("addr"), max_clients, config)
            .expect("listen");
    let addr = server.local_addr().expect("bound");
    (server, addr)
}

/// A genuine client with a connect timeout long enough for ENet's CONNECT resends at 0.5, 1.5,
/// 3.5 and 7.5 s (on the old code, spoofed handshakes held every slot for about 30 s).
fn genuine(server: SocketAddr, data: u32) -> EnetTransport {
    let config = EnetConfig::default().with_connect_timeout(Duration::from_secs(12));
    EnetTransport::connect_with(server, data, config).expect("connect")
}

/// Services the server for at least `ms` milliseconds of wall time (time for ENet's resends
/// to happen; nothing is asserted about it).
fn serve_for(server: &mut EnetTransport, log: &mut Log, ms: u64) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(ms) {
        step(server, log);
        sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_spoofed_connect_is_answered_once_and_no_larger_than_itself() {
    // Every slot gets a spoofed handshake (12 slots, 12 sources); then the default config,
    // where 8 of 12 sources on one address are over the per-address limit.
    for (config, max_clients) in [(flood_config(), 8), (EnetConfig::default(), 8)] {
        let (mut server, addr) = listen(max_clients, config);
        let mut spoofers = Spoofers::new("127.0.0.1", 12);
        spoofers.connect_all(addr);
        let mut log = Log::default();
        // ENet would resend its VERIFY_CONNECT after 0.5 and 1.5 s.
        serve_for(&mut server, &mut log, 2_200);
        let back = spoofers.drain();
        eprintln!(
            "{} spoofed CONNECTs of {CONNECT_LEN} bytes: {back:?} back ({:.2} bytes per byte)",
            spoofers.sent,
            back.bytes as f64 / (spoofers.sent * CONNECT_LEN) as f64
        );
        assert!(back.datagrams > 0, "the server answered nothing: {back:?}");
        assert!(
            back.most_datagrams_on_one <= 1,
            "a source got more than one answer: {back:?}"
        );
        assert!(
            back.most_bytes_on_one <= CONNECT_LEN,
            "an answer larger than the CONNECT: {back:?}"
        );
        assert!(back.bytes <= spoofers.sent * CONNECT_LEN, "{back:?}");
        assert!(log.connected.is_empty(), "{log:?}");
        assert_eq!(server.slots_in_use(), 0, "the handshakes were dropped");
    }
}

/// Steps the server and `client` until the server reports `data`'s connection (returning the
/// steps taken) or the client gives up (panicking with both logs).
fn until_admitted(
    server: &mut EnetTransport,
    client: &mut EnetTransport,
    data: u32,
    mut flood: impl FnMut(),
) -> usize {
    let (mut server_log, mut client_log) = (Log::default(), Log::default());
    for steps in 0..MAX_STEPS {
        flood();
        step(server, &mut server_log);
        step(client, &mut client_log);
        if server_log.connected.iter().any(|&(_, d)| d == data) {
            return steps;
        }
        assert!(
            client_log.disconnected.is_empty(),
            "the genuine client failed after {steps} steps: server {server_log:?}, client \
             {client_log:?}"
        );
        sleep(Duration::from_millis(1));
    }
    panic!("no admission in {MAX_STEPS} steps: {server_log:?} {client_log:?}");
}

#[test]
fn a_genuine_client_gets_in_right_after_a_flood_of_every_slot() {
    // 4 slots (2 clients + 2 overflow), 64 spoofed CONNECTs.
    let config = EnetConfig {
        overflow_slots: 2,
        ..flood_config()
    };
    let (mut server, addr) = listen(2, config);
    let mut spoofers = Spoofers::new("127.0.0.1", 64);
    spoofers.connect_all(addr);
    serve_for(&mut server, &mut Log::default(), 50);
    assert!(server.slots_in_use() <= 4);
    let mut client = genuine(addr, 0xC1);
    let steps = until_admitted(&mut server, &mut client, 0xC1, || {});
    eprintln!("admitted after {steps} steps");
    assert_eq!(server.connected_peers(), 1);
}

#[test]
fn a_genuine_client_gets_in_while_the_flood_goes_on() {
    // 10 slots (2 clients + 8 overflow), one spoofed CONNECT every step from 32 sources.
    let config = EnetConfig {
        overflow_slots: 8,
        ..flood_config()
    };
    let (mut server, addr) = listen(2, config);
    let mut spoofers = Spoofers::new("127.0.0.1", 32);
    for _ in 0..100 {
        spoofers.connect_next(addr);
        step(&mut server, &mut Log::default());
        sleep(Duration::from_millis(1));
    }
    let mut client = genuine(addr, 0xC2);
    let steps = until_admitted(&mut server, &mut client, 0xC2, || {
        spoofers.connect_next(addr)
    });
    eprintln!(
        "admitted after {steps} steps, {} spoofed CONNECTs sent",
        spoofers.sent
    );
    assert!(server.slots_in_use() <= 10);
    // Still flooded: a second genuine client gets in as well.
    let mut second = genuine(addr, 0xC3);
    until_admitted(&mut server, &mut second, 0xC3, || {
        spoofers.connect_next(addr)
    });
    assert_eq!(server.connected_peers(), 2);
}

#[test]
fn one_address_holds_at_most_max_peers_per_ip() {
    assert_eq!(EnetConfig::default().max_peers_per_ip, 16);
    let limit = 4;
    let (mut server, addr) = listen(16, EnetConfig::default().with_max_peers_per_ip(limit));
    // Spoofed handshakes from one address hold at most `limit` slots, and only those CONNECTs
    // are answered…
    let mut spoofers = Spoofers::new("127.0.0.1", 12);
    spoofers.connect_all(addr);
    let mut log = Log::default();
    let mut most = 0;
    for _ in 0..50 {
        step(&mut server, &mut log);
        most = most.max(server.slots_in_use());
        sleep(Duration::from_millis(1));
    }
    assert!(most >= 1, "the server took no handshake at all");
    assert!(most <= limit, "{most} slots held from one address");
    let back = spoofers.drain();
    assert!(back.datagrams <= limit, "{back:?}");
    // …and only until the handshake timeout.
    let mut freed = false;
    for _ in 0..MAX_STEPS {
        step(&mut server, &mut log);
        if server.slots_in_use() == 0 {
            freed = true;
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert!(freed, "spoofed handshakes still hold slots");

    // Genuine clients from that address: `limit` get in; the next gets no answer at all.
    let mut clients = Vec::new();
    for i in 0..limit {
        let data = 0xA00 + i as u32;
        let mut client = genuine(addr, data);
        until_admitted(&mut server, &mut client, data, || {});
        clients.push(client);
    }
    let config = EnetConfig::default().with_connect_timeout(Duration::from_secs(2));
    let mut extra = EnetTransport::connect_with(addr, 0xAFF, config).expect("connect");
    let mut extra_log = Log::default();
    for _ in 0..MAX_STEPS {
        step(&mut server, &mut log);
        step(&mut extra, &mut extra_log);
        for c in &mut clients {
            step(c, &mut Log::default());
        }
        if !extra_log.disconnected.is_empty() {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert!(
        !log.connected.iter().any(|&(_, d)| d == 0xAFF),
        "a client over the per-address limit was admitted: {log:?}"
    );
    assert!(extra_log.connected.is_empty(), "{extra_log:?}");
    assert_eq!(
        extra_log.disconnected,
        vec![(PeerId::SERVER, DisconnectReason::ConnectFailed)]
    );
    assert_eq!(server.connected_peers(), limit);
    assert!(server.slots_in_use() <= limit);

    // The limit is validated.
    let local = "127.0.0.1:0".parse().expect("addr");
    for bad in [
        EnetConfig::default().with_max_peers_per_ip(0),
        EnetConfig::default().with_handshake_timeout(Duration::ZERO),
    ] {
        assert!(EnetTransport::listen_with(local, 4, bad).is_err());
    }
}

#[test]
fn another_address_gets_in_while_one_fills_what_it_may() {
    // Dual stack, 8 slots (4 clients + 4 overflow): IPv4 sources come from ::ffff:127.0.0.1,
    // an IPv6 client from ::1. Twelve spoofed sources on 127.0.0.1 would take every slot.
    let Ok(mut server) = EnetTransport::listen_any(0, 4) else {
        panic!("cannot listen on every interface");
    };
    let port = server.local_addr().expect("bound").port();
    if !server.local_addr().is_some_and(|a| a.is_ipv6()) {
        eprintln!("no dual-stack socket here; skipping");
        return;
    }
    let mut spoofers = Spoofers::new("127.0.0.1", 12);
    spoofers.connect_all(([127, 0, 0, 1], port).into());
    let mut log = Log::default();
    serve_for(&mut server, &mut log, 50);
    let held = server.slots_in_use();
    assert!(held >= 1, "the server took no handshake at all");
    assert!(held <= EnetConfig::DEFAULT_MAX_PEERS_PER_IP, "{held}");
    let Ok(mut client) = EnetTransport::connect_with(
        ("::1", port),
        0xB6,
        EnetConfig::default().with_connect_timeout(Duration::from_secs(12)),
    ) else {
        eprintln!("no IPv6 here; skipping");
        return;
    };
    let steps = until_admitted(&mut server, &mut client, 0xB6, || {});
    eprintln!("::1 admitted after {steps} steps");
}

/// A UDP relay between one client and the server that loses the first `lose` datagrams from
/// the server (the server sees the relay's address as the client's).
struct LossyRelay {
    /// Where the client sends.
    front: std::net::UdpSocket,
    /// Where the server sees the client.
    back: std::net::UdpSocket,
    server: SocketAddr,
    client: Option<SocketAddr>,
    lose: usize,
    lost: usize,
}

impl LossyRelay {
    fn new(server: SocketAddr, lose: usize) -> Self {
        let bind = || {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
            s.set_nonblocking(true).expect("non-blocking");
            s
        };
        LossyRelay {
            front: bind(),
            back: bind(),
            server,
            client: None,
            lose,
            lost: 0,
        }
    }

    fn addr(&self) -> SocketAddr {
        self.front.local_addr().expect("bound")
    }

    /// Relays whatever waits, both ways.
    fn pump(&mut self) {
        let mut buf = [0; 4096];
        while let Ok((len, from)) = self.front.recv_from(&mut buf) {
            self.client = Some(from);
            let _ = self.back.send_to(&buf[..len], self.server);
        }
        while let Ok((len, _)) = self.back.recv_from(&mut buf) {
            if self.lost < self.lose {
                self.lost += 1;
            } else if let Some(client) = self.client {
                let _ = self.front.send_to(&buf[..len], client);
            }
        }
    }
}

#[test]
fn a_client_whose_verify_connect_is_lost_gets_in_on_its_next_connect() {
    // ENet's own resends of the VERIFY_CONNECT are dropped; the client's resent CONNECT (after
    // 0.5 and 1.5 s) is answered anew once its first handshake was dropped (1 s).
    let (mut server, addr) = listen(4, EnetConfig::default());
    let mut relay = LossyRelay::new(addr, 1);
    let mut client = genuine(relay.addr(), 0xC4);
    let (mut server_log, mut client_log) = (Log::default(), Log::default());
    for _ in 0..MAX_STEPS {
        step(&mut server, &mut server_log);
        relay.pump();
        step(&mut client, &mut client_log);
        relay.pump();
        if !server_log.connected.is_empty() || !client_log.disconnected.is_empty() {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert_eq!(relay.lost, 1, "the first answer was not lost");
    assert_eq!(
        server_log.connected.len(),
        1,
        "{server_log:?} {client_log:?}"
    );
    assert_eq!(server_log.connected[0].1, 0xC4);
    assert_eq!(client_log.connected.len(), 1, "{client_log:?}");
    assert!(client_log.disconnected.is_empty(), "{client_log:?}");
}
