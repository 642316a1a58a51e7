#![allow(clippy::unwrap_used)]
//! The runtime over a storage of the game's own: an arena of generational handles with one
//! `Vec<Option<T>>` per type, no tree, no names, no paths. The same server and clients as over
//! the built-in scene, through [`Store`] alone: spawns ([`Multiplayer::replicate`], the client's
//! store making each node from its type), despawns (through the runtime and behind its back),
//! RPCs both ways, interpolation, prediction with rollback; 32 clients behind 30 % loss
//! converge exactly.

use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mf_net::prediction::{Simulation, Step};
use mf_net::prelude::*;
use mf_net::replication::{MultiplayerEvent, NetId};
use mf_net::store::{Lend, Link, Rows, Store};
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net_tests::harness::{messages, Dyn};

/// One tick's input: which way to thrust.
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Thrust {
    dx: i8,
    dz: i8,
}

/// A player's ship: its position is predicted by its owner and interpolated by everyone else.
#[derive(Replicated, Debug, Default, Clone)]
struct Ship {
    #[replicated(predict, interpolate)]
    x: f32,
    #[replicated(predict, interpolate)]
    z: f32,
    #[replicated]
    color: u8,
    /// Local: the damage `flash` showed here.
    flashes: i32,
}

#[rpcs]
impl Ship {
    /// The owner paints its ship (client → server).
    #[rpc(authority)]
    fn paint(&mut self, color: u8) {
        self.color = color;
    }

    /// The server shows a hit on every client.
    #[rpc(server)]
    fn flash(&mut self, damage: i32) {
        self.flashes += damage;
    }
}

/// A rock: spawned, moved and despawned by the server, interpolated by clients.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Rock {
    #[replicated(interpolate)]
    x: f32,
    #[replicated]
    size: u8,
}

const SPEED: f32 = 0.25;
const CLIENTS: usize = 32;
const ROCKS: usize = 12;

/// A game's own storage: a handle is a slot and its generation; each type keeps its values in
/// a `Vec<Option<T>>` indexed by slot.
struct Arena {
    generations: Vec<u32>,
    kinds: Vec<Option<TypeId>>,
    free: Vec<u32>,
    ships: Vec<Option<Ship>>,
    rocks: Vec<Option<Rock>>,
    removals: u64,
    /// A node the arena lists in every group after the root (for the group checks).
    grouped: Option<(NodeId, Link<u32>)>,
}

/// Unique removal stamps across every arena of the process (what [`Store::removals`] asks).
static REMOVALS: AtomicU64 = AtomicU64::new(1);

/// A type the arena stores: its column, split from the generations that check handles.
trait Kind: Replicated + Default {
    fn split(arena: &mut Arena) -> (&[u32], &mut Vec<Option<Self>>);
    fn column(arena: &Arena) -> &[Option<Self>];
}

impl Kind for Ship {
    fn split(arena: &mut Arena) -> (&[u32], &mut Vec<Option<Self>>) {
        (&arena.generations, &mut arena.ships)
    }
    fn column(arena: &Arena) -> &[Option<Self>] {
        &arena.ships
    }
}

impl Kind for Rock {
    fn split(arena: &mut Arena) -> (&[u32], &mut Vec<Option<Self>>) {
        (&arena.generations, &mut arena.rocks)
    }
    fn column(arena: &Arena) -> &[Option<Self>] {
        &arena.rocks
    }
}

impl Arena {
    fn new() -> Self {
        Self {
            generations: Vec::new(),
            kinds: Vec::new(),
            free: Vec::new(),
            ships: Vec::new(),
            rocks: Vec::new(),
            removals: REMOVALS.fetch_add(1, Ordering::Relaxed),
            grouped: None,
        }
    }

    fn insert<T: Kind>(&mut self, value: T) -> NodeId {
        let index = self.free.pop().unwrap_or_else(|| {
            self.generations.push(0);
            self.kinds.push(None);
            u32::try_from(self.generations.len() - 1).unwrap()
        });
        let i = index as usize;
        self.kinds[i] = Some(TypeId::of::<T>());
        let (_, column) = T::split(self);
        if column.len() <= i {
            column.resize_with(i + 1, || None);
        }
        column[i] = Some(value);
        NodeId::new(index, self.generations[i])
    }

    fn slot(&self, node: NodeId) -> Option<usize> {
        let i = node.index() as usize;
        let live = self.generations.get(i) == Some(&node.generation()) && self.kinds[i].is_some();
        live.then_some(i)
    }

    fn get<T: Kind>(&self, node: NodeId) -> Option<&T> {
        T::column(self).get(self.slot(node)?)?.as_ref()
    }

