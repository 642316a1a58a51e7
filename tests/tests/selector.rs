//! The connect-string selector with real factories: loopback, ENet over UDP on 127.0.0.1, and the
//! Steam sockets stub. Fallback from failing addresses to a working one, one final failure when
//! all fail, and address parsing through the public API.

use std::net::UdpSocket;
use std::thread::sleep;
use std::time::Duration;

use mf_net::transport::address::{AddressError, NetworkAddress};
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::selector::{
    AttemptError, LoopbackTransportFactory, OpenError, SelectingTransport, TransportSelector,
};
use mf_net::transport::{Channel, DisconnectReason, PeerId, Transport, TransportEvent};
use mf_net_enet::{default_selector, EnetConfig, EnetTransport, EnetTransportFactory};

const MAX_STEPS: usize = 20_000;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Connected(PeerId, u32),
    Disconnected(PeerId, DisconnectReason),
    Received(PeerId, Vec<u8>),
}

fn drain(t: &mut dyn Transport, log: &mut Vec<Ev>) {
    while let Some(e) = t.poll_event() {
        log.push(match e {
            TransportEvent::Connected { peer, connect_data } => Ev::Connected(peer, connect_data),
            TransportEvent::Disconnected { peer, reason } => Ev::Disconnected(peer, reason),
            TransportEvent::Received { peer, data, .. } => Ev::Received(peer, data.to_vec()),
        });
    }
    t.flush();
}

/// Steps client and server (1 ms of advanced time per step, at least 1 ms of real time) until
/// `done` holds.
fn until(
    client: &mut SelectingTransport,
    server: &mut dyn Transport,
    logs: &mut (Vec<Ev>, Vec<Ev>),
    done: impl Fn(&[Ev], &[Ev]) -> bool,
) {
    for _ in 0..MAX_STEPS {
        drain(client, &mut logs.0);
        drain(server, &mut logs.1);
        if done(&logs.0, &logs.1) {
            return;
        }
        client.advance(Duration::from_millis(1));
        server.advance(Duration::from_millis(1));
        sleep(Duration::from_millis(1));
    }
    panic!("timed out; client {:?}, server {:?}", logs.0, logs.1);
}

fn silent_port() -> (UdpSocket, u16) {
    let s = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let p = s.local_addr().expect("addr").port();
    (s, p)
}

#[test]
fn steam_and_a_silent_enet_address_fall_through_to_a_working_enet_server() {
    let mut server =
        EnetTransport::listen("127.0.0.1:0".parse().expect("addr"), 4).expect("listen");
    let port = server.local_addr().expect("addr").port();
    let (_silent, silent) = silent_port();
    let connect_string =
        format!("steam:76561198000000001;enet:127.0.0.1:{silent};enet:127.0.0.1:{port}");
    let mut client = default_selector()
        .handshake_timeout(Duration::from_millis(300))
        .connect(&connect_string, 0xC0FFEE)
        .expect("an address opens");
    let mut logs = (Vec::new(), Vec::new());
    until(&mut client, &mut server, &mut logs, |c, s| {
        !c.is_empty() && !s.is_empty()
    });
    // The first attempt that got through is the third address: its ids are offset.
    let server_id = PeerId(PeerId::SERVER.0 + (1 << 48));
    assert_eq!(logs.0, vec![Ev::Connected(server_id, 0)]);
    assert!(matches!(logs.1[0], Ev::Connected(_, 0xC0FFEE)));
    assert!(client.is_established());
    assert_eq!(
        client.current_address(),
        Some(&NetworkAddress::Enet {
            host: "127.0.0.1".into(),
            port
        })
    );
    let errors: Vec<_> = client.failures().iter().map(|f| f.error.clone()).collect();
    assert!(
        matches!(&errors[0], AttemptError::Open(OpenError::Unavailable(_))),
        "{errors:?}"
    );
    assert_eq!(errors[1], AttemptError::HandshakeTimeout);
    assert_eq!(errors.len(), 2);

    // Traffic both ways through the selected transport.
    client
        .send(server_id, Channel::Reliable, b"ping")
        .expect("client send");
    until(&mut client, &mut server, &mut logs, |_, s| s.len() >= 2);
    let Ev::Connected(peer, _) = logs.1[0] else {
        unreachable!()
    };
    assert_eq!(logs.1[1], Ev::Received(peer, b"ping".to_vec()));
    server
        .send(peer, Channel::Reliable, b"pong")
        .expect("server send");
    until(&mut client, &mut server, &mut logs, |c, _| c.len() >= 2);
    assert_eq!(logs.0[1], Ev::Received(server_id, b"pong".to_vec()));
    assert!(client.stats().packets_received >= 1);
}

