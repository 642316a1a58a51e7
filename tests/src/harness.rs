//! A frame-by-frame world for replication tests: one [`Multiplayer`] server and any number of
//! clients over loopback (optionally behind seeded [`SimulatedTransport`]s), and a comparison
//! of every client's networked nodes with the server's (by path, type and full-state bytes,
//! so it works for any replicated type).
//!
//! It defines no replicated type itself: types linked into this library would appear in every
//! test binary's link-time registry.

use std::time::Duration;

use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::replication::{MultiplayerEvent, NetId, SnapshotEncoding};
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net::wire::NetWriter;

/// The transport every harness endpoint uses.
pub type Dyn = Box<dyn Transport>;
/// A multiplayer instance over [`Dyn`].
pub type Mp = Multiplayer<Dyn>;

/// The game's message registry (empty).
pub fn messages() -> MessageRegistry {
    MessageRegistry::new(1)
}

/// A server's endpoint on `net` (named `game`), under `conditions` seeded from `seed`.
fn listen(net: &LoopbackNetwork, conditions: Option<NetworkConditions>, seed: u64) -> Dyn {
    let listen = net.listen("game", 64).expect("free name");
    match conditions {
        Some(c) => Box::new(SimulatedTransport::new(listen, c, seed)),
        None => Box::new(listen),
    }
}

/// A server and its clients, stepped together.
pub struct World {
    /// The in-process network.
    pub net: LoopbackNetwork,
    /// The server.
    pub server: Mp,
    /// The clients, in connection order.
    pub clients: Vec<Mp>,
    /// Frame length.
    pub dt: Duration,
    /// The conditions of the clients' ends.
    conditions: Option<NetworkConditions>,
    /// The conditions of the server's end.
    server_conditions: Option<NetworkConditions>,
    /// How many times the server was started again ([`restart`](Self::restart)).
    restarts: u64,
    seed: u64,
    library: fn() -> SceneLibrary,
    config: MultiplayerConfig,
    setup: fn(&mut Mp),
}

impl World {
    /// A server with `clients` clients over a perfect loopback, stepped until they joined; every
    /// peer registers the spawnable scenes `library` builds.
    pub fn new(clients: usize, library: fn() -> SceneLibrary) -> Self {
        Self::with(clients, MultiplayerConfig::default(), None, 0, library)
    }

    /// [`new`](Self::new) with the server's snapshots in `encoding` (for tests that pin one
    /// encoding's sizes).
    pub fn with_encoding(
        clients: usize,
        encoding: SnapshotEncoding,
        library: fn() -> SceneLibrary,
    ) -> Self {
        let config = MultiplayerConfig {
            snapshot_encoding: encoding,
            ..MultiplayerConfig::default()
        };
        Self::with(clients, config, None, 0, library)
    }

    /// A world with every setting given. With `conditions`, every endpoint (server and clients)
    /// sends through a [`SimulatedTransport`] seeded from `seed`.
    pub fn with(
        clients: usize,
        config: MultiplayerConfig,
        conditions: Option<NetworkConditions>,
        seed: u64,
        library: fn() -> SceneLibrary,
    ) -> Self {
        Self::with_setup(clients, config, conditions, seed, library, |_| {})
    }

    /// [`with`](Self::with), running `setup` on every peer (server and clients) before it
    /// starts (to register spawners, for one).
    pub fn with_setup(
        clients: usize,
        config: MultiplayerConfig,
        conditions: Option<NetworkConditions>,
        seed: u64,
        library: fn() -> SceneLibrary,
        setup: fn(&mut Mp),
    ) -> Self {
        Self::build(
            clients, config, conditions, conditions, seed, library, setup,
        )
    }

    /// [`with`](Self::with), with the server's end and the clients' ends under their own
    /// conditions (each applies to what that end sends; `None`: a perfect loopback).
    pub fn with_split(
        clients: usize,
        config: MultiplayerConfig,
        server_conditions: Option<NetworkConditions>,
        client_conditions: Option<NetworkConditions>,
        seed: u64,
        library: fn() -> SceneLibrary,
    ) -> Self {
        let setup: fn(&mut Mp) = |_| {};
        Self::build(
            clients,
            config,
            server_conditions,
            client_conditions,
            seed,
            library,
            setup,
        )
    }