    fn get_mut<T: Kind>(&mut self, node: NodeId) -> Option<&mut T> {
        let i = self.slot(node)?;
        T::split(self).1.get_mut(i)?.as_mut()
    }

    fn remove(&mut self, node: NodeId) -> bool {
        let Some(i) = self.slot(node) else {
            return false;
        };
        if let Some(ship) = self.ships.get_mut(i) {
            *ship = None;
        }
        if let Some(rock) = self.rocks.get_mut(i) {
            *rock = None;
        }
        self.kinds[i] = None;
        self.generations[i] += 1;
        self.free.push(u32::try_from(i).unwrap());
        self.removals = REMOVALS.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn iter<T: Kind>(&self) -> impl Iterator<Item = (NodeId, &T)> + '_ {
        (0u32..).zip(T::column(self)).filter_map(|(i, value)| {
            let node = NodeId::new(i, self.generations[i as usize]);
            Some((node, value.as_ref()?))
        })
    }
}

/// One type's column, lent to the runtime.
struct Lent<'a, T> {
    generations: &'a [u32],
    values: &'a mut Vec<Option<T>>,
}

impl<T> Rows<T> for Lent<'_, T> {
    fn get(&self, node: NodeId) -> Option<&T> {
        let i = node.index() as usize;
        (self.generations.get(i) == Some(&node.generation())).then_some(())?;
        self.values.get(i)?.as_ref()
    }
    fn get_mut(&mut self, node: NodeId) -> Option<&mut T> {
        let i = node.index() as usize;
        (self.generations.get(i) == Some(&node.generation())).then_some(())?;
        self.values.get_mut(i)?.as_mut()
    }
}

fn lend_kind<T: Kind>(store: &mut dyn Store, f: &mut dyn FnMut(&mut dyn Rows<T>)) {
    if let Some(arena) = (store as &mut dyn Any).downcast_mut::<Arena>() {
        let (generations, values) = T::split(arena);
        f(&mut Lent {
            generations,
            values,
        });
    }
}

impl Store for Arena {
    fn value_type(&self, node: NodeId) -> Option<TypeId> {
        self.kinds[self.slot(node)?]
    }

    fn lender(&self, ty: TypeId) -> Option<&'static dyn Any> {
        if ty == TypeId::of::<Ship>() {
            Some(const { &(lend_kind::<Ship> as Lend<Ship>) })
        } else if ty == TypeId::of::<Rock>() {
            Some(const { &(lend_kind::<Rock> as Lend<Rock>) })
        } else {
            None
        }
    }

    fn alive(&self, node: NodeId) -> bool {
        self.slot(node).is_some()
    }

    fn removals(&self) -> u64 {
        self.removals
    }

    fn value_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
        let ty = self.value_type(node)?;
        if ty == TypeId::of::<Ship>() {
            Some(self.get_mut::<Ship>(node)?)
        } else {
            Some(self.get_mut::<Rock>(node)?)
        }
    }

    fn despawn(&mut self, node: NodeId) -> bool {
        self.remove(node)
    }

    fn group(&self, _root: NodeId, group: &mut Vec<(NodeId, Link<u32>)>) {
        group.extend(self.grouped);
    }

    fn spawn(&mut self, ty: TypeId) -> Option<NodeId> {
        if ty == TypeId::of::<Ship>() {
            Some(self.insert(Ship::default()))
        } else if ty == TypeId::of::<Rock>() {
            Some(self.insert(Rock::default()))
        } else {
            None
        }
    }
}

type ArenaMp = Multiplayer<Dyn, Arena>;

/// The game's step, the same on both ends: every simulated ship thrusts by its input.
fn thrust(step: &mut Step<'_, Thrust>) {
    step.each_simulated::<Ship>(|_, ship, input| {
        let input = input.copied().unwrap_or_default();
        ship.x += f32::from(input.dx) * SPEED;
        ship.z += f32::from(input.dz) * SPEED;
    });
}

/// What client `i` presses in frame `frame` (0 once `frame` reaches `until`).
fn pressed(i: usize, frame: usize, until: usize) -> Thrust {
    if frame >= until {
        return Thrust::default();
    }
    let phase = (frame / 25 + i) % 4;
    let dir = [(1, 0), (0, 1), (-1, 0), (1, 1)][phase];
    Thrust {
        dx: dir.0,
        dz: dir.1,
    }
}

/// A server and its clients over lossy links, each with its own arena and simulation.
struct Game {
    server: ArenaMp,
    clients: Vec<ArenaMp>,
    server_sim: Simulation<Thrust>,
    client_sims: Vec<Simulation<Thrust>>,
    rocks: Vec<NodeId>,
    frame: usize,
    _net: LoopbackNetwork,
}

