#![allow(clippy::unwrap_used)]
//! The server/two-client lobby of the reference (sender identity, RPC permissions, replay and
//! disconnect) rebuilt with mf-net, over loopback and over ENet (real UDP on 127.0.0.1, port 0).
//!
//! - Clients toggle readiness with an `any_peer` RPC carrying an input sequence and the desired
//!   state, never a player id: the server reads the sender from the context, and `validate`
//!   refuses non-members, the server itself, replays (a sequence not above the last) and jumps of
//!   more than 64.
//! - The server publishes the state (players, ready players, a snapshot sequence) as replicated
//!   members of a server-owned `Lobby` node; the server counts as a player. Membership changes
//!   only flag a publication, which happens once per frame after the events.
//! - A disconnecting client loses its readiness and last input sequence on the server; on
//!   reconnecting it gets the current state and starts a new input sequence.

use std::thread::sleep;
use std::time::Duration;

use mf_net::prelude::*;
use mf_net::rpc::RpcMode;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_enet::EnetTransport;
use mf_net_tests::harness::{messages, Dyn, Mp};

/// How far a client's input sequence may jump (this lobby's rule).
const MAX_JUMP: u32 = 64;

/// The lobby: published state (replicated) and the server's bookkeeping (local).
#[derive(Replicated, Debug, Default)]
struct Lobby {
    /// Published: participants, the server included.
    #[replicated]
    players: u8,
    /// Published: ready participants.
    #[replicated]
    ready: u8,
    /// Published: bumped by every publication.
    #[replicated]
    sequence: u32,
    /// Server: each client's readiness and last accepted input sequence.
    members: Vec<(PeerId, bool, u32)>,
    /// Server: whether a publication is due.
    dirty: bool,
    /// Server: accepted requests.
    accepted: u32,
}

#[rpcs]
impl Lobby {
    /// A client asks to become (un)ready. The sender comes from the transport.
    #[rpc(any_peer, validate = Self::valid_request)]
    fn submit_ready(&mut self, ctx: &RpcContext, sequence: u32, ready: bool) {
        let sender = ctx.sender();
        if let Some(member) = self.members.iter_mut().find(|m| m.0 == sender) {
            member.1 = ready;
            member.2 = sequence;
            self.accepted += 1;
            self.dirty = true;
        }
    }

    /// Clients may not publish: only the server calls this (and it never needs to).
    #[rpc(server)]
    fn announce(&mut self, _sequence: u32) {}

    fn valid_request(&self, ctx: &RpcContext, sequence: &u32, _ready: &bool) -> bool {
        let sender = ctx.sender();
        if sender == PeerId::SERVER || ctx.is_local() {
            return false;
        }
        let Some(&(_, _, last)) = self.members.iter().find(|m| m.0 == sender) else {
            return false;
        };
        *sequence > last && *sequence <= last.saturating_add(MAX_JUMP)
    }

    /// Server: recounts and bumps the sequence.
    fn publish(&mut self) {
        self.players = u8::try_from(self.members.len() + 1).unwrap_or(u8::MAX);
        self.ready = u8::try_from(self.members.iter().filter(|m| m.1).count()).unwrap_or(u8::MAX);
        self.sequence += 1;
        self.dirty = false;
    }
}

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("lobby", |scene, root| {
            scene.set_value(root, Lobby::default())
        })
        .unwrap();
    scenes
}

/// One participant's view: (players, ready, sequence), or `None` while not connected.
fn view(mp: &Mp) -> Option<(u8, u8, u32)> {
    if mp.is_client() && mp.peers().is_empty() {
        return None;
    }
    let (_, lobby) = mp.scene().iter::<Lobby>().next()?;
    Some((lobby.players, lobby.ready, lobby.sequence))
}

/// A client session: its runtime and its own input sequence.
struct Session {
    mp: Mp,
    next_input: u32,
}

