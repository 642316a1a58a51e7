//! Types, scenes and helpers shared by the `rpc_runtime` and `rpc_hostile` test binaries (a
//! module each includes, so that other test binaries do not link these types): a [`Pawn`] with
//! one RPC per case, a client whose transport records what it sends on which channel, and a raw
//! client that speaks the wire format by hand.

#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use mf_net::prelude::*;
use mf_net::replication::message_ids::{HELLO, RPC};
use mf_net::rpc::RpcSender;
use mf_net::transport::loopback::LoopbackTransport;
use mf_net::transport::TransportEvent;
use mf_net_tests::harness::{messages, Dyn, Mp, World};
use mf_net_tests::send_hook::SendHook;

/// A player: one RPC per mode, option and failure case.
#[derive(Replicated, Debug, Default)]
pub(crate) struct Pawn {
    /// Replicated: moved by its authority.
    #[replicated]
    pub(crate) x: i32,
    /// Local: what `hit` did here.
    pub(crate) effects: i32,
    /// Local: how many `hit` runs were the caller's own `call_local` run.
    pub(crate) local_runs: u32,
    /// Local: the senders of `move_by`, `wave` and `say`, as the context reported them.
    pub(crate) senders: Vec<PeerId>,
    /// Local: the sender ids `say` claimed in its payload.
    pub(crate) claimed: Vec<u64>,
    /// Local: `ping` total.
    pub(crate) pings: u32,
    /// Local: `spam` runs.
    pub(crate) spam: u32,
    /// Local: length of the last `blob`.
    pub(crate) blob: usize,
    /// Local: `cheer` runs, and how many were local.
    pub(crate) cheers: (u32, u32),
}

/// Wire ids, in declaration order.
pub(crate) mod wire {
    pub(crate) const MOVE_BY: u32 = 0;
    pub(crate) const HIT: u32 = 1;
    pub(crate) const WAVE: u32 = 2;
    pub(crate) const PING: u32 = 3;
    pub(crate) const SPAM: u32 = 4;
    pub(crate) const EXPLODE: u32 = 5;
    pub(crate) const REFUSE: u32 = 6;
    pub(crate) const BLOB: u32 = 7;
    pub(crate) const CLAIM: u32 = 8;
    pub(crate) const SAY: u32 = 9;
    pub(crate) const CHEER: u32 = 10;
    pub(crate) const ECHO: u32 = 11;
}

#[rpcs]
impl Pawn {
    /// The owner moves its pawn (client → server).
    #[rpc(authority)]
    pub(crate) fn move_by(&mut self, ctx: &RpcContext, dx: i32) {
        self.x += dx;
        self.senders.push(ctx.sender());
    }

    /// The server shows a hit everywhere, itself included.
    #[rpc(server, call_local)]
    pub(crate) fn hit(&mut self, ctx: &RpcContext, damage: i32) {
        self.effects += damage;
        self.local_runs += u32::from(ctx.is_local());
    }

    /// Anyone waves.
    #[rpc(any_peer)]
    pub(crate) fn wave(&mut self, ctx: &RpcContext) {
        self.senders.push(ctx.sender());
    }

    /// Unreliable.
    #[rpc(any_peer, unreliable)]
    pub(crate) fn ping(&mut self, n: u32) {
        self.pings += n;
    }

    /// At most 5 a second per connection.
    #[rpc(any_peer, rate_limit = 5)]
    pub(crate) fn spam(&mut self) {
        self.spam += 1;
    }

    /// Panics.
    #[rpc(any_peer)]
    pub(crate) fn explode(&mut self) {
        panic!("boom");
    }

    /// Fails.
    #[rpc(any_peer)]
    pub(crate) fn refuse(&mut self) -> Result<(), String> {
        Err("refused".to_owned())
    }

    /// Takes a byte array.
    #[rpc(any_peer)]
    pub(crate) fn blob(&mut self, data: Vec<u8>) {
        self.blob = data.len();
    }

    /// Asks the server for authority (a deferred command).
    #[rpc(any_peer)]
    pub(crate) fn claim(&mut self, ctx: &mut RpcContext) {
        let (node, sender) = (ctx.node(), ctx.sender());
        ctx.set_authority(node, sender);
    }

    /// Claims a sender id in its payload: the context's sender is what counts.
    #[rpc(any_peer)]
    pub(crate) fn say(&mut self, ctx: &RpcContext, claimed_sender: u64) {
        self.senders.push(ctx.sender());
        self.claimed.push(claimed_sender);
    }

    /// Runs on the caller too.
    #[rpc(any_peer, call_local)]
    pub(crate) fn cheer(&mut self, ctx: &RpcContext) {
        self.cheers.0 += 1;
        self.cheers.1 += u32::from(ctx.is_local());
    }

    /// On the server, answers with a queued `hit` to everyone (a deferred RPC).
    #[rpc(any_peer)]
    pub(crate) fn echo(&mut self, ctx: &mut RpcContext, damage: i32) {
        let node = ctx.node();
        let _ = RpcSender::<_, Pawn>::for_node(ctx, node).hit(damage);
    }
}

/// Scene 0, `pawn`: one [`Pawn`].
pub(crate) const PAWN: SceneIndex = SceneIndex::new(0);

/// The spawnable scenes.
pub(crate) fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("pawn", |scene, root| scene.set_value(root, Pawn::default()))
        .expect("fresh library");
    scenes
}

