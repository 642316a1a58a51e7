//! The attacks a security review ran against the secure layer, each as a test that now fails
//! for the attacker, over loopback and over ENet on 127.0.0.1: a captured request replayed to
//! another server that accepts the token or to a restarted server, a captured request replayed
//! blind (without receiving at its address), slots held by peers that never present a token
//! (with `max_pending` below the spare slots or at its default above them), one request
//! presented from every place in the handshake, one account filling the used-token history,
//! and the server's clock stepped back. Also: an
//! attacker holding a full capture of a session can neither read nor inject anywhere.

#![allow(clippy::unwrap_used)]

mod secure_common;

use std::rc::Rc;
use std::time::Duration;

use mf_net::transport::{Channel, PeerId, Transport};
use mf_net_secure::{ConnectToken, DuplicatePolicy, SecureClient};
use mf_net_tests::tap::{Handle, Tap};
use secure_common::{issuer, token, Ev, Loopback, Net, Rig, NOW};

/// Admits a victim holding `token` on `rig` through a [`Tap`] that records everything it
/// sends; it then sends `payloads` reliably. Returns the victim's index and the capture.
fn victim_session<N: Net>(
    rig: &mut Rig<N>,
    token: ConnectToken,
    payloads: &[&[u8]],
) -> (usize, Handle) {
    let log = Handle::default();
    let inner = Tap::new(rig.net.connect(7), Rc::clone(&log));
    let victim = rig.add(Box::new(SecureClient::new(inner, token)));
    rig.until("the victim is admitted", |r| r.connected(victim));
    for p in payloads {
        rig.clients[victim]
            .send(PeerId::SERVER, Channel::Reliable, p)
            .unwrap();
    }
    let peer = *rig.server_peers().last().unwrap();
    let count = payloads.len();
    rig.until("the server hears the victim", |r| {
        r.server_received(peer).len() == count
    });
    (victim, log)
}

/// Replays every packet of `capture` (request first) from a raw peer of `rig`, which never
/// reads what it is sent; then checks that nothing was admitted or passed up.
fn replay_blind<N: Net>(rig: &mut Rig<N>, capture: &Handle) {
    let raw = rig.join_raw();
    rig.until("the replayer connects", |r| r.connected(raw));
    let packets: Vec<_> = capture.borrow().sent.clone();
    for (_, channel, bytes) in &packets {
        rig.clients[raw]
            .send(PeerId::SERVER, *channel, bytes)
            .unwrap();
        rig.step();
    }
    for _ in 0..50 {
        rig.step();
    }
    let admitted: Vec<_> = rig
        .server_log
        .iter()
        .filter(|e| matches!(e, Ev::Connected(..) | Ev::Received(..)))
        .cloned()
        .collect();
    assert_eq!(rig.server.admitted_count(), 0, "{admitted:?}");
    assert!(admitted.is_empty(), "{admitted:?}");
    let stats = rig.server.secure_stats();
    assert!(stats.challenges_sent >= 1, "the token opened: {stats:?}");
    assert!(
        stats.challenge_failures >= 1,
        "the captured answer failed: {stats:?}"
    );
}

/// Attacks 1 and 2: the request and every packet of a victim's session on one server,
/// replayed to another server that accepts the token (or the same server restarted: a new
/// server with its own challenge key and an empty used-token history).
fn replay_elsewhere<N: Net>(first: N, second: N) {
    let mut a = Rig::new(first, 8, |c| c);
    let mut b = Rig::new(second, 8, |c| c);
    let t = token_for_both(&a, &b);
    let (_, capture) = victim_session(&mut a, t, &[b"secret one", b"secret two"]);
    replay_blind(&mut b, &capture);
}

/// A token for client 1 listing both rigs' servers.
fn token_for_both<N: Net>(a: &Rig<N>, b: &Rig<N>) -> ConnectToken {
    let servers = [a.address.clone(), b.address.clone()];
    issuer().issue(1, b"player", &servers, NOW).unwrap()
}

/// Attack 1's root: the same token used by its holder on two servers gives two connections
/// with other keys, so equal plaintexts seal to unrelated bytes (no XOR of two ciphertexts
/// gives away a plaintext) and a packet of one never authenticates on the other.
fn one_token_two_connections<N: Net>(first: N, second: N) {
    let mut a = Rig::new(first, 8, |c| c);
    let mut b = Rig::new(second, 8, |c| c);
    let t = token_for_both(&a, &b);
    let plain: &[u8] = b"the same plaintext on both";
    let (victim_a, on_a) = victim_session(&mut a, t.clone(), &[plain]);
    let (victim_b, on_b) = victim_session(&mut b, t, &[plain]);
    let last = |h: &Handle| h.borrow().sent.last().unwrap().2.clone();
    let (sealed_a, sealed_b) = (last(&on_a), last(&on_b));
    assert_eq!(sealed_a.len(), sealed_b.len());
    assert_eq!(
        sealed_a[..9],
        sealed_b[..9],
        "same kind and sequence number"
    );
    let xor: Vec<u8> = sealed_a[9..]
        .iter()
        .zip(&sealed_b[9..])
        .map(|(x, y)| x ^ y)
        .collect();
    assert!(
        xor[..plain.len()].iter().any(|&x| x != 0),
        "another keystream"
    );
    // Connection A's next packet slipped into connection B: dropped, never passed up.
    a.clients[victim_a]
        .send(PeerId::SERVER, Channel::Reliable, b"next")
        .unwrap();
    a.step();
    let sealed_a = last(&on_a);
    let peer = b.server_peers()[0];
    let before = b.server.secure_stats().dropped_tampered;
    on_b.borrow_mut()
        .inject
        .push((PeerId::SERVER, Channel::Reliable, sealed_a));
    for _ in 0..20 {
        b.step();
    }
    assert_eq!(b.server.secure_stats().dropped_tampered, before + 1);
    assert_eq!(b.server_received(peer).len(), 1);
    assert!(b.connected(victim_b));
}