const DT: Duration = Duration::from_nanos(33_333_333);

impl Game {
    fn new(loss: f32) -> Self {
        let conditions = NetworkConditions::perfect().with_loss(loss);
        let net = LoopbackNetwork::new();
        let listen = net.listen("game", 64).unwrap();
        let mut server = ArenaMp::with_store(Arena::new(), MultiplayerConfig::default());
        let transport: Dyn = Box::new(SimulatedTransport::new(listen, conditions, 1));
        server.start_server(transport, messages()).unwrap();
        let mut clients = Vec::new();
        for i in 0..CLIENTS {
            let mut client = ArenaMp::with_store(Arena::new(), MultiplayerConfig::default());
            let open = |data| -> Dyn {
                let inner = net.connect("game", data);
                Box::new(SimulatedTransport::new(inner, conditions, 100 + i as u64))
            };
            client.start_client(open, messages()).unwrap();
            clients.push(client);
        }
        let mut game = Self {
            server,
            clients,
            server_sim: Simulation::new(),
            client_sims: (0..CLIENTS).map(|_| Simulation::new()).collect(),
            rocks: Vec::new(),
            frame: 0,
            _net: net,
        };
        for _ in 0..60 {
            game.step(0);
        }
        assert_eq!(game.server.peers().len(), CLIENTS, "every client joined");
        game
    }

    /// One frame of every peer, the clients pressing what [`pressed`] says until `until`.
    fn step(&mut self, until: usize) {
        let frame = self.frame;
        self.server.begin_frame(DT);
        self.server_sim
            .run(&mut self.server, |_| Thrust::default(), thrust);
        self.server.end_frame();
        for (i, (client, sim)) in self
            .clients
            .iter_mut()
            .zip(&mut self.client_sims)
            .enumerate()
        {
            client.begin_frame(DT);
            sim.run(client, |_| pressed(i, frame, until), thrust);
            client.end_frame();
        }
        self.frame += 1;
    }

    fn spawn_rock(&mut self, x: f32) {
        let size = u8::try_from(self.rocks.len() % 200).unwrap();
        let node = self.server.store_mut().insert(Rock { x, size });
        self.server.replicate(node, PeerId::SERVER).unwrap();
        self.rocks.push(node);
    }

    /// The ship `client` owns, on `mp`.
    fn ship_of(mp: &ArenaMp, owner: PeerId) -> NodeId {
        let mut owned = mp.store().iter::<Ship>().map(|(n, _)| n);
        owned.find(|&n| mp.authority(n) == owner).unwrap()
    }
}

/// Every networked node of `mp` by net id, with what it replicates.
fn networked(mp: &ArenaMp) -> Vec<(NetId, String)> {
    let store = mp.store();
    let ships = store
        .iter::<Ship>()
        .map(|(n, s)| (n, format!("ship {} {} {}", s.x, s.z, s.color)));
    let rocks = store
        .iter::<Rock>()
        .map(|(n, r)| (n, format!("rock {} {}", r.x, r.size)));
    let mut all: Vec<(NetId, String)> = ships
        .chain(rocks)
        .filter_map(|(node, text)| Some((mp.net_id(node)?, text)))
        .collect();
    all.sort_by_key(|(id, _)| *id);
    all
}

