//! Sealed packets that must not get through: one with a flipped bit, a replayed one (on either
//! channel), one sealed with a previous connection's keys — in both directions. Each is dropped
//! and counted, never passed up, and the connection it came on and every other client carry
//! on.

#![allow(clippy::unwrap_used)]

mod secure_common;

use std::cell::RefCell;
use std::rc::Rc;

use mf_net::transport::address::NetworkAddress;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::{Channel, DisconnectReason, PeerId, Transport};
use mf_net_secure::SecureStats;
use mf_net_tests::tap::{Handle, Tap};
use secure_common::{token, Net, Rig};

/// Loopback with a tap on every endpoint: `taps[0]` is the server's, then the clients' in
/// connection order.
struct Tapped {
    net: LoopbackNetwork,
    taps: Rc<RefCell<Vec<Handle>>>,
}

impl Tapped {
    fn tap(&self, inner: LoopbackTransport) -> Tap<LoopbackTransport> {
        let log = Handle::default();
        self.taps.borrow_mut().push(log.clone());
        Tap::new(inner, log)
    }
}

impl Net for Tapped {
    type T = Tap<LoopbackTransport>;
    const REAL: bool = false;

    fn listen(&mut self, max_clients: usize) -> (Self::T, NetworkAddress) {
        let t = self.net.listen("arena", max_clients).unwrap();
        (self.tap(t), "loopback:arena".parse().unwrap())
    }

    fn connect(&mut self, connect_data: u32) -> Self::T {
        let t = self.net.connect("arena", connect_data);
        self.tap(t)
    }
}

struct Lab {
    rig: Rig<Tapped>,
    taps: Rc<RefCell<Vec<Handle>>>,
}

impl Lab {
    /// A server with three admitted clients.
    fn new() -> Self {
        let taps = Rc::default();
        let net = Tapped {
            net: LoopbackNetwork::new(),
            taps: Rc::clone(&taps),
        };
        let mut rig = Rig::new(net, 8, |c| c);
        for id in 0..3 {
            let t = token(100 + id, &rig.address);
            rig.join(t);
        }
        rig.until("three clients are admitted", |r| {
            (0..3).all(|i| r.connected(i))
        });
        Self { rig, taps }
    }

    fn tap(&self, endpoint: usize) -> Handle {
        Rc::clone(&self.taps.borrow()[endpoint])
    }

    /// The last packet endpoint `endpoint` sent on `channel`.
    fn last_sent(&self, endpoint: usize, channel: Channel) -> (PeerId, Vec<u8>) {
        let tap = self.tap(endpoint);
        let log = tap.borrow();
        let (peer, _, data) = log
            .sent
            .iter()
            .rev()
            .find(|(_, c, _)| *c == channel)
            .unwrap();
        (*peer, data.clone())
    }

    fn inject(&self, endpoint: usize, peer: PeerId, channel: Channel, data: Vec<u8>) {
        self.tap(endpoint)
            .borrow_mut()
            .inject
            .push((peer, channel, data));
    }

    fn peer(&self, client: usize) -> PeerId {
        self.rig.server_peers()[client]
    }

    fn settle(&mut self) {
        for _ in 0..5 {
            self.rig.step();
        }
    }

    /// Every client in `clients` sends `text` on both channels and the server answers each on
    /// both; checks that all of it arrives.
    fn everyone_carries_on(&mut self, clients: &[usize], text: &str) {
        for &i in clients {
            let msg = format!("{text} from {i}").into_bytes();
            for channel in [Channel::Reliable, Channel::Unreliable] {
                self.rig.clients[i]
                    .send(PeerId::SERVER, channel, &msg)
                    .unwrap();
            }
        }
        self.settle();
        for &i in clients {
            let msg = format!("{text} from {i}").into_bytes();
            let got = self.rig.server_received(self.peer(i));
            assert_eq!(got.iter().filter(|m| **m == msg).count(), 2, "{i}: {got:?}");
            let answer = format!("{text} to {i}").into_bytes();
            for channel in [Channel::Reliable, Channel::Unreliable] {
                self.rig
                    .server
                    .send(self.peer(i), channel, &answer)
                    .unwrap();
            }
        }
        self.settle();
        for &i in clients {
            let answer = format!("{text} to {i}").into_bytes();
            let got = self.rig.received(i);
            assert_eq!(
                got.iter().filter(|m| **m == answer).count(),
                2,
                "{i}: {got:?}"
            );
        }
    }
}

fn flipped(mut packet: Vec<u8>, bit: usize) -> Vec<u8> {
    let bit = bit % (packet.len() * 8);
    packet[bit / 8] ^= 1 << (bit % 8);
    packet
}