/// Attack 3 (and 8): a captured request replayed first admits nobody, holds nothing for
/// long, and does not lock the real player out, even under `RefuseNewer`.
fn captured_request_first<N: Net>(net: N) {
    let mut rig = Rig::new(net, 8, |c| {
        c.with_duplicates(DuplicatePolicy::RefuseNewer)
            .with_handshake_timeout(Duration::from_millis(800))
    });
    // The victim's request is captured on the way and held back.
    let log = Handle::default();
    log.borrow_mut().hold = true;
    let inner = Tap::new(rig.net.connect(7), Rc::clone(&log));
    let victim = rig.add(Box::new(SecureClient::new(inner, token(1, &rig.address))));
    rig.until("the victim's request is captured", |_| {
        !log.borrow().sent.is_empty()
    });
    let request = log.borrow().sent[0].clone();
    // The attacker presents it first, blind.
    let raw = rig.join_raw();
    rig.until("the attacker connects", |r| r.connected(raw));
    rig.clients[raw]
        .send(PeerId::SERVER, request.1, &request.2)
        .unwrap();
    rig.until("the attacker is challenged", |r| {
        r.server.secure_stats().challenges_sent == 1
    });
    // Then the real request gets through.
    {
        let mut log = log.borrow_mut();
        log.hold = false;
        log.inject.push(request);
    }
    rig.until("the real player is admitted", |r| r.connected(victim));
    rig.until("the attacker is dropped", |r| r.disconnected(raw).is_some());
    assert_eq!(rig.server.admitted_count(), 1);
    assert_eq!(rig.server.secure_stats().handshake_timeouts, 1);
    assert_eq!(rig.server.secure_stats().refused_client_id_in_use, 0);
}

/// Attack 4: peers that connect and never present a token hold no slot: the handshake is
/// capped, the longest-silent stranger makes room, and a token holder gets in at once.
fn silent_strangers<N: Net>(net: N) {
    let mut rig = Rig::new(net, 2, |c| {
        let mut c = c.with_handshake_timeout(Duration::from_secs(30));
        c.max_pending = 2;
        c
    });
    for _ in 0..5 {
        let raw = rig.join_raw();
        rig.until("a stranger connects", |r| {
            r.connected(raw) || r.disconnected(raw).is_some()
        });
    }
    let t = token(1, &rig.address);
    let player = rig.join(t);
    rig.until("the player is admitted", |r| r.connected(player));
    assert!(rig.server.pending_count() <= 2);
    assert!(rig.server.secure_stats().strangers_dropped >= 3);
}

/// Attack 4 with the default `max_pending` (64), above the inner transport's spare slots:
/// silent strangers on every free slot of the inner transport (8 clients + 4) would have it
/// refuse the next peer itself (`ServerFull`), before the handshake could push one of them
/// out. The newcomer that takes the last free slot pushes out the oldest stranger, so a token
/// holder still gets in.
fn silent_strangers_on_every_slot<N: Net>(net: N) {
    let mut rig = Rig::new(net, 8, |c| c);
    assert_eq!(rig.server.config().max_pending, 64);
    for _ in 0..12 {
        let raw = rig.join_raw();
        rig.until("a stranger connects", |r| {
            r.connected(raw) || r.disconnected(raw).is_some()
        });
    }
    assert!(rig.server.pending_count() < 12, "one slot stays free");
    let player = rig.join(token(1, &rig.address));
    rig.until("the player is admitted or refused", |r| {
        r.connected(player) || r.disconnected(player).is_some()
    });
    assert!(rig.connected(player), "{:?}", rig.client_logs[player]);
    assert!(rig.server.secure_stats().strangers_dropped >= 2);
}