#[test]
fn a_storage_of_the_games_own_runs_spawns_despawns_rpcs_interpolation_and_prediction_at_30_percent_loss(
) {
    let mut game = Game::new(0.3);
    let peers: Vec<PeerId> = game.clients.iter().map(|c| c.local_peer_id()).collect();
    for (i, &peer) in peers.iter().enumerate() {
        let node = game.server.store_mut().insert(Ship {
            x: i as f32 * 4.0,
            ..Ship::default()
        });
        game.server.replicate(node, peer).unwrap();
    }
    for i in 0..ROCKS {
        game.spawn_rock(i as f32 * 10.0);
    }
    for _ in 0..90 {
        game.step(0);
    }
    for client in &game.clients {
        assert_eq!(client.store().iter::<Ship>().count(), CLIENTS);
        assert_eq!(client.store().iter::<Rock>().count(), ROCKS);
    }

    // Client 0 presses: its ship moves in the frame of the key press.
    let mine = Game::ship_of(&game.clients[0], peers[0]);
    let before = game.clients[0].store().get::<Ship>(mine).unwrap().x;
    let (start, until) = (game.frame, game.frame + 300);
    game.step(until);
    let moved = game.clients[0].store().get::<Ship>(mine).unwrap();
    assert!(
        moved.x != before || moved.z != 0.0,
        "the owner predicts its ship in the frame of the key press"
    );

    // Motion, rocks drifting, despawned and spawned, and RPCs both ways.
    let server_ship_0 = Game::ship_of(&game.server, peers[0]);
    let watcher_ship_0 = Game::ship_of(&game.clients[1], peers[0]);
    let mut lags = Vec::new();
    let mut flashed = 0;
    while game.frame < until {
        let f = game.frame - start;
        let rocks = game.rocks.clone();
        for &rock in &rocks {
            if let Some(r) = game.server.store_mut().get_mut::<Rock>(rock) {
                r.x += 0.5;
            }
        }
        if f % 40 == 20 {
            // A rock goes: through the runtime, or behind its back, in turn.
            let gone = game.rocks.remove(0);
            match f % 80 == 20 {
                true => assert!(game.server.despawn(gone)),
                false => assert!(game.server.store_mut().remove(gone)),
            }
            game.spawn_rock(f as f32);
        }
        if f == 100 {
            for (i, client) in game.clients.iter_mut().enumerate() {
                let ship = Game::ship_of(client, peers[i]);
                let color = u8::try_from(i + 1).unwrap();
                client.rpc(NetRef::<Ship>::new(ship)).paint(color).unwrap();
            }
        }
        if f == 150 || f == 160 {
            for &peer in &peers {
                let ship = Game::ship_of(&game.server, peer);
                game.server.rpc(NetRef::<Ship>::new(ship)).flash(3).unwrap();
            }
            flashed += 3;
        }
        game.step(until);
        if f > 60 {
            let server_x = game.server.store().get::<Ship>(server_ship_0).unwrap();
            let seen = game.clients[1].store().get::<Ship>(watcher_ship_0).unwrap();
            lags.push((server_x.x - seen.x).abs() + (server_x.z - seen.z).abs());
        }
    }
    // Interpolation: another client shows ship 0 behind the server's present (its delay, at
    // least two ticks of motion), not at the newest snapshot.
    lags.sort_by(f32::total_cmp);
    let median = lags[lags.len() / 2];
    assert!(median >= 2.0 * SPEED, "median lag {median}");

    // Released; rocks still: everything arrives.
    for _ in 0..300 {
        game.step(0);
    }
    let server = networked(&game.server);
    assert_eq!(server.len(), CLIENTS + ROCKS);
    for (i, client) in game.clients.iter().enumerate() {
        assert_eq!(networked(client), server, "client {i} converged");
        let store = client.store();
        let held = store.iter::<Ship>().count() + store.iter::<Rock>().count();
        assert_eq!(held, server.len(), "client {i} holds only networked nodes");
        for (_, ship) in client.store().iter::<Ship>() {
            assert_eq!(ship.flashes, flashed, "client {i} ran every flash");
        }
        assert_eq!(client.stats().despawns, game.server.stats().despawns);
        let prediction = client.stats().prediction;
        assert!(prediction.ticks_predicted > 0 && prediction.confirmations > 0);
    }
    assert_eq!(
        game.server.stats().despawns,
        7,
        "one rock in 40 frames of 300"
    );
    for (i, &peer) in peers.iter().enumerate() {
        let ship = Game::ship_of(&game.server, peer);
        let color = game.server.store().get::<Ship>(ship).unwrap().color;
        assert_eq!(
            usize::from(color),
            i + 1,
            "client {i}'s paint reached the server"
        );
    }
    let events: Vec<MultiplayerEvent> =
        std::iter::from_fn(|| game.clients[5].next_event()).collect();
    let despawned = events
        .iter()
        .filter(|e| matches!(e, MultiplayerEvent::NodeDespawned { .. }))
        .count();
    assert_eq!(despawned, 7);
}

