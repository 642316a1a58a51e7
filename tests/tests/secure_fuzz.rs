//! A seeded fuzz of the secure server's two paths for untrusted bytes: connection requests
//! (mutations of a valid one, and garbage) from raw clients, and sealed packets (mutations of
//! real ones, and garbage) on an admitted connection. Nothing panics, nothing mutated is
//! admitted or passed up, every refused client hears a refusal reason, and the admitted
//! connection carries on. Token parsing gets the same treatment.

#![allow(clippy::unwrap_used)]

mod secure_common;

use std::rc::Rc;
use std::time::Duration;

use mf_net::transport::{Channel, DisconnectReason, PeerId, Transport};
use mf_net_secure::{ConnectToken, SecureClient};
use mf_net_tests::tap::{Handle, Tap};
use secure_common::{issuer, token, Ev, Loopback, Net, Rig};

/// `original` changed at random: bits flipped, cut short, lengthened, or replaced by garbage.
/// Never equal to `original`.
fn mutate(rng: &mut fastrand::Rng, original: &[u8]) -> Vec<u8> {
    loop {
        let mut bytes = original.to_vec();
        match rng.u8(0..6) {
            0 | 1 => {
                for _ in 0..rng.usize(1..=8) {
                    let bit = rng.usize(0..bytes.len() * 8);
                    bytes[bit / 8] ^= 1 << (bit % 8);
                }
            }
            2 => bytes.truncate(rng.usize(0..bytes.len())),
            3 => bytes.extend((0..rng.usize(1..64)).map(|_| rng.u8(..))),
            4 => {
                // A field overwritten with an extreme value.
                let at = rng.usize(0..bytes.len());
                let end = (at + rng.usize(1..=8)).min(bytes.len());
                let fill = if rng.bool() { 0xff } else { 0 };
                bytes[at..end].fill(fill);
            }
            _ => {
                let len = rng.usize(0..3000);
                bytes = (0..len).map(|_| rng.u8(..)).collect();
                if rng.bool() {
                    if let Some(b) = bytes.first_mut() {
                        *b = 1; // claims to be a request
                    }
                }
            }
        }
        if bytes != original {
            return bytes;
        }
    }
}

/// The request a client holding `token` sends: its kind byte, the token's version and
/// public part (everything before the client's keys), then its connection salt.
fn request_of(token: &ConnectToken) -> Vec<u8> {
    let bytes = token.to_bytes();
    let sealed_len = usize::from(u16::from_le_bytes([bytes[56], bytes[57]]));
    let mut request = vec![1];
    request.extend_from_slice(&bytes[..58 + sealed_len]);
    request.extend_from_slice(&[0x5a; 16]);
    request
}

/// The server sent no more bytes than it received: no answer is larger than its request.
fn no_amplification(rig: &Rig<Loopback>) {
    let wire = rig.server.inner().stats();
    assert!(
        wire.bytes_sent <= wire.bytes_received,
        "no amplification: {wire:?}"
    );
}

/// A genuine client holding a token issued now (on the server's clock) is admitted.
fn a_genuine_client_gets_in(rig: &mut Rig<Loopback>, client_id: u64) {
    let now = rig.server.now();
    let fresh = issuer()
        .issue(
            client_id,
            b"player",
            std::slice::from_ref(&rig.address),
            now,
        )
        .unwrap();
    let ok = rig.join(fresh);
    rig.until("a genuine client is admitted", |r| r.connected(ok));
}