/// Attack 9: one token's request (the attacker's own, or one captured) presented from as many
/// connections as the handshake holds, each challenged, and renewed as they time out: a
/// newcomer pushes out the oldest of those that share a token, so an honest player gets in.
fn one_request_on_every_place<N: Net>(net: N) {
    let mut rig = Rig::new(net, 64, |c| c);
    let log = Handle::default();
    log.borrow_mut().hold = true;
    let inner = Tap::new(rig.net.connect(7), Rc::clone(&log));
    let source = rig.add(Box::new(SecureClient::new(inner, token(666, &rig.address))));
    rig.until("the request is read", |_| !log.borrow().sent.is_empty());
    let request = log.borrow().sent[0].clone();
    rig.clients[source].disconnect(PeerId::SERVER, mf_net::transport::DisconnectReason::Closed);
    for _ in 0..64 {
        let raw = rig.join_raw();
        rig.until("a replayer connects", |r| {
            r.connected(raw) || r.disconnected(raw).is_some()
        });
        if rig.connected(raw) {
            let _ = rig.clients[raw].send(PeerId::SERVER, request.1, &request.2);
        }
    }
    for _ in 0..3 {
        rig.step();
    }
    assert!(rig.server.secure_stats().challenges_sent >= 60);
    let player = rig.join(token(1, &rig.address));
    rig.until("the player is admitted or refused", |r| {
        r.connected(player) || r.disconnected(player).is_some()
    });
    assert!(rig.connected(player), "{:?}", rig.client_logs[player]);
}

/// Attack 5: one account presenting many tokens cannot fill the used-token history and lock
/// the others out: the history overwrites its oldest entry.
fn one_account_many_tokens<N: Net>(net: N) {
    let mut rig = Rig::new(net, 8, |mut c| {
        c.used_token_capacity = 4;
        c
    });
    for _ in 0..6 {
        let t = token(1, &rig.address);
        let c = rig.join(t);
        rig.until("the account's next token is admitted", |r| r.connected(c));
    }
    let other = token(2, &rig.address);
    let c = rig.join(other);
    rig.until("another player is admitted", |r| r.connected(c));
    assert_eq!(rig.server.secure_stats().refused_full, 0);
}

/// Attack 6: stepping the server's clock back does not make a used (or expired) token good
/// again: the layer's clock never goes back.
fn clock_stepped_back<N: Net>(net: N) {
    let mut rig = Rig::new(net, 8, |c| c);
    let used = token(1, &rig.address);
    let first = rig.join(used.clone());
    rig.until("the token is used", |r| r.connected(first));
    // Past the token's expiry, another player connects; then the clock is stepped back.
    rig.server.set_time(NOW + Duration::from_secs(60));
    let later = issuer()
        .issue(
            2,
            b"",
            std::slice::from_ref(&rig.address),
            NOW + Duration::from_secs(60),
        )
        .unwrap();
    let second = rig.join(later);
    rig.until("a later player is admitted", |r| r.connected(second));
    rig.server.set_time(NOW);
    assert!(rig.server.now() >= NOW + Duration::from_secs(60));
    let again = rig.join(used);
    rig.until("the used token is refused", |r| {
        r.disconnected(again).is_some()
    });
    assert!(!rig.connected(again));
    let admissions = rig
        .server_log
        .iter()
        .filter(|e| matches!(e, Ev::Connected(..)));
    assert_eq!(admissions.count(), 2);
}

macro_rules! over {
    ($net:ident, $make:expr) => {
        mod $net {
            use super::*;

            #[test]
            fn a_session_replayed_to_another_server_admits_nobody() {
                replay_elsewhere($make, $make);
            }
            #[test]
            fn one_token_on_two_servers_shares_no_key() {
                one_token_two_connections($make, $make);
            }
            #[test]
            fn a_captured_request_replayed_first_locks_nobody_out() {
                captured_request_first($make);
            }
            #[test]
            fn silent_strangers_hold_no_slot() {
                silent_strangers($make);
            }
            #[test]
            fn silent_strangers_on_every_slot_keep_nobody_out() {
                silent_strangers_on_every_slot($make);
            }
            #[test]
            fn one_account_cannot_fill_the_used_token_history() {
                one_account_many_tokens($make);
            }
            #[test]
            fn a_clock_stepped_back_reopens_nothing() {
                clock_stepped_back($make);
            }
        }
    };
}

over!(loopback, Loopback::new());
over!(enet, secure_common::Enet::default());

/// Over loopback only: ENet's own limit of peers per address keeps one address from holding
/// every place in the handshake before the secure layer is asked.
#[test]
fn one_request_on_every_place_keeps_nobody_out() {
    one_request_on_every_place(Loopback::new());
}

/// Attack 2 exactly: the same server object's successor on the same network, after a restart
/// (its listener dropped and opened again under the same name).
#[test]
fn a_session_replayed_after_a_restart_admits_nobody() {
    let net = Loopback::new();
    let shared = Loopback(net.0.clone());
    let mut a = Rig::new(net, 8, |c| c);
    let t = token(1, &a.address);
    let (_, capture) = victim_session(&mut a, t, &[b"before the restart"]);
    drop(a);
    let mut b = Rig::new(shared, 8, |c| c);
    replay_blind(&mut b, &capture);
}
