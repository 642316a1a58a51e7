#![allow(clippy::unwrap_used)]
//! The replication wire, byte for byte, seen by a hand-driven client: welcome, a spawn, an idle
//! snapshot (9 bytes) and a snapshot with two changed members. Then a hostile client: malformed
//! and misdirected replication messages are dropped and counted, never crash the server.

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::message_ids as protocol;
use mf_net::replication::SnapshotEncoding;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::TransportEvent;
mod replication_common;

use mf_net_tests::harness::{messages, Mp, World};
use replication_common::{library, Body, BODY};

struct Raw {
    transport: LoopbackTransport,
    received: Vec<Vec<u8>>,
}

impl Raw {
    fn connect(net: &LoopbackNetwork) -> Self {
        let data = mf_net::replication::connect_data(&messages()).unwrap();
        Self {
            transport: net.connect("game", data),
            received: Vec::new(),
        }
    }

    fn pump(&mut self) {
        while let Some(event) = self.transport.poll_event() {
            if let TransportEvent::Received { data, .. } = event {
                self.received.push(data.to_vec());
            }
        }
    }

    fn send(&mut self, id: u16, payload: &[u8], channel: Channel) {
        let mut packet = vec![1];
        packet.extend_from_slice(&id.to_le_bytes());
        packet.extend_from_slice(&0u32.to_le_bytes());
        packet.extend_from_slice(payload);
        let _ = self.transport.send(PeerId::SERVER, channel, &packet);
        self.transport.flush();
    }

    fn take(&mut self, id: u16) -> Vec<Vec<u8>> {
        let (hits, rest) = self
            .received
            .drain(..)
            .partition(|p| p.len() >= 3 && u16::from_le_bytes([p[1], p[2]]) == id);
        self.received = rest;
        hits
    }
}

fn frame(server: &mut Mp, raw: &mut Raw) {
    server.begin_frame(Duration::from_secs(1) / 30);
    server.end_frame();
    raw.pump();
}

#[test]
fn pinned_bytes_of_welcome_spawn_and_snapshots() {
    // The byte format (the source's), pinned.
    let world = World::with_encoding(0, SnapshotEncoding::Bytes, library);
    let net = world.net;
    let mut server = world.server;
    let mut raw = Raw::connect(&net);
    frame(&mut server, &mut raw);
    let fingerprint = server.fingerprint();
    raw.send(
        protocol::HELLO,
        &[&fingerprint.to_le_bytes()[..], &[0]].concat(),
        Channel::Reliable,
    );
    let tick = server.tick(); // the welcome leaves in begin_frame, before this frame's tick
    assert_eq!(tick, 5);
    frame(&mut server, &mut raw);
    let welcome = raw.take(protocol::WELCOME);
    let mut expected = vec![1, 0xf1, 0x0f];
    expected.extend_from_slice(&tick.to_le_bytes());
    expected.extend_from_slice(&2u64.to_le_bytes()); // peer id 2 (loopback numbers from 2)
    expected.push(30); // tick rate
    expected.extend_from_slice(&tick.to_le_bytes()); // server tick
    expected.push(0); // snapshot encoding: bytes
    assert_eq!(welcome, [expected]);
    assert_eq!(
        raw.take(protocol::SNAPSHOT).len(),
        1,
        "snapshots start at once"
    );

    let root = server.scene().root();
    let node = server.spawn_named(BODY, root, "b", PeerId::SERVER).unwrap();
    let handle = server.scene().net_ref::<Body>(node).unwrap();
    *server.scene_mut().get_mut(handle).unwrap() = Body {
        x: 1,
        y: 2,
        hp: 3,
        local: 0,
    };
    let spawn_tick = server.tick();
    frame(&mut server, &mut raw);
    let spawn = raw.take(protocol::SPAWN);
    #[rustfmt::skip]
    let mut expected = vec![
        1, 0xf3, 0x0f,                    // version, id 4083
    ];
    expected.extend_from_slice(&spawn_tick.to_le_bytes());
    #[rustfmt::skip]
    expected.extend_from_slice(&[
        24,                               // the one spawn's length
        0x01,                             // first net id 1
        0x00,                             // scene index 0 (zig-zag)
        0x00, 5, b'/', b'r', b'o', b'o', b't', // parent by path "/root"
        1, b'b',                          // name "b"
        0x01,                             // authority: the server
        0x01,                             // one networked node
        0x00,                             // none absent
        0x07, 1, 0, 0, 0, 2, 0, 0, 0, 3,  // full state: mask 0b111, x, y, hp
    ]);
    assert_eq!(spawn, [expected]);

    // Nothing changed since the spawn (state at tick 0): the snapshot is idle, 9 bytes.
    let idle = raw.take(protocol::SNAPSHOT);
    assert_eq!(idle.len(), 1);
    let t = server.tick().to_le_bytes();
    assert_eq!(idle[0], [1, 0xf5, 0x0f, t[0], t[1], t[2], t[3], 0, 0]);
    assert_eq!(idle[0].len(), 9);

    // Two members change: mask 0b101, x and hp.
    let b = server.scene_mut().get_mut(handle).unwrap();
    b.x = 5;
    b.hp = 4;
    frame(&mut server, &mut raw);
    let snapshot = raw.take(protocol::SNAPSHOT);
    let t = server.tick().to_le_bytes();
    #[rustfmt::skip]
    assert_eq!(snapshot, [vec![
        1, 0xf5, 0x0f, t[0], t[1], t[2], t[3],
        0x00,                  // flags
        0x01, 0x06,            // net id 1, 6 bytes
        0x05, 5, 0, 0, 0, 4,   // mask 0b101, x = 5, hp = 4
        0x00,                  // end
    ]]);
    // Not acknowledged: the next snapshot carries it again (a superset).
    frame(&mut server, &mut raw);
    assert_eq!(raw.take(protocol::SNAPSHOT)[0][7..], snapshot[0][7..]);
    // Acknowledged: idle again.
    let acked = server.tick();
    let mut ack = Vec::new();
    let mut v = acked;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            ack.push(byte);
            break;
        }
        ack.push(byte | 0x80);
    }
    raw.send(protocol::ACK, &ack, Channel::Unreliable);
    frame(&mut server, &mut raw);
    assert_eq!(raw.take(protocol::SNAPSHOT)[0].len(), 9);
    assert_eq!(
        server.peer_stats(PeerId(2)).unwrap().acknowledged_tick,
        acked
    );
}

