#![allow(clippy::unwrap_used)]
//! Randomized robustness of the replication runtime against a hostile peer, deterministic
//! (seeded) and bounded.
//!
//! A recorded honest session (spawns of every kind: scene, bind, spawner, late join with absent
//! ids; changes; authority; despawns; RPCs both ways) gives a corpus of valid packets per
//! direction. Then:
//!
//! - **Server victim.** A real server with an honest client, and raw loopback peers (one that
//!   completed the handshake by hand, one that never said hello) sending thousands of mutated
//!   valid packets (bit flips, truncation, spliced huge and overlong varints, swapped message
//!   ids, cross-spliced payloads) and pure random ones, for every reserved id and random ids.
//!   The server never panics and keeps running, every packet received is accounted for
//!   (dispatched or dropped), and the honest client still converges.
//! - **Client victim.** A real client and a raw loopback "server" that answers its hello by
//!   hand, sending the same kinds of packets before the welcome and after it. The client never
//!   panics, stays connected, counts what it drops, and then still applies a valid spawn,
//!   snapshot and despawn.
//! - **Hostile counts.** Spawns claiming billions of nodes or absent ids, hellos with billions
//!   of scenes, nodes or RPC signatures, snapshot entries and RPC arguments claiming huge
//!   lengths: each is dropped without allocating more than a few kilobytes.
//!
//! The seeded tests take other seeds from the environment, as the chaos tests do (in release,
//! for thousands: `CHAOS_SEEDS=2000 cargo test --release -p mf-net-tests --test
//! replication_fuzz`).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use mf_net::bus::BusStats;
use mf_net::codec::quantize::Buckets;
use mf_net::codec::state_bits::{
    bytes_to_bits, end_entries, state_values, write_entry, BodyCursor,
};
use mf_net::prediction::Simulation;
use mf_net::prelude::*;
use mf_net::replication::message_ids::{
    self as protocol, AUTHORITY, DESPAWN, HELLO, INPUT, INPUT_ACK, PARENT, RPC, SNAPSHOT, SPAWN,
    WELCOME,
};
use mf_net::replication::{NetId, ReplicationRegistry, SnapshotEncoding};
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::{SendError, TransportEvent};
use mf_net::wire::BitWriter;
use mf_net_tests::alloc_counter;
use mf_net_tests::harness::{drain, messages, refusals, Dyn, Mp, World};
use mf_net_tests::rng::chaos_seeds;
use mf_net_tests::send_hook::SendHook;

mod replication_common;
use replication_common::{Body, Gun};

/// A third type: an interpolated member, owned heap data, and RPCs with hostile-sized
/// arguments.
#[derive(Replicated, Debug, Default)]
struct Ship {
    #[replicated(interpolate)]
    pos: f32,
    #[replicated]
    name: String,
    #[replicated]
    cargo: Vec<u16>,
    /// Local.
    pokes: u32,
}

#[rpcs]
impl Ship {
    #[rpc(any_peer)]
    fn poke(&mut self, n: u32) {
        self.pokes = self.pokes.wrapping_add(n);
    }

    #[rpc(any_peer, unreliable)]
    fn load(&mut self, data: Vec<u8>, label: String) {
        self.pokes = self
            .pokes
            .wrapping_add(data.len() as u32 + label.len() as u32);
    }

    #[rpc(server)]
    fn announce(&mut self, text: String) {
        self.pokes = self.pokes.wrapping_add(text.len() as u32);
    }

    #[rpc(authority)]
    fn steer(&mut self, dx: f32) {
        self.pos += dx;
    }
}

const BODY: SceneIndex = SceneIndex::new(0);
const TANK: SceneIndex = SceneIndex::new(1);
const SHIP: SceneIndex = SceneIndex::new(2);

fn library() -> SceneLibrary {
    let mut scenes = replication_common::library();
    scenes
        .register("ship", |scene, root| scene.set_value(root, Ship::default()))
        .unwrap();
    scenes
}

/// Every peer loads `/root/level/door` (bound by the server) and registers a spawner.
fn setup(mp: &mut Mp) {
    let root = mp.scene().root();
    let level = mp.scene_mut().add(root, "level").unwrap();
    mp.scene_mut()
        .insert(level, "door", Body::default())
        .unwrap();
    mp.register_spawner::<u32, _>("crates", "/root/level", |scene, parent, n| {
        let ammo = u16::try_from(*n % 1000).unwrap_or(0);
        Ok(scene
            .insert(parent, &format!("crate{n}"), Gun { ammo })?
            .node())
    })
    .unwrap();
}

fn patient() -> MultiplayerConfig {
    MultiplayerConfig {
        handshake_timeout: Duration::from_secs(3600),
        peer_timeout: Duration::from_secs(3600),
        ..MultiplayerConfig::default()
    }
}

/// Seeds per victim, and hostile packets per seed (40 per frame).
const SEEDS: u64 = 16;
const PACKETS_PER_SEED: usize = 10_000;

const DT: Duration = Duration::from_nanos(33_333_333);

// ---------------------------------------------------------------------------------------------
// Seeded generator and mutations
// ---------------------------------------------------------------------------------------------

/// SplitMix64: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const HEADER: usize = 7;

fn packet(id: u16, tick: u32, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![1];
    p.extend_from_slice(&id.to_le_bytes());
    p.extend_from_slice(&tick.to_le_bytes());
    p.extend_from_slice(payload);
    p
}

fn id_of(p: &[u8]) -> u16 {
    p.get(1..3).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
}

/// A message id: mostly reserved ones (every replication message and the unused ones), some
/// game ids and arbitrary ones.
fn random_id(rng: &mut Rng) -> u16 {
    match rng.below(10) {
        0..=6 => HELLO + rng.below(16) as u16,
        7 => rng.below(16) as u16,
        _ => rng.next() as u16,
    }
}

/// Pure random: a header with a random id and tick, and 0–48 random bytes.
fn random_packet(rng: &mut Rng) -> Vec<u8> {
    let id = random_id(rng);
    let tick = if rng.percent(50) {
        rng.below(1000) as u32
    } else {
        rng.next() as u32
    };
    let len = rng.below(49);
    let payload = rng.bytes(len);
    let mut p = packet(id, tick, &payload);
    if rng.percent(2) {
        p[0] = rng.byte(); // another protocol version
    }
    if rng.percent(2) {
        p.truncate(rng.below(HEADER)); // not even a header
    }
    p
}

/// A position to mutate: mostly in the payload, sometimes in the header.
fn position(rng: &mut Rng, p: &[u8]) -> usize {
    if p.len() > HEADER && rng.percent(85) {
        HEADER + rng.below(p.len() - HEADER)
    } else {
        rng.below(p.len().max(1))
    }
}

/// Huge counts, lengths and ids, and overlong or overflowing varints.
const NASTY_VARINTS: &[&[u8]] = &[
    &[0xff, 0xff, 0xff, 0xff, 0x0f],
    &[0xff, 0xff, 0xff, 0xff, 0x0e],
    &[0xfe, 0xff, 0xff, 0xff, 0x07],
    &[0x80, 0x80, 0x80, 0x80, 0x10],
    &[0x80, 0x00],
    &[0x81, 0x80, 0x00],
    &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
    &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
    &[0x80; 12],
    &[0xff, 0xff, 0x03],
    &[0x00],
    &[0x7f],
];

/// A valid packet of `corpus`, mutated one to four times.
fn mutated(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut p = rng.pick(corpus).clone();
    for _ in 0..=rng.below(4) {
        match rng.below(11) {
            0 | 1 => {
                for _ in 0..=rng.below(4) {
                    let at = position(rng, &p);
                    if let Some(b) = p.get_mut(at) {
                        *b ^= 1 << rng.below(8);
                    }
                }
            }
            2 => {
                let keep = HEADER + rng.below(p.len().saturating_sub(HEADER).max(1));
                p.truncate(keep.min(p.len()));
            }
            3 => {
                let extra = rng.below(16) + 1;
                let bytes = rng.bytes(extra);
                p.extend(bytes);
            }
            4 | 5 => {
                // Splice a nasty varint over (or into) a field.
                let at = position(rng, &p).min(p.len());
                let nasty = *rng.pick(NASTY_VARINTS);
                let replace = rng.below(3).min(p.len() - at);
                p.splice(at..at + replace, nasty.iter().copied());
            }
            6 => {
                let at = position(rng, &p);
                let value = *rng.pick(&[0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe]);
                if let Some(b) = p.get_mut(at) {
                    *b = value;
                }
            }
            7 => {
                // Another message id on the same payload.
                let id = random_id(rng).to_le_bytes();
                if p.len() >= 3 {
                    p[1..3].copy_from_slice(&id);
                }
            }
            8 => {
                // This header on another packet's payload.
                let other = rng.pick(corpus);
                p.truncate(HEADER.min(p.len()));
                p.extend_from_slice(other.get(HEADER..).unwrap_or(&[]));
            }
            9 => {
                // Duplicate or drop a chunk.
                if p.len() > HEADER + 1 {
                    let a = position(rng, &p);
                    let b = (a + 1 + rng.below(8)).min(p.len());
                    let chunk = p[a..b].to_vec();
                    if rng.percent(50) {
                        p.splice(a..a, chunk);
                    } else {
                        p.drain(a..b);
                    }
                }
            }
            _ => {
                // Another sender tick (stale, huge or wrapped).
                let any = rng.next() as u32;
                let tick: u32 = *rng.pick(&[0, 1, u32::MAX, u32::MAX - 1, any]);
                if p.len() >= HEADER {
                    p[3..7].copy_from_slice(&tick.to_le_bytes());
                }
            }
        }
    }
    p
}

