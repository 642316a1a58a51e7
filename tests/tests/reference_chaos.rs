#![allow(clippy::unwrap_used)]
//! Seeded chaos for node references in replicated members: nodes spawned naming each other
//! (chains, the two nodes of one spawn naming each other, references to nodes spawned in the
//! same frame and in later frames, self-references), members changed to name other nodes, a
//! node the server never networked, a despawned one or nothing, targets despawned while their
//! referrers stay, relevance set per client or by a grid so that a referrer is relevant to a
//! client while its target is not (and later is), nested groups, clients joining late,
//! leaving and stalling, frames of varying length, tick rates, a byte budget, both encodings,
//! over a bad network.
//!
//! Once the changes stop, every client holds exactly what is relevant to it, with the server's
//! plain member values, and every reference member (`NetRef`, `Option<NetRef>`, `Vec<NetRef>`, to the referrer's own type and
//! to another) of every referrer it holds reads, element by element, as the server's does
//! (the book's References chapter):
//!
//! - a reference the server leaves unresolved, or that names a node the server never
//!   networked, is unresolved (it travels as "none"); `None` is `None`;
//! - a reference naming a node the client holds names the client's own copy of it (whether it
//!   arrived before the referrer, with it, after it, or left the client's interest and came
//!   back);
//! - a reference naming a networked node the client does not hold (not relevant to it) holds
//!   its member back: the member keeps an earlier value, so every reference in it names
//!   nothing, or a node that member named earlier on the server, as the client's own
//!   (possibly since removed) copy, never another peer's handle;
//! - a reference naming a node the server despawned names no node the client has (it is
//!   unresolved, or names the client's removed copy), unless another reference in the member
//!   holds it back, and then is as above: a member held back for a node the client never had
//!   is let go when the node is despawned.
//!
//! `CHAOS_SEEDS=n` (from `CHAOS_FROM`, default 0) runs `n` seeds instead of the default ones:
//! `CHAOS_SEEDS=2000 cargo test --release -p mf-net-tests --test reference_chaos`.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::interest::GridInterest;
use mf_net::replication::{NetId, SnapshotEncoding};
use mf_net::scene::SceneError;
use mf_net_tests::alloc_counter::{is_counting, measure};
use mf_net_tests::harness::{networked, state_bytes, Mp, World};
use mf_net_tests::rng::{chaos_encoding, chaos_frame, chaos_link, chaos_roster, chaos_seeds, Rng};

/// A node naming others, with a reference member of every form.
#[derive(Replicated, Debug, Default, Clone)]
struct Link {
    /// Its place, for the grid.
    #[replicated]
    x: f32,
    /// Its place, for the grid.
    #[replicated]
    z: f32,
    /// A plain member, changed now and then.
    #[replicated]
    hp: i32,
    /// A node of its own type.
    #[replicated]
    target: NetRef<Link>,
    /// Maybe a node: `None` is apart from unresolved.
    #[replicated]
    maybe: Option<NetRef<Link>>,
    /// Several nodes: one held back holds the whole member back.
    #[replicated]
    chain: Vec<NetRef<Link>>,
    /// A node of another type.
    #[replicated]
    rock: NetRef<Rock>,
}

/// Something a [`Link`] names that names nothing.
#[derive(Replicated, Debug, Default, Clone)]
struct Rock {
    /// A plain member (never changed).
    #[replicated]
    mass: i32,
}

/// Scene 0: one [`Link`].
const LINK: SceneIndex = SceneIndex::new(0);
/// Scene 1: a [`Link`] with a child `b` ([`Link`]): one group.
const PAIR: SceneIndex = SceneIndex::new(1);
/// Scene 2: one [`Rock`].
const ROCK: SceneIndex = SceneIndex::new(2);

