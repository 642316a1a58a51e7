//! The scripted lobby in one process: a server ("host") and two clients ("ann", "bob") over
//! the in-process loopback transport, stepped frame by frame at 60 frames per second; with the
//! secure layer, the server is also the matchmaker and hands each connection its token.

use std::error::Error;
use std::io::Write;
use std::time::Duration;

use mf_net::prelude::*;
use mf_net::transport::address::NetworkAddress;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_secure::{SecureClient, SecureServer};

use super::{log, LobbyClient, LobbyRpcs, LobbyServer};
use crate::secure::{wall_clock, Matchmaker};

/// Every end's transport: loopback, or loopback under the secure layer.
type Link = Box<dyn Transport>;

/// One frame.
const DT: Duration = Duration::from_nanos(1_000_000_000 / 60);
/// The longest any step of the script may take.
const STEP_LIMIT: Duration = Duration::from_secs(10);

/// The server and its clients, stepped together.
struct Lab<'o> {
    net: LoopbackNetwork,
    server: LobbyServer<Link>,
    clients: Vec<LobbyClient<Link>>,
    /// With the secure layer: issues a token for every connection.
    matchmaker: Option<Matchmaker>,
    out: &'o mut dyn Write,
}

impl Lab<'_> {
    /// A new client of this network, connecting now.
    fn connect(&mut self, name: &str) -> Result<LobbyClient<Link>, Box<dyn Error>> {
        // The transport connects with the protocol fingerprint: a client built with other
        // replicated types or RPCs would be refused, with the first difference named.
        let token = match &mut self.matchmaker {
            None => None,
            Some(matchmaker) => {
                let token = matchmaker.issue(name)?;
                let text =
                    format!("{name} gets a token from the matchmaker (handed over in-process)");
                log(self.out, self.server.clock, "script", text)?;
                Some(token)
            }
        };
        let net = &self.net;
        let open = |data| -> Link {
            let inner = net.connect("lobby", data);
            match token {
                None => Box::new(inner),
                Some(token) => Box::new(SecureClient::new(inner, token)),
            }
        };
        LobbyClient::start(open, name, self.server.clock)
    }

    /// One frame of everybody: the server first, then each client.
    fn frame(&mut self) -> Result<(), Box<dyn Error>> {
        self.server.frame(DT, self.out)?;
        for client in &mut self.clients {
            client.frame(DT, self.out)?;
        }
        Ok(())
    }

    fn run_for(&mut self, time: Duration) -> Result<(), Box<dyn Error>> {
        let end = self.server.clock + time;
        while self.server.clock < end {
            self.frame()?;
        }
        Ok(())
    }

    /// Steps until `done`, or fails after [`STEP_LIMIT`].
    fn run_until(
        &mut self,
        what: &str,
        done: impl Fn(&Self) -> bool,
    ) -> Result<(), Box<dyn Error>> {
        let end = self.server.clock + STEP_LIMIT;
        while !done(self) {
            if self.server.clock >= end {
                return Err(format!("timed out waiting until {what}").into());
            }
            self.frame()?;
        }
        Ok(())
    }

    /// Whether the server and every client show `seats` seats, all named, with `ready` ready.
    fn everyone_sees(&self, seats: usize, ready: usize) -> bool {
        let fits = |seats_shown: &[super::Seat]| {
            seats_shown.len() == seats
                && seats_shown.iter().all(|s| !s.name.is_empty())
                && seats_shown.iter().filter(|s| s.ready).count() == ready
        };
        fits(&self.server.state().seats)
            && self
                .clients
                .iter()
                .all(|c| c.lobby().is_some_and(|(_, lobby)| fits(&lobby.seats)))
    }

    /// A line from the script itself.
    fn say(&mut self, text: &str) -> std::io::Result<()> {
        log(self.out, self.server.clock, "script", text)
    }
}

/// Runs the scripted lobby, printing every participant's view as it changes to `out`.
///
/// # Errors
///
/// A runtime call refused, a step of the script not happening in time, the outcome not being
/// what the script expects, or `out` failing.
pub fn demo(out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    run(out, false)
}

/// [`demo`] through the secure layer: every connection presents a token the server issued
/// (acting as matchmaker), and the reconnecting client gets a new one.
///
/// # Errors
///
/// As [`demo`].
pub fn secure_demo(out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    run(out, true)
}