fn hostile(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    if corpus.is_empty() || rng.percent(20) {
        random_packet(rng)
    } else {
        mutated(rng, corpus)
    }
}

fn channel(rng: &mut Rng) -> Channel {
    if rng.percent(50) {
        Channel::Reliable
    } else {
        Channel::Unreliable
    }
}

// ---------------------------------------------------------------------------------------------
// Recording an honest session
// ---------------------------------------------------------------------------------------------

type Log = Rc<RefCell<Vec<Vec<u8>>>>;

/// `inner`, recording every packet sent through it in `log`.
fn recording(inner: LoopbackTransport, log: &Log) -> Dyn {
    let log = Rc::clone(log);
    Box::new(SendHook::new(inner, move |_, _, data| {
        log.borrow_mut().push(data.to_vec());
        Ok(())
    }))
}

/// Valid packets of an honest session: (server → client, client → server).
struct Corpus {
    to_client: Vec<Vec<u8>>,
    to_server: Vec<Vec<u8>>,
}

impl Corpus {
    fn of(&self, list: &[Vec<u8>], id: u16) -> Vec<Vec<u8>> {
        list.iter().filter(|p| id_of(p) == id).cloned().collect()
    }
}

fn step_all(mps: &mut [&mut Mp], frames: usize) {
    for _ in 0..frames {
        for mp in mps.iter_mut() {
            mp.begin_frame(DT);
            mp.end_frame();
        }
    }
}

fn record_session() -> Corpus {
    record_session_as(SnapshotEncoding::default())
}

/// [`record_session`] with the server's snapshots in `encoding`.
fn record_session_as(encoding: SnapshotEncoding) -> Corpus {
    let net = LoopbackNetwork::new();
    let (server_log, client_log) = (Log::default(), Log::default());
    let config = MultiplayerConfig {
        snapshot_encoding: encoding,
        ..MultiplayerConfig::default()
    };
    let mut server = Mp::new(library(), config);
    setup(&mut server);
    let listen = recording(net.listen("game", 8).unwrap(), &server_log);
    server.start_server(listen, messages()).unwrap();
    let connect = |net: &LoopbackNetwork, log: &Log| -> Mp {
        let mut client = Mp::new(library(), MultiplayerConfig::default());
        setup(&mut client);
        client
            .start_client(|data| recording(net.connect("game", data), log), messages())
            .unwrap();
        client
    };
    let mut client = connect(&net, &client_log);
    step_all(&mut [&mut server, &mut client], 4);
    let player = client.local_peer_id();
    assert_ne!(player, PeerId(0), "the recorded client joined");

    let root = server.scene().root();
    let body = server.spawn(BODY, root, PeerId::SERVER).unwrap();
    let tank = server.spawn(TANK, root, player).unwrap();
    let ship = server.spawn(SHIP, root, player).unwrap();
    let door = server.scene().find("/root/level/door").unwrap();
    server.bind(door).unwrap();
    let crates = server.spawner::<u32>("crates").unwrap();
    server.spawn_with(crates, &7, PeerId::SERVER).unwrap();
    step_all(&mut [&mut server, &mut client], 3);

    let scene = server.scene_mut();
    let b = scene.net_ref::<Body>(body).unwrap();
    scene.get_mut(b).unwrap().x = 5;
    let s = scene.net_ref::<Ship>(ship).unwrap();
    let value = scene.get_mut(s).unwrap();
    value.name = "hello".into();
    value.cargo = vec![1, 2, 3];
    value.pos = 1.5;
    let d = scene.net_ref::<Body>(door).unwrap();
    scene.get_mut(d).unwrap().hp = 9;
    step_all(&mut [&mut server, &mut client], 3);

    server.set_authority(tank, PeerId::SERVER, true).unwrap();
    // Group moves: under a networked node, under a plain one (by its path), back.
    server.reparent(body, tank).unwrap();
    let turret = server.scene().child(tank, "turret").unwrap();
    server.reparent(body, turret).unwrap();
    server.reparent(body, root).unwrap();
    server.rpc(s).announce("hi".into()).unwrap();
    server.rpc(s).poke(3).unwrap();
    let mine = client.node(server.net_id(ship).unwrap()).unwrap();
    let mine = client.scene().net_ref::<Ship>(mine).unwrap();
    client.rpc(mine).poke(1).unwrap();
    client.rpc(mine).load(vec![1, 2, 3], "x".into()).unwrap();
    client.rpc(mine).steer(0.5).unwrap();
    step_all(&mut [&mut server, &mut client], 3);

    // Inputs and their acks (a simulation on both ends; no type here predicts).
    let (mut server_sim, mut client_sim) = (Simulation::<i32>::new(), Simulation::<i32>::new());
    for _ in 0..6 {
        server.begin_frame(DT);
        server_sim.run(&mut server, |_| 0, |_| {});
        server.end_frame();
        client.begin_frame(DT);
        client_sim.run(&mut client, |tick| tick as i32 % 3, |_| {});
        client.end_frame();
    }

    server.despawn(body);
    let gun = server.scene().child(tank, "gun").unwrap();
    server.despawn(gun);
    step_all(&mut [&mut server, &mut client], 3);

    // A late joiner: spawns with absent ids.
    let mut late = connect(&net, &client_log);
    step_all(&mut [&mut server, &mut client, &mut late], 6);

    let to_client = server_log.borrow().clone();
    let to_server = client_log.borrow().clone();
    let corpus = Corpus {
        to_client,
        to_server,
    };
    for id in [
        WELCOME, SPAWN, DESPAWN, SNAPSHOT, AUTHORITY, RPC, INPUT_ACK, PARENT,
    ] {
        assert!(
            !corpus.of(&corpus.to_client, id).is_empty(),
            "the corpus has server message {id}"
        );
    }
    for id in [HELLO, protocol::ACK, RPC, INPUT] {
        assert!(
            !corpus.of(&corpus.to_server, id).is_empty(),
            "the corpus has client message {id}"
        );
    }
    corpus
}

// ---------------------------------------------------------------------------------------------
// Raw endpoints
// ---------------------------------------------------------------------------------------------

/// A client without the runtime.
struct RawPeer {
    transport: LoopbackTransport,
    connected: bool,
    welcomed: bool,
    gone: bool,
}

impl RawPeer {
    fn connect(net: &LoopbackNetwork) -> Self {
        let data = mf_net::replication::connect_data(&messages()).unwrap();
        Self {
            transport: net.connect("game", data),
            connected: false,
            welcomed: false,
            gone: false,
        }
    }

    fn send(&mut self, packet: &[u8], channel: Channel) {
        let _ = self.transport.send(PeerId::SERVER, channel, packet);
    }

    fn pump(&mut self) {
        self.transport.flush();
        while let Some(event) = self.transport.poll_event() {
            match event {
                TransportEvent::Connected { .. } => self.connected = true,
                TransportEvent::Disconnected { .. } => self.gone = true,
                TransportEvent::Received { data, .. } => {
                    self.welcomed |= id_of(data) == WELCOME;
                }
            }
        }
    }
}

fn accounted(stats: &BusStats) -> u64 {
    stats.messages_dispatched + stats.dropped()
}

// ---------------------------------------------------------------------------------------------
// Server victim
// ---------------------------------------------------------------------------------------------