/// The spawnable scenes every peer registers.
fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("link", |scene, root| scene.set_value(root, Link::default()))
        .unwrap();
    scenes
        .register("pair", |scene, root| {
            scene.set_value(root, Link::default())?;
            scene.insert(root, "b", Link::default())?;
            Ok::<(), SceneError>(())
        })
        .unwrap();
    scenes
        .register("rock", |scene, root| scene.set_value(root, Rock::default()))
        .unwrap();
    scenes
}

/// One of `nodes` at random.
fn pick(rng: &mut Rng, nodes: &[NodeId]) -> Option<NodeId> {
    let n = nodes.len() as u64;
    (n > 0).then(|| nodes[rng.below(n) as usize])
}

/// A [`Link`]'s position, for the grid.
fn position(scene: &Scene, node: NodeId) -> Option<[f32; 3]> {
    let link = scene.get(scene.net_ref::<Link>(node)?)?;
    Some([link.x, 0.0, link.z])
}

/// A grid of 50-unit cells with a random radius, hysteresis and grace.
fn grid(rng: &mut Rng) -> GridInterest {
    GridInterest {
        cell_size: 50.0,
        radius_cells: rng.below(3) as u32,
        hysteresis_cells: rng.below(2) as u32,
        grace: Duration::from_millis(rng.below(300)),
        position,
        tiers: &[],
    }
}

/// The number of reference members of a [`Link`].
const MEMBERS: usize = 4;

/// One reference member as plain nodes: whether it is `Some` (always, but for `maybe`), and
/// the node each reference names (`None`: unresolved).
#[derive(Debug, Clone, PartialEq)]
struct View {
    some: bool,
    refs: Vec<Option<NodeId>>,
}

/// The node `r` names, `None` if it is unresolved.
fn node_of<T>(r: NetRef<T>) -> Option<NodeId> {
    (!r.is_unresolved()).then(|| r.node())
}

/// The reference members of `link`, in declaration order.
fn views(link: &Link) -> [View; MEMBERS] {
    let one = |r| View {
        some: true,
        refs: vec![r],
    };
    [
        one(node_of(link.target)),
        View {
            some: link.maybe.is_some(),
            refs: link.maybe.map(node_of).into_iter().collect(),
        },
        View {
            some: true,
            refs: link.chain.iter().map(|&r| node_of(r)).collect(),
        },
        one(node_of(link.rock)),
    ]
}

/// The link at `node` on `mp`, if it holds one.
fn link(mp: &Mp, node: NodeId) -> Option<&Link> {
    mp.scene().get(mp.scene().net_ref::<Link>(node)?)
}

/// One seed's world: chaos for 60 to 360 frames, then [`settle`].
fn run(seed: u64) {
    let mut rng = Rng::seeded(seed);
    let (mut world, gridded) = world(seed, &mut rng);
    let mut chaos = Chaos::new(rng, &mut world, gridded);
    for _ in 0..60 + chaos.rng.below(300) {
        chaos.step(&mut world);
    }
    if let Err(why) = settle(&mut world, &mut chaos.log) {
        panic!("seed {seed}: {why}");
    }
}

/// A world of seed `seed`: an encoding, a tick rate, maybe a byte budget, a link, one to three
/// clients, and maybe a grid; returns it and whether it has the grid.
fn world(seed: u64, rng: &mut Rng) -> (World, bool) {
    let config = MultiplayerConfig {
        snapshot_encoding: chaos_encoding(rng),
        tick_rate: [30, 60, 128][rng.below(3) as usize],
        max_snapshot_bytes: match rng.chance(25) {
            true => 200 + rng.below(800) as usize,
            false => 0,
        },
        ..MultiplayerConfig::default()
    };
    let link = chaos_link(rng);
    let clients = 1 + rng.below(3) as usize;
    let mut world = World::with(clients, config, link, seed, library);
    let gridded = rng.chance(30);
    if gridded {
        let g = grid(rng);
        let every = 1 + rng.below(3) as u32;
        world.server.set_interest_policy(g, every).unwrap();
    }
    (world, gridded)
}

