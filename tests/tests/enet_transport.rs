//! `EnetTransport` over real UDP on 127.0.0.1 (port 0): connect data, every channel, every
//! disconnect reason, failed connects, stale ids, a full server, and closing without losing the
//! last message.
//!
//! Every wait is bounded by a number of 1 ms steps (generous, so a loaded machine does not fail
//! them) and panics with the events seen so far.

use std::net::{SocketAddr, UdpSocket};
use std::thread::sleep;
use std::time::{Duration, Instant};

use mf_net::transport::{Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent};
use mf_net_enet::{EnetConfig, EnetTransport};

/// At most this many 1 ms steps (plus the time servicing takes) per wait: about 20 s.
const MAX_STEPS: usize = 20_000;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Connected(PeerId, u32),
    Disconnected(PeerId, DisconnectReason),
    Received(PeerId, Channel, Vec<u8>),
}

fn owned(event: TransportEvent<'_>) -> Ev {
    match event {
        TransportEvent::Connected { peer, connect_data } => Ev::Connected(peer, connect_data),
        TransportEvent::Disconnected { peer, reason } => Ev::Disconnected(peer, reason),
        TransportEvent::Received {
            peer,
            channel,
            data,
        } => Ev::Received(peer, channel, data.to_vec()),
    }
}

/// Endpoints under test, each with the events it produced so far.
struct Net {
    nodes: Vec<Option<EnetTransport>>,
    logs: Vec<Vec<Ev>>,
}

impl Net {
    fn new() -> Self {
        Net {
            nodes: Vec::new(),
            logs: Vec::new(),
        }
    }

    fn add(&mut self, t: EnetTransport) -> usize {
        self.nodes.push(Some(t));
        self.logs.push(Vec::new());
        self.nodes.len() - 1
    }

    fn t(&mut self, i: usize) -> &mut EnetTransport {
        self.nodes[i].as_mut().expect("node was dropped")
    }

    /// Services the listed nodes once (the others are left alone, as a frozen process).
    fn step(&mut self, only: Option<&[usize]>) {
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if only.is_some_and(|o| !o.contains(&i)) {
                continue;
            }
            if let Some(t) = node {
                while let Some(e) = t.poll_event() {
                    self.logs[i].push(owned(e));
                }
                t.flush();
            }
        }
    }

    /// Steps until `done` holds, panicking after [`MAX_STEPS`].
    fn until(&mut self, what: &str, done: impl Fn(&[Vec<Ev>]) -> bool) {
        self.until_only(what, None, done);
    }

    fn until_only(
        &mut self,
        what: &str,
        only: Option<&[usize]>,
        done: impl Fn(&[Vec<Ev>]) -> bool,
    ) {
        for _ in 0..MAX_STEPS {
            self.step(only);
            if done(&self.logs) {
                return;
            }
            sleep(Duration::from_millis(1));
        }
        panic!("timed out waiting for {what}; events: {:#?}", self.logs);
    }

    /// Steps for about `ms` milliseconds.
    fn settle(&mut self, ms: u64) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(ms) {
            self.step(None);
            sleep(Duration::from_millis(1));
        }
    }

    fn server_peer(&self, server: usize, nth: usize) -> PeerId {
        self.logs[server]
            .iter()
            .filter_map(|e| match e {
                Ev::Connected(p, _) => Some(*p),
                _ => None,
            })
            .nth(nth)
            .expect("no such connection")
    }
}

fn local() -> SocketAddr {
    "127.0.0.1:0".parse().expect("address")
}

fn port(t: &EnetTransport) -> u16 {
    t.local_addr().expect("bound").port()
}

fn connected(log: &[Ev]) -> usize {
    log.iter()
        .filter(|e| matches!(e, Ev::Connected(..)))
        .count()
}

/// A server (node 0) and `clients` clients (nodes 1..), all connected.
fn setup(max_clients: usize, clients: usize, config: EnetConfig) -> Net {
    let mut net = Net::new();
    let server = EnetTransport::listen_with(local(), max_clients, config.clone()).expect("listen");
    let p = port(&server);
    net.add(server);
    for i in 0..clients {
        let c = EnetTransport::connect_with(("127.0.0.1", p), 0xF00D + i as u32, config.clone())
            .expect("connect");
        net.add(c);
        net.until("connection", |l| {
            connected(&l[0]) == i + 1 && connected(&l[i + 1]) == 1
        });
    }
    net
}