#[test]
fn fuzzed_connection_requests_are_refused_without_panics() {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let mut rig = Rig::new(Loopback::new(), 8, |c| c);
    let valid = request_of(&token(1, &rig.address));
    const CASES: usize = 1500;
    for batch in 0..CASES / 10 {
        let first = rig.clients.len();
        for _ in 0..10 {
            rig.join_raw();
        }
        rig.step();
        for i in first..rig.clients.len() {
            assert!(rig.connected(i));
            let bytes = mutate(&mut rng, &valid);
            let channel = if rng.bool() {
                Channel::Reliable
            } else {
                Channel::Unreliable
            };
            rig.clients[i]
                .send(PeerId::SERVER, channel, &bytes)
                .unwrap();
        }
        rig.until("the batch is dropped", |r| {
            (first..r.clients.len()).all(|i| r.disconnected(i).is_some())
        });
        for i in first..rig.clients.len() {
            let reason = rig.disconnected(i).unwrap();
            // Dropped unanswered, or challenged (a mutation of the salt alone leaves the token
            // valid) and dropped after the handshake timeout.
            assert!(
                matches!(
                    reason,
                    DisconnectReason::ConnectFailed | DisconnectReason::Timeout
                ),
                "batch {batch}, client {i}: {reason:?}"
            );
        }
    }
    assert!(
        rig.server_log.is_empty(),
        "nothing admitted: {:?}",
        rig.server_log
    );
    let stats = rig.server.secure_stats();
    assert_eq!(stats.refused() + stats.challenges_sent, CASES as u64);
    no_amplification(&rig);
    assert_eq!(stats.challenges_sent, stats.handshake_timeouts);
    assert!(
        stats.refused_malformed > 0 && stats.refused_invalid > 0,
        "{stats:?}"
    );
    // The valid request still works afterwards.
    a_genuine_client_gets_in(&mut rig, 1);
}

/// The challenge step under fuzz: peers whose valid request was challenged send mutated
/// answers (random bytes, mutations of a genuine client's answer on another connection, that
/// answer exactly). None is admitted, nothing is passed up, nothing panics, no answer is
/// larger than what it answers, and a genuine client still gets in.
#[test]
fn fuzzed_answers_to_a_challenge_admit_nobody() {
    let mut rng = fastrand::Rng::with_seed(0xc4a1);
    let mut net = Loopback::new();
    let mut rig = Rig::new(Loopback(net.0.clone()), 64, |mut c| {
        c.max_pending = 64;
        c.with_handshake_timeout(Duration::from_millis(200))
    });
    // A genuine client's request and answer, captured.
    let log = Handle::default();
    let inner = Tap::new(net.connect(7), Rc::clone(&log));
    let genuine = rig.add(Box::new(SecureClient::new(inner, token(1, &rig.address))));
    rig.until("the genuine client is admitted", |r| r.connected(genuine));
    let answer = log.borrow().sent[1].2.clone();
    // Another client's request, captured on the way and held back: its token is unused.
    let held = Handle::default();
    held.borrow_mut().hold = true;
    let inner = Tap::new(net.connect(7), Rc::clone(&held));
    let other = rig.add(Box::new(SecureClient::new(inner, token(2, &rig.address))));
    rig.until("the other request is captured", |_| {
        !held.borrow().sent.is_empty()
    });
    let request = held.borrow().sent[0].2.clone();
    assert!(!rig.connected(other));
    const CASES: usize = 600;
    for _ in 0..CASES / 20 {
        let first = rig.clients.len();
        for _ in 0..20 {
            rig.join_raw();
        }
        rig.step();
        for i in first..rig.clients.len() {
            rig.clients[i]
                .send(PeerId::SERVER, Channel::Reliable, &request)
                .unwrap();
        }
        rig.step();
        rig.step();
        for i in first..rig.clients.len() {
            let bytes = match rng.u8(0..4) {
                0 => answer.clone(),
                1 => {
                    let mut b: Vec<u8> = (0..rng.usize(0..120)).map(|_| rng.u8(..)).collect();
                    if let Some(k) = b.first_mut() {
                        *k = 3; // claims to be an answer
                    }
                    b
                }
                _ => mutate(&mut rng, &answer),
            };
            rig.clients[i]
                .send(PeerId::SERVER, Channel::Reliable, &bytes)
                .unwrap();
        }
        rig.until("the batch is dropped", |r| {
            (first..r.clients.len()).all(|i| r.disconnected(i).is_some())
        });
    }
    let admissions = rig
        .server_log
        .iter()
        .filter(|e| matches!(e, Ev::Connected(..)))
        .count();
    assert_eq!(admissions, 1, "only the genuine client");
    let stats = rig.server.secure_stats();
    assert!(stats.challenges_sent > CASES as u64, "{stats:?}");
    assert!(stats.challenge_failures >= CASES as u64, "{stats:?}");
    no_amplification(&rig);
    a_genuine_client_gets_in(&mut rig, 3);
}

