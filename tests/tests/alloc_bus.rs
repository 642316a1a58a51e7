//! Zero-allocation gate for the message bus: 1000 loopback rounds of send + poll + dispatch
//! (both directions, reliable and unreliable, plus a broadcast) allocate nothing after warm-up.

#![allow(clippy::unwrap_used)]

use mf_net::bus::{MessageBus, MessageRegistry};
use mf_net::prelude::*;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net_tests::alloc_counter::assert_no_alloc;

#[derive(NetCodec, Clone, Copy, Debug, PartialEq)]
struct Input {
    seq: u32,
    axes: [f32; 2],
    fire: bool,
}

#[derive(NetCodec, Clone, Copy, Debug, PartialEq)]
struct State {
    seq: u32,
    position: (f32, f32, f32),
    health: Option<i16>,
}

fn registry() -> MessageRegistry {
    let mut r = MessageRegistry::new(1);
    r.register::<Input>().unwrap();
    r.register::<State>().unwrap();
    r
}

#[derive(Default)]
struct Counters {
    inputs: u32,
    states: u32,
    last_seq: u32,
}

#[test]
fn thousand_loopback_rounds_allocate_nothing() {
    let net = LoopbackNetwork::new();
    let mut server: MessageBus<LoopbackTransport, Counters> =
        MessageBus::server(net.listen("alloc", 4).unwrap(), registry());
    server
        .subscribe(|bus, ctx, input: &Input, c: &mut Counters| {
            c.inputs += 1;
            c.last_seq = input.seq;
            let reply = State {
                seq: input.seq,
                position: (1.0, 2.0, 3.0),
                health: Some(100),
            };
            bus.send(ctx.sender, &reply, Channel::Unreliable).unwrap();
        })
        .unwrap();
    let mut clients: Vec<(MessageBus<LoopbackTransport, Counters>, Counters)> = (0..2)
        .map(|_| {
            let mut c =
                MessageBus::client(net.connect("alloc", registry().fingerprint()), registry());
            c.subscribe(|_, _, s: &State, c: &mut Counters| {
                c.states += 1;
                c.last_seq = s.seq;
            })
            .unwrap();
            (c, Counters::default())
        })
        .collect();
    let mut counters = Counters::default();

    let round =
        |seq: u32,
         server: &mut MessageBus<LoopbackTransport, Counters>,
         counters: &mut Counters,
         clients: &mut [(MessageBus<LoopbackTransport, Counters>, Counters)]| {
            for (client, _) in clients.iter_mut() {
                let input = Input {
                    seq,
                    axes: [0.5, -0.5],
                    fire: seq % 2 == 0,
                };
                client
                    .send(PeerId::SERVER, &input, Channel::Reliable)
                    .unwrap();
                client.flush();
            }
            server.poll(counters);
            let tick = State {
                seq,
                position: (0.0, 0.0, 0.0),
                health: None,
            };
            server.broadcast(&tick, Channel::Unreliable, None).unwrap();
            server.flush();
            for (client, c) in clients.iter_mut() {
                client.poll(c);
                while client.next_event().is_some() {}
            }
            while server.next_event().is_some() {}
        };

    // Connect, then warm up: buffers and queues reach their steady sizes.
    for _ in 0..3 {
        server.poll(&mut counters);
        for (client, c) in &mut clients {
            client.poll(c);
        }
    }
    assert_eq!(server.peers().len(), 2);
    for seq in 0..50 {
        round(seq, &mut server, &mut counters, &mut clients);
    }

    assert_no_alloc("1000 loopback rounds of send + poll + dispatch", || {
        for seq in 50..1050 {
            round(seq, &mut server, &mut counters, &mut clients);
        }
    });

    assert_eq!(counters.inputs, 2 * 1050);
    for (_, c) in &clients {
        assert_eq!(c.states, 2 * 1050, "reply + broadcast every round");
        assert_eq!(c.last_seq, 1049);
    }
    assert_eq!(server.stats().dropped(), 0);
}