#[test]
fn forged_and_replayed_packets_to_the_server_are_dropped_and_counted() {
    let mut lab = Lab::new();
    lab.everyone_carries_on(&[0, 1, 2], "hello");
    let received_before = lab.rig.server_received(lab.peer(0)).len();

    // An attacker on the path intercepts client 0's next packets (tap endpoint 1)...
    lab.tap(1).borrow_mut().hold = true;
    for channel in [Channel::Reliable, Channel::Unreliable] {
        lab.rig.clients[0]
            .send(PeerId::SERVER, channel, b"two")
            .unwrap();
    }
    lab.settle();
    lab.tap(1).borrow_mut().hold = false;
    let (server, reliable) = lab.last_sent(1, Channel::Reliable);
    let (_, unreliable) = lab.last_sent(1, Channel::Unreliable);
    // ...and forwards them with a flipped bit: in the kind, the sequence number, the
    // ciphertext, the tag.
    for bit in [3, 8 * 5 + 1, 8 * 12, reliable.len() * 8 - 1] {
        lab.inject(1, server, Channel::Reliable, flipped(reliable.clone(), bit));
    }
    lab.inject(
        1,
        server,
        Channel::Unreliable,
        flipped(unreliable.clone(), 8 * 10),
    );
    lab.settle();
    assert_eq!(lab.rig.server.secure_stats().dropped_tampered, 5);
    assert_eq!(lab.rig.server_received(lab.peer(0)).len(), received_before);
    // Then the genuine packets, once (they get through) and again (replays).
    lab.inject(1, server, Channel::Reliable, reliable.clone());
    lab.inject(1, server, Channel::Unreliable, unreliable.clone());
    lab.settle();
    lab.inject(1, server, Channel::Reliable, reliable);
    lab.inject(1, server, Channel::Unreliable, unreliable.clone());
    lab.inject(1, server, Channel::Unreliable, unreliable);
    lab.settle();

    let stats: SecureStats = lab.rig.server.secure_stats();
    assert_eq!(stats.dropped_tampered, 5, "{stats:?}");
    assert_eq!(stats.dropped_replayed, 3, "{stats:?}");
    assert_eq!(
        lab.rig.server_received(lab.peer(0)).len(),
        received_before + 2,
        "only the genuine packets were passed up, once"
    );
    lab.everyone_carries_on(&[0, 1, 2], "still here");
}

#[test]
fn forged_and_replayed_packets_to_a_client_are_dropped_and_counted() {
    let mut lab = Lab::new();
    lab.everyone_carries_on(&[0, 1, 2], "hello");
    let before = lab.rig.received(1).len();
    // The server's last packets to client 1 (tap endpoint 0 is the server's).
    let peer = lab.peer(1);
    let tap = lab.tap(0);
    let last = |channel| {
        tap.borrow()
            .sent
            .iter()
            .rev()
            .find(|(p, c, _)| *p == peer && *c == channel)
            .map(|(_, _, d)| d.clone())
            .unwrap()
    };
    // An attacker intercepts the server's next packets to client 1...
    tap.borrow_mut().hold = true;
    for channel in [Channel::Reliable, Channel::Unreliable] {
        lab.rig.server.send(peer, channel, b"two").unwrap();
    }
    lab.settle();
    tap.borrow_mut().hold = false;
    let (reliable, unreliable) = (last(Channel::Reliable), last(Channel::Unreliable));
    // ...forwards them with a flipped bit, then as they were, then again.
    lab.inject(0, peer, Channel::Reliable, flipped(reliable.clone(), 77));
    lab.inject(
        0,
        peer,
        Channel::Unreliable,
        flipped(unreliable.clone(), 99),
    );
    lab.settle();
    lab.inject(0, peer, Channel::Reliable, reliable.clone());
    lab.inject(0, peer, Channel::Unreliable, unreliable.clone());
    lab.settle();
    lab.inject(0, peer, Channel::Unreliable, unreliable);
    lab.inject(0, peer, Channel::Reliable, reliable);
    lab.settle();
    let got = lab.rig.received(1);
    assert_eq!(got.len(), before + 2, "{got:?}");
    assert_eq!(&got[before..], &[b"two".to_vec(), b"two".to_vec()]);
    let stats = lab.rig.clients[1].secure_stats().unwrap();
    assert_eq!(
        (stats.dropped_tampered, stats.dropped_replayed),
        (2, 2),
        "{stats:?}"
    );
    assert_eq!(lab.rig.disconnected(1), None);
    lab.everyone_carries_on(&[0, 1, 2], "still here");
}

#[test]
fn packets_under_a_previous_connections_keys_are_dropped() {
    let mut lab = Lab::new();
    lab.everyone_carries_on(&[0, 1, 2], "hello");
    // Client 2 (tap endpoint 3) leaves; its last packets were sealed with its old keys.
    let (_, old_reliable) = lab.last_sent(3, Channel::Reliable);
    let (_, old_unreliable) = lab.last_sent(3, Channel::Unreliable);
    lab.rig.clients[2].disconnect(PeerId::SERVER, DisconnectReason::Closed);
    lab.settle();
    // The same player comes back with a new token (new keys): client 3, tap endpoint 4.
    let t = token(102, &lab.rig.address);
    let back = lab.rig.join(t);
    lab.rig.until("the player is back", |r| r.connected(back));
    let peer = lab.rig.server_peers()[3];
    lab.inject(4, PeerId::SERVER, Channel::Reliable, old_reliable);
    lab.inject(4, PeerId::SERVER, Channel::Unreliable, old_unreliable);
    lab.settle();
    assert_eq!(lab.rig.server.secure_stats().dropped_tampered, 2);
    assert!(lab.rig.server_received(peer).is_empty());
    assert_eq!(lab.rig.server.identity(peer).unwrap().client_id(), 102);
    // The new connection's numbering is its own: its packets, and everyone else's, get through.
    lab.everyone_carries_on(&[0, 1, back], "fresh");
}