impl Session {
    fn request_ready(&mut self, ready: bool) -> Result<(), RpcSendError> {
        let (handle, _) = self.mp.scene().iter::<Lobby>().next().unwrap();
        self.next_input += 1;
        self.mp.rpc(handle).submit_ready(self.next_input, ready)
    }
}

/// The server, two clients, and how to connect a client transport.
struct LobbyLab {
    server: Mp,
    lobby: NetRef<Lobby>,
    clients: Vec<Session>,
    connect: Box<dyn FnMut(u32) -> Dyn>,
    /// Real time to wait per frame (ENet), or none (loopback).
    pause: Option<Duration>,
    rejected: u32,
}

impl LobbyLab {
    fn new(
        server_transport: Dyn,
        connect: Box<dyn FnMut(u32) -> Dyn>,
        pause: Option<Duration>,
    ) -> Self {
        let mut server = Mp::new(library(), MultiplayerConfig::default());
        server.start_server(server_transport, messages()).unwrap();
        let root = server.scene().root();
        let node = server
            .spawn(SceneIndex::new(0), root, PeerId::SERVER)
            .unwrap();
        let lobby = server.scene().net_ref::<Lobby>(node).unwrap();
        server.scene_mut().get_mut(lobby).unwrap().publish();
        let mut lab = Self {
            server,
            lobby,
            clients: Vec::new(),
            connect,
            pause,
            rejected: 0,
        };
        for _ in 0..2 {
            let session = lab.join();
            lab.clients.push(session);
        }
        lab.run_until("both clients see 3 / 0", |lab| {
            lab.everyone() == [Some((3, 0)); 3]
        });
        lab
    }

    fn join(&mut self) -> Session {
        let mut mp = Mp::new(library(), MultiplayerConfig::default());
        mp.start_client(&mut self.connect, messages()).unwrap();
        Session { mp, next_input: 0 }
    }

    /// One frame of everyone; the server handles membership events and publishes once.
    fn frame(&mut self) {
        let dt = Duration::from_secs(1) / 60;
        self.server.begin_frame(dt);
        while let Some(event) = self.server.next_event() {
            let lobby = self.server.scene_mut().get_mut(self.lobby).unwrap();
            match event {
                MultiplayerEvent::PeerJoined(peer) => {
                    lobby.members.push((peer, false, 0));
                    lobby.dirty = true;
                }
                MultiplayerEvent::PeerLeft { peer, .. } => {
                    lobby.members.retain(|m| m.0 != peer);
                    lobby.dirty = true;
                }
                MultiplayerEvent::RpcRejected { rpc, .. } => {
                    assert_eq!(rpc, "submit_ready");
                    self.rejected += 1;
                }
                _ => {}
            }
        }
        let lobby = self.server.scene_mut().get_mut(self.lobby).unwrap();
        if lobby.dirty {
            lobby.publish();
        }
        self.server.end_frame();
        for client in &mut self.clients {
            client.mp.begin_frame(dt);
            while client.mp.next_event().is_some() {}
            client.mp.end_frame();
        }
        if let Some(pause) = self.pause {
            sleep(pause);
        }
    }

    fn run_until(&mut self, what: &str, done: impl Fn(&Self) -> bool) {
        for _ in 0..5_000 {
            if done(self) {
                return;
            }
            self.frame();
        }
        panic!(
            "timed out waiting until {what}: server {:?}, clients {:?}",
            view(&self.server),
            self.clients.iter().map(|c| view(&c.mp)).collect::<Vec<_>>()
        );
    }

    fn everyone(&self) -> Vec<Option<(u8, u8)>> {
        std::iter::once(&self.server)
            .chain(self.clients.iter().map(|c| &c.mp))
            .map(|mp| view(mp).map(|(p, r, _)| (p, r)))
            .collect()
    }
}