#[test]
fn an_enet_connect_failure_falls_through_to_loopback() {
    let network = LoopbackNetwork::new();
    let mut server = network.listen("game", 4).expect("listen");
    let (_silent, silent) = silent_port();
    let mut client = TransportSelector::new()
        .with_factory(EnetTransportFactory::new(
            EnetConfig::default().with_connect_timeout(Duration::from_millis(300)),
        ))
        .with_factory(LoopbackTransportFactory::new(network.clone()))
        .handshake_timeout(Duration::from_secs(3600))
        .connect(
            &format!("loopback:nobody;enet:127.0.0.1:{silent};loopback:game"),
            77,
        )
        .expect("an address opens");
    let mut logs = (Vec::new(), Vec::new());
    until(&mut client, &mut server, &mut logs, |c, s| {
        !c.is_empty() && !s.is_empty()
    });
    assert!(matches!(logs.0[..], [Ev::Connected(_, 0)]), "{logs:?}");
    assert!(matches!(logs.1[..], [Ev::Connected(_, 77)]), "{logs:?}");
    let errors: Vec<_> = client.failures().iter().map(|f| f.error.clone()).collect();
    assert_eq!(
        errors,
        vec![
            AttemptError::Disconnected(DisconnectReason::ConnectFailed),
            AttemptError::Disconnected(DisconnectReason::ConnectFailed),
        ]
    );
}

#[test]
fn when_every_address_fails_one_final_connect_failed_is_raised() {
    let network = LoopbackNetwork::new();
    let (_silent, silent) = silent_port();
    let mut client = default_selector()
        .with_factory(LoopbackTransportFactory::new(network))
        .handshake_timeout(Duration::from_millis(200))
        .connect(
            &format!("steam:1;loopback:nobody;enet:127.0.0.1:{silent};not-an-address"),
            0,
        )
        .expect("an address opens");
    let mut idle = LoopbackNetwork::new().listen("idle", 1).expect("listen");
    let mut logs = (Vec::new(), Vec::new());
    until(&mut client, &mut idle, &mut logs, |c, _| !c.is_empty());
    // keep going a while: nothing else may come
    for _ in 0..100 {
        drain(&mut client, &mut logs.0);
        client.advance(Duration::from_millis(10));
    }
    assert_eq!(logs.0.len(), 1, "{:?}", logs.0);
    assert!(matches!(
        logs.0[0],
        Ev::Disconnected(_, DisconnectReason::ConnectFailed)
    ));
    assert!(!client.is_selecting());
    let errors: Vec<_> = client.failures().iter().map(|f| f.error.clone()).collect();
    assert!(matches!(
        &errors[0],
        AttemptError::Open(OpenError::Unavailable(_))
    ));
    assert_eq!(
        errors[1],
        AttemptError::Disconnected(DisconnectReason::ConnectFailed)
    );
    assert_eq!(errors[2], AttemptError::HandshakeTimeout);
    assert!(matches!(
        &errors[3],
        AttemptError::Invalid(AddressError::MissingScheme(_))
    ));
    assert_eq!(errors.len(), 4);
}

#[test]
fn a_connect_string_nothing_can_open_is_an_error_at_once() {
    let err = default_selector()
        .connect("steam:1;loopback:x;;bogus", 0)
        .expect_err("nothing opens");
    let text = err.to_string();
    assert!(text.contains("not available on this build"), "{text}");
    assert!(text.contains("loopback:x"), "{text}");
    assert_eq!(err.failures.len(), 3);
}

#[test]
fn addresses_round_trip_and_bad_ones_are_refused() {
    let list =
        NetworkAddress::parse_list("enet:[::1]:7777;enet:example.org:27615;loopback:l;steam:42")
            .expect("valid");
    assert_eq!(
        NetworkAddress::parse_list(&NetworkAddress::join_list(&list)).expect("valid"),
        list
    );
    for (text, expected) in [
        ("enet:::1:7777", "brackets"),
        ("enet:host", "no port"),
        ("enet:host:99999", "not a port"),
        ("ftp:x", "unknown transport"),
        ("steam:abc", "not a Steam id"),
        ("loopback:", "not a loopback name"),
    ] {
        let err = NetworkAddress::parse(text).expect_err(text);
        assert!(err.to_string().contains(expected), "{text}: {err}");
    }
}
