//! The lobby across processes over ENet (real UDP): `--host [ADDR:]PORT [--secure]` or
//! `--join ADDR:PORT --name NAME [--token HEX]`. Each process runs its own frame loop, reads
//! commands from standard input without blocking it, and closes gracefully.

use std::error::Error;
use std::io::BufRead;
use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread::sleep;
use std::time::{Duration, Instant};

use mf_net::prelude::*;
use mf_net_enet::EnetTransport;
use mf_net_secure::{ConnectToken, SecureClient, SecureServer};

use super::{log, LobbyClient, LobbyServer};
use crate::secure::{token_address, wall_clock, GracefulClose, Matchmaker};

/// Time between frames. mf-net itself never sleeps or reads a clock: the game does.
const FRAME: Duration = Duration::from_millis(5);
/// The longest a graceful close may take.
const CLOSE_TIME: Duration = Duration::from_secs(2);
/// Clients the host accepts.
const MAX_CLIENTS: usize = 8;

/// Runs the host until `q` or end of input; with `secure`, through the secure layer, printing
/// tokens for the clients.
pub(super) fn host(bind: SocketAddr, name: &str, secure: bool) -> Result<(), Box<dyn Error>> {
    // A few slots more than clients, so that the refused hear why.
    let transport = EnetTransport::listen(bind, MAX_CLIENTS + 4)
        .map_err(|e| format!("cannot host on {bind}: {e}"))?;
    let local = transport.local_addr().ok_or("no local address")?;
    println!("listening on {local}; type r to toggle ready, q to quit");
    if !secure {
        return run_host(LobbyServer::start(transport, name)?, None, local);
    }
    let (mut matchmaker, config) = Matchmaker::new(token_address(local), MAX_CLIENTS)?;
    println!("secure: clients need a token; type token NAME for another");
    for guest in ["ann", "bob"] {
        print_token(&mut matchmaker, guest, local);
    }
    let server = SecureServer::new(transport, config, wall_clock())?;
    run_host(LobbyServer::start(server, name)?, Some(matchmaker), local)
}

/// Prints a fresh token for `name` (the host is its own matchmaker).
fn print_token(matchmaker: &mut Matchmaker, name: &str, local: SocketAddr) {
    match matchmaker.issue(name) {
        Ok(token) => println!(
            "token for {name}: lobby --join {} --name {name} --token {}",
            token_address(local).to_string().trim_start_matches("enet:"),
            token.to_hex()
        ),
        Err(e) => println!("cannot issue a token: {e}"),
    }
}

fn run_host<T: Transport + GracefulClose + 'static>(
    mut server: LobbyServer<T>,
    mut matchmaker: Option<Matchmaker>,
    local: SocketAddr,
) -> Result<(), Box<dyn Error>> {
    let input = stdin_lines();
    let mut out = std::io::stdout();
    let mut last = Instant::now();
    loop {
        // The frame time is measured: timeouts and the countdown run on it.
        let now = Instant::now();
        server.frame(now - last, &mut out)?;
        last = now;
        match next_line(&input) {
            Command::Line(line) => match (line.trim(), &mut matchmaker) {
                ("r" | "ready", _) => server.toggle_ready(),
                ("q" | "quit", _) => break,
                ("", _) => {}
                (command, Some(matchmaker)) if command.starts_with("token ") => {
                    print_token(matchmaker, command["token ".len()..].trim(), local);
                }
                (other, _) => println!("unknown command `{other}`: r (toggle ready), q (quit)"),
            },
            Command::Nothing => {}
            Command::End => break,
        }
        sleep(FRAME);
    }
    close(&mut server.mp, DisconnectReason::Shutdown);
    Ok(())
}