fn play(mut lab: LobbyLab) {
    assert_eq!(lab.everyone(), [Some((3, 0)); 3]);

    // Both clients become ready.
    lab.clients[0].request_ready(true).unwrap();
    lab.clients[1].request_ready(true).unwrap();
    lab.run_until("everyone sees 3 / 2", |lab| {
        lab.everyone() == [Some((3, 2)); 3]
    });
    let first = lab.clients[0].mp.local_peer_id();
    let server_lobby = lab.server.scene().get(lab.lobby).unwrap();
    assert!(server_lobby.members.contains(&(first, true, 1)));
    assert_eq!(server_lobby.accepted, 2);

    // A replayed sequence and an excessive jump are rejected by the server (counted, raised).
    let handle = lab.clients[0].mp.scene().iter::<Lobby>().next().unwrap().0;
    lab.clients[0]
        .mp
        .rpc(handle)
        .submit_ready(1, false)
        .unwrap();
    lab.clients[0]
        .mp
        .rpc(handle)
        .submit_ready(1 + MAX_JUMP + 1, false)
        .unwrap();
    let rejected = lab.server.stats().rpcs_rejected;
    lab.run_until("the server rejected both", |lab| lab.rejected == 2);
    assert_eq!(rejected + 2, lab.server.stats().rpcs_rejected);
    assert_eq!(lab.server.peer_stats(first).unwrap().rpcs_rejected, 2);
    // A client cannot publish state: the server RPC is refused before it leaves.
    let refused = lab.clients[0].mp.rpc(handle).announce(99);
    assert!(
        matches!(
            refused,
            Err(RpcSendError::NotAllowed {
                rpc: "announce",
                mode: RpcMode::Server,
                authority: PeerId::SERVER,
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(refused
        .unwrap_err()
        .to_string()
        .ends_with("it is a `server` RPC, which only the server sends"));
    // The next in-sequence request is accepted.
    lab.clients[0].request_ready(false).unwrap();
    lab.run_until("everyone sees 3 / 1", |lab| {
        lab.everyone() == [Some((3, 1)); 3]
    });

    // The second client disconnects: the server drops its readiness and input sequence.
    let second = lab.clients[1].mp.local_peer_id();
    lab.clients[1].mp.stop();
    assert_eq!(view(&lab.clients[1].mp), None);
    lab.run_until("the others see 2 / 0", |lab| {
        lab.everyone()[..2] == [Some((2, 0)); 2]
    });
    let server_lobby = lab.server.scene().get(lab.lobby).unwrap();
    assert!(server_lobby.members.iter().all(|m| m.0 != second));
    assert_eq!(lab.everyone()[2], None);

    // It reconnects: it gets the current state and starts a new input sequence.
    lab.clients[1] = lab.join();
    lab.run_until("everyone sees 3 / 0 again", |lab| {
        lab.everyone() == [Some((3, 0)); 3]
    });
    assert_ne!(lab.clients[1].mp.local_peer_id(), second);
    lab.clients[1].request_ready(true).unwrap();
    lab.run_until("everyone sees 3 / 1 after the reconnect", |lab| {
        lab.everyone() == [Some((3, 1)); 3]
    });
    // The sequences never went backwards on a client.
    let (_, _, server_sequence) = view(&lab.server).unwrap();
    let (_, _, client_sequence) = view(&lab.clients[0].mp).unwrap();
    assert!(client_sequence <= server_sequence);
}

#[test]
fn lobby_over_loopback() {
    let net = LoopbackNetwork::new();
    let server: Dyn = Box::new(net.listen("lobby", 4).unwrap());
    let connect = Box::new(move |data| -> Dyn { Box::new(net.connect("lobby", data)) });
    play(LobbyLab::new(server, connect, None));
}

#[test]
fn lobby_over_enet() {
    let server = EnetTransport::listen("127.0.0.1:0".parse().unwrap(), 4).unwrap();
    let port = server.local_addr().unwrap().port();
    let connect = Box::new(move |data| -> Dyn {
        Box::new(EnetTransport::connect(("127.0.0.1", port), data).unwrap())
    });
    play(LobbyLab::new(
        Box::new(server),
        connect,
        Some(Duration::from_millis(1)),
    ));
}
