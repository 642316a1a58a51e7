//! A line chat over the mf-net message bus, runnable three ways:
//!
//! ```text
//! chat                               # a server and two clients in one process, over loopback
//! chat --host [ADDR:]PORT            # a host over ENet; port 0 picks one (printed)
//! chat --join ADDR:PORT --name NAME  # a client over ENet
//! ```
//!
//! Over ENet every line typed on standard input is sent and every chat line is printed
//! (`NAME: text`, `* NAME joined`, `* NAME left (reason)`); the host prints
//! `listening on ADDR:PORT` first and relays every line to every client. End of input closes
//! gracefully (the peers hear `closed` / `remote shut down`) and exits.

mod enet;
mod loopback;

use std::process::ExitCode;

use mf_net::bus::MessageRegistry;
use mf_net::NetCodec;

/// Client → host: who I am.
#[derive(NetCodec, Debug, Clone)]
pub struct Join {
    /// The name shown to the others.
    pub name: String,
}

/// Client → host: a line typed.
#[derive(NetCodec, Debug, Clone)]
pub struct Say {
    /// The line.
    pub text: String,
}

/// Host → clients: a line to print.
#[derive(NetCodec, Debug, Clone)]
pub struct Line {
    /// The line, already formatted (`NAME: text`).
    pub text: String,
}

/// The chat's messages, registered in the same order on every end.
pub fn registry() -> MessageRegistry {
    let mut r = MessageRegistry::new(1);
    for result in [
        r.register::<Join>(),
        r.register::<Say>(),
        r.register::<Line>(),
    ] {
        if let Err(e) = result {
            eprintln!("registry: {e}");
        }
    }
    r
}

fn usage() -> ExitCode {
    eprintln!("usage: chat | chat --host [ADDR:]PORT | chat --join ADDR:PORT [--name NAME]");
    ExitCode::FAILURE
}

/// Runs the chat with command-line arguments (without the program name).
pub fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    let args: Vec<String> = args.into_iter().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    if let Some(arg) = value("--host") {
        return match enet::host_addr(arg) {
            Some(addr) => enet::host(addr),
            None => usage(),
        };
    }
    if let Some(addr) = value("--join") {
        return enet::client(addr, value("--name").unwrap_or("guest"));
    }
    if args.is_empty() {
        return loopback::demo();
    }
    usage()
}
