//! The chat in one process: a server and two clients over the in-process loopback transport,
//! stepped frame by frame; with `--secure`, through the secure layer, the server acting as
//! matchmaker and handing each client its token directly.

use std::collections::HashMap;
use std::process::ExitCode;

use mf_net::bus::{BusEvent, MessageBus};
use mf_net::prelude::*;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net_secure::{SecureClient, SecureServer};

use super::{registry, Join, Line, Say};
use crate::secure::{wall_clock, Matchmaker, VerifiedName};

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

pub(super) fn demo(secure: bool) -> ExitCode {
    let net = LoopbackNetwork::new();
    let listener = match net.listen("chat", 8) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot listen: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !secure {
        return run(&net, listener, |_, inner| Some(inner));
    }
    let address = mf_net::transport::address::NetworkAddress::Loopback {
        name: "chat".into(),
    };
    let (mut matchmaker, config) = match Matchmaker::new(address, 8) {
        Ok(made) => made,
        Err(e) => {
            eprintln!("cannot make a key: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = match SecureServer::new(listener, config, wall_clock()) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("cannot start the secure server: {e}");
            return ExitCode::FAILURE;
        }
    };
    run(&net, server, |me, inner| {
        let token = matchmaker.issue(me).ok()?;
        let hex = token.to_hex();
        println!(
            "[matchmaker] token for {me}: …{} ({} bytes), handed over in-process",
            &hex[hex.len() - 12..],
            hex.len() / 2
        );
        Some(SecureClient::new(inner, token))
    })
}

/// The demo over a server endpoint `listener`; `wrap` turns each client's loopback endpoint
/// into its transport (`None`: it cannot join).
fn run<S, C>(
    net: &LoopbackNetwork,
    listener: S,
    mut wrap: impl FnMut(&str, LoopbackTransport) -> Option<C>,
) -> ExitCode
where
    S: Transport + VerifiedName + 'static,
    C: Transport + 'static,
{
    let mut server: MessageBus<_, Room> = MessageBus::server(listener, registry());
    let subscribed = server
        .subscribe(|bus, ctx, join: &Join, room: &mut Room| {
            // A secure server knows the name from the token: the claimed one is ignored.
            let name = match bus.transport().verified_name(ctx.sender) {
                Some(verified) => {
                    println!(
                        "[server] {} joined as {verified} (from its token)",
                        ctx.sender
                    );
                    verified
                }
                None => {
                    println!("[server] {} joined as {}", ctx.sender, join.name);
                    join.name.clone()
                }
            };
            room.names.insert(ctx.sender, name.clone());
            let line = Line {
                text: format!("* {name} joined"),
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
        let Some(transport) = wrap(me, net.connect("chat", registry().fingerprint())) else {
            eprintln!("{me} cannot join");
            return ExitCode::FAILURE;
        };
        let mut bus: MessageBus<_, Screen> = MessageBus::client(transport, registry());
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

    // The secure handshake takes three round trips (request, challenge, acceptance).
    for frame in 0..12 {
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
            if frame == 5 {
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