/// One seeded run against a real server; returns how many hostile packets were sent.
fn fuzz_server(seed: u64, corpus: &Corpus, packets: usize) -> usize {
    let mut rng = Rng(seed);
    let mut world = World::with_setup(1, patient(), None, 0, library, setup);
    let honest = world.clients[0].local_peer_id();
    let root = world.root();
    world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    world.server.spawn(TANK, root, honest).unwrap();
    let ship = world.server.spawn(SHIP, root, honest).unwrap();
    world.step(3);
    let hello = corpus.of(&corpus.to_server, HELLO).remove(0);
    // Misdirected server messages are part of what a hostile client sends.
    let all: Vec<Vec<u8>> = corpus
        .to_server
        .iter()
        .chain(&corpus.to_client)
        .cloned()
        .collect();

    let mut joined = RawPeer::connect(&world.net);
    let mut fresh = RawPeer::connect(&world.net);
    let mut said_hello = false;
    let mut sent = 0;
    let mut rejoins = 0;
    while sent < packets {
        // Keep one raw peer that joined and one that never said hello.
        if joined.gone {
            joined = RawPeer::connect(&world.net);
            said_hello = false;
            rejoins += 1;
        }
        if fresh.gone || fresh.welcomed {
            fresh = RawPeer::connect(&world.net);
        }
        if joined.connected && !said_hello {
            joined.send(&hello, Channel::Reliable);
            said_hello = true;
        }
        for _ in 0..40 {
            let p = hostile(&mut rng, &all);
            let ch = channel(&mut rng);
            if joined.welcomed && rng.percent(70) {
                joined.send(&p, ch);
            } else {
                fresh.send(&p, ch);
            }
            sent += 1;
        }
        if rng.percent(20) {
            // The game keeps going: the server changes things, the honest client calls.
            let handle = world.server.scene().net_ref::<Ship>(ship).unwrap();
            world
                .server
                .scene_mut()
                .get_mut(handle)
                .unwrap()
                .cargo
                .push(sent as u16);
            let theirs = world.clients[0]
                .node(world.server.net_id(ship).unwrap())
                .unwrap();
            let theirs = world.clients[0].scene().net_ref::<Ship>(theirs).unwrap();
            world.clients[0].rpc(theirs).steer(1.0).unwrap();
        }
        joined.pump();
        fresh.pump();
        world.frame();
        joined.pump();
        fresh.pump();
        let bus = world.server.bus().unwrap().stats();
        assert_eq!(
            bus.messages_received,
            accounted(bus),
            "every packet received is dispatched or dropped"
        );
    }
    assert!(
        rejoins < packets / 40,
        "the joined raw peer was not always refused"
    );
    assert!(world.server.is_running());
    assert!(
        world.server.peers().contains(&honest),
        "the honest client stayed"
    );
    let stats = *world.server.stats();
    let bus = *world.server.bus().unwrap().stats();
    assert!(bus.dropped_malformed > 0 && bus.dropped_unknown_id + bus.dropped_no_handler > 0);
    assert!(
        stats.control_dropped > 0 && stats.rpcs_dropped > 0,
        "{stats:?}"
    );

    // The honest client converges, and its calls still run.
    world.step(3);
    let handle = world.server.scene().net_ref::<Ship>(ship).unwrap();
    let before = world.server.scene().get(handle).unwrap().pos;
    let theirs = world.clients[0]
        .node(world.server.net_id(ship).unwrap())
        .unwrap();
    let theirs = world.clients[0].scene().net_ref::<Ship>(theirs).unwrap();
    world.clients[0].rpc(theirs).steer(2.0).unwrap();
    world.step(5);
    assert_eq!(world.server.scene().get(handle).unwrap().pos, before + 2.0);
    world.assert_converged();
    sent
}

#[test]
fn a_server_survives_thousands_of_hostile_packets_and_its_honest_client_converges() {
    let corpus = record_session();
    let seeds = chaos_seeds(1..=SEEDS);
    let mut total = 0;
    for &seed in &seeds {
        total += fuzz_server(seed, &corpus, PACKETS_PER_SEED);
    }
    assert_eq!(total, seeds.len() * PACKETS_PER_SEED);
}

// ---------------------------------------------------------------------------------------------
// Client victim
// ---------------------------------------------------------------------------------------------

/// A server without the runtime, with one client.
struct RawServer {
    transport: LoopbackTransport,
    peer: Option<PeerId>,
    hello: bool,
    client_gone: bool,
}

impl RawServer {
    fn pump(&mut self) {
        self.transport.flush();
        while let Some(event) = self.transport.poll_event() {
            match event {
                TransportEvent::Connected { peer, .. } => self.peer = Some(peer),
                TransportEvent::Disconnected { .. } => self.client_gone = true,
                TransportEvent::Received { data, .. } => self.hello |= id_of(data) == HELLO,
            }
        }
    }

    fn send(&mut self, packet: &[u8], channel: Channel) {
        if let Some(peer) = self.peer {
            let _ = self.transport.send(peer, channel, packet);
        }
    }
}

fn client_frame(client: &mut Mp, raw: &mut RawServer) {
    raw.pump();
    client.begin_frame(DT);
    client.end_frame();
    raw.pump();
    let bus = client.bus().unwrap().stats();
    assert_eq!(
        bus.messages_received,
        accounted(bus),
        "every packet received is dispatched or dropped"
    );
}

/// A client of a raw server that has received its hello (not welcomed yet).
fn raw_pair(net: &LoopbackNetwork) -> (Mp, RawServer) {
    let mut raw = RawServer {
        transport: net.listen("game", 8).unwrap(),
        peer: None,
        hello: false,
        client_gone: false,
    };
    let mut client = Mp::new(library(), patient());
    setup(&mut client);
    client
        .start_client(
            |data| -> Dyn { Box::new(net.connect("game", data)) },
            messages(),
        )
        .unwrap();
    for _ in 0..4 {
        client_frame(&mut client, &mut raw);
    }
    assert!(raw.hello, "the client said hello");
    (client, raw)
}

/// A hand-made spawn of one `body` at `/root/<name>` with net id `id`.
fn body_spawn(id: u32, name: &str, body: &Body) -> Vec<u8> {
    spawn_packet(&body_spawn_payload(id, name, body))
}

/// [`body_spawn`]'s spawn alone, without its length and the message around it.
fn body_spawn_payload(id: u32, name: &str, body: &Body) -> Vec<u8> {
    let mut w = NetWriter::new();
    w.write_var_u32(id);
    w.write_var_i32(0);
    w.write_var_u32(0);
    w.write_str("/root");
    w.write_str(name);
    w.write_var_u64(1);
    w.write_var_u32(1);
    w.write_len(0);
    w.write_var_u32(0b111);
    w.write_bytes(&body.x.to_le_bytes());
    w.write_bytes(&body.y.to_le_bytes());
    w.write_u8(body.hp);
    w.as_slice().to_vec()
}

/// A spawn message (at tick 0) carrying the one spawn `payload`, behind its length.
fn spawn_packet(payload: &[u8]) -> Vec<u8> {
    let mut w = NetWriter::new();
    w.write_len(payload.len());
    w.write_bytes(payload);
    packet(SPAWN, 0, w.as_slice())
}

/// `p`, a spawn message, with the first varint of its first spawn (the spawn's first net id)
/// replaced by `id` (and the spawn's length written anew).
fn with_first_net_id(p: &[u8], id: u32) -> Vec<u8> {
    let Some(payload) = p.get(HEADER..) else {
        return p.to_vec();
    };
    let mut r = NetReader::new(payload);
    let Ok(spawn) = r.read_len().and_then(|len| r.read_bytes(len)) else {
        return p.to_vec();
    };
    let end = spawn
        .iter()
        .position(|b| b & 0x80 == 0)
        .map_or(spawn.len(), |i| i + 1);
    let mut first = NetWriter::new();
    first.write_var_u32(id);
    let spawn = [first.as_slice(), &spawn[end..]].concat();
    let mut w = NetWriter::new();
    w.write_len(spawn.len());
    w.write_bytes(&spawn);
    [&p[..HEADER], w.as_slice(), r.rest()].concat()
}

