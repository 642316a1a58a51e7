//! The message bus over ENet (real UDP on 127.0.0.1, port 0) through the `NetworkNode`
//! convenience: fingerprint match and mismatch, the lobby handoff through a connect string, send
//! failures counted, and zero allocations over 500 reliable round trips.

#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::thread::sleep;
use std::time::Duration;

use mf_net::bus::{BusEvent, MessageRegistry};
use mf_net::prelude::*;
use mf_net::transport::selector::SelectingTransport;
use mf_net_enet::diagnostics::set_enet_call_wrapper;
use mf_net_enet::{EnetConfig, NetworkNode};
use mf_net_tests::alloc_counter;

const MAX_STEPS: usize = 20_000;

#[derive(NetCodec, Clone, Copy, Debug, PartialEq)]
struct Ping {
    seq: u32,
    at: f64,
}

#[derive(NetCodec, Clone, Copy, Debug, PartialEq)]
struct Pong {
    seq: u32,
    load: [u16; 4],
}

#[derive(NetCodec, Clone, Debug, PartialEq)]
struct Chat {
    text: String,
}

fn registry() -> MessageRegistry {
    let mut r = MessageRegistry::new(1);
    r.register::<Ping>().unwrap();
    r.register::<Pong>().unwrap();
    r.register::<Chat>().unwrap();
    r
}

#[derive(Default)]
struct Seen {
    pings: u32,
    pongs: u32,
    last: u32,
    chats: Vec<String>,
}

fn server() -> NetworkNode<Seen> {
    let mut s: NetworkNode<Seen> = NetworkNode::listen_on(
        "127.0.0.1:0".parse().unwrap(),
        8,
        registry(),
        EnetConfig::default(),
    )
    .unwrap();
    s.subscribe(|bus, ctx, ping: &Ping, seen: &mut Seen| {
        seen.pings += 1;
        seen.last = ping.seq;
        let pong = Pong {
            seq: ping.seq,
            load: [1, 2, 3, 4],
        };
        let _ = bus.send(ctx.sender, &pong, Channel::Reliable);
    })
    .unwrap();
    s.subscribe(|_, _, chat: &Chat, seen: &mut Seen| seen.chats.push(chat.text.clone()))
        .unwrap();
    s
}

fn port(s: &NetworkNode<Seen>) -> u16 {
    s.local_addr().unwrap().port()
}

fn client_subscriptions<T: Transport + 'static>(c: &mut NetworkNode<Seen, T>) {
    c.subscribe(|_, _, pong: &Pong, seen: &mut Seen| {
        seen.pongs += 1;
        seen.last = pong.seq;
    })
    .unwrap();
}

fn events<T: Transport>(bus: &mut mf_net::bus::MessageBus<T, Seen>) -> Vec<BusEvent> {
    std::iter::from_fn(|| bus.next_event()).collect()
}

