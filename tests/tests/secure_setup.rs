//! What a new user meets around the secure layer: configuration checked at construction with
//! the field named, a key kept as text, a plain client against a secure server and a secure
//! client against a plain server each refused with a reason naming the mismatch, and admitted
//! peers kept in by keep-alives when idle and timed out when silent.

#![allow(clippy::unwrap_used)]

mod replication_common;
mod secure_common;

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::{DisconnectReason, Transport};
use mf_net_secure::{
    ConfigError, SecureClient, SecureServer, ServerConfig, SharedKey, TokenError, TokenIssuer,
};
use mf_net_tests::harness::messages;
use replication_common::library;
use secure_common::{token, Loopback, Rig, KEY, NOW, PROTOCOL};

fn config() -> ServerConfig {
    ServerConfig::new(PROTOCOL, KEY, vec!["loopback:arena".parse().unwrap()])
}

fn made(config: ServerConfig, now: Duration) -> Result<(), ConfigError> {
    let net = LoopbackNetwork::new();
    SecureServer::new(net.listen("arena", 4).unwrap(), config, now).map(drop)
}

#[test]
fn a_bad_configuration_is_an_error_naming_the_field() {
    let field = |c: ServerConfig| match made(c, NOW) {
        Err(ConfigError::Invalid { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(made(config(), NOW), Ok(()));
    let mut c = config();
    c.addresses.clear();
    assert_eq!(field(c), "addresses");
    assert_eq!(field(config().with_max_clients(0)), "max_clients");
    assert_eq!(field(config().with_timeout(Duration::ZERO)), "timeout");
    assert_eq!(
        field(config().with_timeout(Duration::from_secs(86_400))),
        "timeout"
    );
    assert_eq!(
        field(config().with_handshake_timeout(Duration::ZERO)),
        "handshake_timeout"
    );
    let mut c = config();
    c.keepalive_interval = c.timeout;
    assert_eq!(field(c), "keepalive_interval");
    let mut c = config();
    c.used_token_capacity = 0;
    assert_eq!(field(c), "used_token_capacity");
    let mut c = config();
    c.max_pending = 0;
    assert_eq!(field(c), "max_pending");
    // The start time is the wall clock: zero (a common slip) would make tokens never expire.
    let err = made(config(), Duration::ZERO).unwrap_err();
    assert_eq!(err, ConfigError::Clock(Duration::ZERO));
    assert!(err.to_string().contains("SystemTime::now()"), "{err}");
    let text = field(config().with_timeout(Duration::ZERO));
    assert_eq!(text, "timeout");
    // An issuer's lifetime is checked too.
    for bad in [
        Duration::ZERO,
        Duration::from_millis(999),
        Duration::from_secs(86_401),
    ] {
        let issuer = TokenIssuer::new(PROTOCOL, KEY).with_lifetime(bad);
        assert_eq!(issuer.err(), Some(TokenError::Lifetime), "{bad:?}");
    }
}

#[test]
fn a_shared_key_reads_and_writes_hex() {
    let key = SharedKey::generate().unwrap();
    let text = key.to_hex();
    assert_eq!(text.len(), 64);
    assert_eq!(
        SharedKey::from_hex(&format!(" {}\n", text.to_uppercase())),
        Ok(key.clone())
    );
    assert_eq!(text.parse::<SharedKey>(), Ok(key));
    assert_eq!(
        SharedKey::from_hex(&text[2..]),
        Err(TokenError::MalformedKey)
    );
    assert_eq!(SharedKey::from_hex("zz"), Err(TokenError::MalformedKey));
    assert!(!format!("{:?}", SharedKey::from_bytes([7; 32])).contains('7'));
}

/// Steps a server and a client `Multiplayer` until the client hears a disconnect.
fn client_refusal<S, C>(mut server: Multiplayer<S>, mut client: Multiplayer<C>) -> DisconnectReason
where
    S: Transport + 'static,
    C: Transport + 'static,
{
    for _ in 0..200 {
        server.begin_frame(FRAME);
        server.end_frame();
        client.begin_frame(FRAME);
        client.end_frame();
        while let Some(event) = client.next_event() {
            if let MultiplayerEvent::Disconnected { reason } = event {
                return reason;
            }
        }
    }
    panic!("the client was never refused");
}

const FRAME: Duration = Duration::from_millis(10);

#[test]
fn a_plain_client_against_a_secure_server_is_told_a_token_is_required() {
    let net = LoopbackNetwork::new();
    let secure = SecureServer::new(net.listen("arena", 4).unwrap(), config(), NOW).unwrap();
    let mut server = Multiplayer::new(library(), MultiplayerConfig::default());
    server.start_server(secure, messages()).unwrap();
    let mut client = Multiplayer::new(library(), MultiplayerConfig::default());
    client
        .start_client(|data| net.connect("arena", data), messages())
        .unwrap();
    let reason = client_refusal(server, client);
    assert_eq!(reason, DisconnectReason::SecureRequired);
    assert!(reason.to_string().contains("SecureClient"), "{reason}");
}

#[test]
fn a_secure_client_against_a_plain_server_is_told_it_is_not_secure() {
    let net = LoopbackNetwork::new();
    let mut server = Multiplayer::new(library(), MultiplayerConfig::default());
    server
        .start_server(net.listen("arena", 4).unwrap(), messages())
        .unwrap();
    let t = token(1, &"loopback:arena".parse().unwrap());
    let mut client = Multiplayer::new(library(), MultiplayerConfig::default());
    let open = |data| SecureClient::new(net.connect("arena", data), t);
    client.start_client(open, messages()).unwrap();
    let reason = client_refusal(server, client);
    assert_eq!(reason, DisconnectReason::SecureUnsupported);
    assert!(reason.to_string().contains("SecureServer"), "{reason}");
}

#[test]
fn idle_clients_stay_in_and_silent_ones_time_out() {
    let mut rig = Rig::new(Loopback::new(), 8, |c| {
        c.with_timeout(Duration::from_secs(2))
    });
    let idle = rig.join(token(1, &rig.address));
    rig.until("the idle client is admitted", |r| r.connected(idle));
    // 10 s without a game packet either way: the keep-alives hold the connection.
    for _ in 0..1000 {
        rig.step();
    }
    assert_eq!(rig.disconnected(idle), None);
    assert_eq!(rig.server.admitted_count(), 1);
    // A client that stops sending altogether (its transport no longer advances or flushes)
    // is timed out by the server.
    let silent = rig.join(token(2, &rig.address));
    rig.until("the second client is admitted", |r| r.connected(silent));
    let before = rig.server.secure_stats().timeouts;
    let gone = rig.clients.remove(silent);
    rig.client_logs.remove(silent);
    for _ in 0..300 {
        rig.step();
    }
    assert_eq!(rig.server.secure_stats().timeouts, before + 1);
    assert_eq!(rig.server.admitted_count(), 1);
    drop(gone);
}