    fn build(
        clients: usize,
        config: MultiplayerConfig,
        conditions: Option<NetworkConditions>,
        client_conditions: Option<NetworkConditions>,
        seed: u64,
        library: fn() -> SceneLibrary,
        setup: fn(&mut Mp),
    ) -> Self {
        let net = LoopbackNetwork::new();
        let mut server = Mp::new(library(), config);
        setup(&mut server);
        server
            .start_server(listen(&net, conditions, seed), messages())
            .expect("server starts");
        let mut world = Self {
            net,
            server,
            clients: Vec::new(),
            dt: Duration::from_secs(1) / 30,
            conditions: client_conditions,
            server_conditions: conditions,
            restarts: 0,
            seed,
            library,
            config,
            setup,
        };
        for _ in 0..clients {
            world.connect_client();
        }
        let lossy = conditions.is_some() || client_conditions.is_some();
        world.step(if lossy { 30 } else { 4 });
        world
    }

    /// Puts the clients started from now on under `conditions` (each applies to what that
    /// client sends; `None`: a perfect loopback), as clients at different distances are.
    pub fn set_client_conditions(&mut self, conditions: Option<NetworkConditions>) {
        self.conditions = conditions;
    }

    /// Starts another client (with this world's scenes) and returns its index; step to let it
    /// join.
    pub fn connect_client(&mut self) -> usize {
        let lib = self.library;
        self.connect_client_with(lib())
    }

    /// Starts another client with its own spawnable scenes.
    pub fn connect_client_with(&mut self, scenes: SceneLibrary) -> usize {
        let setup = self.setup;
        self.connect_client_setup(scenes, setup)
    }

    /// Starts another client with its own spawnable scenes and its own `setup` (run before it
    /// starts).
    pub fn connect_client_setup(&mut self, scenes: SceneLibrary, setup: fn(&mut Mp)) -> usize {
        let index = self.clients.len();
        let mut client = Mp::new(scenes, self.config);
        setup(&mut client);
        self.start_client(&mut client, index as u64 + 1);
        self.clients.push(client);
        index
    }

    /// Starts `client` over a connection to the server, under the clients' conditions seeded
    /// from `nth`.
    fn start_client(&self, client: &mut Mp, nth: u64) {
        let (net, conditions, seed) = (&self.net, self.conditions, self.seed);
        let open = |data| -> Dyn {
            let inner = net.connect("game", data);
            match conditions {
                Some(c) => Box::new(SimulatedTransport::new(
                    inner,
                    c,
                    seed.wrapping_mul(31).wrapping_add(nth),
                )),
                None => Box::new(inner),
            }
        };
        client
            .start_client(open, messages())
            .expect("client starts");
    }

    /// Stops the server and every client, then starts the server again (listening anew, under
    /// its conditions) and each client with it, the same instances: a server started again
    /// and its players reconnecting. Step to let them join.
    pub fn restart(&mut self) {
        self.server.stop();
        for client in &mut self.clients {
            client.stop();
        }
        self.restarts += 1;
        let seed = self.seed ^ self.restarts.wrapping_mul(0x9E37_79B9);
        let transport = listen(&self.net, self.server_conditions, seed);
        self.server
            .start_server(transport, messages())
            .expect("server starts again");
        let mut clients = std::mem::take(&mut self.clients);
        for (i, client) in clients.iter_mut().enumerate() {
            self.start_client(client, (self.restarts << 32) + i as u64 + 1);
        }
        self.clients = clients;
    }

    /// Runs `frames` frames: the server's, then every client's.
    pub fn step(&mut self, frames: usize) {
        for _ in 0..frames {
            self.frame();
        }
    }

    /// One frame of every peer.
    pub fn frame(&mut self) {
        self.server.begin_frame(self.dt);
        self.server.end_frame();
        for client in &mut self.clients {
            client.begin_frame(self.dt);
            client.end_frame();
        }
    }