/// Spawns a pawn owned by `owner` and steps until every client has it; returns the server's
/// handle.
pub(crate) fn spawn_pawn(world: &mut World, owner: PeerId) -> NetRef<Pawn> {
    let root = world.root();
    let node = world.server.spawn(PAWN, root, owner).expect("spawn");
    world.step(3);
    world.server.scene().net_ref(node).expect("a pawn")
}

/// `mp`'s copy of the server's node `handle` (by net id).
pub(crate) fn copy(world: &World, mp: &Mp, handle: NetRef<Pawn>) -> NetRef<Pawn> {
    let id = world.server.net_id(handle.node()).expect("networked");
    let node = mp.node(id).expect("spawned here");
    mp.scene().net_ref(node).expect("a pawn")
}

/// The value of `handle` in `mp`.
pub(crate) fn pawn(mp: &Mp, handle: NetRef<Pawn>) -> &Pawn {
    mp.scene().get(handle).expect("a pawn")
}

/// Every packet a [`recording_client`] sent: channel and message id.
pub(crate) type SentLog = Rc<RefCell<Vec<(Channel, u16)>>>;

/// Starts a client of `world` whose transport records what it sends; step to let it join.
pub(crate) fn recording_client(world: &mut World) -> (usize, SentLog) {
    let log = SentLog::default();
    let record = Rc::clone(&log);
    let net = &world.net;
    let open = |data| -> Dyn {
        Box::new(SendHook::new(
            net.connect("game", data),
            move |_, channel, data| {
                if let Some(id) = data.get(1..3) {
                    record
                        .borrow_mut()
                        .push((channel, u16::from_le_bytes([id[0], id[1]])));
                }
                Ok(())
            },
        ))
    };
    let mut client = Mp::new(library(), MultiplayerConfig::default());
    client
        .start_client(open, messages())
        .expect("client starts");
    world.clients.push(client);
    (world.clients.len() - 1, log)
}

/// A client without the runtime: a bare loopback transport speaking the wire format by hand.
pub(crate) struct RawClient {
    transport: LoopbackTransport,
    /// The id the server's welcome gave us.
    pub(crate) peer: Option<PeerId>,
    /// Set when the server disconnected us.
    pub(crate) disconnected: Option<DisconnectReason>,
    /// Packets the transport refused.
    pub(crate) refused: usize,
    /// Whether the transport connected.
    pub(crate) connected: bool,
}

impl RawClient {
    /// Connects to `world`'s server and says hello with the server's own fingerprint (and an
    /// empty but well-formed body: no scene shapes).
    pub(crate) fn join(world: &mut World) -> Self {
        let data = mf_net::replication::connect_data(&messages()).expect("no reserved id conflict");
        let mut raw = Self {
            transport: world.net.connect("game", data),
            peer: None,
            disconnected: None,
            refused: 0,
            connected: false,
        };
        let fingerprint = world.server.fingerprint();
        let mut said_hello = false;
        for _ in 0..8 {
            world.frame();
            raw.pump();
            if raw.connected && !said_hello {
                let hello = [&fingerprint.to_le_bytes()[..], &[0]].concat();
                raw.send(HELLO, Channel::Reliable, &hello);
                said_hello = true;
            }
        }
        assert!(raw.peer.is_some(), "the server welcomed the raw client");
        raw
    }

    /// Sends one message: the bus header (version 1, `id`, tick 0) and `payload`.
    pub(crate) fn send(&mut self, id: u16, channel: Channel, payload: &[u8]) {
        let mut w = NetWriter::new();
        w.write_u8(1);
        w.write_u16(id);
        w.write_u32(0);
        w.write_bytes(payload);
        if self
            .transport
            .send(PeerId::SERVER, channel, w.as_slice())
            .is_err()
        {
            self.refused += 1;
        }
    }

    /// Sends an RPC message: net id, wire id, then `args` as given.
    pub(crate) fn rpc(&mut self, net_id: u32, wire_id: u32, args: &[u8]) {
        let mut w = NetWriter::new();
        w.write_var_u32(net_id);
        w.write_var_u32(wire_id);
        w.write_bytes(args);
        self.send(RPC, Channel::Reliable, w.as_slice());
    }

    /// Takes every event: learns our peer id from the welcome, notes a disconnection.
    pub(crate) fn pump(&mut self) {
        self.transport.flush();
        while let Some(event) = self.transport.poll_event() {
            match event {
                TransportEvent::Received { data, .. } => {
                    let id = data.get(1..3).map(|b| u16::from_le_bytes([b[0], b[1]]));
                    if id == Some(HELLO + 1) && self.peer.is_none() {
                        let mut peer = [0; 8];
                        if let Some(bytes) = data.get(7..15) {
                            peer.copy_from_slice(bytes);
                            self.peer = Some(PeerId(u64::from_le_bytes(peer)));
                        }
                    }
                }
                TransportEvent::Disconnected { reason, .. } => self.disconnected = Some(reason),
                TransportEvent::Connected { .. } => self.connected = true,
            }
        }
    }

    /// Steps the world `frames` frames, pumping after each.
    pub(crate) fn step(&mut self, world: &mut World, frames: usize) {
        for _ in 0..frames {
            self.transport.flush();
            world.frame();
            self.pump();
        }
    }
}
