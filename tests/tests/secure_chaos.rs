#![allow(clippy::unwrap_used)]
//! Seeded chaos for the secure layer: a `Multiplayer` server behind a `SecureServer` and one to
//! four players, each a `Multiplayer` client behind a `SecureClient`, every end over its own
//! seeded link (lossy, duplicating, reordering, delayed, or perfect: `chaos_link`), with either
//! snapshot encoding, a tick rate of 30, 60 or 128, frames of 20–50 ms, and the server moving,
//! spawning and despawning replicated bodies the whole time. Each seed also draws:
//!
//! - players joining with a token at once or late, the token fresh or close to expiry (issued
//!   so that it expires within two seconds: the request lands just before or just after);
//! - the secure layer's timeout, on both ends: 3–5 s (mf-net's own peer timeout stays at 15 s,
//!   so that the secure layer is the one to notice a silent peer);
//! - admitted players stalling (running no frame), either well under the timeout (by 2 s or
//!   more) or well past it (by 1.5 s or more), then running one frame as long as the stall, or
//!   one clamped to thirty frames, as game loops clamp `dt`; players stalling in the handshake,
//!   well under the server's 3 s handshake timeout or past every handshake timeout (5 s);
//! - players leaving (`stop`) and rejoining later with a fresh token, or first with their
//!   used one; players crashing (the process freezes) and rejoining at once with a fresh token;
//! - an on-path attacker that records every packet each end puts on the wire and, now and
//!   then: replays recorded packets later on the same connection, either way, on their channel
//!   or the other; replays a connection's handshake, or a packet of it, from another address
//!   (a connection of its own); duplicates connection requests, on the same connection and
//!   from another address; reflects packets back at their sender; and sends garbage,
//!   truncated and bit-flipped packets, on live connections and from its own; and presents a
//!   stolen used token (a welcomed player's, its session perhaps still open) with a secure
//!   client of its own.
//!
//! A probe under each secure end tags every packet that arrives **suspect** when it is forged
//! (garbage, cut, flipped or reflected) or a byte-for-byte copy of one that arrived on the same
//! connection before (a replay, or the link's own duplicate); a probe over it sees what the
//! layer passes up. The probe under an end records packets as they go on the loopback (after
//! the link's loss and delay), and the attacker's packets go on it after them, so a replay
//! always arrives after its original. The keys and salts are random, but which packets go
//! where, and what becomes of them, depends on the seed alone. The invariants, for every seed:
//!
//! 1. Nothing panics.
//! 2. No suspect packet is ever passed up, nor a payload from a peer not admitted, at either
//!    end.
//! 3. Every suspect packet that reaches an admitted connection is dropped and counted: the
//!    server's `dropped_tampered + dropped_replayed` is exactly the number of suspect packets
//!    that reached its admitted peers (nothing else counts there); a client's is at least the
//!    number that reached it once admitted, and at most every suspect packet it received.
//! 4. The attacker never gets a session: no connection of its own is admitted, each one is
//!    dropped by the server, which counts it (refused, unanswered, or a handshake timed out),
//!    and holds no peer in the handshake once things settle; a stolen used token is refused
//!    (`TokenReplayed`, or `TokenExpired`) and never disturbs the session it was used for.
//!    After every frame, the server's admitted peers are what its layer reported, with one
//!    session per client id at most; it admitted no more sessions than players started
//!    clients.
//! 5. A used token (one a welcomed instance held) is never admitted again (refused with
//!    `TokenReplayed`, or `TokenExpired` once it expired too, and counted); a fresh token is
//!    never refused; a token close to expiry is admitted only if it had not expired when its
//!    client started, and refused only with `TokenExpired` once the server's clock passed its
//!    expiry.
//! 6. A player that stalled past the timeout is disconnected with `Timeout` within 1.5 s of
//!    coming back, and the server counts one timeout for each such stall (plus at most one for
//!    each stall past the handshake timeouts, which ends with `Timeout` or `ConnectFailed`);
//!    one that stalled under them never is; a crashed player's old session hears `Replaced`
//!    once the new one is welcomed; no player is disconnected for any other reason.
//! 7. Once the chaos stops (the bodies stop, players that are away rejoin with fresh tokens):
//!    every player is admitted and welcomed; the server's admitted and joined peers are
//!    exactly the players', each with the client id of its token; and every player holds
//!    exactly the server's replicated state.
//!
//! `CHAOS_SEEDS=n` (from `CHAOS_FROM`, default 0) runs `n` seeds instead of the default ones:
//! `CHAOS_SEEDS=1000 cargo test --release -p mf-net-tests --test secure_chaos`.

mod replication_common;
mod secure_common;

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::time::Duration;

use mf_net::prelude::*;
use mf_net::transport::address::NetworkAddress;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net::transport::{SendError, TransportEvent, TransportStats};
use mf_net_secure::{
    ConnectToken, SecureClient, SecureServer, SecureStats, ServerConfig, TokenIssuer,
};
use mf_net_tests::harness::{differences, messages};
use mf_net_tests::rng::{chaos_encoding, chaos_link, chaos_seeds, Rng};
use replication_common::{library, Body, BODY, TANK};
use secure_common::{issuer, KEY, NOW, PROTOCOL};

/// The connect data of the attacker's own connections: the server must never admit one.
const ATTACKER: u32 = 0xA77A_C4ED;
/// The server's loopback name.
const NAME: &str = "arena";
/// How many of the first packets to each peer an end's ledger keeps (a client's request and
/// answer; the server's challenge and acceptance).
const EARLY: usize = 3;
/// How many of an end's latest packets its ledger keeps.
const RECENT: usize = 48;
/// Frames the world gets to settle once the chaos stops.
const SETTLE_FRAMES: usize = 1200;

