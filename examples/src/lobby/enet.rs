//! The lobby across processes over ENet (real UDP): `--host [ADDR:]PORT` or
//! `--join ADDR:PORT --name NAME`. Each process runs its own frame loop, reads commands from
//! standard input without blocking it, and closes gracefully.

use std::error::Error;
use std::io::BufRead;
use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread::sleep;
use std::time::{Duration, Instant};

use mf_net::prelude::*;
use mf_net_enet::EnetTransport;

use super::{log, LobbyClient, LobbyServer};

/// Time between frames. mf-net itself never sleeps or reads a clock: the game does.
const FRAME: Duration = Duration::from_millis(5);
/// The longest a graceful close may take.
const CLOSE_TIME: Duration = Duration::from_secs(2);
/// Clients the host accepts.
const MAX_CLIENTS: usize = 8;

/// Runs the host until `q` or end of input.
pub(super) fn host(bind: SocketAddr, name: &str) -> Result<(), Box<dyn Error>> {
    let transport = EnetTransport::listen(bind, MAX_CLIENTS)
        .map_err(|e| format!("cannot host on {bind}: {e}"))?;
    match transport.local_addr() {
        Some(addr) => println!("listening on {addr}; type r to toggle ready, q to quit"),
        None => println!("listening; type r to toggle ready, q to quit"),
    }
    let mut server = LobbyServer::start(transport, name)?;
    let input = stdin_lines();
    let mut out = std::io::stdout();
    let mut last = Instant::now();
    loop {
        // The frame time is measured: timeouts and the countdown run on it.
        let now = Instant::now();
        server.frame(now - last, &mut out)?;
        last = now;
        match next_line(&input) {
            Command::Line(line) => match line.trim() {
                "r" | "ready" => server.toggle_ready(),
                "q" | "quit" => break,
                "" => {}
                other => println!("unknown command `{other}`: r (toggle ready), q (quit)"),
            },
            Command::Nothing => {}
            Command::End => break,
        }
        sleep(FRAME);
    }
    close(&mut server.mp, DisconnectReason::Shutdown);
    Ok(())
}

/// Runs a client until `q`, end of input, or the host going away.
pub(super) fn join(addr: &str, name: &str) -> Result<(), Box<dyn Error>> {
    let mut client = connect(addr, name, Duration::ZERO)?;
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
                    client = connect(addr, name, client.clock)?;
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
fn close(mp: &mut Multiplayer<EnetTransport>, reason: DisconnectReason) {
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
