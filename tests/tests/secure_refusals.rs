//! Every refusal of the secure layer, over loopback and over ENet on 127.0.0.1: an expired
//! token, one for another server, a tampered one, one sealed under another key, a replayed one,
//! garbage in place of a request, another protocol id, a full server, a duplicate client id
//! under both policies, and a request that never comes. A client whose token opened hears the
//! named reason (sealed for it alone); garbage and tokens that do not open get no answer at
//! all, only the inner transport's disconnect. The server reports nothing for either, counts
//! it and keeps no peer for it.

#![allow(clippy::unwrap_used)]

mod secure_common;

use std::time::Duration;

use mf_net::transport::{Channel, DisconnectReason, PeerId, Transport};
use mf_net_secure::{ConnectToken, DuplicatePolicy, SharedKey, TokenIssuer};
use secure_common::{issuer, token, Ev, Loopback, Net, Rig, KEY, NOW, PROTOCOL};

/// Joins a client holding `token` to a fresh server and returns the reason it was refused
/// with, after checking that the server reported nothing and counted one refusal.
fn refusal<N: Net>(net: N, token: impl FnOnce(&Rig<N>) -> ConnectToken) -> DisconnectReason {
    let mut rig = Rig::new(net, 8, |c| c);
    let t = token(&rig);
    let client = rig.join(t);
    rig.until("the client is refused", |r| {
        r.disconnected(client).is_some()
    });
    assert!(!rig.connected(client), "{:?}", rig.client_logs);
    // A few more steps: nothing shows up on the server, before or after.
    for _ in 0..20 {
        rig.step();
    }
    assert!(rig.server_log.is_empty(), "{:?}", rig.server_log);
    assert_eq!(rig.server.admitted_count(), 0);
    assert_eq!(rig.server.secure_stats().refused(), 1);
    rig.disconnected(client).unwrap()
}

/// As [`refusal`], for a request that must get no answer: the client hears only the inner
/// transport's disconnect, and the server sent it nothing.
fn unanswered<N: Net>(net: N, token: impl FnOnce(&Rig<N>) -> ConnectToken) {
    let mut rig = Rig::new(net, 8, |c| c);
    let t = token(&rig);
    let client = rig.join(t);
    rig.until("the client is dropped", |r| {
        r.disconnected(client).is_some()
    });
    for _ in 0..20 {
        rig.step();
    }
    assert_eq!(
        rig.disconnected(client),
        Some(DisconnectReason::ConnectFailed)
    );
    assert!(rig.server_log.is_empty(), "{:?}", rig.server_log);
    assert_eq!(rig.server.secure_stats().refused(), 1);
    assert_eq!(rig.server.secure_stats().challenges_sent, 0);
    assert_eq!(
        rig.clients[client]
            .secure_stats()
            .unwrap()
            .dropped_unexpected,
        0
    );
}

fn expired<N: Net>(net: N) {
    let reason = refusal(net, |rig| {
        issuer()
            .with_lifetime(Duration::from_secs(10))
            .unwrap()
            .issue(
                1,
                b"",
                std::slice::from_ref(&rig.address),
                NOW - Duration::from_secs(60),
            )
            .unwrap()
    });
    assert_eq!(reason, DisconnectReason::TokenExpired);
}

fn wrong_server<N: Net>(net: N) {
    let reason = refusal(net, |_| token(1, &"enet:192.0.2.1:27615".parse().unwrap()));
    assert_eq!(reason, DisconnectReason::TokenWrongServer);
}

fn tampered_token<N: Net>(net: N) {
    unanswered(net, |rig| {
        let mut bytes = token(1, &rig.address).to_bytes();
        bytes[70] ^= 0x01; // inside the sealed part
        ConnectToken::from_bytes(&bytes).unwrap()
    });
}

fn tampered_expiry<N: Net>(net: N) {
    unanswered(net, |rig| {
        let mut bytes = token(1, &rig.address).to_bytes();
        bytes[25] ^= 0x01; // the public expiry, pushed 256 s later: bound to the seal
        ConnectToken::from_bytes(&bytes).unwrap()
    });
}

fn wrong_key<N: Net>(net: N) {
    unanswered(net, |rig| {
        TokenIssuer::new(PROTOCOL, SharedKey::from_bytes([1; 32]))
            .issue(1, b"", std::slice::from_ref(&rig.address), NOW)
            .unwrap()
    });
}

