//! A game lobby: players join with names, toggle ready, and a countdown starts the match once
//! everyone is ready. Runnable three ways:
//!
//! ```text
//! lobby                                 # a scripted server and two clients, over loopback
//! lobby --host [ADDR:]PORT [--name NAME] # a host over ENet (it is a player too)
//! lobby --join ADDR:PORT --name NAME     # a client over ENet
//! ```
//!
//! `--secure` runs it through the secure layer (`mf-net-secure`): the scripted demo's server is
//! also the matchmaker and hands every connection its own token directly; `--host PORT
//! --secure` prints tokens (`token NAME` prints another) and a client adds `--token HEX`. A
//! token is good for one connection, so `rejoin` with the same one is refused as replayed.
//!
//! Over ENet, type `r` to toggle ready, `rejoin` (clients) to disconnect and connect again, and
//! `q` or end of input to leave gracefully.
//!
//! How it is built:
//!
//! - The lobby is one **server-owned node** holding a `Lobby`. The server **publishes** its
//!   state as `#[replicated]` members (the seats, the countdown, whether the match started, a
//!   version number); clients only read them. The server keeps its bookkeeping (each member's
//!   last input sequence, the countdown timer) in plain fields that are never sent.
//! - Clients **ask** through RPCs: `introduce(name)` and `set_ready(sequence, ready)`. They are
//!   `any_peer` (the node belongs to the server, so "authority" would refuse clients), which is
//!   why the server identifies the caller with `ctx.sender()` — the transport's peer, never an
//!   id from the arguments — and why each has a `validate` function: unknown senders, a name
//!   that is not a name, a replayed or skipped-ahead sequence number are refused before the body
//!   runs (counted, and raised as [`MultiplayerEvent::RpcRejected`]).
//! - `notice(text)` is a `server` RPC: only the server may send it (a client's call is refused
//!   before it leaves), and it runs on every client.
//! - Membership changes and accepted requests only mark the lobby dirty; the server publishes
//!   once per frame, after handling every event, so several changes in one frame make one
//!   publication.
//! - A client that leaves loses its seat, readiness and input sequence; one that comes back is a
//!   new peer (peer ids are never reused) with a new sequence, and receives the current state as
//!   part of joining.

mod demo;
mod enet;

use std::error::Error;
use std::fmt;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::replication::IntoTransport;

pub use demo::{demo, secure_demo};

/// How far a client's input sequence may jump ahead (this lobby's rule, not the library's).
const MAX_JUMP: u32 = 64;
/// The countdown once everyone is ready.
const COUNTDOWN: Duration = Duration::from_secs(3);
/// The longest name accepted.
const MAX_NAME: usize = 16;
/// The only spawnable scene.
const LOBBY_SCENE: SceneIndex = SceneIndex::new(0);

// ---------------------------------------------------------------------------------------------
// The replicated lobby
// ---------------------------------------------------------------------------------------------

/// One seat as everybody sees it (a replicated member may be any `NetCodec + PartialEq + Clone`
/// type, vectors of your own structs included).
#[derive(NetCodec, Debug, Clone, PartialEq, Default)]
pub struct Seat {
    /// The player's peer id (`PeerId::SERVER`, 1, is the host).
    pub peer: u64,
    /// The name it chose; empty until its introduction arrives.
    pub name: String,
    /// Whether it is ready.
    pub ready: bool,
}

/// The lobby node.
#[derive(Replicated, Debug, Default)]
struct Lobby {
    // Published by the server, read by clients.
    /// Every participant, the host first.
    #[replicated]
    seats: Vec<Seat>,
    /// Whole seconds left before the match starts; 0 when no countdown runs.
    #[replicated]
    countdown: u8,
    /// Whether the match started.
    #[replicated]
    started: bool,
    /// Bumped by every publication.
    #[replicated]
    version: u32,

    // Server only: never sent.
    /// Every participant with its last accepted input sequence, the host first.
    members: Vec<Member>,
    /// Time left on the countdown, while it runs.
    timer: Option<Duration>,
    /// Whether a publication is due.
    dirty: bool,
    /// Requests accepted.
    accepted: u32,

    // Clients only: never sent.
    /// Notices received from the server, not yet printed.
    notices: Vec<String>,
}

/// The server's record of one participant.
#[derive(Debug)]
struct Member {
    peer: PeerId,
    name: String,
    ready: bool,
    /// The last input sequence accepted from it (0: none yet).
    last_input: u32,
}

#[rpcs]
impl Lobby {
    /// A client says who it is. Runs on the server, once per client.
    #[rpc(any_peer, validate = Self::valid_introduction)]
    fn introduce(&mut self, ctx: &RpcContext, name: String) {
        // A name already taken gets the peer number appended: names stay unique.
        let taken = self.members.iter().any(|m| m.name == name);
        let name = if taken {
            format!("{name}{}", ctx.sender().0)
        } else {
            name
        };
        if let Some(member) = self.member_mut(ctx.sender()) {
            member.name = name;
            self.accepted += 1;
            self.dirty = true;
        }
    }

