//! The chat across processes over ENet: `--host [ADDR:]PORT` or `--join ADDR:PORT --name NAME`.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread::sleep;
use std::time::Duration;

use mf_net::bus::BusEvent;
use mf_net::prelude::*;
use mf_net_enet::{EnetConfig, NetworkNode};

use super::{registry, Join, Line, Say};

const FRAME: Duration = Duration::from_millis(5);
/// Frames a graceful close may take (2 s).
const CLOSE_FRAMES: usize = 400;

fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Standard input, line by line, without blocking the frame loop. `None` at end of input.
fn stdin_lines() -> Receiver<Option<String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(line) => {
                    if tx.send(Some(line)).is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = tx.send(None);
    });
    rx
}

/// The next typed line: `Ok(Some)` a line, `Ok(None)` nothing yet, `Err(())` end of input.
fn next_line(rx: &Receiver<Option<String>>) -> Result<Option<String>, ()> {
    match rx.try_recv() {
        Ok(Some(line)) => Ok(Some(line)),
        Ok(None) | Err(TryRecvError::Disconnected) => Err(()),
        Err(TryRecvError::Empty) => Ok(None),
    }
}

#[derive(Default)]
struct HostState {
    names: HashMap<PeerId, String>,
    /// Lines to relay this frame.
    outbox: Vec<String>,
}

pub(super) fn host(bind: SocketAddr) -> ExitCode {
    let mut node: NetworkNode<HostState> =
        match NetworkNode::listen_on(bind, 16, registry(), EnetConfig::default()) {
            Ok(node) => node,
            Err(e) => {
                eprintln!("cannot host on {bind}: {e}");
                return ExitCode::FAILURE;
            }
        };
    let subscribed = node
        .subscribe(|_, ctx, join: &Join, st: &mut HostState| {
            st.names.insert(ctx.sender, join.name.clone());
            st.outbox.push(format!("* {} joined", join.name));
        })
        .and_then(|()| {
            node.subscribe(|_, ctx, s: &Say, st: &mut HostState| {
                let name = st.names.get(&ctx.sender).cloned().unwrap_or_default();
                st.outbox.push(format!("{name}: {}", s.text));
            })
        });
    if let Err(e) = subscribed {
        eprintln!("subscribe: {e}");
        return ExitCode::FAILURE;
    }
    match node.local_addr() {
        Some(addr) => say(&format!("listening on {addr}")),
        None => say("listening"),
    }
    let input = stdin_lines();
    let mut state = HostState::default();
    loop {
        node.pump(&mut state);
        while let Some(event) = node.next_event() {
            if let BusEvent::PeerDisconnected { peer, reason } = event {
                if let Some(name) = state.names.remove(&peer) {
                    state.outbox.push(format!("* {name} left ({reason})"));
                }
            }
        }
        match next_line(&input) {
            Ok(Some(text)) => state.outbox.push(format!("host: {text}")),
            Ok(None) => {}
            Err(()) => break,
        }
        for text in state.outbox.drain(..) {
            say(&text);
            let _ = node.broadcast(&Line { text }, Channel::Reliable, None);
        }
        node.flush();
        sleep(FRAME);
    }
    node.begin_close(DisconnectReason::Shutdown);
    for _ in 0..CLOSE_FRAMES {
        if node.service_close() {
            break;
        }
        sleep(FRAME);
    }
    ExitCode::SUCCESS
}

pub(super) fn client(addr: &str, name: &str) -> ExitCode {
    let mut node: NetworkNode<()> = match NetworkNode::connect(addr, registry()) {
        Ok(node) => node,
        Err(e) => {
            eprintln!("cannot join {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = node.subscribe(|_, _, line: &Line, _: &mut ()| say(&line.text)) {
        eprintln!("subscribe: {e}");
        return ExitCode::FAILURE;
    }
    let input = stdin_lines();
    let mut joined = false;
    loop {
        node.pump(&mut ());
        while let Some(event) = node.next_event() {
            match event {
                BusEvent::PeerConnected(server) => {
                    joined = true;
                    let _ = node.send(
                        server,
                        &Join {
                            name: name.to_owned(),
                        },
                        Channel::Reliable,
                    );
                }
                BusEvent::PeerDisconnected { reason, .. } => {
                    say(&format!("* disconnected ({reason})"));
                    return ExitCode::SUCCESS;
                }
                _ => {}
            }
        }
        // Lines typed before the connection completes wait in the channel.
        if joined {
            match next_line(&input) {
                Ok(Some(text)) => {
                    let _ = node.send(PeerId::SERVER, &Say { text }, Channel::Reliable);
                }
                Ok(None) => {}
                Err(()) => break,
            }
        }
        node.flush();
        sleep(FRAME);
    }
    node.begin_close(DisconnectReason::Closed);
    for _ in 0..CLOSE_FRAMES {
        if node.service_close() {
            break;
        }
        sleep(FRAME);
    }
    ExitCode::SUCCESS
}

/// `[ADDR:]PORT`: a bare port listens on every interface.
pub(super) fn host_addr(arg: &str) -> Option<SocketAddr> {
    if let Ok(port) = arg.parse::<u16>() {
        return Some(SocketAddr::from(([0, 0, 0, 0], port)));
    }
    arg.parse().ok()
}