#[test]
fn connects_with_connect_data_and_packs_peer_ids() {
    let net = setup(4, 2, EnetConfig::default());
    let (a, b) = (net.server_peer(0, 0), net.server_peer(0, 1));
    assert_eq!(net.logs[0][0], Ev::Connected(a, 0xF00D));
    assert_eq!(net.logs[0][1], Ev::Connected(b, 0xF00E));
    // Small numbers, from 2 (1 is the server's own), readable in logs.
    assert_eq!([a, b], [PeerId(2), PeerId(3)]);
    assert_eq!(
        (a.to_string(), format!("{b:?}")),
        ("peer#2".into(), "peer#3".into())
    );
    // a client sees the server as PeerId::SERVER, with connect data 0
    assert_eq!(net.logs[1], vec![Ev::Connected(PeerId::SERVER, 0)]);
    assert_eq!(net.logs[2], vec![Ev::Connected(PeerId::SERVER, 0)]);
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

fn received(log: &[Ev], want: &[u8]) -> Option<(PeerId, Channel)> {
    log.iter().find_map(|e| match e {
        Ev::Received(p, c, d) if d == want => Some((*p, *c)),
        _ => None,
    })
}

#[test]
fn every_channel_both_ways_including_fragmented_packets() {
    let mut net = setup(2, 1, EnetConfig::default());
    let peer = net.server_peer(0, 0);
    let cases: Vec<(Channel, Vec<u8>)> = vec![
        (Channel::Reliable, b"hello reliable".to_vec()),
        (Channel::Unreliable, b"hello unreliable".to_vec()),
        (Channel::Reliable, pattern(5000, 1)),
        // 20 KB on the unreliable channel: ENet fragments it unreliably (unreliable-fragment
        // flag) and it arrives whole. Unreliable, so it is sent again until it does.
        (Channel::Unreliable, pattern(20_000, 2)),
    ];
    for (channel, data) in &cases {
        let data = data.clone();
        let channel = *channel;
        for _attempt in 0..50 {
            net.t(0).send(peer, channel, &data).expect("server send");
            net.t(1)
                .send(PeerId::SERVER, channel, &data)
                .expect("client send");
            let mut arrived = false;
            for _ in 0..200 {
                net.step(None);
                if received(&net.logs[1], &data).is_some()
                    && received(&net.logs[0], &data).is_some()
                {
                    arrived = true;
                    break;
                }
                sleep(Duration::from_millis(1));
            }
            if arrived || channel == Channel::Reliable {
                break;
            }
        }
        net.until("delivery", |l| {
            received(&l[0], &data).is_some() && received(&l[1], &data).is_some()
        });
        assert_eq!(
            received(&net.logs[1], &data),
            Some((PeerId::SERVER, channel))
        );
        assert_eq!(received(&net.logs[0], &data), Some((peer, channel)));
    }
    let stats = net.t(1).stats();
    assert!(stats.packets_sent >= 4, "{stats:?}");
    assert!(stats.bytes_sent >= 25_000, "{stats:?}");
    assert!(stats.packets_received >= 4, "{stats:?}");
    assert!(stats.bytes_received >= 25_000, "{stats:?}");
}

#[test]
fn ipv6_loopback_works() {
    let Ok(server) = EnetTransport::listen("[::1]:0".parse().expect("v6"), 2) else {
        eprintln!("IPv6 is not available here; skipping");
        return;
    };
    let p = port(&server);
    let mut net = Net::new();
    net.add(server);
    net.add(EnetTransport::connect(("::1", p), 6).expect("connect"));
    net.until("v6 connection", |l| {
        connected(&l[0]) == 1 && connected(&l[1]) == 1
    });
    let peer = net.server_peer(0, 0);
    net.t(0).send(peer, Channel::Reliable, b"v6").expect("send");
    net.until("v6 packet", |l| received(&l[1], b"v6").is_some());
}

#[test]
fn listening_on_every_interface_accepts_ipv4_and_ipv6_clients() {
    let server = EnetTransport::listen_any(0, 4).expect("listen");
    let p = port(&server);
    let mut net = Net::new();
    net.add(server);
    net.add(EnetTransport::connect(("127.0.0.1", p), 4).expect("connect v4"));
    net.until("v4 connection", |l| {
        connected(&l[0]) == 1 && connected(&l[1]) == 1
    });
    let v6 = net.t(0).local_addr().is_some_and(|a| a.is_ipv6());
    if v6 {
        net.add(EnetTransport::connect(("::1", p), 6).expect("connect v6"));
        net.until("v6 connection", |l| {
            connected(&l[0]) == 2 && connected(&l[2]) == 1
        });
    } else {
        eprintln!("no dual-stack socket here; IPv4 only");
    }
}

#[test]
fn every_disconnect_reason_reaches_the_other_side() {
    let reasons = [
        DisconnectReason::Closed,
        DisconnectReason::Kicked,
        DisconnectReason::Shutdown,
        DisconnectReason::ProtocolMismatch,
        DisconnectReason::ServerFull,
        DisconnectReason::Custom(42),
    ];
    // Twelve clients from 127.0.0.1: above the default limit per address.
    let config = EnetConfig::default().with_max_peers_per_ip(reasons.len() * 2);
    let mut net = setup(reasons.len() * 2, reasons.len() * 2, config);
    for (i, reason) in reasons.iter().enumerate() {
        // server -> client
        let client = 1 + 2 * i;
        let peer = net.server_peer(0, client - 1);
        net.t(0).disconnect(peer, *reason);
        // client -> server
        let other = client + 1;
        net.t(other).disconnect(PeerId::SERVER, *reason);
        let other_peer = net.server_peer(0, other - 1);
        net.until("disconnects", |l| {
            l[client].contains(&Ev::Disconnected(PeerId::SERVER, *reason))
                && l[0].contains(&Ev::Disconnected(other_peer, *reason))
        });
        // the side that asked gets no event of its own
        assert!(!net.logs[0].contains(&Ev::Disconnected(peer, *reason)));
    }
    net.settle(50);
    for i in 0..reasons.len() {
        assert!(
            !net.logs[2 + 2 * i]
                .iter()
                .any(|e| matches!(e, Ev::Disconnected(..))),
            "{:?}",
            net.logs
        );
    }
}

#[test]
fn a_silent_peer_times_out() {
    let config = EnetConfig::default()
        .with_peer_timeout(Duration::from_millis(300), Duration::from_millis(600));
    let mut net = setup(2, 1, config);
    let peer = net.server_peer(0, 0);
    // Something reliable in flight, then the client stops being serviced (a frozen process).
    net.t(0)
        .send(peer, Channel::Reliable, b"anyone?")
        .expect("send");
    let start = Instant::now();
    net.until_only("timeout", Some(&[0]), |l| {
        l[0].contains(&Ev::Disconnected(peer, DisconnectReason::Timeout))
    });
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(
        net.t(0).send(peer, Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
}

#[test]
fn connecting_where_nobody_listens_fails_within_the_timeout() {
    // A socket that never answers: nobody speaks ENet on this port.
    let silent = UdpSocket::bind(local()).expect("bind");
    let p = silent.local_addr().expect("addr").port();
    let timeout = Duration::from_millis(500);
    let start = Instant::now();
    let mut net = Net::new();
    let c = net.add(
        EnetTransport::connect_with(
            ("127.0.0.1", p),
            1,
            EnetConfig::default().with_connect_timeout(timeout),
        )
        .expect("connect"),
    );
    assert_eq!(
        net.t(c).send(PeerId::SERVER, Channel::Reliable, b"early"),
        Err(SendError::NotConnected)
    );
    net.until("connect failure", |l| !l[c].is_empty());
    let elapsed = start.elapsed();
    assert_eq!(
        net.logs[c],
        vec![Ev::Disconnected(
            PeerId::SERVER,
            DisconnectReason::ConnectFailed
        )]
    );
    assert!(elapsed >= timeout, "{elapsed:?}");
    assert!(elapsed < timeout + CONNECT_SLACK, "{elapsed:?}");
    assert_eq!(
        net.t(c).send(PeerId::SERVER, Channel::Reliable, b"late"),
        Err(SendError::UnknownPeer)
    );
}

/// How late after its connect timeout a failed connect may be reported: the poll after the
/// deadline, on a loaded machine.
const CONNECT_SLACK: Duration = Duration::from_millis(250);

/// Polls `client` (1 ms apart) until it reports a disconnect, and returns the reason and the
/// events before it.
fn until_disconnected(client: &mut EnetTransport) -> (DisconnectReason, Vec<Ev>) {
    let mut before = Vec::new();
    for _ in 0..MAX_STEPS {
        while let Some(e) = client.poll_event() {
            if let TransportEvent::Disconnected { reason, .. } = e {
                return (reason, before);
            }
            before.push(owned(e));
        }
        client.flush();
        sleep(Duration::from_millis(1));
    }
    panic!("no disconnect; events: {before:?}");
}

/// Polls `t` for about `ms` milliseconds and returns what it reported.
fn events_for(t: &mut EnetTransport, ms: u64) -> Vec<Ev> {
    let mut log = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(ms) {
        while let Some(e) = t.poll_event() {
            log.push(owned(e));
        }
        t.flush();
        sleep(Duration::from_millis(1));
    }
    log
}

#[test]
fn the_connect_timeout_bounds_a_connect_that_nothing_answers() {
    // ENet checks its own timeout only when it resends the CONNECT (after 0.5, 1.5, 3.5 s):
    // none of these timeouts is one of those times.
    let silent = UdpSocket::bind(local()).expect("bind");
    let p = silent.local_addr().expect("addr").port();
    let mut out_of_bounds = Vec::new();
    for timeout in [100, 1000, 2000].map(Duration::from_millis) {
        let start = Instant::now();
        let config = EnetConfig::default().with_connect_timeout(timeout);
        let mut c = EnetTransport::connect_with(("127.0.0.1", p), 1, config).expect("connect");
        let (reason, before) = until_disconnected(&mut c);
        let elapsed = start.elapsed();
        assert_eq!(reason, DisconnectReason::ConnectFailed, "{timeout:?}");
        assert!(before.is_empty(), "{timeout:?}: {before:?}");
        eprintln!("{timeout:?}: ConnectFailed after {elapsed:?}");
        if elapsed < timeout || elapsed >= timeout + CONNECT_SLACK {
            out_of_bounds.push(format!("{timeout:?}: failed after {elapsed:?}"));
        }
        // Reported once; the connection is gone.
        assert_eq!(events_for(&mut c, 20), vec![], "{timeout:?}");
        assert_eq!(
            c.send(PeerId::SERVER, Channel::Reliable, b"x"),
            Err(SendError::UnknownPeer)
        );
        c.disconnect(PeerId::SERVER, DisconnectReason::Closed);
    }
    assert!(out_of_bounds.is_empty(), "{out_of_bounds:#?}");
}

#[test]
fn a_connect_answered_before_its_deadline_completes_when_polled_after_it() {
    // The server answers at once; the client is not polled again until past its deadline (and
    // past ENet's first CONNECT resend, 500 ms): the answer waiting for it completes the connect.
    let config = EnetConfig::default().with_handshake_timeout(Duration::from_secs(10));
    let mut server = EnetTransport::listen_with(local(), 2, config).expect("listen");
    let timeout = Duration::from_millis(300);
    let mut client = EnetTransport::connect_with(
        ("127.0.0.1", port(&server)),
        0xC0,
        EnetConfig::default().with_connect_timeout(timeout),
    )
    .expect("connect");
    let start = Instant::now();
    client.flush();
    let mut server_log = Vec::new();
    while start.elapsed() < Duration::from_millis(700) {
        server_log.extend(events_for(&mut server, 1));
    }
    let mut net = Net::new();
    let s = net.add(server);
    let c = net.add(client);
    net.logs[s] = server_log;
    net.until("the client's connect to end", |l| !l[c].is_empty());
    assert_eq!(net.logs[c], vec![Ev::Connected(PeerId::SERVER, 0)]);
    net.until("the server's connection", |l| connected(&l[s]) == 1);
    net.settle(50);
    assert_eq!(net.logs[c], vec![Ev::Connected(PeerId::SERVER, 0)]);
    net.t(c)
        .send(PeerId::SERVER, Channel::Reliable, b"made it")
        .expect("send");
    net.until("the message", |l| received(&l[s], b"made it").is_some());
}

#[test]
fn an_answer_after_the_connect_timed_out_is_ignored() {
    // The client connects to a relay that keeps its CONNECT until the client gave up, then
    // hands it to a real server and the server's VERIFY_CONNECT back to the client.
    let relay = UdpSocket::bind(local()).expect("bind");
    relay.set_nonblocking(true).expect("nonblocking");
    let mut server = EnetTransport::listen(local(), 2).expect("listen");
    let server_addr = server.local_addr().expect("bound");
    let config = EnetConfig::default().with_connect_timeout(Duration::from_millis(100));
    let mut client = EnetTransport::connect_with(relay.local_addr().expect("addr"), 0xC1, config)
        .expect("connect");
    let mut buf = [0u8; 2048];
    let mut connect = None;
    for _ in 0..MAX_STEPS {
        if let Ok((n, from)) = relay.recv_from(&mut buf) {
            connect.get_or_insert((buf[..n].to_vec(), from));
        }
        let mut ended = None;
        while let Some(e) = client.poll_event() {
            ended = Some(owned(e));
        }
        client.flush();
        if ended.is_some() {
            assert_eq!(
                ended,
                Some(Ev::Disconnected(
                    PeerId::SERVER,
                    DisconnectReason::ConnectFailed
                ))
            );
            break;
        }
        sleep(Duration::from_millis(1));
    }
    let (connect, client_addr) = connect.expect("the client sent no CONNECT");
    relay.send_to(&connect, server_addr).expect("relay");
    let mut verify = None;
    for _ in 0..MAX_STEPS {
        assert_eq!(events_for(&mut server, 1), vec![]);
        if let Ok((n, from)) = relay.recv_from(&mut buf) {
            if from == server_addr {
                verify = Some(buf[..n].to_vec());
                break;
            }
        }
    }
    let verify = verify.expect("the server did not answer");
    relay.send_to(&verify, client_addr).expect("relay");
    assert_eq!(events_for(&mut client, 100), vec![]);
    assert_eq!(
        client.send(PeerId::SERVER, Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    assert_eq!(events_for(&mut server, 20), vec![]);
}

#[test]
fn a_stale_peer_id_fails_after_its_slot_is_reused() {
    let config = EnetConfig {
        overflow_slots: 0,
        ..EnetConfig::default()
    };
    let mut net = setup(1, 1, config);
    let old = net.server_peer(0, 0);
    net.t(1)
        .disconnect(PeerId::SERVER, DisconnectReason::Closed);
    net.until("leave", |l| {
        l[0].contains(&Ev::Disconnected(old, DisconnectReason::Closed))
    });
    let p = port(net.t(0));
    let b = net.add(EnetTransport::connect(("127.0.0.1", p), 2).expect("connect"));
    net.until("second client", |l| {
        connected(&l[0]) == 2 && connected(&l[b]) == 1
    });
    let new = net.server_peer(0, 1);
    // One slot: reused, and the new connection's id is one slot count further.
    assert_eq!((old, new), (PeerId(2), PeerId(3)), "the id is not reused");
    assert_eq!(
        net.t(0).send(old, Channel::Reliable, b"to the old one"),
        Err(SendError::UnknownPeer)
    );
    net.t(0).disconnect(old, DisconnectReason::Kicked); // ignored: stale
    net.t(0)
        .send(new, Channel::Reliable, b"to the new one")
        .expect("send");
    net.until("delivery", |l| received(&l[b], b"to the new one").is_some());
    assert!(!net.logs[b]
        .iter()
        .any(|e| matches!(e, Ev::Disconnected(..))));
    assert_eq!(
        net.t(0)
            .send(PeerId(0xdead_beef_0000_0001), Channel::Reliable, b"?"),
        Err(SendError::UnknownPeer)
    );
}

#[test]
fn a_client_over_the_limit_is_told_server_full() {
    let mut net = setup(1, 1, EnetConfig::default());
    let p = port(net.t(0));
    let late = net.add(EnetTransport::connect(("127.0.0.1", p), 3).expect("connect"));
    net.until("refusal", |l| {
        l[late].contains(&Ev::Disconnected(
            PeerId::SERVER,
            DisconnectReason::ServerFull,
        ))
    });
    net.settle(50);
    // the server never reported the refused client, and the first one is still there
    assert_eq!(connected(&net.logs[0]), 1);
    assert_eq!(net.logs[0].len(), 1, "{:?}", net.logs[0]);
    assert_eq!(net.logs[1].len(), 1, "{:?}", net.logs[1]);
    assert_eq!(net.t(0).connected_peers(), 1);
}

#[test]
fn a_kick_message_sent_before_a_graceful_close_arrives_first() {
    let mut net = setup(2, 1, EnetConfig::default());
    let peer = net.server_peer(0, 0);
    // Big enough to need many datagrams and acknowledgements.
    let reason = pattern(60_000, 9);
    net.t(0)
        .send(peer, Channel::Reliable, &reason)
        .expect("send");
    net.t(0)
        .send(peer, Channel::Reliable, b"kicked: bye")
        .expect("send");
    net.t(0).begin_close(DisconnectReason::Kicked);
    assert_eq!(
        net.t(0).send(peer, Channel::Reliable, b"too late"),
        Err(SendError::UnknownPeer)
    );
    let mut closed = false;
    for _ in 0..MAX_STEPS {
        closed = net.t(0).service_close();
        net.step(Some(&[1]));
        if closed {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert!(closed, "close did not complete: {:?}", net.logs);
    net.nodes[0] = None; // the server is gone right after its close completed
    net.until("disconnect", |l| {
        l[1].iter().any(|e| matches!(e, Ev::Disconnected(..)))
    });
    let log = &net.logs[1];
    assert_eq!(log.len(), 4, "{log:?}");
    assert_eq!(
        log[1],
        Ev::Received(PeerId::SERVER, Channel::Reliable, reason)
    );
    assert_eq!(
        log[2],
        Ev::Received(PeerId::SERVER, Channel::Reliable, b"kicked: bye".to_vec())
    );
    assert_eq!(
        log[3],
        Ev::Disconnected(PeerId::SERVER, DisconnectReason::Kicked)
    );
    assert!(
        net.logs[0].len() == 1,
        "the closing side gets no events: {:?}",
        net.logs[0]
    );
}

#[test]
fn dropping_a_transport_tells_every_peer_shutdown() {
    let mut net = setup(3, 2, EnetConfig::default());
    net.nodes[0] = None;
    net.until("shutdown", |l| {
        l[1].contains(&Ev::Disconnected(
            PeerId::SERVER,
            DisconnectReason::Shutdown,
        )) && l[2].contains(&Ev::Disconnected(
            PeerId::SERVER,
            DisconnectReason::Shutdown,
        ))
    });
    // and a dropped client tells the server
    let mut net = setup(3, 1, EnetConfig::default());
    let peer = net.server_peer(0, 0);
    net.nodes[1] = None;
    net.until("client shutdown", |l| {
        l[0].contains(&Ev::Disconnected(peer, DisconnectReason::Shutdown))
    });
}

#[test]
fn close_blocking_delivers_the_goodbye_while_the_peer_runs_elsewhere() {
    let mut net = setup(2, 1, EnetConfig::default());
    let client = net.nodes[1].take().expect("client");
    let handle = std::thread::spawn(move || {
        let mut client = client;
        let mut log = Vec::new();
        for _ in 0..MAX_STEPS {
            while let Some(e) = client.poll_event() {
                log.push(owned(e));
            }
            client.flush();
            if log.iter().any(|e| matches!(e, Ev::Disconnected(..))) {
                break;
            }
            sleep(Duration::from_millis(1));
        }
        log
    });
    let mut server = net.nodes[0].take().expect("server");
    let peer = net.server_peer(0, 0);
    server
        .send(peer, Channel::Reliable, b"goodbye")
        .expect("send");
    assert!(server.close_blocking(DisconnectReason::Shutdown, Duration::from_secs(20)));
    let log = handle.join().expect("client thread");
    assert_eq!(
        log,
        vec![
            Ev::Received(PeerId::SERVER, Channel::Reliable, b"goodbye".to_vec()),
            Ev::Disconnected(PeerId::SERVER, DisconnectReason::Shutdown),
        ]
    );
}

#[test]
fn send_failures_are_errors_not_panics() {
    let mut net = setup(2, 1, EnetConfig::default());
    assert_eq!(
        net.t(0).send(PeerId(7), Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    assert_eq!(
        net.t(0).send(PeerId(u64::MAX), Channel::Unreliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    assert_eq!(
        net.t(1).send(PeerId(2), Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    net.t(1)
        .disconnect(PeerId::SERVER, DisconnectReason::Closed);
    assert_eq!(
        net.t(1).send(PeerId::SERVER, Channel::Reliable, b"x"),
        Err(SendError::UnknownPeer)
    );
    // disconnecting twice, or an unknown peer, is harmless
    net.t(1)
        .disconnect(PeerId::SERVER, DisconnectReason::Closed);
    net.t(0).disconnect(PeerId(99), DisconnectReason::Closed);
    assert!(EnetTransport::listen(local(), 0).is_err());
    assert!(EnetTransport::listen(local(), 5000).is_err());
}