/// Once the changes stop, frames until every client reads as the server (see
/// [`settled`]), for at most 600 frames; the last difference otherwise.
fn settle(world: &mut World, log: &mut Log) -> Result<(), String> {
    let mut verdict = Ok(());
    for _ in 0..600 {
        world.frame();
        log.record(world);
        verdict = (0..world.clients.len()).try_for_each(|c| settled(world, log, c));
        if verdict.is_ok() {
            break;
        }
    }
    verdict
}

/// What the test saw: every net id the server handed out (its node), every node each client
/// had networked (its net id), and every node each referrer's members named on the server.
#[derive(Default)]
struct Log {
    server_nodes: HashMap<NetId, NodeId>,
    client_ids: Vec<HashMap<NodeId, NetId>>,
    named: HashMap<(NodeId, usize), HashSet<NodeId>>,
}

impl Log {
    /// Notes what the members of the server's link at `node` name now.
    fn note(&mut self, world: &World, node: NodeId) {
        let Some(l) = link(&world.server, node) else {
            return;
        };
        for (m, view) in views(l).into_iter().enumerate() {
            let named = self.named.entry((node, m)).or_default();
            named.extend(view.refs.into_iter().flatten());
        }
    }

    /// Notes the server's net ids, what its links name and the clients' net ids now.
    fn record(&mut self, world: &World) {
        for (id, node) in networked(&world.server) {
            self.server_nodes.insert(id, node);
        }
        let links: Vec<NodeId> = world
            .server
            .scene()
            .iter::<Link>()
            .map(|(h, _)| h.node())
            .collect();
        for node in links {
            self.note(world, node);
        }
        self.client_ids
            .resize_with(world.clients.len(), HashMap::new);
        for (c, client) in world.clients.iter().enumerate() {
            for (id, node) in networked(client) {
                self.client_ids[c].insert(node, id);
            }
        }
    }
}

/// One world's chaos: its generator, the live links and rocks it spawned, the nodes it
/// despawned, the server's plain (never networked) link, the frames each client has yet to
/// stall, whether a grid decides relevance, and what the test saw.
struct Chaos {
    rng: Rng,
    links: Vec<NodeId>,
    rocks: Vec<NodeId>,
    dead: Vec<NodeId>,
    local: NodeId,
    stalls: Vec<u64>,
    gridded: bool,
    log: Log,
}

impl Chaos {
    /// The chaos of a new world, with the server's plain link added.
    fn new(rng: Rng, world: &mut World, gridded: bool) -> Self {
        let root = world.root();
        let local = world
            .server
            .scene_mut()
            .insert(root, "local", Link::default());
        Self {
            rng,
            links: Vec::new(),
            rocks: Vec::new(),
            dead: Vec::new(),
            local: local.unwrap().node(),
            stalls: vec![0; world.clients.len()],
            gridded,
            log: Log::default(),
        }
    }

    /// One frame of chaos: spawns, members named anew, despawns, relevance and clients
    /// changed, then the frame.
    fn step(&mut self, world: &mut World) {
        self.spawn(world);
        self.retarget(world);
        self.despawn(world);
        self.reassign(world);
        self.log.record(world);
        chaos_frame(world, &mut self.stalls, &mut self.rng);
        self.log.record(world);
    }

    /// A client's peer at random.
    fn any_client(&mut self, world: &World) -> PeerId {
        let c = self.rng.below(world.clients.len() as u64) as usize;
        world.clients[c].local_peer_id()
    }