/// Fuzzes a client with packets made from `corpus`, recorded from a server sending snapshots
/// in `encoding`.
fn fuzz_client(seed: u64, corpus: &Corpus, encoding: SnapshotEncoding, packets: usize) -> usize {
    let mut rng = Rng(seed);
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = raw_pair(&net);
    let welcome = corpus.of(&corpus.to_client, WELCOME).remove(0);
    let before_welcome: Vec<Vec<u8>> = corpus
        .to_client
        .iter()
        .chain(&corpus.to_server)
        .filter(|p| id_of(p) != WELCOME)
        .cloned()
        .collect();
    let mut sent = 0;

    // Before the handshake: nothing but a welcome is accepted.
    while sent < packets / 4 {
        for _ in 0..40 {
            let p = hostile(&mut rng, &before_welcome);
            if id_of(&p) != WELCOME {
                raw.send(&p, channel(&mut rng));
                sent += 1;
            }
        }
        client_frame(&mut client, &mut raw);
    }
    assert!(
        client.is_running() && client.peers().is_empty(),
        "not welcomed yet"
    );
    assert!(client.scene().find("/root/level/door").is_some());
    assert!(client.stats().control_dropped > 0);

    raw.send(&welcome, Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert_eq!(client.peers(), [PeerId::SERVER], "welcomed");

    // After the handshake: everything a server sends, mutated, and what clients send.
    let all: Vec<Vec<u8>> = corpus
        .to_client
        .iter()
        .chain(corpus.to_client.iter().filter(|p| id_of(p) != WELCOME))
        .chain(&corpus.to_server)
        .cloned()
        .collect();
    let mut next_id = 100;
    let mut next_tick = client.tick();
    while sent < packets {
        for _ in 0..40 {
            let mut p = hostile(&mut rng, &all);
            // Mostly fresh ticks on snapshots (hostile ones only near the end, since a snapshot
            // of tick u32::MAX makes the client discard every later one), and fresh net ids on
            // spawns, so that mutated bodies get applied rather than discarded early.
            if id_of(&p) == SNAPSHOT
                && p.len() >= HEADER
                && (sent < packets * 9 / 10 || rng.percent(90))
            {
                next_tick = next_tick.max(client.tick()).saturating_add(1);
                p[3..7].copy_from_slice(&next_tick.to_le_bytes());
            }
            if id_of(&p) == SPAWN && rng.percent(60) {
                p = with_first_net_id(&p, next_id);
                next_id += 3;
            }
            raw.send(&p, channel(&mut rng));
            sent += 1;
        }
        client_frame(&mut client, &mut raw);
    }
    assert!(
        client.is_running() && !raw.client_gone,
        "the client stayed connected"
    );
    let stats = *client.stats();
    let bus = *client.bus().unwrap().stats();
    assert!(
        bus.dropped_malformed > 0 && stats.control_dropped > 0,
        "{stats:?}"
    );
    assert!(
        stats.spawn_failures > 0 && stats.rpcs_dropped > 0,
        "{stats:?}"
    );

    // A valid spawn, snapshot and despawn still work.
    let id = 1_000_000 + u32::try_from(seed).unwrap();
    let body = Body {
        x: 11,
        y: 22,
        hp: 33,
        local: 0,
    };
    raw.send(&body_spawn(id, "final-check", &body), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let node = client
        .node(NetId::new(id).unwrap())
        .expect("the final spawn applied");
    let handle = client.scene().net_ref::<Body>(node).unwrap();
    assert_eq!(client.scene().get(handle), Some(&body));
    // Past the newest snapshot applied and the stale floor, which a hostile spawn or RPC may
    // have set up to two seconds of ticks past it.
    let tick = client
        .tick()
        .saturating_add(2 * u32::from(client.tick_rate()));
    if tick < u32::MAX {
        let applied = client.stats().snapshots_applied;
        // In the encoding the corpus's welcome told.
        let body = match encoding {
            SnapshotEncoding::Bytes => {
                let mut w = NetWriter::new();
                w.write_u8(0);
                w.write_var_u32(id);
                w.write_len(5);
                w.write_var_u32(0b001);
                w.write_bytes(&99i32.to_le_bytes());
                w.write_var_u32(0);
                w.into_vec()
            }
            _ => bit_snapshot_setting_x(id, 99),
        };
        raw.send(&packet(SNAPSHOT, tick + 1, &body), Channel::Unreliable);
        client_frame(&mut client, &mut raw);
        assert_eq!(client.scene().get(handle).unwrap().x, 99);
        assert_eq!(client.stats().snapshots_applied, applied + 1);
    }
    // A despawn cut inside its second id is dropped whole: the first is not applied either.
    let mut w = NetWriter::new();
    w.write_var_u32(id);
    w.write_u8(0x80);
    raw.send(&packet(DESPAWN, 0, w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert!(client.node(NetId::new(id).unwrap()).is_some());
    let mut w = NetWriter::new();
    w.write_var_u32(id);
    raw.send(&packet(DESPAWN, 0, w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert!(client.node(NetId::new(id).unwrap()).is_none());
    assert!(!client.scene().contains(node));
    sent
}

#[test]
fn a_client_survives_thousands_of_hostile_packets_before_and_after_its_welcome() {
    for encoding in [SnapshotEncoding::Bytes, SnapshotEncoding::Bits] {
        let corpus = record_session_as(encoding);
        let seeds = chaos_seeds(1..=SEEDS);
        let mut total = 0;
        for &seed in &seeds {
            total += fuzz_client(seed, &corpus, encoding, PACKETS_PER_SEED);
        }
        assert!(total >= seeds.len() * PACKETS_PER_SEED);
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile counts
// ---------------------------------------------------------------------------------------------

/// Most bytes one hostile packet may make the victim allocate.
const ALLOWANCE: u64 = 64 * 1024;

const HUGE: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0x0f];

/// A client whose scenes, spawners and RPCs agree with the server's but whose fingerprint does
/// not (another set of replicated types linked: bit-packed entries name types by their registry
/// numbers) is refused, and told to compare the types.
#[test]
fn a_hello_differing_only_in_the_replicated_types_is_refused_naming_them() {
    let mut world = World::with_setup(0, patient(), None, 0, library, setup);
    world.step(2);
    let corpus = record_session();
    let mut hello = corpus.of(&corpus.to_server, HELLO).remove(0)[HEADER..].to_vec();
    // The fingerprint covers the registry, which the hello does not list.
    hello[..8].copy_from_slice(&(world.server.fingerprint() ^ 1).to_le_bytes());
    let mut peer = RawPeer::connect(&world.net);
    peer.pump();
    world.frame();
    peer.pump();
    peer.send(&packet(HELLO, 0, &hello), Channel::Reliable);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    let refused = refusals(&mut world.server);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].contains("replicated types linked differ"),
        "{refused:?}"
    );
    assert!(!peer.welcomed);
}

#[test]
fn hostile_counts_are_refused_before_allocating() {
    // Server side: hellos from fresh peers (each refused and disconnected), then RPCs with
    // huge arguments from a peer that joined.
    let mut world = World::with_setup(0, patient(), None, 0, library, setup);
    let root = world.root();
    let ship = world.server.spawn(SHIP, root, PeerId::SERVER).unwrap();
    world.step(2);
    let ship_id = world.server.net_id(ship).unwrap().get();
    let bad = 7u64.to_le_bytes();
    let good = world.server.fingerprint().to_le_bytes();
    let one_scene_of_huge_nodes = [&bad[..], &[1, 4], b"ship", HUGE].concat();
    // The server's own shapes, then an RPC signature list claiming billions of types.
    let corpus = record_session();
    let hello = corpus.of(&corpus.to_server, HELLO).remove(0);
    let shapes_end = {
        let mut r = NetReader::new(&hello[HEADER + 8..]);
        let scenes = r.read_var_u32().unwrap();
        for _ in 0..scenes {
            let len = r.read_len().unwrap();
            r.skip(len).unwrap();
            let nodes = r.read_var_u32().unwrap();
            for _ in 0..nodes {
                let len = r.read_len().unwrap();
                r.skip(len + 8).unwrap();
            }
        }
        hello.len() - r.remaining()
    };
    let huge_signatures = [&bad[..], &hello[HEADER + 8..shapes_end], HUGE].concat();
    let hellos: Vec<Vec<u8>> = vec![
        [&bad[..], HUGE].concat(),
        one_scene_of_huge_nodes,
        huge_signatures,
        [&bad[..], &[1], HUGE, b"x"].concat(),
        [&good[..], HUGE].concat(),
    ];
    for payload in &hellos {
        let mut peer = RawPeer::connect(&world.net);
        peer.pump();
        world.frame();
        peer.pump();
        assert!(peer.connected);
        peer.send(&packet(HELLO, 0, payload), Channel::Reliable);
        peer.pump();
        let ((), info) = alloc_counter::measure(|| world.server.begin_frame(DT));
        world.server.end_frame();
        assert!(
            info.bytes_total < ALLOWANCE,
            "a hostile hello made the server allocate {} bytes",
            info.bytes_total
        );
    }
    assert_eq!(world.server.stats().control_dropped, 0);

    let mut peer = RawPeer::connect(&world.net);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    peer.send(&packet(HELLO, 0, &hello[HEADER..]), Channel::Reliable);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    peer.pump();
    assert!(peer.welcomed);
    let rpc = |wire: u32, args: &[u8]| {
        let mut w = NetWriter::new();
        w.write_var_u32(ship_id);
        w.write_var_u32(wire);
        w.write_bytes(args);
        packet(RPC, 0, w.as_slice())
    };
    let dropped = world.server.stats().rpcs_dropped;
    for p in [
        rpc(1, HUGE),                          // load: a Vec<u8> of 4 billion bytes
        rpc(1, &[&[1, 0][..], HUGE].concat()), // load: a String of 4 billion bytes
        rpc(0, HUGE),                          // announce
        rpc(u32::MAX, &[]),
        packet(protocol::ACK, 0, HUGE),
    ] {
        peer.send(&p, Channel::Reliable);
        peer.pump();
        let ((), info) = alloc_counter::measure(|| world.server.begin_frame(DT));
        world.server.end_frame();
        assert!(
            info.bytes_total < ALLOWANCE,
            "a hostile message made the server allocate {} bytes",
            info.bytes_total
        );
    }
    assert!(world.server.stats().rpcs_dropped >= dropped + 3);

    // Client side: spawns and snapshots claiming huge counts and lengths.
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = raw_pair(&net);
    raw.send(
        &corpus.of(&corpus.to_client, WELCOME).remove(0),
        Channel::Reliable,
    );
    client_frame(&mut client, &mut raw);
    let spawn_head = |first: u32, scene: i32, count: u32| {
        let mut w = NetWriter::new();
        w.write_var_u32(first);
        w.write_var_i32(scene);
        w.write_var_u32(0);
        w.write_str("/root");
        w.write_str("n");
        w.write_var_u64(1);
        w.write_var_u32(count);
        w.into_vec()
    };
    let hostile_spawns = [
        // Four billion nodes (the body scene has one).
        [spawn_head(1, 0, u32::MAX - 1), vec![0]].concat(),
        // Four billion absent ids.
        [spawn_head(1, 0, 1), HUGE.to_vec()].concat(),
        // A tank (3 nodes) with four billion absent ids.
        [spawn_head(1, 1, 3), HUGE.to_vec()].concat(),
        // Spawner data of four billion bytes.
        [spawn_head(1, -2, 1), vec![0], HUGE.to_vec()].concat(),
        // Net ids overflowing.
        [spawn_head(u32::MAX, 0, 2), vec![0]].concat(),
    ];
    let failures = client.stats().spawn_failures;
    for payload in &hostile_spawns {
        raw.send(&spawn_packet(payload), Channel::Reliable);
        raw.pump();
        let ((), info) = alloc_counter::measure(|| client.begin_frame(DT));
        client.end_frame();
        assert!(
            info.bytes_total < ALLOWANCE,
            "a hostile spawn made the client allocate {} bytes",
            info.bytes_total
        );
    }
    assert!(client.stats().spawn_failures > failures);
    assert!(
        client.scene().find("/root/n").is_none(),
        "no hostile spawn applied"
    );
    let tick = client.tick();
    for (k, payload) in [
        [&[0u8, 1][..], HUGE].concat(),         // an entry of 4 billion bytes
        [&[0u8][..], HUGE, HUGE].concat(),      // a huge net id and length
        [&[0u8][..], &[0x80; 20][..]].concat(), // an endless varint
    ]
    .iter()
    .enumerate()
    {
        let k = u32::try_from(k).unwrap();
        raw.send(
            &packet(SNAPSHOT, tick + 1 + k, payload),
            Channel::Unreliable,
        );
        raw.pump();
        let ((), info) = alloc_counter::measure(|| client.begin_frame(DT));
        client.end_frame();
        assert!(
            info.bytes_total < ALLOWANCE,
            "a hostile snapshot made the client allocate {} bytes",
            info.bytes_total
        );
    }
    assert_eq!(client.tick(), tick, "no hostile snapshot was applied");
    assert!(client.is_running());
}

// ---------------------------------------------------------------------------------------------
// Review fixes (each of these failed before its fix)
// ---------------------------------------------------------------------------------------------

fn welcomed_pair(net: &LoopbackNetwork) -> (Mp, RawServer) {
    welcomed_pair_with(net, 0)
}

/// A client welcomed by a raw server, told snapshot encoding `encoding` (0 bytes, 1 bits).
fn welcomed_pair_with(net: &LoopbackNetwork, encoding: u8) -> (Mp, RawServer) {
    let (mut client, mut raw) = raw_pair(net);
    let mut w = NetWriter::new();
    w.write_u64(2);
    w.write_u8(30);
    w.write_u32(100);
    w.write_u8(encoding);
    raw.send(&packet(WELCOME, 100, w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert_eq!(client.peers(), [PeerId::SERVER]);
    (client, raw)
}

/// A bind of `/root/level/door` (and a networked `knob` under it on this client) whose state
/// stops part-way: the door keeps its value, and the knob the message calls absent is not
/// removed.
#[test]
fn a_malformed_bind_leaves_the_bound_node_untouched() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair(&net);
    let door = client.scene().find("/root/level/door").unwrap();
    client
        .scene_mut()
        .insert(door, "knob", Gun { ammo: 4 })
        .unwrap();
    let knob = client.scene().find("/root/level/door/knob").unwrap();
    let original = Body {
        x: 1,
        y: 2,
        hp: 3,
        local: 0,
    };
    let handle = client.scene().net_ref::<Body>(door).unwrap();
    *client.scene_mut().get_mut(handle).unwrap() = original.clone();
    let bind = |count: u32, absent: &[u32], state: &[u8]| {
        let mut w = NetWriter::new();
        w.write_var_u32(7);
        w.write_var_i32(-1); // the spawn's scene: -1, a bind
        w.write_var_u32(0);
        w.write_str("/root/level");
        w.write_str("door");
        w.write_var_u64(1);
        w.write_var_u32(count);
        w.write_len(absent.len());
        for &id in absent {
            w.write_var_u32(id);
        }
        w.write_bytes(state);
        spawn_packet(w.as_slice())
    };
    // Mask 0b111, x = 50, y = 60, then hp is missing.
    let truncated = [&[0b111][..], &50i32.to_le_bytes(), &60i32.to_le_bytes()].concat();
    raw.send(&bind(2, &[8], &truncated), Channel::Reliable);
    // x = 50, then a member that does not exist (mask bit 5).
    let bad_mask = [&[0b10_0001][..], &50i32.to_le_bytes()].concat();
    raw.send(&bind(2, &[], &bad_mask), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert_eq!(
        client.scene().get(handle),
        Some(&original),
        "no partial state"
    );
    assert!(client.scene().contains(knob), "no absent node removed");
    assert!(client.net_id(door).is_none());
    assert_eq!(client.stats().spawn_failures, 2);
    let failed = std::iter::from_fn(|| client.next_event())
        .filter(|e| matches!(e, MultiplayerEvent::SpawnFailed { .. }))
        .count();
    assert_eq!(failed, 2);

    // A valid bind then applies in full, removing the absent knob.
    let full = [
        &[0b111][..],
        &50i32.to_le_bytes(),
        &60i32.to_le_bytes(),
        &[70],
    ]
    .concat();
    raw.send(&bind(2, &[8], &full), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let applied = client.scene().get(handle).unwrap();
    assert_eq!((applied.x, applied.y, applied.hp), (50, 60, 70));
    assert!(!client.scene().contains(knob));
    assert_eq!(client.net_id(door), NetId::new(7));
}

/// A networked node whose value is cleared, or replaced by another type, is despawned instead
/// of keeping a stale shadow that silently stops replicating.
#[test]
fn a_networked_value_cleared_or_retyped_is_despawned() {
    let mut world = World::new(1, library);
    let root = world.root();
    let cleared = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    let retyped = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let kept = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.assert_converged();
    let ids: Vec<NetId> = [cleared, retyped, tank, kept]
        .iter()
        .map(|&n| world.server.net_id(n).unwrap())
        .collect();
    let gun = world.server.scene().child(tank, "gun").unwrap();
    let gun_id = world.server.net_id(gun).unwrap();

    let scene = world.server.scene_mut();
    assert!(scene.clear_value(cleared));
    scene.set_value(retyped, Gun { ammo: 1 }).unwrap();
    assert!(scene.clear_value(gun));
    // Replacing a value by one of the same type is an ordinary change.
    let handle = scene.net_ref::<Body>(kept).unwrap();
    scene
        .set_value(
            kept,
            Body {
                x: 9,
                ..Body::default()
            },
        )
        .unwrap();
    world.step(3);

    for (node, id) in [(cleared, ids[0]), (retyped, ids[1]), (gun, gun_id)] {
        assert!(!world.server.scene().contains(node), "freed on the server");
        assert!(world.server.net_id(node).is_none());
        assert!(
            world.clients[0].node(id).is_none(),
            "despawned on the client"
        );
    }
    assert!(
        world.server.scene().contains(tank),
        "the tank only lost its gun"
    );
    let copy = world.clients[0].node(ids[3]).unwrap();
    let copy = world.clients[0].scene().net_ref::<Body>(copy).unwrap();
    assert_eq!(world.clients[0].scene().get(copy).unwrap().x, 9);
    assert_eq!(world.server.scene().get(handle).unwrap().x, 9);
    world.assert_converged();
}

#[test]
fn snapshots_the_transport_refuses_are_not_counted_as_sent() {
    let net = LoopbackNetwork::new();
    let refuse = Rc::new(std::cell::Cell::new(false));
    let mut server = Mp::new(library(), MultiplayerConfig::default());
    // Refuses unreliable packets while `refuse` is set.
    let refusing = Rc::clone(&refuse);
    let transport: Dyn = Box::new(SendHook::new(
        net.listen("game", 8).unwrap(),
        move |_, channel, _| {
            if refusing.get() && channel == Channel::Unreliable {
                return Err(SendError::Refused);
            }
            Ok(())
        },
    ));
    server.start_server(transport, messages()).unwrap();
    let mut client = Mp::new(library(), MultiplayerConfig::default());
    client
        .start_client(
            |data| -> Dyn { Box::new(net.connect("game", data)) },
            messages(),
        )
        .unwrap();
    step_all(&mut [&mut server, &mut client], 4);
    let peer = client.local_peer_id();
    let (sent, peer_sent) = (
        server.stats().snapshots_sent,
        server.peer_stats(peer).unwrap().snapshots_sent,
    );
    assert!(sent > 0);
    let failures = server.bus().unwrap().stats().send_failures;
    refuse.set(true);
    step_all(&mut [&mut server, &mut client], 6);
    assert!(server.bus().unwrap().stats().send_failures >= failures + 5);
    assert_eq!(
        server.stats().snapshots_sent,
        sent,
        "refused snapshots not counted"
    );
    assert_eq!(server.peer_stats(peer).unwrap().snapshots_sent, peer_sent);
    refuse.set(false);
    step_all(&mut [&mut server, &mut client], 2);
    assert!(server.stats().snapshots_sent > sent);
}

/// A snapshot whose first entry does not read: it is skipped (raised and counted), the entry
/// after it is applied, and the snapshot is applied and acknowledged, so the server does not
/// resend it forever and the client is not timed out.
#[test]
fn a_snapshot_entry_that_does_not_read_is_skipped_and_the_rest_applied() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair(&net);
    raw.send(&body_spawn(1, "a", &Body::default()), Channel::Reliable);
    raw.send(&body_spawn(2, "b", &Body::default()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let body = |client: &Mp, id: u32| {
        let node = client.node(NetId::new(id).unwrap()).unwrap();
        let handle = client.scene().net_ref::<Body>(node).unwrap();
        client.scene().get(handle).unwrap().x
    };
    drain(&mut client);
    let (dropped, applied, tick) = (
        client.stats().control_dropped,
        client.stats().snapshots_applied,
        client.tick(),
    );
    let mut w = NetWriter::new();
    w.write_u8(0);
    w.write_var_u32(1);
    w.write_len(5);
    w.write_u8(0b1000_0001); // a mask bit past the three members
    w.write_bytes(&5i32.to_le_bytes());
    w.write_var_u32(2);
    w.write_len(5);
    w.write_u8(0b001);
    w.write_bytes(&6i32.to_le_bytes());
    w.write_var_u32(0);
    let snapshot_tick = tick + 7;
    raw.send(
        &packet(SNAPSHOT, snapshot_tick, w.as_slice()),
        Channel::Unreliable,
    );
    // Record what the client sends back.
    raw.pump();
    let mut acks = Vec::new();
    for _ in 0..5 {
        frame_taking_acks(&mut client, &mut raw, &mut acks);
    }
    assert_eq!(
        body(&client, 1),
        0,
        "the entry that does not read is skipped"
    );
    assert_eq!(body(&client, 2), 6, "the entry after it is applied");
    let rejected = MultiplayerEvent::EntryRejected {
        net_id: NetId::new(1).unwrap(),
        error: DecodeError::BadMask,
    };
    assert!(drain(&mut client).contains(&rejected));
    assert_eq!(client.stats().entries_rejected, 1);
    assert_eq!(
        client.stats().control_dropped,
        dropped,
        "the message is not dropped"
    );
    assert_eq!(client.stats().snapshots_applied, applied + 1);
    assert_eq!(client.tick(), snapshot_tick);
    assert!(acks.contains(&snapshot_tick), "acknowledged: {acks:?}");
}

// ---------------------------------------------------------------------------------------------
// Over-limit lengths
// ---------------------------------------------------------------------------------------------

/// Strings one byte over the reader's limit, with every byte present (so the reader refuses the
/// length itself, not a short packet), in each message kind that carries one: dropped or
/// skipped and counted, never applied, and the victim carries on.
#[test]
fn over_limit_lengths_in_every_message_kind_are_refused_and_the_victim_carries_on() {
    use mf_net::replication::MAX_NAME_BYTES;
    use mf_net::wire::MAX_STRING_BYTES;
    let long_name = "n".repeat(MAX_NAME_BYTES + 1);
    let long_text = "t".repeat(MAX_STRING_BYTES + 1);

    // Client side: spawns with an over-long name or parent path, an RPC argument, a snapshot
    // entry whose string member is over the limit.
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair(&net);
    raw.send(
        &body_spawn(1, &long_name, &Body::default()),
        Channel::Reliable,
    );
    let mut w = NetWriter::new();
    w.write_var_u32(2);
    w.write_var_i32(0);
    w.write_var_u32(0);
    w.write_str(&format!("/root/{long_name}"));
    w.write_str("b");
    w.write_var_u64(1);
    w.write_var_u32(1);
    w.write_len(0);
    w.write_var_u32(0b111);
    w.write_bytes(&[0; 9]);
    raw.send(&spawn_packet(w.as_slice()), Channel::Reliable);
    // A ship, then an entry carrying a name over the limit and a RPC with a text over it.
    let mut w = NetWriter::new();
    w.write_var_u32(3);
    w.write_var_i32(2);
    w.write_var_u32(0);
    w.write_str("/root");
    w.write_str("ship");
    w.write_var_u64(1);
    w.write_var_u32(1);
    w.write_len(0);
    w.write_var_u32(0b111);
    w.write_f32(1.0);
    w.write_str("ok");
    w.write_len(0);
    raw.send(&spawn_packet(w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let ship = client
        .node(NetId::new(3).unwrap())
        .expect("the honest ship spawned");
    assert!(client.node(NetId::new(1).unwrap()).is_none());
    assert!(client.node(NetId::new(2).unwrap()).is_none());
    let mut state = NetWriter::new();
    state.write_var_u32(0b010);
    state.write_str(&long_text);
    let mut w = NetWriter::new();
    w.write_u8(0);
    w.write_var_u32(3);
    w.write_len(state.len());
    w.write_bytes(state.as_slice());
    w.write_var_u32(0);
    let tick = client.tick() + 5;
    raw.send(&packet(SNAPSHOT, tick, w.as_slice()), Channel::Unreliable);
    let mut w = NetWriter::new();
    w.write_var_u32(3);
    w.write_var_u32(2); // announce(text)
    w.write_str(&long_text);
    raw.send(&packet(RPC, tick, w.as_slice()), Channel::Reliable);
    for _ in 0..3 {
        client_frame(&mut client, &mut raw);
    }
    let handle = client.scene().net_ref::<Ship>(ship).unwrap();
    assert_eq!(client.scene().get(handle).unwrap().name, "ok");
    assert_eq!(client.scene().get(handle).unwrap().pokes, 0);
    assert_eq!(client.stats().entries_rejected, 1);
    assert!(client.is_running());
    assert!(!raw.client_gone);

    // Server side: a hello naming a scene over the limit, an RPC argument over it.
    let mut world = World::with_setup(0, patient(), None, 0, library, setup);
    let root = world.root();
    let ship = world.server.spawn(SHIP, root, PeerId::SERVER).unwrap();
    world.step(2);
    let ship_id = world.server.net_id(ship).unwrap().get();
    let fingerprint = world.server.fingerprint().to_le_bytes();
    let mut hello = NetWriter::new();
    hello.write_bytes(&fingerprint);
    hello.write_var_u32(1);
    hello.write_str(&long_name);
    hello.write_var_u32(0);
    let mut peer = RawPeer::connect(&world.net);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    peer.send(&packet(HELLO, 0, hello.as_slice()), Channel::Reliable);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    peer.pump();
    assert!(!peer.welcomed, "a hello that does not read is refused");
    let corpus = record_session();
    let honest = corpus.of(&corpus.to_server, HELLO).remove(0);
    let mut peer = RawPeer::connect(&world.net);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    peer.send(&packet(HELLO, 0, &honest[HEADER..]), Channel::Reliable);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    peer.pump();
    assert!(peer.welcomed);
    let dropped = world.server.stats().rpcs_dropped;
    let mut w = NetWriter::new();
    w.write_var_u32(ship_id);
    w.write_var_u32(1); // load(data, label)
    w.write_len(0);
    w.write_str(&long_text);
    peer.send(&packet(RPC, 0, w.as_slice()), Channel::Reliable);
    for _ in 0..3 {
        peer.pump();
        world.frame();
    }
    peer.pump();
    assert_eq!(world.server.stats().rpcs_dropped, dropped + 1);
    let handle = world.server.scene().net_ref::<Ship>(ship).unwrap();
    assert_eq!(world.server.scene().get(handle).unwrap().pokes, 0);
    assert!(!peer.gone, "one refused call is no reason to disconnect");
}

/// One client frame; the snapshot ticks the client acknowledged in it go to `acks`.
fn frame_taking_acks(client: &mut Mp, raw: &mut RawServer, acks: &mut Vec<u32>) {
    client.begin_frame(DT);
    client.end_frame();
    raw.transport.flush();
    while let Some(event) = raw.transport.poll_event() {
        if let TransportEvent::Received { data, .. } = event {
            if id_of(data) == protocol::ACK {
                acks.push(NetReader::new(&data[HEADER..]).read_var_u32().unwrap());
            }
        }
    }
}

/// A bit-packed snapshot body of one entry of node `id` coded from zero, setting its `x`.
fn bit_snapshot_setting_x(id: u32, x: i32) -> Vec<u8> {
    bit_snapshot_against(id, x, None)
}

/// A state of [`Body`] carrying only `x`.
fn x_state(x: i32) -> Vec<u8> {
    let mut w = NetWriter::new();
    w.write_var_u64(0b001);
    w.write_i32(x);
    w.into_vec()
}

/// `Body`'s number in the replication registry, as bit-packed entries name its type.
fn body_type() -> u16 {
    ReplicationRegistry::global().id_of::<Body>().unwrap().get()
}

/// A bit-packed snapshot body of one entry of node `id` setting its `x`, coded against
/// `base`: how many ticks back, and the `x` then (`None`: from zero).
fn bit_snapshot_against(id: u32, x: i32, base: Option<(u32, i32)>) -> Vec<u8> {
    let layout = <Body as Replicated>::LAYOUT;
    let mut values = vec![Buckets::default(); layout.slots()];
    let back = match base {
        Some((back, x)) => {
            state_values(layout, &mut NetReader::new(&x_state(x)), &mut values).unwrap();
            back
        }
        None => 0,
    };
    let mut coded = BitWriter::new();
    let state = x_state(x);
    bytes_to_bits(
        layout,
        &mut NetReader::new(&state),
        &values,
        &mut coded,
        &mut [],
    )
    .unwrap();
    let mut w = BitWriter::new();
    w.write_gamma(back);
    let mut at = BodyCursor::default();
    write_entry(&mut w, &mut at, (id, body_type()), back, back, &coded);
    end_entries(&mut w);
    [&[0u8][..], w.finish()].concat()
}

/// A client sent an entry against a baseline it does not hold (a tick before the node's
/// spawn, as of which it has no values) passes over the entry and leaves the snapshot
/// unacknowledged; an entry from zero heals it, and the next entry against that one applies.
#[test]
fn a_client_lacking_a_baseline_leaves_the_snapshot_unacknowledged_and_heals() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair_with(&net, 1);
    let tick = client.tick();
    let spawn = body_spawn_payload(1, "a", &Body::default());
    let mut w = NetWriter::new();
    w.write_len(spawn.len());
    w.write_bytes(&spawn);
    raw.send(&packet(SPAWN, tick + 4, w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let x = |client: &Mp| {
        let node = client.node(NetId::new(1).unwrap()).unwrap();
        let handle = client.scene().net_ref::<Body>(node).unwrap();
        client.scene().get(handle).unwrap().x
    };
    let mut acks = Vec::new();
    let mut send = |client: &mut Mp, raw: &mut RawServer, tick: u32, payload: Vec<u8>| {
        raw.send(&packet(SNAPSHOT, tick, &payload), Channel::Unreliable);
        raw.pump();
        frame_taking_acks(client, raw, &mut acks);
    };
    let partial = client.stats().snapshots_partial;
    let lacking = bit_snapshot_against(1, 5, Some((3, 0)));
    send(&mut client, &mut raw, tick + 5, lacking);
    assert_eq!(x(&client), 0, "passed over");
    assert_eq!(client.stats().snapshots_partial, partial + 1);
    send(
        &mut client,
        &mut raw,
        tick + 6,
        bit_snapshot_setting_x(1, 9),
    );
    assert_eq!(x(&client), 9, "from zero");
    let against = bit_snapshot_against(1, 12, Some((2, 9)));
    send(&mut client, &mut raw, tick + 8, against);
    assert_eq!(x(&client), 12, "against the tick it healed at");
    assert!(!acks.contains(&(tick + 5)), "{acks:?}");
    assert!(
        acks.contains(&(tick + 6)) && acks.contains(&(tick + 8)),
        "{acks:?}"
    );
}

/// A client told to expect bit-packed snapshots reads thousands of random and mutated ones
/// without a panic, and still applies (and acknowledges) a well-formed one afterwards.
#[test]
fn hostile_bit_packed_snapshots_never_panic_and_a_good_one_still_applies() {
    for seed in chaos_seeds([26]) {
        hostile_bit_packed_snapshots(seed);
    }
}

/// [`hostile_bit_packed_snapshots_never_panic_and_a_good_one_still_applies`] for one seed.
fn hostile_bit_packed_snapshots(seed: u64) {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair_with(&net, 1);
    raw.send(&body_spawn(1, "a", &Body::default()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let good = bit_snapshot_setting_x(1, 7);
    let mut rng = Rng(seed);
    let mut tick = client.tick();
    for round in 0..3000 {
        tick += 1;
        let payload = match round % 3 {
            0 => {
                let n = rng.below(48);
                rng.bytes(n)
            }
            // The good one with a few bits flipped, cut or extended.
            1 => {
                let mut p = good.clone();
                let at = rng.below(p.len());
                p[at] ^= 1 << rng.below(8);
                p.truncate(p.len() - rng.below(2));
                p
            }
            _ => {
                let n = rng.below(4);
                [good.as_slice(), &rng.bytes(n)].concat()
            }
        };
        raw.send(&packet(SNAPSHOT, tick, &payload), Channel::Unreliable);
        if round % 50 == 0 {
            client_frame(&mut client, &mut raw);
        }
    }
    client_frame(&mut client, &mut raw);
    let applied = client.stats().snapshots_applied;
    raw.send(&packet(SNAPSHOT, tick + 1, &good), Channel::Unreliable);
    client_frame(&mut client, &mut raw);
    assert_eq!(client.stats().snapshots_applied, applied + 1);
    let node = client.node(NetId::new(1).unwrap()).unwrap();
    let handle = client.scene().net_ref::<Body>(node).unwrap();
    assert_eq!(client.scene().get(handle).unwrap().x, 7);
}

/// A hostile server repeating one node's entry hundreds of times in every bit-packed snapshot
/// cannot make the client keep more than its nodes' worth of baselines: each tick's table holds
/// at most as many entries as the client has nodes (here one), so 40 such snapshots leave the
/// live heap as it was after the first few (it grew by 670 KB before the limit).
#[test]
fn repeated_bit_packed_entries_keep_no_more_baselines_than_the_client_has_nodes() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair_with(&net, 1);
    raw.send(&body_spawn(1, "a", &Body::default()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let layout = <Body as Replicated>::LAYOUT;
    let mut coded = BitWriter::new();
    bytes_to_bits(
        layout,
        &mut NetReader::new(&x_state(5)),
        &[],
        &mut coded,
        &mut [],
    )
    .unwrap();
    let mut w = BitWriter::new();
    w.write_gamma(0);
    let mut at = BodyCursor::default();
    while w.bit_len() < 1100 * 8 {
        write_entry(&mut w, &mut at, (1, body_type()), 0, 0, &coded);
    }
    end_entries(&mut w);
    let body = [&[0u8][..], w.finish()].concat();
    let mut tick = client.tick();
    let mut send = |client: &mut Mp, raw: &mut RawServer| {
        tick += 1;
        raw.send(&packet(SNAPSHOT, tick, &body), Channel::Unreliable);
        client_frame(client, raw);
    };
    for _ in 0..4 {
        send(&mut client, &mut raw);
    }
    let ((), info) = alloc_counter::measure(|| {
        for _ in 0..40 {
            send(&mut client, &mut raw);
        }
    });
    assert!(
        info.bytes_current < ALLOWANCE as i64,
        "the live heap grew by {} bytes",
        info.bytes_current
    );
    let node = client.node(NetId::new(1).unwrap()).unwrap();
    let handle = client.scene().net_ref::<Body>(node).unwrap();
    assert_eq!(
        client.scene().get(handle).unwrap().x,
        5,
        "the entries applied"
    );
}

/// A spawn message carries one spawn or more, each behind its length: each is applied, and a
/// message whose lengths do not add up to its end applies none of its spawns.
#[test]
fn a_spawn_message_applies_each_spawn_and_one_whose_lengths_do_not_add_up_applies_none() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair(&net);
    let spawns = |payloads: &[Vec<u8>], tail: &[u8]| {
        let mut w = NetWriter::new();
        for p in payloads {
            w.write_len(p.len());
            w.write_bytes(p);
        }
        w.write_bytes(tail);
        packet(SPAWN, 0, w.as_slice())
    };
    let body = |hp| Body {
        hp,
        ..Body::default()
    };
    let two = [
        body_spawn_payload(1, "a", &body(1)),
        body_spawn_payload(2, "b", &body(2)),
    ];
    raw.send(&spawns(&two, &[]), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let hp = |client: &Mp, id: u32| {
        let node = client.node(NetId::new(id)?)?;
        let handle = client.scene().net_ref::<Body>(node)?;
        client.scene().get(handle).map(|b| b.hp)
    };
    assert_eq!((hp(&client, 1), hp(&client, 2)), (Some(1), Some(2)));
    let dropped = client.stats().control_dropped;
    // A good spawn, then a length past the end; a good spawn, then a stray byte.
    let three = [body_spawn_payload(3, "c", &body(3))];
    let four = [body_spawn_payload(4, "d", &body(4))];
    raw.send(&spawns(&three, &[200, 1, 2]), Channel::Reliable);
    raw.send(&spawns(&four, &[7]), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert_eq!((hp(&client, 3), hp(&client, 4)), (None, None));
    assert_eq!(client.stats().control_dropped, dropped + 2);
    assert!(client.is_running() && !raw.client_gone);
}

/// A group move ([`PARENT`]) the client cannot make is dropped and counted: a group or a parent
/// it lacks, a parent inside the group's own subtree (a cycle would never end a despawn's
/// walk), a message cut short or running on. One it can make moves the group in its node
/// list: despawning the new parent takes the group along.
/// A typed spawn whose root goes beside its parent but names none (a parent by path) is
/// refused as a failed spawn, and the client carries on. (Without that check, the client
/// would read the root's link as naming a node made before it, and index past what it made.)
#[test]
fn a_typed_spawn_beside_no_parent_fails_and_the_client_carries_on() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair(&net);
    let body = ReplicationRegistry::global().id_of::<Body>().unwrap();
    let schema = ReplicationRegistry::global()
        .get(body)
        .unwrap()
        .schema_hash();
    let mut w = NetWriter::new();
    w.write_var_u32(5); // first net id
    w.write_var_i32(-3); // a typed spawn
    w.write_var_u32(0); // its parent by path: none
    w.write_str("");
    w.write_str("beside");
    w.write_var_u64(1); // authority
    w.write_var_u32(1); // one node
    w.write_u64(schema);
    w.write_var_u64(2); // beside the group's parent
    raw.send(&spawn_packet(w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let failed = drain(&mut client)
        .into_iter()
        .any(|e| matches!(e, MultiplayerEvent::SpawnFailed { .. }));
    assert!(failed, "the spawn failed");
    assert!(client.node(NetId::new(5).unwrap()).is_none());
    raw.send(&body_spawn(1, "a", &Body::default()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert!(client.node(NetId::new(1).unwrap()).is_some());
}

#[test]
fn a_group_move_the_client_cannot_make_is_dropped_and_one_it_can_is_kept() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair(&net);
    raw.send(&body_spawn(1, "a", &Body::default()), Channel::Reliable);
    raw.send(&body_spawn(2, "b", &Body::default()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let moved = |first: u32, parent: u32, extra: &[u8]| {
        let mut w = NetWriter::new();
        w.write_var_u32(first);
        w.write_var_u32(parent);
        w.write_bytes(extra);
        packet(PARENT, 0, w.as_slice())
    };
    let dropped = client.stats().control_dropped;
    for bad in [
        moved(9, 0, &[]),        // no such group
        moved(1, 9, &[]),        // no such parent
        moved(1, 1, &[]),        // under itself
        moved(1, 2, &[7]),       // running on
        packet(PARENT, 0, &[1]), // cut short
    ] {
        raw.send(&bad, Channel::Reliable);
    }
    client_frame(&mut client, &mut raw);
    assert_eq!(client.stats().control_dropped, dropped + 5);
    // `a` under `b`; then `b` under `a` would close a cycle.
    raw.send(&moved(1, 2, &[]), Channel::Reliable);
    raw.send(&moved(2, 1, &[]), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert_eq!(client.stats().control_dropped, dropped + 6);
    let mut w = NetWriter::new();
    w.write_var_u32(2);
    raw.send(&packet(DESPAWN, 0, w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    for id in [1, 2] {
        assert!(client.node(NetId::new(id).unwrap()).is_none(), "{id}");
    }
    assert!(client.is_running());
}

/// A group move the client's scene refuses (a name taken under the new parent) is dropped and
/// counted, and the client's node list stays with its scene: a despawn of the old parent takes
/// the group from both. (The list moved alone; the scene removed the node with its old parent
/// while the list kept it, with the column it was found in.)
#[test]
fn a_group_move_the_scene_refuses_leaves_the_node_list_with_the_scene() {
    let net = LoopbackNetwork::new();
    let (mut client, mut raw) = welcomed_pair(&net);
    let under = |id: u32, parent: &str, name: &str| {
        let mut payload = body_spawn_payload(id, name, &Body::default());
        // The parent path follows the first net id, the scene index and a 0.
        let at = 3;
        let mut w = NetWriter::new();
        w.write_str(parent);
        let old = {
            let mut o = NetWriter::new();
            o.write_str("/root");
            o.as_slice().len()
        };
        payload.splice(at..at + old, w.as_slice().iter().copied());
        spawn_packet(&payload)
    };
    raw.send(&body_spawn(1, "a", &Body::default()), Channel::Reliable);
    raw.send(&body_spawn(2, "b", &Body::default()), Channel::Reliable);
    raw.send(&under(3, "/root/b", "a"), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    let node = client.node(NetId::new(3).unwrap()).unwrap();
    assert_eq!(client.scene().path(node).as_deref(), Some("/root/b/a"));
    let dropped = client.stats().control_dropped;
    // `/root/b/a` to `/root`, where an `a` is already.
    let mut w = NetWriter::new();
    w.write_var_u32(3);
    w.write_var_u32(0);
    w.write_str("/root");
    raw.send(&packet(PARENT, 0, w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert_eq!(client.stats().control_dropped, dropped + 1);
    assert_eq!(client.scene().path(node).as_deref(), Some("/root/b/a"));
    let mut w = NetWriter::new();
    w.write_var_u32(2);
    raw.send(&packet(DESPAWN, 0, w.as_slice()), Channel::Reliable);
    client_frame(&mut client, &mut raw);
    assert!(client.node(NetId::new(3).unwrap()).is_none());
    assert!(client.node(NetId::new(1).unwrap()).is_some());
}