/// A server end: mf-net over the probes and the secure layer, over the link and the loopback.
type ServerMp = Multiplayer<Audit<SecureServer<Link>>>;
/// A client end.
type ClientMp = Multiplayer<Audit<SecureClient<Link>>>;
/// What every secure end sends through: the simulated link, over the wire probe.
type Link = SimulatedTransport<Wire<LoopbackTransport>>;
/// A packet: to or from whom, on which channel, its bytes.
type Packet = (PeerId, Channel, Vec<u8>);
/// An end's [`Ledger`], shared by its probes and the test.
type Book = Rc<RefCell<Ledger>>;

/// A packet's identity for the probes.
fn digest(data: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut hasher);
    hasher.finish()
}

/// What one secure end put on the wire, what the attacker slips onto it, what arrived and what
/// went up.
#[derive(Default)]
struct Ledger {
    /// The first [`EARLY`] packets sent to each peer.
    early: Vec<Packet>,
    /// The latest [`RECENT`] packets sent.
    recent: VecDeque<Packet>,
    /// Packets the attacker slips onto the wire at the end's next flush.
    inject: Vec<Packet>,
    /// Digests of the forged packets the attacker sent this end.
    forged: HashSet<u64>,
    /// Digests of what arrived, per connection.
    seen: HashMap<PeerId, HashSet<u64>>,
    /// The attacker's own connections (server).
    attackers: HashSet<PeerId>,
    /// The peers admitted, as the layer reported them.
    admitted: BTreeSet<PeerId>,
    /// Whether the packet that arrived last is suspect.
    suspect: bool,
    /// Suspect packets that reached an admitted connection.
    counted: u64,
    /// Suspect packets that reached a connection not admitted.
    uncounted: u64,
    /// `Connected` events the layer passed up.
    admissions: u64,
    /// Broken invariants, with what broke them.
    violations: Vec<String>,
    /// The layer's counters, as of its last flush (or its drop).
    stats: SecureStats,
}

impl Ledger {
    fn book() -> Book {
        Rc::default()
    }

    /// `data` went on the wire to `peer`.
    fn sent(&mut self, peer: PeerId, channel: Channel, data: &[u8]) {
        let packet = (peer, channel, data.to_vec());
        if self.early.iter().filter(|p| p.0 == peer).count() < EARLY {
            self.early.push(packet.clone());
        }
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(packet);
    }

    /// What the inner transport reports, before the secure layer sees it.
    fn on_wire(&mut self, event: &TransportEvent<'_>) {
        match *event {
            TransportEvent::Connected { peer, connect_data } => {
                self.seen.remove(&peer);
                if connect_data == ATTACKER {
                    self.attackers.insert(peer);
                }
            }
            TransportEvent::Received { peer, data, .. } => self.arrived(peer, data),
            TransportEvent::Disconnected { .. } => {}
        }
    }

    /// `data` arrived from `peer`: tags it suspect if it is forged or a copy.
    fn arrived(&mut self, peer: PeerId, data: &[u8]) {
        let d = digest(data);
        let copy = !self.seen.entry(peer).or_default().insert(d);
        self.suspect = copy || self.forged.contains(&d);
        match (self.suspect, self.admitted.contains(&peer)) {
            (true, true) => self.counted += 1,
            (true, false) => self.uncounted += 1,
            (false, _) => {}
        }
    }

    /// What the secure layer passes up.
    fn on_up(&mut self, event: &TransportEvent<'_>) {
        match *event {
            TransportEvent::Connected { peer, connect_data } => {
                self.admissions += 1;
                if connect_data == ATTACKER || self.attackers.contains(&peer) {
                    self.violations
                        .push(format!("the attacker's {peer} was admitted"));
                }
                if !self.admitted.insert(peer) {
                    self.violations.push(format!("{peer} was admitted twice"));
                }
            }
            TransportEvent::Disconnected { peer, .. } => {
                self.admitted.remove(&peer);
            }
            TransportEvent::Received { peer, data, .. } => {
                if self.suspect {
                    let n = data.len();
                    let what = format!("a forged or copied packet from {peer} went up ({n} bytes)");
                    self.violations.push(what);
                }
                if !self.admitted.contains(&peer) {
                    let what = format!("a payload from {peer}, not admitted, went up");
                    self.violations.push(what);
                }
            }
        }
    }
}

/// The probe under a secure end: records what goes on the wire, slips the attacker's packets
/// onto it, and tags what arrives.
struct Wire<T> {
    inner: T,
    book: Book,
}

impl<T: Transport> Transport for Wire<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        let sent = self.inner.send(peer, channel, data);
        if sent.is_ok() {
            self.book.borrow_mut().sent(peer, channel, data);
        }
        sent
    }
    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        let event = self.inner.poll_event()?;
        self.book.borrow_mut().on_wire(&event);
        Some(event)
    }
    fn advance(&mut self, dt: Duration) {
        self.inner.advance(dt);
    }
    fn flush(&mut self) {
        let inject = std::mem::take(&mut self.book.borrow_mut().inject);
        for (peer, channel, data) in inject {
            // Refused (the peer is gone): as good as lost on the way.
            let _ = self.inner.send(peer, channel, &data);
        }
        self.inner.flush();
    }
    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.inner.disconnect(peer, reason);
    }
    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }
}

/// A secure end, whichever.
trait Secure: Transport {
    /// Its counters.
    fn counters(&self) -> SecureStats;
}

impl<T: Transport> Secure for SecureServer<T> {
    fn counters(&self) -> SecureStats {
        self.secure_stats()
    }
}

impl<T: Transport> Secure for SecureClient<T> {
    fn counters(&self) -> SecureStats {
        self.secure_stats()
    }
}

/// The probe over a secure end: checks what it passes up against what arrived.
struct Audit<T: Secure> {
    inner: T,
    book: Book,
}