#[test]
fn fuzzed_packets_on_an_admitted_connection_are_dropped_without_panics() {
    let mut rng = fastrand::Rng::with_seed(0xf022);
    let mut net = Loopback::new();
    let mut rig = Rig::new(Loopback(net.0.clone()), 8, |c| c);
    let log = Handle::default();
    let inner = Tap::new(net.connect(7), Rc::clone(&log));
    let victim = rig.add(Box::new(SecureClient::new(inner, token(1, &rig.address))));
    let bystander = rig.join(token(2, &rig.address));
    rig.until("both are admitted", |r| {
        r.connected(victim) && r.connected(bystander)
    });
    let peer = rig.server_peers()[0];
    let mut genuine = 0;
    let mut injected = 0;
    for round in 0..400 {
        // A genuine packet each round, on alternating channels...
        let channel = if round % 2 == 0 {
            Channel::Reliable
        } else {
            Channel::Unreliable
        };
        let msg = format!("genuine {round}").into_bytes();
        rig.clients[victim]
            .send(PeerId::SERVER, channel, &msg)
            .unwrap();
        genuine += 1;
        rig.step();
        // ...then mutated copies of real sealed packets (and exact replays) slipped in raw,
        // straight onto the admitted connection.
        let real = log.borrow().sent.clone();
        for _ in 0..4 {
            let (_, channel, packet) = &real[rng.usize(0..real.len())];
            let bytes = if rng.u8(0..5) == 0 {
                packet.clone()
            } else {
                mutate(&mut rng, packet)
            };
            let to = PeerId::SERVER;
            log.borrow_mut().inject.push((to, *channel, bytes));
            injected += 1;
        }
        rig.step();
    }
    for _ in 0..5 {
        rig.step();
    }
    let got = rig.server_received(peer);
    assert_eq!(
        got.len(),
        genuine,
        "only the genuine packets were passed up"
    );
    assert!(got.iter().all(|m| m.starts_with(b"genuine ")));
    let stats = rig.server.secure_stats();
    assert_eq!(
        stats.dropped_tampered + stats.dropped_replayed + stats.dropped_unexpected,
        injected,
        "{stats:?}"
    );
    assert!(!rig.client_logs[victim]
        .iter()
        .any(|e| matches!(e, Ev::Disconnected(..))));
    // Both connections carry on.
    for i in [victim, bystander] {
        rig.clients[i]
            .send(PeerId::SERVER, Channel::Reliable, b"after")
            .unwrap();
    }
    for _ in 0..3 {
        rig.step();
    }
    for p in rig.server_peers() {
        assert_eq!(
            rig.server_received(p).last().map(Vec::as_slice),
            Some(&b"after"[..])
        );
    }
}

#[test]
fn fuzzed_token_text_and_bytes_never_panic() {
    let mut rng = fastrand::Rng::with_seed(7);
    let valid = token(1, &"enet:127.0.0.1:27615".parse().unwrap());
    let bytes = valid.to_bytes();
    assert_eq!(ConnectToken::from_bytes(&bytes).as_ref(), Ok(&valid));
    assert_eq!(ConnectToken::from_hex(&valid.to_hex()).as_ref(), Ok(&valid));
    for _ in 0..5000 {
        let mutated = mutate(&mut rng, &bytes);
        let _ = ConnectToken::from_bytes(&mutated);
        let text: String = (0..rng.usize(0..200))
            .map(|_| char::from(rng.u8(b'0'..=b'z')))
            .collect();
        let _ = ConnectToken::from_hex(&text);
    }
}