/// Runs a client until `q`, end of input, or the host going away; with a token, through the
/// secure layer.
pub(super) fn join(addr: &str, name: &str, token: Option<&str>) -> Result<(), Box<dyn Error>> {
    let Some(hex) = token else {
        return run_join(addr, name, |clock| connect(addr, name, clock));
    };
    let token = ConnectToken::from_hex(hex).map_err(|e| format!("--token: {e}"))?;
    run_join(addr, name, |clock| {
        // A token is good for one connection: `rejoin` with it is refused as replayed.
        let open = |data| {
            EnetTransport::connect(addr, data).map(|inner| SecureClient::new(inner, token.clone()))
        };
        LobbyClient::start(open, name, clock).map_err(|e| format!("cannot join {addr}: {e}").into())
    })
}

fn run_join<T: Transport + GracefulClose + 'static>(
    addr: &str,
    name: &str,
    mut connect: impl FnMut(Duration) -> Result<LobbyClient<T>, Box<dyn Error>>,
) -> Result<(), Box<dyn Error>> {
    let mut client = connect(Duration::ZERO)?;
    println!("joining {addr} as {name}; type r to toggle ready, rejoin, q to quit");
    let input = stdin_lines();
    let mut out = std::io::stdout();
    let mut last = Instant::now();
    loop {
        let now = Instant::now();
        client.frame(now - last, &mut out)?;
        last = now;
        match client.disconnected {
            Some(reason) if !client.welcomed => {
                return Err(format!("could not join {addr} ({reason})").into());
            }
            Some(_) => return Ok(()), // the host went away (the reason was printed)
            None => {}
        }
        match next_line(&input) {
            Command::Line(line) => match line.trim() {
                "r" | "ready" => {
                    if let Err(e) = client.toggle_ready() {
                        println!("cannot ask yet: {e}");
                    }
                }
                "rejoin" => {
                    // Leave gracefully, then connect again as a new peer.
                    close(&mut client.mp, DisconnectReason::Closed);
                    log(&mut out, client.clock, name, "left; joining again")?;
                    client = connect(client.clock)?;
                }
                "q" | "quit" => break,
                "" => {}
                other => println!("unknown command `{other}`: r (toggle ready), rejoin, q (quit)"),
            },
            Command::Nothing => {}
            Command::End => break,
        }
        sleep(FRAME);
    }
    close(&mut client.mp, DisconnectReason::Closed);
    Ok(())
}

fn connect(
    addr: &str,
    name: &str,
    clock: Duration,
) -> Result<LobbyClient<EnetTransport>, Box<dyn Error>> {
    LobbyClient::start(|data| EnetTransport::connect(addr, data), name, clock)
        .map_err(|e| format!("cannot join {addr}: {e}").into())
}

/// Closes gracefully: ENet keeps servicing the connection until every peer acknowledged what
/// was sent before the close (the last RPCs, the goodbye with its reason), for at most
/// [`CLOSE_TIME`]. Dropping the transport instead would tell the peers `Shutdown` at once, but
/// could lose what was still in flight.
fn close<T: Transport + GracefulClose + 'static>(
    mp: &mut Multiplayer<T>,
    reason: DisconnectReason,
) {
    if let Some(bus) = mp.bus_mut() {
        let transport = bus.transport_mut();
        transport.begin_close(reason);
        let start = Instant::now();
        while !transport.service_close() && start.elapsed() < CLOSE_TIME {
            sleep(Duration::from_millis(1));
        }
    }
    mp.stop(); // offline now: a client frees the lobby, a server keeps it as a plain node
}

/// `[ADDR:]PORT`: a bare port listens on every interface.
pub(super) fn host_addr(arg: &str) -> Option<SocketAddr> {
    if let Ok(port) = arg.parse::<u16>() {
        return Some(SocketAddr::from(([0, 0, 0, 0], port)));
    }
    arg.parse().ok()
}

/// What standard input had for this frame.
enum Command {
    Line(String),
    Nothing,
    End,
}

/// Standard input, line by line, from a thread, so the frame loop never blocks on it.
fn stdin_lines() -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
        // Dropping `tx` tells the frame loop that input ended.
    });
    rx
}

fn next_line(rx: &Receiver<String>) -> Command {
    match rx.try_recv() {
        Ok(line) => Command::Line(line),
        Err(TryRecvError::Empty) => Command::Nothing,
        Err(TryRecvError::Disconnected) => Command::End,
    }
}