    /// Up to three spawns (at the root, or under a live link: a nested group); the links
    /// spawned in one frame form a chain, each naming the one spawned before it, the first
    /// naming itself now and then.
    fn spawn(&mut self, world: &mut World) {
        let root = world.root();
        let mut previous: Option<NodeId> = None;
        for _ in 0..self.rng.below(4) {
            let parent = match self.rng.chance(80) {
                true => root,
                false => pick(&mut self.rng, &self.links).unwrap_or(root),
            };
            let scene = [LINK, LINK, PAIR, ROCK][self.rng.below(4) as usize];
            let Ok(node) = world.server.spawn(scene, parent, PeerId::SERVER) else {
                continue;
            };
            if scene == ROCK {
                self.rocks.push(node);
                continue;
            }
            self.links.push(node);
            self.log.note(world, node);
            if scene == PAIR {
                // The two name each other, in the frame they are spawned.
                let b = world.server.scene().child(node, "b").unwrap();
                edit(world, node).chain = vec![NetRef::new(b)];
                edit(world, b).target = NetRef::new(node);
                self.links.push(b);
                self.log.note(world, b);
            }
            let target = match previous {
                Some(p) => Some(p),
                None => self.rng.chance(30).then_some(node),
            };
            if let Some(t) = target.filter(|_| self.rng.chance(70)) {
                edit(world, node).target = NetRef::new(t);
            }
            self.place(world, node);
            previous = Some(node);
        }
    }

    /// A new place for a link (on the grid, 0 to 5 cells from the origin on each axis).
    fn place(&mut self, world: &mut World, node: NodeId) {
        let (x, z) = (self.rng.below(300) as f32, self.rng.below(300) as f32);
        let l = edit(world, node);
        (l.x, l.z) = (x, z);
    }

    /// A node a member may name: a live link, a despawned one, the plain link, or nothing.
    fn any_target(&mut self) -> Option<NodeId> {
        match self.rng.below(10) {
            0 => None,
            1 | 2 => pick(&mut self.rng, &self.dead),
            3 => Some(self.local),
            _ => pick(&mut self.rng, &self.links),
        }
    }

    /// A share of the live links: a member named anew (or a plain member or place changed).
    fn retarget(&mut self, world: &mut World) {
        for i in 0..self.links.len() {
            if !self.rng.chance(15) {
                continue;
            }
            let node = self.links[i];
            let r = |t: Option<NodeId>| t.map_or_else(NetRef::unresolved, NetRef::new);
            match self.rng.below(6) {
                0 => edit(world, node).target = r(self.any_target()),
                1 => {
                    let t = self.any_target();
                    let none = self.rng.chance(30);
                    edit(world, node).maybe = (!none).then(|| r(t));
                }
                2 => {
                    let chain = (0..self.rng.below(4)).map(|_| r(self.any_target()));
                    edit(world, node).chain = chain.collect();
                }
                3 => {
                    let rock = match self.rng.below(4) {
                        0 => None,
                        1 => pick(&mut self.rng, &self.dead),
                        _ => pick(&mut self.rng, &self.rocks),
                    };
                    edit(world, node).rock = rock.map_or_else(NetRef::unresolved, NetRef::new);
                }
                4 => edit(world, node).hp += 1,
                _ => self.place(world, node),
            }
        }
    }

    /// Now and then a link or a rock despawned (with its subtree), its referrers left as they
    /// are.
    fn despawn(&mut self, world: &mut World) {
        if !self.rng.chance(8) {
            return;
        }
        let nodes = match self.rng.chance(75) {
            true => &self.links,
            false => &self.rocks,
        };
        if let Some(node) = pick(&mut self.rng, nodes) {
            world.server.despawn(node);
        }
        let scene = world.server.scene();
        for list in [&mut self.links, &mut self.rocks] {
            let (live, gone) = list.iter().partition(|&&n| scene.contains(n));
            *list = live;
            self.dead.extend(gone);
        }
    }