#[test]
fn scene_calls_over_another_storage_and_replicate_over_the_scene_say_what_to_use_instead() {
    let mut mp = ArenaMp::with_store(Arena::new(), MultiplayerConfig::default());
    let root = NodeId::new(0, 0);
    assert!(matches!(
        mp.bind(root),
        Err(mf_net::replication::MultiplayerError::NeedsScene)
    ));
    assert!(matches!(
        mp.spawn(SceneIndex::new(0), root, PeerId::SERVER),
        Err(mf_net::replication::MultiplayerError::Scene(_)
            | mf_net::replication::MultiplayerError::NeedsScene)
    ));
    let node = mp.store_mut().insert(Rock::default());
    mp.replicate(node, PeerId::SERVER).unwrap();
    assert!(matches!(
        mp.replicate(node, PeerId::SERVER),
        Err(mf_net::replication::MultiplayerError::AlreadyNetworked(_))
    ));
    // And the other way round: the scene does not make nodes from a type alone.
    let mut in_scene: Multiplayer<Dyn> =
        Multiplayer::new(SceneLibrary::new(), MultiplayerConfig::default());
    let root = in_scene.scene().root();
    let rock = in_scene.scene_mut().insert(root, "rock", Rock::default());
    assert!(matches!(
        in_scene.replicate(rock.unwrap().node(), PeerId::SERVER),
        Err(mf_net::replication::MultiplayerError::ReplicateInScene)
    ));
    let gone = mp.store_mut().insert(Rock::default());
    mp.store_mut().remove(gone);
    assert!(matches!(
        mp.replicate(gone, PeerId::SERVER),
        Err(mf_net::replication::MultiplayerError::NoValue(_))
    ));
    // A group clients could not build: a link to itself, the root twice, a node without a
    // value, a node networked already. A good one goes, with consecutive ids.
    let (a, b) = (
        mp.store_mut().insert(Rock::default()),
        mp.store_mut().insert(Rock::default()),
    );
    for grouped in [
        (b, Link::Beside(1)),
        (a, Link::Beside(0)),
        (gone, Link::ChildOf(0)),
        (node, Link::Beside(0)),
    ] {
        mp.store_mut().grouped = Some(grouped);
        assert!(
            matches!(
                mp.replicate(a, PeerId::SERVER),
                Err(mf_net::replication::MultiplayerError::InvalidGroup(_))
            ),
            "{grouped:?}"
        );
    }
    mp.store_mut().grouped = Some((b, Link::ChildOf(0)));
    let first = mp.replicate(a, PeerId::SERVER).unwrap();
    assert_eq!(mp.net_id(b).map(|id| id.get()), Some(first.get() + 1));
}

#[test]
fn a_client_whose_storage_makes_no_such_node_fails_the_spawn_and_stays_connected() {
    let net = LoopbackNetwork::new();
    let listen: Dyn = Box::new(net.listen("game", 4).unwrap());
    let mut server = ArenaMp::with_store(Arena::new(), MultiplayerConfig::default());
    server.start_server(listen, messages()).unwrap();
    // The built-in scene makes nodes from scenes, spawners and binds, not from a type alone.
    let mut client: Multiplayer<Dyn> =
        Multiplayer::new(SceneLibrary::new(), MultiplayerConfig::default());
    let open = |data| -> Dyn { Box::new(net.connect("game", data)) };
    client.start_client(open, messages()).unwrap();
    let frame = |server: &mut ArenaMp, client: &mut Multiplayer<Dyn>| {
        server.begin_frame(DT);
        server.end_frame();
        client.begin_frame(DT);
        client.end_frame();
    };
    for _ in 0..4 {
        frame(&mut server, &mut client);
    }
    let rock = server.store_mut().insert(Rock { x: 1.0, size: 2 });
    server.replicate(rock, PeerId::SERVER).unwrap();
    for _ in 0..4 {
        frame(&mut server, &mut client);
    }
    let events: Vec<MultiplayerEvent> = std::iter::from_fn(|| client.next_event()).collect();
    assert!(events
        .iter()
        .any(|e| matches!(e, MultiplayerEvent::SpawnFailed { .. })));
    assert_eq!(client.stats().spawn_failures, 1);
    assert!(client.is_running() && server.peers().len() == 1);
    assert_eq!(client.scene().len(), 1, "nothing but the root");
}

#[test]
fn lag_compensation_records_from_a_storage_of_the_games_own() {
    use mf_net::prediction::LagHistory;
    let mut mp = ArenaMp::with_store(Arena::new(), MultiplayerConfig::default());
    let ship = mp.store_mut().insert(Ship::default());
    mp.replicate(ship, PeerId::SERVER).unwrap();
    let mut history = LagHistory::<Ship, f32>::new(32, |ship| ship.x);
    let mut recorded = Vec::new();
    for _ in 0..20 {
        mp.begin_frame(DT);
        mp.store_mut().get_mut::<Ship>(ship).unwrap().x += 1.0;
        mp.end_frame();
        history.record_from(mp.tick(), mp.store().iter::<Ship>());
        recorded.push((mp.tick(), mp.store().get::<Ship>(ship).unwrap().x));
    }
    for &(tick, x) in &recorded {
        assert_eq!(history.at(ship, f64::from(tick)), Some(x));
    }
    let (t0, x0) = recorded[10];
    let (_, x1) = recorded[11];
    assert_eq!(history.at(ship, f64::from(t0) + 0.5), Some((x0 + x1) / 2.0));
}