    /// The root of the server's scene.
    pub fn root(&self) -> NodeId {
        self.server.scene().root()
    }

    /// Panics unless client `client`'s networked nodes are exactly the server's nodes of the
    /// groups relevant to it (interest management), at the same paths with the same states.
    pub fn assert_sees_exactly_what_is_relevant(&self, client: usize) {
        let c = &self.clients[client];
        let p = c.local_peer_id();
        let mut expected = 0;
        for (id, node) in networked(&self.server) {
            let copy = c.node(id);
            if !self.server.is_relevant(node, p) {
                assert!(
                    copy.is_none(),
                    "client {client} has {id}, not relevant to it"
                );
                continue;
            }
            expected += 1;
            let copy = copy.unwrap_or_else(|| panic!("client {client} lacks relevant {id}"));
            let path = self.server.scene().path(node);
            assert_eq!(path, c.scene().path(copy), "client {client}, {id}: path");
            let state = state_bytes(&self.server, node);
            assert_eq!(state, state_bytes(c, copy), "client {client}, {id}: state");
        }
        assert_eq!(
            networked(c).len(),
            expected,
            "client {client}: networked nodes"
        );
    }

    /// Panics unless every client's networked nodes equal the server's (see [`differences`]).
    pub fn assert_converged(&self) {
        for (i, client) in self.clients.iter().enumerate() {
            if let Some(diff) = differences(&self.server, client) {
                panic!("client {i} differs from the server: {diff}");
            }
        }
    }
}

/// Every event `mp` has queued.
pub fn drain(mp: &mut Mp) -> Vec<MultiplayerEvent> {
    std::iter::from_fn(|| mp.next_event()).collect()
}

/// Drains `mp`'s events; returns the texts of the refusals among them
/// ([`MultiplayerEvent::PeerRefused`]).
pub fn refusals(mp: &mut Mp) -> Vec<String> {
    drain(mp)
        .into_iter()
        .filter_map(|event| match event {
            MultiplayerEvent::PeerRefused { refusal, .. } => Some(refusal),
            _ => None,
        })
        .collect()
}

/// The networked nodes of `mp`, depth-first, with their net ids.
pub fn networked<T: Transport + 'static>(mp: &Multiplayer<T>) -> Vec<(NetId, NodeId)> {
    let scene = mp.scene();
    scene
        .depth_first(scene.root())
        .filter_map(|node| Some((mp.net_id(node)?, node)))
        .collect()
}

/// The full state of a node's value, as bytes (to compare values of any type).
pub fn state_bytes<T: Transport + 'static>(mp: &Multiplayer<T>, node: NodeId) -> Option<Vec<u8>> {
    let mut w = NetWriter::new();
    mp.scene().write_state(node, &mut w).then(|| w.into_vec())
}

/// How `client` differs from `server`: a networked node missing or extra, at another path, of
/// another type or with other member values. `None` when they agree.
pub fn differences<S: Transport + 'static, C: Transport + 'static>(
    server: &Multiplayer<S>,
    client: &Multiplayer<C>,
) -> Option<String> {
    let ours = networked(server);
    let theirs = networked(client);
    if ours.len() != theirs.len() {
        return Some(format!(
            "{} networked nodes on the server, {} on the client",
            ours.len(),
            theirs.len()
        ));
    }
    for (id, node) in ours {
        let Some(copy) = client.node(id) else {
            return Some(format!("{id} is missing"));
        };
        let (a, b) = (server.scene(), client.scene());
        if a.path(node) != b.path(copy) {
            return Some(format!(
                "{id}: path {:?} vs {:?}",
                a.path(node),
                b.path(copy)
            ));
        }
        let (ta, tb) = (
            a.value_info(node).map(|t| t.name()),
            b.value_info(copy).map(|t| t.name()),
        );
        if ta != tb {
            return Some(format!("{id}: type {ta:?} vs {tb:?}"));
        }
        if state_bytes(server, node) != state_bytes(client, copy) {
            return Some(format!(
                "{id} at {:?}: state {:?} vs {:?}",
                a.path(node),
                state_bytes(server, node),
                state_bytes(client, copy)
            ));
        }
    }
    None
}