    /// Relevance set or cleared, a focus moved, a client joining, leaving or stalling (now and
    /// then each).
    fn reassign(&mut self, world: &mut World) {
        let nodes = [self.links.as_slice(), &self.rocks].concat();
        if let Some(node) = pick(&mut self.rng, &nodes).filter(|_| self.rng.chance(30)) {
            let peer = self.any_client(world);
            let _ = match self.rng.below(3) {
                0 => world.server.clear_relevant(node, peer),
                r => world.server.set_relevant(node, peer, r == 1),
            };
        }
        if let Some(node) = pick(&mut self.rng, &self.links).filter(|_| self.gridded) {
            if self.rng.chance(10) {
                let peer = self.any_client(world);
                let _ = world.server.set_focus(peer, Some(node));
            }
        }
        let left = chaos_roster(world, &mut self.stalls, &mut self.rng, (2, 60));
        if let Some(c) = left.filter(|&c| c < self.log.client_ids.len()) {
            self.log.client_ids.remove(c);
        }
    }
}

/// The server's link at `node`, to change.
fn edit(world: &mut World, node: NodeId) -> &mut Link {
    let scene = world.server.scene_mut();
    let handle = scene.net_ref::<Link>(node).unwrap();
    scene.get_mut(handle).unwrap()
}

/// Whether client `c` holds exactly the server's nodes relevant to it, with their states
/// (references aside), and every reference of
/// the links it holds reads as the server's (see the module documentation).
fn settled(world: &World, log: &Log, c: usize) -> Result<(), String> {
    let client = &world.clients[c];
    let peer = client.local_peer_id();
    let mut expected = 0;
    for (id, node) in networked(&world.server) {
        let copy = client.node(id);
        if !world.server.is_relevant(node, peer) {
            if copy.is_some() {
                return Err(format!("client {c} has {id}, not relevant to it"));
            }
            continue;
        }
        expected += 1;
        let copy = copy.ok_or_else(|| format!("client {c} lacks relevant {id}"))?;
        if plain_state(&world.server, node) != plain_state(client, copy) {
            return Err(format!("client {c}: state of {id}"));
        }
        references_agree(world, log, c, node, copy).map_err(|why| format!("{id}: {why}"))?;
    }
    match networked(client).len() == expected {
        true => Ok(()),
        false => Err(format!("client {c}: networked nodes")),
    }
}

/// A node's state but its references: a link's plain members, any other value's state bytes.
fn plain_state(mp: &Mp, node: NodeId) -> Option<Vec<u8>> {
    match link(mp, node) {
        Some(l) => Some([l.x.to_le_bytes(), l.z.to_le_bytes(), l.hp.to_le_bytes()].concat()),
        None => state_bytes(mp, node),
    }
}

/// What a client's copy of one reference should be, from the server's.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// Unresolved: the server names nothing, or a node it never networked.
    Unresolved,
    /// The client's copy of the node named.
    Copy(NodeId),
    /// A node the server despawned: nothing the client has.
    Gone,
    /// A networked node the client does not hold: the member is held back.
    Held,
}

/// What client `c`'s copy of a reference should be where the server's names `server_ref`.
fn want(world: &World, c: usize, server_ref: Option<NodeId>) -> Want {
    let server = &world.server;
    let Some(node) = server_ref else {
        return Want::Unresolved;
    };
    match server.net_id(node) {
        Some(id) => world.clients[c].node(id).map_or(Want::Held, Want::Copy),
        None if server.scene().contains(node) => Want::Unresolved,
        None => Want::Gone,
    }
}

/// Whether the references of the client's copy `copy` of the server's link `node` read as the
/// server's (see the module documentation).
fn references_agree(
    world: &World,
    log: &Log,
    c: usize,
    node: NodeId,
    copy: NodeId,
) -> Result<(), String> {
    let (Some(ours), Some(theirs)) = (link(&world.server, node), link(&world.clients[c], copy))
    else {
        return Ok(());
    };
    for (m, (ours, theirs)) in views(ours).into_iter().zip(views(theirs)).enumerate() {
        let wants: Vec<Want> = ours.refs.iter().map(|&r| want(world, c, r)).collect();
        let stale = wants.iter().any(|w| matches!(w, Want::Held));
        let exact = exact(world, c, &ours, &wants, &theirs);
        if exact.is_err() && stale {
            held_back(world, log, c, node, m, &theirs)
        } else {
            exact
        }
        .map_err(|why| format!("client {c}, member {m}: {why} (server {ours:?} {wants:?})"))?;
    }
    Ok(())
}