impl<T: Secure> Transport for Audit<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        self.inner.send(peer, channel, data)
    }
    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        let event = self.inner.poll_event()?;
        self.book.borrow_mut().on_up(&event);
        Some(event)
    }
    fn advance(&mut self, dt: Duration) {
        self.inner.advance(dt);
    }
    fn flush(&mut self) {
        self.inner.flush();
        self.book.borrow_mut().stats = self.inner.counters();
    }
    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.book.borrow_mut().admitted.remove(&peer);
        self.inner.disconnect(peer, reason);
    }
    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }
}

impl<T: Secure> Drop for Audit<T> {
    fn drop(&mut self) {
        self.book.borrow_mut().stats = self.inner.counters();
    }
}

/// What a seed draws once.
struct Setup {
    seed: u64,
    config: MultiplayerConfig,
    /// The secure layer's timeout, on both ends (mf-net's own peer timeout stays at 15 s, so
    /// that the secure layer is the one to notice).
    timeout: Duration,
    /// The chance of an attack each frame, in percent.
    attack: u64,
    /// How long the chaos lasts.
    chaos: Duration,
}

impl Setup {
    fn draw(seed: u64, rng: &mut Rng) -> Self {
        let timeout = Duration::from_secs(3 + rng.below(3));
        let config = MultiplayerConfig {
            snapshot_encoding: chaos_encoding(rng),
            tick_rate: [30, 60, 128][rng.below(3) as usize],
            ..MultiplayerConfig::default()
        };
        Self {
            seed,
            config,
            timeout,
            attack: 5 + rng.below(30),
            chaos: Duration::from_millis(5_000 + rng.below(9_000)),
        }
    }
}

/// How an instance's token was drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// Issued now.
    Fresh,
    /// Issued to expire within two seconds.
    NearExpiry,
    /// The token of the player's last welcomed instance, presented again.
    Used,
}

/// A stall: when it ends, how long it is, whether it passes the timeout (or for a stall in
/// the handshake, the handshake timeouts), whether it came in the handshake, and whether the
/// frame after it is as long as the stall (or clamped to thirty frames).
#[derive(Debug, Clone, Copy)]
struct Stall {
    until: Duration,
    length: Duration,
    long: bool,
    handshake: bool,
    unclamped: bool,
}

/// One run of a player's client, and what is expected of it.
struct Instance {
    mp: ClientMp,
    book: Book,
    token: Token,
    /// The token's expiry.
    expires: Duration,
    /// The server's clock when the instance started (before its request arrived).
    started: Duration,
    welcomed: bool,
    stall: Option<Stall>,
    /// When a stall past the timeout ended: the instance must hear `Timeout` soon after.
    overdue: Option<Duration>,
    /// Whether that stall came in the handshake (it may end with `ConnectFailed` too).
    overdue_in_handshake: bool,
}

impl Instance {
    /// The length of the frame the instance runs now, or `None` while it stalls (the first
    /// frame after a stall is as long as the stall, or up to thirty frames).
    fn resume(&mut self, now: Duration, dt: Duration) -> Option<Duration> {
        let Some(stall) = self.stall else {
            return Some(dt);
        };
        if now < stall.until {
            return None;
        }
        self.stall = None;
        if stall.long {
            self.overdue = Some(now);
            self.overdue_in_handshake = stall.handshake;
        }
        match stall.unclamped {
            true => Some(stall.length),
            false => Some((dt * 30).min(stall.length)),
        }
    }

    /// Whether it is welcomed and running normally (may stall, leave or crash).
    fn steady(&self) -> bool {
        self.welcomed && self.calm()
    }

    /// Whether it neither stalls nor is overdue.
    fn calm(&self) -> bool {
        self.stall.is_none() && self.overdue.is_none()
    }

    /// Whether it is in the handshake, its request sent (may stall there).
    fn shaking(&self) -> bool {
        !self.welcomed && self.calm() && !self.book.borrow().early.is_empty()
    }

    /// One frame: whether it was welcomed in it, and why it ended, if it did.
    fn run(&mut self, dt: Duration) -> (bool, Option<DisconnectReason>) {
        self.mp.begin_frame(dt);
        self.mp.end_frame();
        let (mut welcomed, mut ended) = (false, None);
        while let Some(event) = self.mp.next_event() {
            match event {
                MultiplayerEvent::ConnectedToServer { .. } => welcomed = true,
                MultiplayerEvent::Disconnected { reason } => ended = Some(reason),
                _ => {}
            }
        }
        (welcomed, ended)
    }

    fn describe(&self) -> String {
        format!(
            "token {:?} expiring at {:?}, started at {:?}, welcomed {}, stall {:?}, overdue since {:?}",
            self.token, self.expires, self.started, self.welcomed, self.stall, self.overdue
        )
    }
}

/// A player: its client id, its link, and the runs of its client.
struct Player {
    id: u64,
    link: NetworkConditions,
    now: Option<Instance>,
    /// When it (re)joins, while it has no instance.
    back_at: Option<Duration>,
    /// The token of its last welcomed instance (certainly used: the server admitted it).
    used: Option<ConnectToken>,
    /// The token it presented last.
    last: Option<ConnectToken>,
    /// Its crashed instance, frozen, until the new one is in.
    frozen: Option<Instance>,
}

/// A connection of the attacker's own, sending `queue` once connected.
struct Raid {
    conn: LoopbackTransport,
    queue: Vec<(Channel, Vec<u8>)>,
    sent: bool,
    dropped: bool,
}

impl Raid {
    fn step(&mut self) {
        loop {
            let (connected, dropped) = match self.conn.poll_event() {
                None => break,
                Some(TransportEvent::Connected { .. }) => (true, false),
                Some(TransportEvent::Disconnected { .. }) => (false, true),
                Some(TransportEvent::Received { .. }) => (false, false),
            };
            self.dropped |= dropped;
            if connected {
                for (channel, data) in self.queue.drain(..) {
                    let _ = self.conn.send(PeerId::SERVER, channel, &data);
                }
                self.sent = true;
            }
        }
        self.conn.flush();
    }
}

