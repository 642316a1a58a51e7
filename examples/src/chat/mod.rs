//! A line chat over the mf-net message bus, runnable three ways:
//!
//! ```text
//! chat                               # a server and two clients in one process, over loopback
//! chat --host [ADDR:]PORT            # a host over ENet; port 0 picks one (printed)
//! chat --join ADDR:PORT --name NAME  # a client over ENet
//! ```
//!
//! Add `--secure` for the secure layer (`mf-net-secure`): in one process the server is also the
//! matchmaker and hands each client its token directly; `--host PORT --secure` prints a few
//! tokens (and one more for every `/token NAME` typed), and a client joins with
//! `--join ADDR:PORT --token HEX` (its name then comes from the token, not from `--name`).
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
    eprintln!(
        "usage: chat [--secure] | chat --host [ADDR:]PORT [--secure] | \
         chat --join ADDR:PORT [--name NAME] [--token HEX]"
    );
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
    let secure = args.iter().any(|a| a == "--secure");
    if let Some(arg) = value("--host") {
        return match enet::host_addr(arg) {
            Some(addr) => enet::host(addr, secure),
            None => usage(),
        };
    }
    if let Some(addr) = value("--join") {
        return enet::client(addr, value("--name").unwrap_or("guest"), value("--token"));
    }
    match args.as_slice() {
        [] => loopback::demo(false),
        [flag] if flag == "--secure" => loopback::demo(true),
        _ => usage(),
    }
}