/// The client's member reads exactly as the server's: element by element, as `wants` says.
fn exact(
    world: &World,
    c: usize,
    ours: &View,
    wants: &[Want],
    theirs: &View,
) -> Result<(), String> {
    let client = &world.clients[c];
    let fits = |(want, got): (&Want, &Option<NodeId>)| match want {
        Want::Unresolved => got.is_none(),
        Want::Copy(node) => *got == Some(*node),
        Want::Gone => got.map_or(true, |n| client.net_id(n).is_none()),
        Want::Held => false,
    };
    let same = ours.some == theirs.some
        && ours.refs.len() == theirs.refs.len()
        && wants.iter().zip(&theirs.refs).all(fits);
    match same {
        true => Ok(()),
        false => Err(format!("client reads {theirs:?}")),
    }
}

/// The client's member, held back, names nothing, or nodes the server's member named at some
/// time, as the client's own copies: live ones networked, or removed ones (a copy removed
/// in the frame it came is not known to the test, and is let pass).
fn held_back(
    world: &World,
    log: &Log,
    c: usize,
    node: NodeId,
    m: usize,
    theirs: &View,
) -> Result<(), String> {
    let client = &world.clients[c];
    let named = log.named.get(&(node, m));
    for &r in theirs.refs.iter().flatten() {
        let id = client
            .net_id(r)
            .or_else(|| log.client_ids[c].get(&r).copied());
        let Some(id) = id else {
            if client.scene().contains(r) {
                return Err(format!("held back, names {r:?}, a node not networked"));
            }
            continue;
        };
        let on_server = log.server_nodes.get(&id);
        if !on_server.is_some_and(|n| named.is_some_and(|named| named.contains(n))) {
            return Err(format!("held back, names {id}, never named there"));
        }
    }
    Ok(())
}

/// Seeds that found a defect:
/// - 13, 15, 18: transcoding a bit-packed snapshot, the client read the value of each member
///   coded as bytes (to check its length) through its map of net ids: a reference to a node it
///   lacked, in any entry, marked a member held back, and the first reference member the
///   snapshot then applied kept its old value although it named a node the client has (13: a
///   target left unresolved, 15: a `Vec` left stale, 18: a live node named where the server
///   names none). Lengths are now read with no map lent (`state_bits::skip_value`).
const FOUND: [u64; 3] = [13, 15, 18];

#[test]
fn references_settle_on_every_clients_own_nodes() {
    for seed in chaos_seeds(FOUND.into_iter().chain(0..4)) {
        eprintln!("seed {seed}");
        run(seed);
    }
}

/// The smallest case of the FOUND seeds: in one bit-packed snapshot, a member naming a node
/// the client does not have must not hold back another member naming one it has.
#[test]
fn a_held_reference_holds_back_only_its_own_member() {
    let mut world = World::with_encoding(1, SnapshotEncoding::Bits, library);
    let root = world.root();
    let peer = world.clients[0].local_peer_id();
    let spawn = |world: &mut World, scene| world.server.spawn(scene, root, PeerId::SERVER);
    let (referrer, target) = (
        spawn(&mut world, LINK).unwrap(),
        spawn(&mut world, LINK).unwrap(),
    );
    let hidden = spawn(&mut world, ROCK).unwrap();
    world.server.set_relevant(hidden, peer, false).unwrap();
    world.step(5);
    edit(&mut world, referrer).target = NetRef::new(target);
    edit(&mut world, referrer).rock = NetRef::new(hidden);
    world.step(5);
    let client = &world.clients[0];
    let copy = |node| client.node(world.server.net_id(node).unwrap()).unwrap();
    let read = link(client, copy(referrer)).unwrap();
    assert_eq!(
        read.target,
        NetRef::new(copy(target)),
        "names the client's copy"
    );
    assert!(
        read.rock.is_unresolved(),
        "held back: the rock is not relevant"
    );
}