/// The attacker holding a stolen token that was used already, presenting it with a secure
/// client of its own (from its own address).
struct Thief {
    client: SecureClient<LoopbackTransport>,
    /// Whether the server accepted it (it must not), and why it was refused.
    admitted: bool,
    refused: Option<DisconnectReason>,
}

impl Thief {
    fn step(&mut self, dt: Duration) {
        self.client.advance(dt);
        while let Some(event) = self.client.poll_event() {
            match event {
                TransportEvent::Connected { .. } => self.admitted = true,
                TransportEvent::Disconnected { reason, .. } => self.refused = Some(reason),
                TransportEvent::Received { .. } => {}
            }
        }
        self.client.flush();
    }
}

/// How the attacker spoils a recorded packet.
#[derive(Debug, Clone, Copy)]
enum Spoil {
    Truncate,
    Flip,
}

/// One seed's world.
struct Game {
    rng: Rng,
    setup: Setup,
    net: LoopbackNetwork,
    address: NetworkAddress,
    server: ServerMp,
    server_book: Book,
    players: Vec<Player>,
    /// Every client instance's ledger.
    books: Vec<Book>,
    raids: Vec<Raid>,
    thieves: Vec<Thief>,
    bodies: Vec<NodeId>,
    /// The test's clock (the sum of the frame lengths).
    now: Duration,
    /// Client instances started.
    instances: u64,
    /// Used tokens the players heard refused as replayed.
    replays_refused: u64,
    /// Stalls of admitted players past the timeout.
    long_stalls: u64,
    /// Stalls in the handshake past its timeouts.
    long_handshake_stalls: u64,
}

impl Game {
    fn new(seed: u64) -> Self {
        let mut rng = Rng::seeded(seed);
        let setup = Setup::draw(seed, &mut rng);
        let net = LoopbackNetwork::new();
        let address: NetworkAddress = format!("loopback:{NAME}").parse().unwrap();
        let server_book = Ledger::book();
        let wire = Wire {
            inner: net.listen(NAME, 64).unwrap(),
            book: Rc::clone(&server_book),
        };
        let conditions = chaos_link(&mut rng).unwrap_or_default();
        let link = SimulatedTransport::new(wire, conditions, seed.wrapping_mul(7));
        let config = ServerConfig::new(PROTOCOL, KEY, vec![address.clone()])
            .with_max_clients(8)
            .with_timeout(setup.timeout);
        let secure = SecureServer::new(link, config, NOW).unwrap();
        let audit = Audit {
            inner: secure,
            book: Rc::clone(&server_book),
        };
        let mut server = ServerMp::new(library(), setup.config);
        server.start_server(audit, messages()).unwrap();
        let players = players(&mut rng, &setup);
        Self {
            rng,
            setup,
            net,
            address,
            server,
            server_book,
            players,
            books: Vec::new(),
            raids: Vec::new(),
            thieves: Vec::new(),
            bodies: Vec::new(),
            now: Duration::ZERO,
            instances: 0,
            replays_refused: 0,
            long_stalls: 0,
            long_handshake_stalls: 0,
        }
    }

    fn secure(&self) -> &SecureServer<Link> {
        &self.server.bus().unwrap().transport().inner
    }

    /// The server's (and the backend's) clock.
    fn server_now(&self) -> Duration {
        self.secure().now()
    }

    /// A token for client `id`, fresh or close to expiry.
    fn token(&mut self, id: u64, kind: Token) -> ConnectToken {
        let now = self.server_now();
        let issued = match kind {
            Token::NearExpiry => {
                now + Duration::from_millis(self.rng.below(2_000)) - TokenIssuer::DEFAULT_LIFETIME
            }
            _ => now,
        };
        let servers = std::slice::from_ref(&self.address);
        issuer().issue(id, b"player", servers, issued).unwrap()
    }

    /// Starts a client for player `p` presenting a token of `kind`.
    fn join(&mut self, p: usize, kind: Token) {
        let id = self.players[p].id;
        let token = match (kind, self.players[p].used.clone()) {
            (Token::Used, Some(used)) => used,
            _ => self.token(id, kind),
        };
        let book = Ledger::book();
        self.books.push(Rc::clone(&book));
        let seed = self
            .setup
            .seed
            .wrapping_mul(31)
            .wrapping_add(self.instances);
        self.instances += 1;
        let (net, conditions, timeout) = (&self.net, self.players[p].link, self.setup.timeout);
        let open = |data| {
            let wire = Wire {
                inner: net.connect(NAME, data),
                book: Rc::clone(&book),
            };
            let link = SimulatedTransport::new(wire, conditions, seed);
            let inner = SecureClient::new(link, token.clone()).with_timeout(timeout);
            Audit {
                inner,
                book: Rc::clone(&book),
            }
        };
        let mut mp = ClientMp::new(library(), self.setup.config);
        mp.start_client(open, messages()).unwrap();
        let (expires, started) = (token.expires_at(), self.server_now());
        self.players[p].last = Some(token);
        self.players[p].now = Some(Instance {
            mp,
            book,
            token: kind,
            expires,
            started,
            welcomed: false,
            stall: None,
            overdue: None,
            overdue_in_handshake: false,
        });
    }

    /// Spawns the first bodies.
    fn populate(&mut self) {
        for _ in 0..2 + self.rng.below(6) {
            self.spawn();
        }
    }

    fn spawn(&mut self) {
        let scene = [BODY, TANK][self.rng.below(2) as usize];
        let root = self.server.scene().root();
        let node = self.server.spawn(scene, root, PeerId::SERVER).unwrap();
        self.bodies.push(node);
    }