#[test]
fn a_hostile_client_cannot_crash_the_server() {
    let mut world = World::new(1, library);
    let root = world.root();
    world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    let mut raw = Raw::connect(&world.net);
    world.frame();
    raw.pump();
    // Before hello: acks and server-only messages.
    raw.send(
        protocol::ACK,
        &[0xff, 0xff, 0xff, 0xff, 0x0f],
        Channel::Unreliable,
    );
    raw.send(protocol::SPAWN, &[1, 0, 0, 0], Channel::Reliable);
    raw.send(protocol::SNAPSHOT, &[0, 1, 200, 7], Channel::Unreliable);
    raw.send(protocol::HELLO, &[1, 2, 3], Channel::Reliable); // short fingerprint
    raw.send(protocol::DESPAWN, &[], Channel::Reliable);
    raw.send(protocol::AUTHORITY, &[0xff; 40], Channel::Reliable);
    raw.send(protocol::HELLO + 15, &[9; 9], Channel::Reliable); // unused reserved id
    world.step(2);
    // A mismatched hello with an absurd scene count is refused without allocating for it.
    raw.send(
        protocol::HELLO,
        &[&7u64.to_le_bytes()[..], &[0xff, 0xff, 0xff, 0xff, 0x0f]].concat(),
        Channel::Reliable,
    );
    world.step(2);
    raw.pump();
    assert!(raw.take(protocol::REFUSE).len() == 1);
    assert!(world.server.stats().control_dropped >= 4);
    assert_eq!(world.server.peers().len(), 1);
    // The honest client is unaffected.
    let handles: Vec<_> = world
        .server
        .scene()
        .iter::<Body>()
        .map(|(h, _)| h)
        .collect();
    world.server.scene_mut().get_mut(handles[0]).unwrap().x = 77;
    world.step(3);
    world.assert_converged();
}

#[test]
fn a_hello_with_bytes_after_its_body_is_refused() {
    let world = World::new(0, library);
    let (net, mut server) = (world.net, world.server);
    let mut raw = Raw::connect(&net);
    frame(&mut server, &mut raw);
    let fingerprint = server.fingerprint();
    let hello = [&fingerprint.to_le_bytes()[..], &[0, 9]].concat();
    raw.send(protocol::HELLO, &hello, Channel::Reliable);
    frame(&mut server, &mut raw);
    frame(&mut server, &mut raw);
    let refuse = raw.take(protocol::REFUSE);
    assert_eq!(refuse.len(), 1);
    let text = NetReader::new(&refuse[0][7..])
        .read_str()
        .unwrap()
        .to_owned();
    assert_eq!(text, "malformed hello: trailing bytes after the message");
    assert!(raw.take(protocol::WELCOME).is_empty());
    assert!(server.peers().is_empty());
}
