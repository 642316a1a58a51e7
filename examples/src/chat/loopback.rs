//! The chat in one process: a server and two clients over the in-process loopback transport,
//! stepped frame by frame.

use std::collections::HashMap;
use std::process::ExitCode;

use mf_net::bus::{BusEvent, MessageBus};
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;

use super::{registry, Join, Line, Say};

/// The server's state: who is who.
#[derive(Default)]
struct Room {
    names: HashMap<PeerId, String>,
}

/// A client's state: the lines it has printed.
struct Screen {
    me: &'static str,
    lines: Vec<String>,
}

pub(super) fn demo() -> ExitCode {
    let net = LoopbackNetwork::new();
    let listener = match net.listen("chat", 8) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot listen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut server: MessageBus<_, Room> = MessageBus::server(listener, registry());
    let subscribed = server
        .subscribe(|bus, ctx, join: &Join, room: &mut Room| {
            println!("[server] {} joined as {}", ctx.sender, join.name);
            room.names.insert(ctx.sender, join.name.clone());
            let line = Line {
                text: format!("* {} joined", join.name),
            };
            let _ = bus.broadcast(&line, Channel::Reliable, Some(ctx.sender));
        })
        .and_then(|()| {
            server.subscribe(|bus, ctx, say: &Say, room: &mut Room| {
                let from = room.names.get(&ctx.sender).map_or("?", String::as_str);
                println!("[server] {from}: {}", say.text);
                let line = Line {
                    text: format!("{from}: {}", say.text),
                };
                // Relay to everybody else; a failure is counted and raised as an event.
                let _ = bus.broadcast(&line, Channel::Reliable, Some(ctx.sender));
            })
        });
    if let Err(e) = subscribed {
        eprintln!("subscribe: {e}");
        return ExitCode::FAILURE;
    }
    let mut room = Room::default();

    let mut clients = Vec::new();
    for me in ["ann", "bob"] {
        let mut bus: MessageBus<_, Screen> =
            MessageBus::client(net.connect("chat", registry().fingerprint()), registry());
        if let Err(e) = bus.subscribe(|_, _, line: &Line, screen: &mut Screen| {
            println!("[{}] {}", screen.me, line.text);
            screen.lines.push(line.text.clone());
        }) {
            eprintln!("subscribe: {e}");
            return ExitCode::FAILURE;
        }
        clients.push((
            bus,
            Screen {
                me,
                lines: Vec::new(),
            },
        ));
    }

    for frame in 0..8 {
        server.poll(&mut room);
        for (bus, screen) in &mut clients {
            bus.poll(screen);
            while let Some(event) = bus.next_event() {
                match event {
                    BusEvent::PeerConnected(server) => {
                        let join = Join {
                            name: screen.me.to_string(),
                        };
                        let _ = bus.send(server, &join, Channel::Reliable);
                    }
                    other => println!("[{}] {other:?}", screen.me),
                }
            }
            if frame == 2 {
                let say = Say {
                    text: format!("hello from {}", screen.me),
                };
                let _ = bus.send(PeerId::SERVER, &say, Channel::Reliable);
            }
            bus.flush();
        }
        server.flush();
    }

    let heard = |who: usize, line: &str| clients[who].1.lines.iter().any(|l| l == line);
    if heard(0, "bob: hello from bob") && heard(1, "ann: hello from ann") {
        println!("chat done: every client heard the other");
        ExitCode::SUCCESS
    } else {
        eprintln!("chat failed: some lines were not delivered");
        ExitCode::FAILURE
    }
}