    /// Moves most bodies; now and then spawns or despawns one.
    fn move_bodies(&mut self) {
        let rng = &mut self.rng;
        let scene = self.server.scene_mut();
        let handles: Vec<_> = scene.iter::<Body>().map(|(h, _)| h).collect();
        for h in handles {
            if rng.chance(60) {
                let b = scene.get_mut(h).unwrap();
                b.x = b.x.wrapping_add(rng.below(21) as i32 - 10);
                b.y = b.y.wrapping_add(rng.below(5) as i32 - 2);
                if rng.chance(5) {
                    b.hp = rng.next_u64() as u8;
                }
            }
        }
        if self.rng.chance(2) && self.bodies.len() < 12 {
            self.spawn();
        }
        if self.rng.chance(1) && self.bodies.len() > 2 {
            let i = self.rng.below(self.bodies.len() as u64) as usize;
            self.server.despawn(self.bodies.swap_remove(i));
        }
    }

    /// One frame of every end: the server, the players (the stalled ones skip it), the
    /// attacker's connections.
    fn frame(&mut self) {
        let dt = Duration::from_millis(20 + self.rng.below(31));
        self.now += dt;
        self.server.begin_frame(dt);
        self.server.end_frame();
        while self.server.next_event().is_some() {}
        for p in 0..self.players.len() {
            self.step_player(p, dt);
        }
        for raid in &mut self.raids {
            raid.step();
        }
        for thief in &mut self.thieves {
            thief.step(dt);
        }
    }

    fn step_player(&mut self, p: usize, dt: Duration) {
        let Some(mut inst) = self.players[p].now.take() else {
            return;
        };
        let Some(dt) = inst.resume(self.now, dt) else {
            self.players[p].now = Some(inst);
            return;
        };
        let (welcomed, ended) = inst.run(dt);
        if welcomed {
            self.welcomed(p, &mut inst);
        }
        match ended {
            Some(reason) => self.ended(p, &inst, reason),
            None => {
                self.check_overdue(p, &inst);
                self.players[p].now = Some(inst);
            }
        }
    }

    /// Player `p`'s instance was welcomed: its token must not have been used before, and its
    /// crashed predecessor, if any, hears that it was replaced.
    fn welcomed(&mut self, p: usize, inst: &mut Instance) {
        let seed = self.setup.seed;
        assert_ne!(
            inst.token,
            Token::Used,
            "seed {seed}: player {p} was admitted again on a used token"
        );
        assert!(
            inst.started < inst.expires,
            "seed {seed}: player {p} was admitted on an expired token ({})",
            inst.describe()
        );
        inst.welcomed = true;
        self.players[p].used = self.players[p].last.clone();
        if let Some(mut old) = self.players[p].frozen.take() {
            let reason = (0..5).find_map(|_| old.run(Duration::from_millis(10)).1);
            assert_eq!(
                reason,
                Some(DisconnectReason::Replaced),
                "seed {seed}: player {p}'s crashed session ({})",
                old.describe()
            );
        }
    }

    /// Player `p`'s instance ended with `reason`: checks that it should have; the player
    /// comes back a little later.
    fn ended(&mut self, p: usize, inst: &Instance, reason: DisconnectReason) {
        let expected = match reason {
            DisconnectReason::Timeout => inst.overdue.is_some(),
            DisconnectReason::ConnectFailed => inst.overdue_in_handshake,
            DisconnectReason::TokenExpired => {
                inst.token != Token::Fresh && !inst.welcomed && self.server_now() >= inst.expires
            }
            DisconnectReason::TokenReplayed => inst.token == Token::Used && !inst.welcomed,
            _ => false,
        };
        assert!(
            expected,
            "seed {}, at {:?}: player {p} disconnected with {reason:?} ({})",
            self.setup.seed,
            self.now,
            inst.describe()
        );
        self.replays_refused += u64::from(reason == DisconnectReason::TokenReplayed);
        let delay = Duration::from_millis(100 + self.rng.below(1_900));
        self.players[p].back_at = Some(self.now + delay);
    }

    /// A player back from a stall past the timeout must hear `Timeout` within 1.5 s.
    fn check_overdue(&self, p: usize, inst: &Instance) {
        if let Some(since) = inst.overdue {
            assert!(
                self.now < since + Duration::from_millis(1_500),
                "seed {}: player {p} stalled past the timeout and is still connected ({})",
                self.setup.seed,
                inst.describe()
            );
        }
    }

    /// What happens to the players this frame; in `calm`, only that the away ones rejoin,
    /// at once and with fresh tokens.
    fn upset(&mut self, calm: bool) {
        for p in 0..self.players.len() {
            self.rejoin_if_due(p, calm);
            if !calm {
                self.upset_player(p);
            }
        }
        if !calm && self.rng.chance(self.setup.attack) {
            self.attack();
        }
    }

    fn rejoin_if_due(&mut self, p: usize, calm: bool) {
        let player = &self.players[p];
        let due = player.back_at.is_some_and(|t| calm || t <= self.now);
        if player.now.is_some() || !due {
            return;
        }
        let reuse = player.used.is_some();
        self.players[p].back_at = None;
        let kind = match self.rng.below(100) {
            _ if calm => Token::Fresh,
            0..=14 if reuse => Token::Used,
            15..=34 => Token::NearExpiry,
            _ => Token::Fresh,
        };
        self.join(p, kind);
    }

    /// Now and then, a steady player stalls, leaves or crashes, and a player in the handshake
    /// stalls.
    fn upset_player(&mut self, p: usize) {
        let Some(inst) = self.players[p].now.as_ref() else {
            return;
        };
        if inst.shaking() && self.players[p].frozen.is_none() && self.rng.chance(1) {
            return self.stall(p, true);
        }
        if !inst.steady() {
            return;
        }
        match self.rng.below(1_000) {
            0..=3 => self.stall(p, false),
            4..=5 => self.leave(p),
            6 if self.players[p].frozen.is_none() => self.crash(p),
            _ => {}
        }
    }