fn other_protocol<N: Net>(net: N) {
    let reason = refusal(net, |rig| {
        TokenIssuer::new(PROTOCOL + 1, KEY)
            .issue(1, b"", std::slice::from_ref(&rig.address), NOW)
            .unwrap()
    });
    assert_eq!(reason, DisconnectReason::ProtocolMismatch);
}

/// Client 0 is admitted with `first`; client 1 then presents `second`. Returns the rig.
fn second_client<N: Net>(
    net: N,
    max_clients: usize,
    policy: DuplicatePolicy,
    tokens: impl FnOnce(&Rig<N>) -> (ConnectToken, ConnectToken),
) -> Rig<N> {
    let mut rig = Rig::new(net, max_clients, |c| c.with_duplicates(policy));
    let (first, second) = tokens(&rig);
    let a = rig.join(first);
    rig.until("the first client is admitted", |r| r.connected(a));
    let b = rig.join(second);
    rig.until("the second client is answered", |r| {
        r.connected(b) || r.disconnected(b).is_some()
    });
    rig
}

/// Client 0 still works: a message each way.
fn first_still_works<N: Net>(rig: &mut Rig<N>) {
    let peer = rig.server_peers()[0];
    rig.clients[0]
        .send(PeerId::SERVER, Channel::Reliable, b"ping")
        .unwrap();
    rig.until("the server hears the first client", |r| {
        r.server_received(peer) == vec![b"ping".to_vec()]
    });
    rig.server.send(peer, Channel::Unreliable, b"pong").unwrap();
    rig.until("the first client hears back", |r| {
        r.received(0) == vec![b"pong".to_vec()]
    });
}

fn replayed<N: Net>(net: N) {
    let mut rig = second_client(net, 8, DuplicatePolicy::ReplaceOlder, |rig| {
        let t = token(1, &rig.address);
        (t.clone(), t)
    });
    assert_eq!(rig.disconnected(1), Some(DisconnectReason::TokenReplayed));
    assert_eq!(rig.server.secure_stats().refused_replayed, 1);
    assert_eq!(rig.server_peers().len(), 1);
    first_still_works(&mut rig);
}

fn garbage<N: Net>(net: N) {
    let mut rig = Rig::new(net, 8, |c| c);
    let raw = rig.join_raw();
    rig.until("the raw client connects", |r| r.connected(raw));
    rig.clients[raw]
        .send(PeerId::SERVER, Channel::Reliable, b"GET / HTTP/1.1\r\n\r\n")
        .unwrap();
    rig.until("the raw client is dropped", |r| {
        r.disconnected(raw).is_some()
    });
    assert_eq!(rig.disconnected(raw), Some(DisconnectReason::ConnectFailed));
    assert!(rig.received(raw).is_empty(), "garbage gets no answer");
    assert!(rig.server_log.is_empty(), "{:?}", rig.server_log);
    assert_eq!(rig.server.secure_stats().refused_malformed, 1);
}

fn full<N: Net>(net: N) {
    let mut rig = second_client(net, 1, DuplicatePolicy::ReplaceOlder, |rig| {
        (token(1, &rig.address), token(2, &rig.address))
    });
    assert_eq!(rig.disconnected(1), Some(DisconnectReason::ServerFull));
    assert_eq!(rig.server.secure_stats().refused_full, 1);
    first_still_works(&mut rig);
}

fn duplicate_refused<N: Net>(net: N) {
    let mut rig = second_client(net, 8, DuplicatePolicy::RefuseNewer, |rig| {
        (token(5, &rig.address), token(5, &rig.address))
    });
    assert_eq!(rig.disconnected(1), Some(DisconnectReason::ClientIdInUse));
    assert_eq!(rig.server.secure_stats().refused_client_id_in_use, 1);
    first_still_works(&mut rig);
}

fn duplicate_replaces<N: Net>(net: N) {
    let mut rig = second_client(net, 8, DuplicatePolicy::ReplaceOlder, |rig| {
        (token(5, &rig.address), token(5, &rig.address))
    });
    rig.until("the first client hears it was replaced", |r| {
        r.disconnected(0).is_some()
    });
    assert_eq!(rig.disconnected(0), Some(DisconnectReason::Replaced));
    let [old, new] = rig.server_peers()[..] else {
        panic!("two admissions: {:?}", rig.server_log);
    };
    let left = rig
        .server_log
        .iter()
        .position(|e| *e == Ev::Disconnected(old, DisconnectReason::Replaced));
    let joined = rig
        .server_log
        .iter()
        .position(|e| matches!(e, Ev::Connected(p, _) if *p == new));
    assert!(left.unwrap() < joined.unwrap(), "{:?}", rig.server_log);
    assert_eq!(rig.server.peer_of(5), Some(new));
    assert_eq!(rig.server.identity(new).unwrap().client_id(), 5);
    assert_eq!(rig.server.identity(old), None);
    assert_eq!(rig.server.secure_stats().replaced, 1);
}