/// A member held back for a node the client does not have, which is then despawned, names
/// nothing: the server tells the client the node is gone, and the client asks for the state
/// that named it again. (It kept its earlier value, another live node, for good.)
#[test]
fn a_member_held_for_a_node_despawned_before_it_came_names_nothing() {
    for encoding in [SnapshotEncoding::Bits, SnapshotEncoding::Bytes] {
        let mut world = World::with_encoding(1, encoding, library);
        let root = world.root();
        let peer = world.clients[0].local_peer_id();
        let mut spawn = || world.server.spawn(LINK, root, PeerId::SERVER).unwrap();
        let (referrer, seen, hidden) = (spawn(), spawn(), spawn());
        world.server.set_relevant(hidden, peer, false).unwrap();
        world.step(5);
        edit(&mut world, referrer).target = NetRef::new(seen);
        world.step(5);
        edit(&mut world, referrer).target = NetRef::new(hidden);
        world.step(5);
        let target = |world: &World| {
            let client = &world.clients[0];
            let copy = client.node(world.server.net_id(referrer).unwrap()).unwrap();
            link(client, copy).unwrap().target
        };
        let seen_copy = world.clients[0].node(world.server.net_id(seen).unwrap());
        assert_eq!(
            Some(target(&world).node()),
            seen_copy,
            "{encoding:?}: held back"
        );
        world.server.despawn(hidden);
        world.step(5);
        assert!(
            target(&world).is_unresolved(),
            "{encoding:?}: names {:?}",
            target(&world)
        );
    }
}

/// Short-lived nodes naming a long-lived one (shots naming their shooter) leave nothing behind
/// on the client: the pairs it keeps of which states named which nodes, to ask for the states
/// again when a node it lacked arrives, are forgotten with the node that named. They were
/// kept until the node named arrived again, which a node the client has does not: the client's
/// heap grew with every shot (32 KB over these 4000), and each note searched all of them.
#[test]
fn short_lived_referrers_leave_nothing_on_the_client() {
    assert!(is_counting(), "the counting allocator is not installed");
    for encoding in [SnapshotEncoding::Bits, SnapshotEncoding::Bytes] {
        let mut world = World::with_encoding(1, encoding, library);
        let root = world.root();
        let shooter = world.server.spawn(ROCK, root, PeerId::SERVER).unwrap();
        // 8000 shots first: the client's table by net id has grown as far as it may (4096 ids
        // past four times the live nodes).
        for _ in 0..400 {
            volley(&mut world, shooter);
        }
        let kept: i64 = (0..200).map(|_| volley(&mut world, shooter)).sum();
        assert!(
            kept < 4096,
            "{encoding:?}: the client kept {kept} bytes over 4000 shots"
        );
    }
}

/// Twenty shots naming `shooter`, spawned, then despawned three frames later; what the
/// client's frames kept on its heap.
fn volley(world: &mut World, shooter: NodeId) -> i64 {
    let root = world.root();
    let shots: Vec<NodeId> = (0..20)
        .map(|_| world.server.spawn(LINK, root, PeerId::SERVER).unwrap())
        .collect();
    for &shot in &shots {
        edit(world, shot).rock = NetRef::new(shooter);
    }
    let mut kept = 0;
    for despawn in [false, true] {
        if despawn {
            for &shot in &shots {
                world.server.despawn(shot);
            }
        }
        for _ in 0..3 {
            world.server.begin_frame(world.dt);
            world.server.end_frame();
            let ((), heap) = measure(|| {
                world.clients[0].begin_frame(world.dt);
                world.clients[0].end_frame();
            });
            kept += heap.bytes_current;
        }
    }
    kept
}