    /// Player `p` stops running frames: well under the timeout or well past it; in the
    /// handshake, well under the server's handshake timeout (3 s) or past every handshake
    /// timeout (5 s).
    fn stall(&mut self, p: usize, handshake: bool) {
        let timeout = self.setup.timeout.as_millis() as u64;
        let long = self.rng.chance(50);
        let ms = match (handshake, long) {
            (false, true) => timeout + 1_500 + self.rng.below(1_500),
            (false, false) => 200 + self.rng.below(timeout - 2_200),
            (true, true) => 5_500 + self.rng.below(1_500),
            (true, false) => 200 + self.rng.below(600),
        };
        let length = Duration::from_millis(ms);
        let stall = Stall {
            until: self.now + length,
            length,
            long,
            handshake,
            unclamped: self.rng.chance(50),
        };
        match handshake {
            false => self.long_stalls += u64::from(long),
            true => self.long_handshake_stalls += u64::from(long),
        }
        self.players[p].now.as_mut().unwrap().stall = Some(stall);
    }

    /// Player `p` leaves, and comes back later.
    fn leave(&mut self, p: usize) {
        let mut inst = self.players[p].now.take().unwrap();
        inst.mp.stop();
        let delay = Duration::from_millis(100 + self.rng.below(1_900));
        self.players[p].back_at = Some(self.now + delay);
    }

    /// Player `p`'s game freezes; it starts again at once with a fresh token.
    fn crash(&mut self, p: usize) {
        self.players[p].frozen = self.players[p].now.take();
        self.join(p, Token::Fresh);
    }

    fn attack(&mut self) {
        match self.rng.below(9) {
            0 => self.replay_up(),
            1 => self.replay_down(),
            2 => self.replay_elsewhere(),
            3 => self.duplicate_request(),
            4 => self.garbage(),
            5 => self.spoil(Spoil::Truncate),
            6 => self.spoil(Spoil::Flip),
            7 => self.reflect(),
            _ => self.steal(),
        }
    }

    /// A running instance that has sent its request, at random: its ledger and, once it is
    /// welcomed, its peer id on the server.
    fn victim(&mut self) -> Option<(Book, Option<PeerId>)> {
        let live: Vec<_> = self
            .players
            .iter()
            .filter_map(|p| p.now.as_ref())
            .filter(|i| !i.book.borrow().early.is_empty())
            .map(|i| (Rc::clone(&i.book), i.welcomed.then(|| i.mp.local_peer_id())))
            .collect();
        pick(&mut self.rng, live)
    }

    /// `channel`, or now and then the other one.
    fn swap(&mut self, channel: Channel) -> Channel {
        match (self.rng.chance(20), channel) {
            (false, c) => c,
            (true, Channel::Reliable) => Channel::Unreliable,
            (true, Channel::Unreliable) => Channel::Reliable,
        }
    }

    /// A client's recorded packet, again, on its connection.
    fn replay_up(&mut self) {
        let Some((book, _)) = self.victim() else {
            return;
        };
        let Some((_, channel, data)) = recorded(&mut self.rng, &book, None) else {
            return;
        };
        let channel = self.swap(channel);
        book.borrow_mut()
            .inject
            .push((PeerId::SERVER, channel, data));
    }

    /// The server's recorded packet, again, to its peer.
    fn replay_down(&mut self) {
        let Some((peer, channel, data)) = recorded(&mut self.rng, &self.server_book, None) else {
            return;
        };
        let channel = self.swap(channel);
        self.server_book
            .borrow_mut()
            .inject
            .push((peer, channel, data));
    }

    /// A client's handshake (and first packet), or one packet of it, from another address.
    fn replay_elsewhere(&mut self) {
        let Some(book) = self.any_book() else {
            return;
        };
        let packets = match self.rng.chance(50) {
            true => book.borrow().early.clone(),
            false => recorded(&mut self.rng, &book, None).into_iter().collect(),
        };
        self.raid(packets.into_iter().map(|(_, c, d)| (c, d)).collect());
    }

    /// A client's request again: on its connection, or from another address.
    fn duplicate_request(&mut self) {
        if self.rng.chance(50) {
            if let Some((book, _)) = self.victim() {
                let request = book.borrow().early[0].clone();
                book.borrow_mut().inject.push(request);
            }
        } else if let Some(book) = self.any_book() {
            let (_, channel, data) = book.borrow().early[0].clone();
            self.raid(vec![(channel, data)]);
        }
    }

    /// The ledger of any client instance, running or not, that sent its request.
    fn any_book(&mut self) -> Option<Book> {
        let books: Vec<Book> = self
            .books
            .iter()
            .filter(|b| !b.borrow().early.is_empty())
            .cloned()
            .collect();
        pick(&mut self.rng, books)
    }

    /// Random bytes (some starting with a kind the layer knows): from another address, to the
    /// server on a client's connection, or to a client.
    fn garbage(&mut self) {
        let len = self.rng.below(120) as usize;
        let mut data: Vec<u8> = (0..len).map(|_| self.rng.next_u64() as u8).collect();
        if let Some(first) = data.first_mut() {
            if self.rng.chance(50) {
                *first = self.rng.below(8) as u8;
            }
        }
        let channel = self.swap(Channel::Reliable);
        match self.rng.below(3) {
            0 => {
                self.server_book.borrow_mut().forged.insert(digest(&data));
                self.raid(vec![(channel, data)]);
            }
            1 => self.forge_up(None, channel, data),
            _ => self.forge_down(None, channel, data),
        }
    }

    /// `data`, forged, to the server on the connection of `book` (a victim's, if `None`).
    fn forge_up(&mut self, book: Option<Book>, channel: Channel, data: Vec<u8>) {
        let Some(book) = book.or_else(|| self.victim().map(|v| v.0)) else {
            return;
        };
        self.server_book.borrow_mut().forged.insert(digest(&data));
        book.borrow_mut()
            .inject
            .push((PeerId::SERVER, channel, data));
    }