#[test]
fn a_matching_fingerprint_connects_and_messages_flow() {
    let mut s = server();
    let mut c: NetworkNode<Seen> =
        NetworkNode::connect(("127.0.0.1", port(&s)), registry()).unwrap();
    client_subscriptions(&mut c);
    let (mut ss, mut cs) = (Seen::default(), Seen::default());
    let (mut sev, mut cev) = (Vec::new(), Vec::new());
    for _ in 0..MAX_STEPS {
        s.pump(&mut ss);
        c.pump(&mut cs);
        sev.extend(events(&mut s));
        cev.extend(events(&mut c));
        if !sev.is_empty() && !cev.is_empty() {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert!(matches!(sev[..], [BusEvent::PeerConnected(_)]), "{sev:?}");
    assert_eq!(cev, vec![BusEvent::PeerConnected(PeerId::SERVER)]);
    c.send(
        PeerId::SERVER,
        &Chat {
            text: "hi over UDP".into(),
        },
        Channel::Reliable,
    )
    .unwrap();
    c.send(PeerId::SERVER, &Ping { seq: 9, at: 1.5 }, Channel::Reliable)
        .unwrap();
    for _ in 0..MAX_STEPS {
        c.pump(&mut cs);
        s.pump(&mut ss);
        if cs.pongs == 1 {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert_eq!(ss.chats, vec!["hi over UDP".to_string()]);
    assert_eq!((ss.pings, cs.pongs, cs.last), (1, 1, 9));
    assert_eq!(s.stats().messages_dispatched, 2);
}

#[test]
fn a_mismatching_fingerprint_is_refused_with_protocol_mismatch() {
    let mut s = server();
    let mut other = MessageRegistry::new(2); // another protocol version
    other.register::<Ping>().unwrap();
    assert_ne!(other.fingerprint(), registry().fingerprint());
    let mut c: NetworkNode<Seen> = NetworkNode::connect(("127.0.0.1", port(&s)), other).unwrap();
    let (mut ss, mut cs) = (Seen::default(), Seen::default());
    let (mut sev, mut cev) = (Vec::new(), Vec::new());
    for _ in 0..MAX_STEPS {
        s.pump(&mut ss);
        c.pump(&mut cs);
        sev.extend(events(&mut s));
        cev.extend(events(&mut c));
        if cev
            .iter()
            .any(|e| matches!(e, BusEvent::PeerDisconnected { .. }))
        {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert!(
        matches!(
            sev[..],
            [BusEvent::PeerRefused {
                reason: DisconnectReason::ProtocolMismatch,
                ..
            }]
        ),
        "{sev:?}"
    );
    assert_eq!(
        cev.last(),
        Some(&BusEvent::PeerDisconnected {
            peer: PeerId::SERVER,
            reason: DisconnectReason::ProtocolMismatch
        }),
        "{cev:?}"
    );
    assert!(s.peers().is_empty());
    assert!(c.peers().is_empty());
    assert_eq!(s.stats().peers_refused, 1);
}

#[test]
fn joining_through_a_connect_string_falls_through_steam_to_enet() {
    let mut s = server();
    let connect = format!("steam:76561198000000001;enet:127.0.0.1:{}", port(&s));
    let mut c: NetworkNode<Seen, SelectingTransport> =
        NetworkNode::join(&connect, registry()).unwrap();
    client_subscriptions(&mut c);
    let (mut ss, mut cs) = (Seen::default(), Seen::default());
    let mut cev = Vec::new();
    for _ in 0..MAX_STEPS {
        s.pump(&mut ss);
        c.pump(&mut cs);
        cev.extend(std::iter::from_fn(|| c.next_event()));
        if !cev.is_empty() && !s.peers().is_empty() {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    let [BusEvent::PeerConnected(server_id)] = cev[..] else {
        panic!("{cev:?}");
    };
    c.send(server_id, &Ping { seq: 4, at: 0.0 }, Channel::Reliable)
        .unwrap();
    for _ in 0..MAX_STEPS {
        c.pump(&mut cs);
        s.pump(&mut ss);
        if cs.pongs == 1 {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    assert_eq!(cs.last, 4);
    assert_eq!(c.transport().failures().len(), 1);
}

#[test]
fn send_failures_are_counted_not_panics() {
    let mut s = server();
    let mut c: NetworkNode<Seen> =
        NetworkNode::connect(("127.0.0.1", port(&s)), registry()).unwrap();
    let (mut ss, mut cs) = (Seen::default(), Seen::default());
    for _ in 0..MAX_STEPS {
        s.pump(&mut ss);
        c.pump(&mut cs);
        if !s.peers().is_empty() {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    let peer = s.peers()[0];
    let stale = PeerId(peer.0 ^ (1 << 40));
    assert!(s
        .send(stale, &Chat { text: "?".into() }, Channel::Reliable)
        .is_err());
    assert_eq!(s.stats().send_failures, 1);
    assert!(events(&mut s)
        .iter()
        .any(|e| matches!(e, BusEvent::SendFailed { .. })));
    assert_eq!(
        s.broadcast(&Ping { seq: 1, at: 0.0 }, Channel::Unreliable, None)
            .unwrap(),
        1
    );
}

thread_local! {
    /// Whether this thread's calls into rusty_enet are left out of the count.
    static EXCLUDE_ENET: Cell<bool> = const { Cell::new(false) };
}

fn enet_wrapper(call: &mut dyn FnMut()) {
    if EXCLUDE_ENET.with(Cell::get) {
        alloc_counter::not_counted(call);
    } else {
        call();
    }
}

/// One reliable round trip through both buses; panics (after a generous bound) if it stalls.
fn round_trip(
    s: &mut NetworkNode<Seen>,
    c: &mut NetworkNode<Seen>,
    ss: &mut Seen,
    cs: &mut Seen,
    seq: u32,
) {
    let before = cs.pongs;
    c.send(
        PeerId::SERVER,
        &Ping {
            seq,
            at: f64::from(seq),
        },
        Channel::Reliable,
    )
    .unwrap();
    c.flush();
    for _ in 0..200_000 {
        s.pump(ss);
        c.pump(cs);
        if cs.pongs > before {
            assert_eq!(cs.last, seq);
            return;
        }
        sleep(Duration::from_micros(20));
    }
    panic!("round trip {seq} stalled");
}

#[test]
fn five_hundred_reliable_round_trips_allocate_nothing_after_warm_up() {
    assert!(alloc_counter::is_counting());
    set_enet_call_wrapper(enet_wrapper);
    let mut s = server();
    let mut c: NetworkNode<Seen> =
        NetworkNode::connect(("127.0.0.1", port(&s)), registry()).unwrap();
    client_subscriptions(&mut c);
    let (mut ss, mut cs) = (Seen::default(), Seen::default());
    for _ in 0..MAX_STEPS {
        s.pump(&mut ss);
        c.pump(&mut cs);
        if !s.peers().is_empty() && !c.peers().is_empty() {
            break;
        }
        sleep(Duration::from_millis(1));
    }
    let _ = (events(&mut s), events(&mut c));
    // Warm-up: buffers and queues reach their working sizes.
    for seq in 0..100 {
        round_trip(&mut s, &mut c, &mut ss, &mut cs, seq);
    }

    // ENet's own allocations (its packets and protocol commands, the spec's "native" side)
    // are real and counted here, to show that the counter sees them ...
    let ((), with_enet) = alloc_counter::measure(|| {
        for seq in 100..150 {
            round_trip(&mut s, &mut c, &mut ss, &mut cs, seq);
        }
    });
    assert!(with_enet.count_total > 0, "{with_enet:?}");

    // ... and left out here: everything else (EnetTransport's bookkeeping, the bus, encode,
    // decode, dispatch, the handlers) allocates nothing over 500 round trips.
    EXCLUDE_ENET.with(|e| e.set(true));
    let ((), info) = alloc_counter::measure(|| {
        for seq in 1000..1500 {
            round_trip(&mut s, &mut c, &mut ss, &mut cs, seq);
        }
    });
    EXCLUDE_ENET.with(|e| e.set(false));
    assert_eq!(
        (info.count_total, info.bytes_total),
        (0, 0),
        "500 round trips over ENet allocated {info:?} outside ENet"
    );
    assert_eq!(ss.pings, 650);
    assert_eq!(cs.pongs, 650);
    eprintln!(
        "ENet's own allocations: {} in 50 round trips ({} bytes); outside ENet: 0",
        with_enet.count_total, with_enet.bytes_total
    );
}