fn run(out: &mut dyn Write, secure: bool) -> Result<(), Box<dyn Error>> {
    let net = LoopbackNetwork::new();
    let listener = net.listen("lobby", 4)?;
    let (transport, matchmaker): (Link, _) = if secure {
        let address = NetworkAddress::Loopback {
            name: "lobby".into(),
        };
        let (matchmaker, config) = Matchmaker::new(address, 4)?;
        let server = SecureServer::new(listener, config, wall_clock())?;
        (Box::new(server), Some(matchmaker))
    } else {
        (Box::new(listener), None)
    };
    let server = LobbyServer::start(transport, "host")?;
    let mut lab = Lab {
        net,
        server,
        clients: Vec::new(),
        matchmaker,
        out,
    };
    lab.say("ann and bob connect")?;
    for name in ["ann", "bob"] {
        let client = lab.connect(name)?;
        lab.clients.push(client);
    }
    lab.run_until("everyone sees three named players", |lab| {
        lab.everyone_sees(3, 0)
    })?;

    lab.say("ann and bob get ready")?;
    lab.clients[0].request_ready(true)?;
    lab.run_for(Duration::from_millis(300))?;
    lab.clients[1].request_ready(true)?;
    lab.run_until("everyone sees 2 of 3 ready", |lab| lab.everyone_sees(3, 2))?;

    // The server trusts nothing from the arguments but checks them: a replayed request (an old
    // sequence number) and a client sending a server-only RPC both fail.
    lab.say("bob's client replays its request #1 (unready): the server rejects it")?;
    let (lobby, _) = lab.clients[1].lobby().ok_or("bob has no lobby")?;
    lab.clients[1].mp.rpc(lobby).set_ready(1, false)?;
    let refused = lab.clients[0]
        .mp
        .rpc(lobby)
        .notice("I am the server".into());
    lab.say(&format!(
        "ann tries to send a server notice: {}",
        match refused {
            Err(e) => format!("refused before it leaves ({e})"),
            Ok(()) => "sent?!".to_owned(),
        }
    ))?;
    lab.run_for(Duration::from_millis(300))?;
    if lab.server.mp.stats().rpcs_rejected != 1 || !lab.everyone_sees(3, 2) {
        return Err("the replayed request was not rejected".into());
    }

    lab.say("bob disconnects")?;
    let old_bob = lab.clients[1].mp.local_peer_id();
    lab.clients[1].mp.stop();
    lab.clients.pop();
    lab.run_until("the server drops bob", |lab| lab.everyone_sees(2, 1))?;
    lab.run_for(Duration::from_millis(300))?;

    lab.say("bob reconnects: a new peer, a fresh input sequence, the current lobby")?;
    let bob = lab.connect("bob")?;
    lab.clients.push(bob);
    lab.run_until("everyone sees bob back, not ready", |lab| {
        lab.everyone_sees(3, 1)
    })?;
    if lab.clients[1].mp.local_peer_id() == old_bob {
        return Err("a reconnecting client got its old peer id back".into());
    }
    lab.clients[1].request_ready(true)?; // request #1 of the new connection: accepted
    lab.run_until("everyone sees bob ready", |lab| lab.everyone_sees(3, 2))?;

    lab.say("the host gets ready too: everyone is, the countdown starts")?;
    lab.server.set_ready(true);
    lab.run_for(Duration::from_millis(1200))?;

    lab.say("ann changes her mind: the countdown is cancelled")?;
    lab.clients[0].request_ready(false)?;
    lab.run_until("everyone sees 2 of 3 ready", |lab| lab.everyone_sees(3, 2))?;
    lab.run_for(Duration::from_millis(300))?;

    lab.say("ann is ready again")?;
    lab.clients[0].request_ready(true)?;
    lab.run_until("everyone sees the match start", |lab| {
        lab.server.state().started
            && lab
                .clients
                .iter()
                .all(|c| c.lobby().is_some_and(|(_, lobby)| lobby.started))
    })?;
    // Let the last notices arrive.
    lab.run_for(Duration::from_millis(200))?;

    let stats = *lab.server.mp.stats();
    let accepted = lab.server.state().accepted;
    lab.say(&format!(
        "done: the match started with 3 players; the server accepted {accepted} requests and \
         rejected {}",
        stats.rpcs_rejected
    ))?;
    Ok(())
}