    /// A client asks to become ready (or not). `sequence` numbers its requests: 1, 2, 3...
    #[rpc(any_peer, validate = Self::valid_ready_request)]
    fn set_ready(&mut self, ctx: &RpcContext, sequence: u32, ready: bool) {
        if let Some(member) = self.member_mut(ctx.sender()) {
            member.ready = ready;
            member.last_input = sequence;
            self.accepted += 1;
            self.dirty = true;
        }
    }

    /// The server tells every client something (the countdown, the start).
    #[rpc(server)]
    fn notice(&mut self, text: String) {
        self.notices.push(text);
    }

    /// `introduce` is accepted once, from a member, with a plausible name.
    fn valid_introduction(&self, ctx: &RpcContext, name: &str) -> bool {
        let plausible = (1..=MAX_NAME).contains(&name.chars().count())
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
        plausible && self.member(ctx.sender()).is_some_and(|m| m.name.is_empty())
    }

    /// `set_ready` is accepted from a named member, before the match starts, with the next
    /// sequence number: above the last one accepted (a replay is refused) and at most
    /// [`MAX_JUMP`] above it.
    fn valid_ready_request(&self, ctx: &RpcContext, sequence: &u32, _ready: &bool) -> bool {
        let Some(member) = self.member(ctx.sender()) else {
            return false;
        };
        !self.started
            && !member.name.is_empty()
            && *sequence > member.last_input
            && *sequence <= member.last_input.saturating_add(MAX_JUMP)
    }
}

impl Lobby {
    /// A client's record. The host's (`PeerId::SERVER`) is never found here: clients cannot
    /// speak for the host.
    fn member(&self, peer: PeerId) -> Option<&Member> {
        self.members
            .iter()
            .find(|m| m.peer == peer && peer != PeerId::SERVER)
    }

    fn member_mut(&mut self, peer: PeerId) -> Option<&mut Member> {
        self.members
            .iter_mut()
            .find(|m| m.peer == peer && peer != PeerId::SERVER)
    }

    fn everyone_ready(&self) -> bool {
        self.members.len() >= 2 && self.members.iter().all(|m| m.ready && !m.name.is_empty())
    }

    /// Server, once per frame after the events: runs the countdown and publishes if anything
    /// changed. Returns what to announce.
    ///
    /// The countdown starts when everyone present (at least two) is named and ready, and runs
    /// while that stays true: a player becoming unready or a newcomer cancels it; a player
    /// leaving does not, if everyone left is ready.
    fn update(&mut self, dt: Duration) -> Option<String> {
        let mut notice = None;
        match self.timer {
            None if !self.started && self.everyone_ready() => {
                self.timer = Some(COUNTDOWN);
                notice = Some(format!(
                    "everyone is ready: the match starts in {} s",
                    COUNTDOWN.as_secs()
                ));
            }
            Some(_) if !self.everyone_ready() => {
                self.timer = None;
                notice = Some("countdown cancelled".to_owned());
            }
            Some(left) => {
                let left = left.saturating_sub(dt);
                if left.is_zero() {
                    self.timer = None;
                    self.started = true;
                    notice = Some("the match starts!".to_owned());
                } else {
                    self.timer = Some(left);
                }
            }
            None => {}
        }
        let countdown = self.timer.map_or(0, |left| {
            u8::try_from(left.as_nanos().div_ceil(1_000_000_000)).unwrap_or(u8::MAX)
        });
        if self.dirty || notice.is_some() || countdown != self.countdown {
            self.publish(countdown);
        }
        notice
    }

    /// Server: copies the bookkeeping into the replicated members; the runtime sends what
    /// changed with the next snapshot.
    fn publish(&mut self, countdown: u8) {
        self.seats.clear();
        self.seats.extend(self.members.iter().map(|m| Seat {
            peer: m.peer.0,
            name: m.name.clone(),
            ready: m.ready,
        }));
        self.countdown = countdown;
        self.version += 1;
        self.dirty = false;
    }
}

/// The published state in one line: `lobby #5: host (ready), ann (ready), bob — 2 of 3 ready`.
impl fmt::Display for Lobby {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lobby #{}:", self.version)?;
        for (i, seat) in self.seats.iter().enumerate() {
            let separator = if i == 0 { " " } else { ", " };
            match seat.name.as_str() {
                "" => write!(f, "{separator}peer#{} (joining)", seat.peer)?,
                name => write!(f, "{separator}{name}")?,
            }
            if seat.ready {
                f.write_str(" (ready)")?;
            }
        }
        let ready = self.seats.iter().filter(|s| s.ready).count();
        write!(f, " - {ready} of {} ready", self.seats.len())?;
        if self.started {
            f.write_str(", MATCH STARTED")
        } else if self.countdown > 0 {
            write!(f, ", starting in {}", self.countdown)
        } else {
            Ok(())
        }
    }
}