    /// `data`, forged, to a welcomed victim (or to `to`: its ledger and peer id).
    fn forge_down(&mut self, to: Option<(Book, PeerId)>, channel: Channel, data: Vec<u8>) {
        let victim = to.or_else(|| match self.victim() {
            Some((book, Some(peer))) => Some((book, peer)),
            _ => None,
        });
        let Some((book, peer)) = victim else {
            return;
        };
        book.borrow_mut().forged.insert(digest(&data));
        self.server_book
            .borrow_mut()
            .inject
            .push((peer, channel, data));
    }

    /// A recorded packet, cut short or with flipped bits, on its connection, either way.
    fn spoil(&mut self, how: Spoil) {
        let Some((book, Some(peer))) = self.victim() else {
            return;
        };
        let up = self.rng.chance(50);
        let (from, only) = match up {
            true => (&book, None),
            false => (&self.server_book, Some(peer)),
        };
        let Some((_, channel, data)) = recorded(&mut self.rng, from, only) else {
            return;
        };
        let Some(bad) = spoiled(&mut self.rng, &data, how) else {
            return;
        };
        match up {
            true => self.forge_up(Some(book), channel, bad),
            false => self.forge_down(Some((book, peer)), channel, bad),
        }
    }

    /// A packet back at the end that sent it.
    fn reflect(&mut self) {
        let Some((book, Some(peer))) = self.victim() else {
            return;
        };
        if self.rng.chance(50) {
            if let Some((_, channel, data)) = recorded(&mut self.rng, &book, None) {
                self.forge_down(Some((book, peer)), channel, data);
            }
        } else if let Some((_, c, d)) = recorded(&mut self.rng, &self.server_book, Some(peer)) {
            self.forge_up(Some(book), c, d);
        }
    }

    /// A used token (a welcomed player's, its session perhaps still open), presented by a
    /// secure client of the attacker's own.
    fn steal(&mut self) {
        let used: Vec<ConnectToken> = self.players.iter().filter_map(|p| p.used.clone()).collect();
        let Some(token) = pick(&mut self.rng, used) else {
            return;
        };
        let client = SecureClient::new(self.net.connect(NAME, ATTACKER), token);
        self.thieves.push(Thief {
            client,
            admitted: false,
            refused: None,
        });
    }

    /// A connection of the attacker's own, sending `queue`.
    fn raid(&mut self, queue: Vec<(Channel, Vec<u8>)>) {
        if queue.is_empty() {
            return;
        }
        let conn = self.net.connect(NAME, ATTACKER);
        self.raids.push(Raid {
            conn,
            queue,
            sent: false,
            dropped: false,
        });
    }

    /// Invariants 2 and 4 after every frame.
    fn check_frame(&self) {
        let seed = self.setup.seed;
        for book in self.books.iter().chain([&self.server_book]) {
            let violations = &book.borrow().violations;
            assert!(
                violations.is_empty(),
                "seed {seed}, at {:?}: {violations:?}",
                self.now
            );
        }
        let secure = self.secure();
        let admitted = &self.server_book.borrow().admitted;
        assert_eq!(admitted.len(), secure.admitted_count(), "seed {seed}");
        let ids: BTreeSet<u64> = admitted
            .iter()
            .map(|&peer| secure.identity(peer).map_or(0, |i| i.client_id()))
            .collect();
        assert!(
            !ids.contains(&0),
            "seed {seed}: {admitted:?} not all admitted"
        );
        assert_eq!(ids.len(), admitted.len(), "seed {seed}: a second session");
    }

    /// Whether the world has settled: every player in and converged, every attacker's
    /// connection dropped, nobody in the handshake.
    fn settled(&self) -> bool {
        let converged = |p: &Player| {
            p.frozen.is_none()
                && p.now.as_ref().is_some_and(|i| {
                    i.welcomed && i.stall.is_none() && differences(&self.server, &i.mp).is_none()
                })
        };
        self.raids.iter().all(|r| r.dropped)
            && self.thieves.iter().all(|t| t.refused.is_some())
            && self.secure().pending_count() == 0
            && self.players.iter().all(converged)
    }

    /// Invariant 7.
    fn check_converged(&self) {
        let seed = self.setup.seed;
        let secure = self.secure();
        let mut expected = BTreeSet::new();
        for (p, player) in self.players.iter().enumerate() {
            let inst = player.now.as_ref();
            let inst = inst.unwrap_or_else(|| panic!("seed {seed}: player {p} is not running"));
            let admitted = inst
                .mp
                .bus()
                .is_some_and(|b| b.transport().inner.is_admitted());
            assert!(
                inst.welcomed && admitted,
                "seed {seed}: player {p} is not in ({})",
                inst.describe()
            );
            let peer = inst.mp.local_peer_id();
            let id = secure.identity(peer).map(|i| i.client_id());
            assert_eq!(id, Some(player.id), "seed {seed}: player {p}'s identity");
            let diff = differences(&self.server, &inst.mp);
            assert_eq!(diff, None, "seed {seed}: player {p}'s state");
            expected.insert(peer);
        }
        let joined: BTreeSet<PeerId> = self.server.peers().iter().copied().collect();
        assert_eq!(joined, expected, "seed {seed}: joined peers");
        let admitted = self.server_book.borrow().admitted.clone();
        assert_eq!(admitted, expected, "seed {seed}: admitted peers");
        assert!(
            self.frozen_free(),
            "seed {seed}: a crashed session was never replaced"
        );
    }

    fn frozen_free(&self) -> bool {
        self.players.iter().all(|p| p.frozen.is_none())
    }

