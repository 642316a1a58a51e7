//! Chat over the mf-net message bus.
//!
//! `cargo run --example chat` runs a server and two clients in one process over the in-process
//! loopback transport, frame by frame: each client says a line, the server relays it to the
//! others, and every end prints what it receives.

use std::collections::HashMap;
use std::process::ExitCode;

use mf_net::bus::{BusEvent, MessageBus, MessageRegistry};
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;

/// Client → server: my name.
#[derive(NetCodec, Debug)]
struct Join {
    name: String,
}

/// Client → server: a line to relay.
#[derive(NetCodec, Debug)]
struct Say {
    text: String,
}

/// Server → clients: someone said something.
#[derive(NetCodec, Debug)]
struct Said {
    from: String,
    text: String,
}

fn registry() -> MessageRegistry {
    let mut registry = MessageRegistry::new(1);
    for result in [registry.register::<Join>(), registry.register::<Say>(), registry.register::<Said>()] {
        result.expect("chat messages register once each");
    }
    registry
}

/// The server's state: who is who.
#[derive(Default)]
struct Room {
    names: HashMap<PeerId, String>,
}

/// A client's state: the lines it has seen.
#[derive(Default)]
struct Screen {
    me: String,
    lines: Vec<String>,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt().with_env_filter("warn").init();
    let net = LoopbackNetwork::new();

    let listener = match net.listen("chat", 8) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot listen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut server: MessageBus<_, Room> = MessageBus::server(listener, registry());
    server
        .subscribe(|_, ctx, join: &Join, room: &mut Room| {
            println!("[server] {} joined as {}", ctx.sender, join.name);
            room.names.insert(ctx.sender, join.name.clone());
        })
        .expect("Join is registered");
    server
        .subscribe(|bus, ctx, say: &Say, room: &mut Room| {
            let from = room.names.get(&ctx.sender).cloned().unwrap_or_else(|| ctx.sender.to_string());
            println!("[server] {from}: {}", say.text);
            let relay = Said { from, text: say.text.clone() };
            if let Err(e) = bus.broadcast(&relay, Channel::Reliable, Some(ctx.sender)) {
                eprintln!("[server] relay failed: {e}");
            }
        })
        .expect("Say is registered");
    let mut room = Room::default();

    let mut clients: Vec<(MessageBus<_, Screen>, Screen)> = ["ann", "bob"]
        .into_iter()
        .map(|name| {
            let mut bus = MessageBus::client(net.connect("chat", registry().fingerprint()), registry());
            bus.subscribe(|_, _, said: &Said, screen: &mut Screen| {
                let line = format!("{}: {}", said.from, said.text);
                println!("[{}] {line}", screen.me);
                screen.lines.push(line);
            })
            .expect("Said is registered");
            (bus, Screen { me: name.to_string(), lines: Vec::new() })
        })
        .collect();

    for frame in 0..8 {
        server.poll(&mut room);
        for (bus, screen) in &mut clients {
            bus.poll(screen);
            while let Some(event) = bus.next_event() {
                match event {
                    BusEvent::PeerConnected(_) => {
                        let _ = bus.send(PeerId::SERVER, &Join { name: screen.me.clone() }, Channel::Reliable);
                    }
                    other => println!("[{}] {other:?}", screen.me),
                }
            }
            if frame == 2 {
                let text = format!("hello from {}", screen.me);
                let _ = bus.send(PeerId::SERVER, &Say { text }, Channel::Reliable);
            }
            bus.flush();
        }
        server.flush();
    }

    let ok = clients.iter().all(|(_, screen)| screen.lines.len() == 1);
    if ok {
        println!("chat done: every client heard the other");
        ExitCode::SUCCESS
    } else {
        eprintln!("chat failed: some lines were not delivered");
        ExitCode::FAILURE
    }
}