/// The spawnable scenes, the same on every peer.
fn scenes() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    let index = scenes
        .register("lobby", |scene, root| {
            scene.set_value(root, Lobby::default())
        })
        .expect("a new scene name");
    assert_eq!(index, LOBBY_SCENE);
    scenes
}

/// The game's own messages: none, everything goes through replication and RPCs.
fn messages() -> MessageRegistry {
    MessageRegistry::new(1)
}

/// Prints one line of a participant's log, prefixed with its clock and name.
fn log(
    out: &mut dyn Write,
    clock: Duration,
    who: &str,
    text: impl fmt::Display,
) -> std::io::Result<()> {
    writeln!(out, "{:>6.2} s  {who:<6} {text}", clock.as_secs_f64())
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

/// The host: the server, and a player in its own lobby.
struct LobbyServer<T: Transport + 'static> {
    mp: Multiplayer<T>,
    lobby: NetRef<Lobby>,
    /// Time since the start (the sum of the frame times).
    clock: Duration,
}

impl<T: Transport + 'static> LobbyServer<T> {
    /// Starts serving over `transport` (a listening endpoint) with the host named `name`.
    fn start(transport: T, name: &str) -> Result<Self, Box<dyn Error>> {
        let mut mp = Multiplayer::new(scenes(), MultiplayerConfig::default());
        mp.start_server(transport, messages())?;
        // The lobby belongs to the server (authority `PeerId::SERVER`). Every client that joins
        // receives it with its current state.
        let root = mp.scene().root();
        let lobby = mp.spawn_as::<Lobby>(LOBBY_SCENE, root, PeerId::SERVER)?;
        let mut server = Self {
            mp,
            lobby,
            clock: Duration::ZERO,
        };
        let state = server.state_mut();
        state.members.push(Member {
            peer: PeerId::SERVER,
            name: name.to_owned(),
            ready: false,
            last_input: 0,
        });
        state.dirty = true;
        Ok(server)
    }

    fn state(&self) -> &Lobby {
        self.mp
            .scene()
            .get(self.lobby)
            .expect("the lobby lives as long as the server")
    }

    fn state_mut(&mut self) -> &mut Lobby {
        self.mp
            .scene_mut()
            .get_mut(self.lobby)
            .expect("the lobby lives as long as the server")
    }

    /// The host's own readiness: the server is authoritative, so no RPC is needed.
    fn set_ready(&mut self, ready: bool) {
        let state = self.state_mut();
        if let Some(host) = state.members.iter_mut().find(|m| m.peer == PeerId::SERVER) {
            if !state.started && host.ready != ready {
                host.ready = ready;
                state.dirty = true;
            }
        }
    }

    fn toggle_ready(&mut self) {
        let ready = self.state().members.first().is_some_and(|host| host.ready);
        self.set_ready(!ready);
    }

    /// One frame: receive (the RPCs run here), react to membership, count down, publish, send.
    fn frame(&mut self, dt: Duration, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
        self.clock += dt;
        let clock = self.clock;
        self.mp.begin_frame(dt);
        while let Some(event) = self.mp.next_event() {
            let state = self.state_mut();
            match event {
                MultiplayerEvent::PeerJoined(peer) => {
                    state.members.push(Member {
                        peer,
                        name: String::new(),
                        ready: false,
                        last_input: 0,
                    });
                    state.dirty = true;
                    log(out, clock, "server", format_args!("{peer} joined"))?;
                }
                MultiplayerEvent::PeerLeft { peer, reason } => {
                    // Its seat, readiness and input sequence go with it.
                    state.members.retain(|m| m.peer != peer);
                    state.dirty = true;
                    log(out, clock, "server", format_args!("{peer} left ({reason})"))?;
                }
                MultiplayerEvent::RpcRejected { peer, rpc, .. } => {
                    log(
                        out,
                        clock,
                        "server",
                        format_args!("rejected `{rpc}` from {peer}"),
                    )?;
                }
                _ => {}
            }
        }
        let version = self.state().version;
        if let Some(text) = self.state_mut().update(dt) {
            log(out, clock, "server", format_args!("notice: {text}"))?;
            // To every client (reliable, in order with the other RPCs).
            self.mp.rpc(self.lobby).notice(text)?;
        }
        if self.state().version != version {
            log(out, clock, "server", self.state())?;
        }
        self.mp.end_frame();
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// A client
// ---------------------------------------------------------------------------------------------

/// A player's client.
struct LobbyClient<T: Transport + 'static> {
    mp: Multiplayer<T>,
    name: String,
    /// The sequence number of our last `set_ready` request (a new connection starts over).
    last_input: u32,
    /// The lobby version we printed last.
    shown: u32,
    /// Whether the server welcomed us.
    welcomed: bool,
    /// Why we were disconnected, once we are.
    disconnected: Option<DisconnectReason>,
    clock: Duration,
}