macro_rules! over {
    ($net:ident, $make:expr) => {
        mod $net {
            use super::*;

            #[test]
            fn expired_token() {
                expired($make);
            }
            #[test]
            fn token_for_another_server() {
                wrong_server($make);
            }
            #[test]
            fn tampered_token() {
                super::tampered_token($make);
            }
            #[test]
            fn tampered_expiry() {
                super::tampered_expiry($make);
            }
            #[test]
            fn token_under_another_key() {
                wrong_key($make);
            }
            #[test]
            fn token_for_another_protocol() {
                other_protocol($make);
            }
            #[test]
            fn replayed_token() {
                replayed($make);
            }
            #[test]
            fn garbage_instead_of_a_request() {
                garbage($make);
            }
            #[test]
            fn server_full() {
                full($make);
            }
            #[test]
            fn duplicate_client_id_refused() {
                duplicate_refused($make);
            }
            #[test]
            fn duplicate_client_id_replaces_the_older() {
                duplicate_replaces($make);
            }
        }
    };
}

over!(loopback, Loopback::new());
over!(enet, secure_common::Enet::default());

#[test]
fn a_silent_peer_is_dropped_after_the_handshake_timeout() {
    let mut rig = Rig::new(Loopback::new(), 8, |c| {
        c.with_handshake_timeout(Duration::from_secs(1))
    });
    let raw = rig.join_raw();
    rig.until("the raw client connects", |r| r.connected(raw));
    for _ in 0..90 {
        rig.step(); // 0.9 s
    }
    assert_eq!(rig.disconnected(raw), None);
    rig.until("the server drops it", |r| r.disconnected(raw).is_some());
    assert_eq!(rig.disconnected(raw), Some(DisconnectReason::Timeout));
    assert_eq!(rig.server.secure_stats().handshake_timeouts, 1);
    assert!(rig.server_log.is_empty());
}

#[test]
fn a_client_without_an_answer_gives_up() {
    // A plain (not secure) server never answers the request.
    let net = mf_net::transport::loopback::LoopbackNetwork::new();
    let mut server = net.listen("plain", 4).unwrap();
    let address = "loopback:plain".parse().unwrap();
    let inner = net.connect("plain", 0);
    let mut client = mf_net_secure::SecureClient::new(inner, token(1, &address))
        .with_handshake_timeout(Duration::from_millis(500));

    let mut reason = None;
    for _ in 0..100 {
        while server.poll_event().is_some() {}
        while let Some(e) = client.poll_event() {
            if let Ev::Disconnected(_, r) = secure_common::owned(e) {
                reason = Some(r);
            }
        }
        assert_eq!(
            client.send(PeerId::SERVER, Channel::Reliable, b"early"),
            Err(mf_net::transport::SendError::NotConnected)
        );
        client.flush();
        client.advance(Duration::from_millis(10));
    }
    assert_eq!(reason, Some(DisconnectReason::ConnectFailed));
    assert_eq!(client.secure_stats().handshake_timeouts, 1);
}

#[test]
fn tokens_issued_before_the_start_are_refused_when_asked() {
    // A token issued a second before the server started: accepted by default...
    let before = |rig: &Rig<Loopback>| {
        issuer()
            .issue(
                1,
                b"",
                std::slice::from_ref(&rig.address),
                NOW - Duration::from_secs(1),
            )
            .unwrap()
    };
    let mut rig = Rig::new(Loopback::new(), 8, |c| c);
    let t = before(&rig);
    let c = rig.join(t);
    rig.until("the default admits it", |r| r.connected(c));
    // ...and refused as expired by a server that refuses tokens from before its start.
    let mut rig = Rig::new(Loopback::new(), 8, |mut c| {
        c.refuse_tokens_before_start = true;
        c
    });
    let t = before(&rig);
    let c = rig.join(t);
    rig.until("the token is refused", |r| r.disconnected(c).is_some());
    assert_eq!(rig.disconnected(c), Some(DisconnectReason::TokenExpired));
    let fresh = token(2, &rig.address);
    let ok = rig.join(fresh);
    rig.until("a token from after the start is admitted", |r| {
        r.connected(ok)
    });
}
