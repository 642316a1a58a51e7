//! The chat across processes over ENet: `--host [ADDR:]PORT [--secure]` or
//! `--join ADDR:PORT --name NAME [--token HEX]`.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread::sleep;
use std::time::{Duration, Instant};

use mf_net::bus::BusEvent;
use mf_net::prelude::*;
use mf_net_enet::{EnetConfig, EnetTransport, NetworkNode};
use mf_net_secure::{ConnectToken, SecureClient, SecureServer};

use super::{registry, Join, Line, Say};
use crate::secure::{token_address, wall_clock, GracefulClose, Matchmaker, VerifiedName};

/// Clients a host accepts.
const MAX_CLIENTS: usize = 16;
/// Tokens a secure host prints when it starts.
const FIRST_TOKENS: usize = 3;

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

pub(super) fn host(bind: SocketAddr, secure: bool) -> ExitCode {
    // A few slots more than clients, so that the refused hear why.
    let transport = match EnetTransport::listen_with(bind, MAX_CLIENTS + 4, EnetConfig::default()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot host on {bind}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(local) = transport.local_addr() else {
        eprintln!("cannot host on {bind}: no local address");
        return ExitCode::FAILURE;
    };
    if !secure {
        return run_host(NetworkNode::server(transport, registry()), local, None);
    }
    let (matchmaker, config) = match Matchmaker::new(token_address(local), MAX_CLIENTS) {
        Ok(made) => made,
        Err(e) => {
            eprintln!("cannot make a key: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = match SecureServer::new(transport, config, wall_clock()) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("cannot start the secure server: {e}");
            return ExitCode::FAILURE;
        }
    };
    run_host(
        NetworkNode::server(server, registry()),
        local,
        Some(matchmaker),
    )
}

/// Prints a fresh token for `name` (the host is its own matchmaker).
fn print_token(matchmaker: &mut Matchmaker, name: &str, local: SocketAddr) {
    match matchmaker.issue(name) {
        Ok(token) => say(&format!(
            "token for {name}: chat --join {} --token {}",
            token_address(local).to_string().trim_start_matches("enet:"),
            token.to_hex()
        )),
        Err(e) => say(&format!("cannot issue a token: {e}")),
    }
}

fn run_host<T>(
    mut node: NetworkNode<HostState, T>,
    local: SocketAddr,
    mut matchmaker: Option<Matchmaker>,
) -> ExitCode
where
    T: Transport + VerifiedName + GracefulClose + 'static,
{
    let subscribed = node
        .subscribe(|bus, ctx, join: &Join, st: &mut HostState| {
            // A secure host knows the name from the token: the claimed one is ignored.
            let name = bus
                .transport()
                .verified_name(ctx.sender)
                .unwrap_or_else(|| join.name.clone());
            st.outbox.push(format!("* {name} joined"));
            st.names.insert(ctx.sender, name);
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
    say(&format!("listening on {local}"));
    if let Some(matchmaker) = &mut matchmaker {
        say("secure: clients need a token; type /token NAME for another");
        for i in 1..=FIRST_TOKENS {
            print_token(matchmaker, &format!("guest-{i}"), local);
        }
    }
    let input = stdin_lines();
    let mut state = HostState::default();
    let mut last = Instant::now();
    loop {
        // The bus does not move the transport's time: the secure layer's clock (token expiry,
        // handshake timeouts) runs on the measured frame time.
        let now = Instant::now();
        node.bus_mut().transport_mut().advance(now - last);
        last = now;
        node.pump(&mut state);
        while let Some(event) = node.next_event() {
            if let BusEvent::PeerDisconnected { peer, reason } = event {
                if let Some(name) = state.names.remove(&peer) {
                    state.outbox.push(format!("* {name} left ({reason})"));
                }
            }
        }
        match next_line(&input) {
            Ok(Some(text)) => match (text.strip_prefix("/token "), &mut matchmaker) {
                (Some(name), Some(matchmaker)) => print_token(matchmaker, name.trim(), local),
                _ => state.outbox.push(format!("host: {text}")),
            },
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
    close(node.bus_mut().transport_mut(), DisconnectReason::Shutdown);
    ExitCode::SUCCESS
}

pub(super) fn client(addr: &str, name: &str, token: Option<&str>) -> ExitCode {
    let inner =
        match EnetTransport::connect_with(addr, registry().fingerprint(), EnetConfig::default()) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("cannot join {addr}: {e}");
                return ExitCode::FAILURE;
            }
        };
    let Some(hex) = token else {
        return run_client(NetworkNode::client(inner, registry()), name);
    };
    match ConnectToken::from_hex(hex) {
        Ok(token) => run_client(
            NetworkNode::client(SecureClient::new(inner, token), registry()),
            name,
        ),
        Err(e) => {
            eprintln!("--token: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_client<T: Transport + GracefulClose + 'static>(
    mut node: NetworkNode<(), T>,
    name: &str,
) -> ExitCode {
    if let Err(e) = node.subscribe(|_, _, line: &Line, _: &mut ()| say(&line.text)) {
        eprintln!("subscribe: {e}");
        return ExitCode::FAILURE;
    }
    let input = stdin_lines();
    let mut joined = false;
    let mut last = Instant::now();
    loop {
        let now = Instant::now();
        node.bus_mut().transport_mut().advance(now - last);
        last = now;
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
    close(node.bus_mut().transport_mut(), DisconnectReason::Closed);
    ExitCode::SUCCESS
}

/// Closes gracefully, for at most [`CLOSE_FRAMES`] frames.
fn close(transport: &mut impl GracefulClose, reason: DisconnectReason) {
    transport.begin_close(reason);
    for _ in 0..CLOSE_FRAMES {
        if transport.service_close() {
            break;
        }
        sleep(FRAME);
    }
}

/// `[ADDR:]PORT`: a bare port listens on every interface.
pub(super) fn host_addr(arg: &str) -> Option<SocketAddr> {
    if let Ok(port) = arg.parse::<u16>() {
        return Some(SocketAddr::from(([0, 0, 0, 0], port)));
    }
    arg.parse().ok()
}