impl<T: Transport + 'static> LobbyClient<T> {
    /// Starts a client over the transport `open` opens with the connect data it is given.
    fn start<R: IntoTransport<T>>(
        open: impl FnOnce(u32) -> R,
        name: &str,
        clock: Duration,
    ) -> Result<Self, Box<dyn Error>> {
        let mut mp = Multiplayer::new(scenes(), MultiplayerConfig::default());
        mp.start_client(open, messages())?;
        Ok(Self {
            mp,
            name: name.to_owned(),
            last_input: 0,
            shown: 0,
            welcomed: false,
            disconnected: None,
            clock,
        })
    }

    /// Our copy of the lobby, once its spawn arrived.
    fn lobby(&self) -> Option<(NetRef<Lobby>, &Lobby)> {
        self.mp.scene().iter::<Lobby>().next()
    }

    /// Our seat in the published state.
    fn seat(&self) -> Option<&Seat> {
        let me = self.mp.local_peer_id().0;
        self.lobby()?.1.seats.iter().find(|s| s.peer == me)
    }

    /// Asks the server to set our readiness, with the next sequence number.
    fn request_ready(&mut self, ready: bool) -> Result<(), Box<dyn Error>> {
        let (lobby, _) = self.lobby().ok_or("not in the lobby yet")?;
        self.last_input += 1;
        self.mp.rpc(lobby).set_ready(self.last_input, ready)?;
        Ok(())
    }

    fn toggle_ready(&mut self) -> Result<(), Box<dyn Error>> {
        let ready = self.seat().is_some_and(|s| s.ready);
        self.request_ready(!ready)
    }

    /// One frame: receive, introduce ourselves once connected, print what changed, send.
    fn frame(&mut self, dt: Duration, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
        self.clock += dt;
        let clock = self.clock;
        self.mp.begin_frame(dt);
        while let Some(event) = self.mp.next_event() {
            match event {
                MultiplayerEvent::ConnectedToServer { local_peer_id } => {
                    self.welcomed = true;
                    log(
                        out,
                        clock,
                        &self.name,
                        format_args!("connected as {local_peer_id}"),
                    )?;
                }
                MultiplayerEvent::NodeSpawned { node, .. } => {
                    // The lobby arrived (with the current state): introduce ourselves.
                    if let Some(lobby) = self.mp.scene().net_ref::<Lobby>(node) {
                        self.mp.rpc(lobby).introduce(self.name.clone())?;
                    }
                }
                MultiplayerEvent::Disconnected { reason } => {
                    let why = match self.mp.refusal() {
                        Some(refusal) => format!("disconnected ({reason}: {refusal})"),
                        None => format!("disconnected ({reason})"),
                    };
                    log(out, clock, &self.name, why)?;
                    self.disconnected = Some(reason);
                }
                _ => {}
            }
        }
        let name = self.name.clone();
        if let Some((handle, lobby)) = self.lobby() {
            let version = lobby.version;
            if version != self.shown {
                log(out, clock, &name, lobby)?;
                self.shown = version;
            }
            if let Some(state) = self.mp.scene_mut().get_mut(handle) {
                for text in state.notices.drain(..) {
                    log(out, clock, &name, format_args!("notice: {text}"))?;
                }
            }
        }
        self.mp.end_frame();
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

const USAGE: &str =
    "usage: lobby [--secure] | lobby --host [ADDR:]PORT [--name NAME] [--secure] | \
                     lobby --join ADDR:PORT --name NAME [--token HEX]";

/// Runs the lobby with command-line arguments (without the program name).
pub fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    let args: Vec<String> = args.into_iter().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    let secure = args.iter().any(|a| a == "--secure");
    let result = if let Some(port) = value("--host") {
        match enet::host_addr(port) {
            Some(addr) => enet::host(addr, value("--name").unwrap_or("host"), secure),
            None => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    } else if let Some(addr) = value("--join") {
        match value("--name") {
            Some(name) => enet::join(addr, name, value("--token")),
            None => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    } else if args.is_empty() {
        demo(&mut std::io::stdout().lock())
    } else if args == ["--secure"] {
        secure_demo(&mut std::io::stdout().lock())
    } else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lobby: {e}");
            ExitCode::FAILURE
        }
    }
}