    /// Invariants 3, 4 and 5, on the counters.
    fn check_counted(&self) {
        let seed = self.setup.seed;
        let secure = self.secure();
        let stats = secure.secure_stats();
        let server = self.server_book.borrow();
        assert_eq!(
            stats.dropped_tampered + stats.dropped_replayed,
            server.counted,
            "seed {seed}: the server's drops ({stats:?}) against suspect packets to admitted peers"
        );
        for (i, book) in self.books.iter().enumerate() {
            let b = book.borrow();
            let dropped = b.stats.dropped_tampered + b.stats.dropped_replayed;
            assert!(
                (b.counted..=b.counted + b.uncounted).contains(&dropped),
                "seed {seed}: client instance {i} dropped {dropped}, suspect {} + {}: {:?}",
                b.counted,
                b.uncounted,
                b.stats
            );
        }
        assert!(
            self.raids.iter().all(|r| r.dropped),
            "seed {seed}: a raid lives"
        );
        for thief in &self.thieves {
            let refused = matches!(
                thief.refused,
                Some(DisconnectReason::TokenReplayed | DisconnectReason::TokenExpired)
            );
            assert!(
                refused && !thief.admitted,
                "seed {seed}: a used token's thief: {:?}",
                thief.refused
            );
        }
        assert_eq!(secure.pending_count(), 0, "seed {seed}: pending peers");
        let raids = self.raids.iter().filter(|r| r.sent).count() as u64;
        let answered = stats.refused() + stats.handshake_timeouts + stats.strangers_dropped;
        assert!(answered >= raids, "seed {seed}: {raids} raids, {stats:?}");
        assert_eq!(stats.admitted, server.admissions, "seed {seed}");
        assert!(
            server.admissions <= self.instances,
            "seed {seed}: {stats:?}"
        );
        assert!(
            stats.refused_replayed >= self.replays_refused,
            "seed {seed}: {stats:?}"
        );
        let stalls = self.long_stalls..=self.long_stalls + self.long_handshake_stalls;
        assert!(
            stalls.contains(&stats.timeouts),
            "seed {seed}: stalls past the timeout {stalls:?}, {stats:?}"
        );
    }

    /// What the run exercised, for the totals.
    fn tally(&self) -> Tally {
        let server = self.server_book.borrow();
        let stats = self.secure().secure_stats();
        Tally {
            suspect_to_server: server.counted + server.uncounted,
            suspect_to_clients: self
                .books
                .iter()
                .map(|b| b.borrow().counted + b.borrow().uncounted)
                .sum(),
            raids: self.raids.len() as u64,
            instances: self.instances,
            timeouts: stats.timeouts,
            replaced: stats.replaced,
            refused: stats.refused(),
        }
    }
}

/// The players of a seed: one to four, the first joining at once, the others at once or late.
fn players(rng: &mut Rng, setup: &Setup) -> Vec<Player> {
    (0..1 + rng.below(4))
        .map(|i| {
            let late = i > 0 && rng.chance(40);
            let chaos = setup.chaos.as_millis() as u64;
            let at = Duration::from_millis(if late { rng.below(chaos * 6 / 10) } else { 0 });
            Player {
                id: 1_000 + i,
                link: chaos_link(rng).unwrap_or_default(),
                now: None,
                back_at: Some(at),
                used: None,
                last: None,
                frozen: None,
            }
        })
        .collect()
}

/// An item of `items` at random.
fn pick<T>(rng: &mut Rng, mut items: Vec<T>) -> Option<T> {
    if items.is_empty() {
        return None;
    }
    let i = rng.below(items.len() as u64) as usize;
    Some(items.swap_remove(i))
}

/// A packet `book` recorded (to `peer`, if given): one of the first ones now and then, else a
/// recent one.
fn recorded(rng: &mut Rng, book: &Book, peer: Option<PeerId>) -> Option<Packet> {
    let b = book.borrow();
    let pool: Vec<&Packet> = match rng.chance(30) {
        true => b.early.iter().collect(),
        false => b.recent.iter().collect(),
    };
    let pool = pool
        .into_iter()
        .filter(|p| peer.map_or(true, |peer| p.0 == peer))
        .collect();
    pick(rng, pool).cloned()
}

/// `data` cut short or with one to three bits flipped; `None` if that changed nothing.
fn spoiled(rng: &mut Rng, data: &[u8], how: Spoil) -> Option<Vec<u8>> {
    if data.is_empty() {
        return None;
    }
    let bad = match how {
        Spoil::Truncate => data[..rng.below(data.len() as u64) as usize].to_vec(),
        Spoil::Flip => {
            let mut bad = data.to_vec();
            for _ in 0..1 + rng.below(3) {
                let bit = rng.below(bad.len() as u64 * 8) as usize;
                bad[bit / 8] ^= 1 << (bit % 8);
            }
            bad
        }
    };
    (bad != data).then_some(bad)
}

/// What the seeds exercised, summed.
#[derive(Debug, Default)]
struct Tally {
    suspect_to_server: u64,
    suspect_to_clients: u64,
    raids: u64,
    instances: u64,
    timeouts: u64,
    replaced: u64,
    refused: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.suspect_to_server += other.suspect_to_server;
        self.suspect_to_clients += other.suspect_to_clients;
        self.raids += other.raids;
        self.instances += other.instances;
        self.timeouts += other.timeouts;
        self.replaced += other.replaced;
        self.refused += other.refused;
    }
}

fn run(seed: u64) -> Tally {
    let mut game = Game::new(seed);
    game.populate();
    while game.now < game.setup.chaos {
        game.move_bodies();
        game.upset(false);
        game.frame();
        game.check_frame();
    }
    for _ in 0..SETTLE_FRAMES {
        if game.settled() {
            break;
        }
        game.upset(true);
        game.frame();
        game.check_frame();
    }
    game.check_converged();
    game.check_counted();
    game.tally()
}

#[test]
fn secure_sessions_survive_chaos_and_attacks() {
    let mut total = Tally::default();
    for seed in chaos_seeds(0..32) {
        eprintln!("seed {seed}");
        total.add(&run(seed));
    }
    eprintln!("{total:?}");
}
