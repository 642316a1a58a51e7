//! [`Multiplayer`]: server-authoritative replication of one [`Scene`] over any [`Transport`].
//!
//! The runtime is sans-IO and frame-driven. Each frame the game calls
//! [`begin_frame`](Multiplayer::begin_frame) (advance the transport's time by the frame's
//! delta, receive: handshakes, spawns, despawns, snapshots), runs its own logic on the scene,
//! then calls [`end_frame`](Multiplayer::end_frame) (server: despawn freed nodes, send this
//! frame's spawns, check timeouts, and on a network tick capture every change and send one
//! snapshot per client; client: acks and heartbeat; both: flush).
//!
//! # Protocol
//!
//! See [`message_ids`](crate::replication::shared::message_ids) for the byte layouts.
//!
//! - **Handshake.** The transport connects with the message registry's fingerprint, once the
//!   replication messages are added to it at their reserved ids
//!   ([`Multiplayer::start_client`] passes it to the transport). A server whose registry differs
//!   sends the client its registry listing and disconnects it with
//!   [`ProtocolMismatch`](DisconnectReason::ProtocolMismatch); the client's
//!   [`refusal`](Multiplayer::refusal) names the first message type that differs. The client
//!   sends *hello* with the replication fingerprint: every spawnable scene's name and the
//!   stable type name and schema hash of each of its networked nodes, in id order. On a
//!   mismatch the server answers *refuse* with a text naming the first scene or type that
//!   differs, raises [`PeerRefused`](MultiplayerEvent::PeerRefused) and disconnects with
//!   [`ProtocolMismatch`](DisconnectReason::ProtocolMismatch); otherwise *welcome* (peer id,
//!   tick rate, tick), then every live spawn.
//! - **Network ids.** A spawn's instance root and each descendant holding a value take
//!   consecutive ids (from 1; 0 ends a snapshot) in depth-first order. Clients recompute them by
//!   instantiating the same scene.
//! - **Delta snapshots.** On each net tick the server compares every networked value with its
//!   shadow and stamps changed members with the tick. Per client it keeps, for every node, the
//!   newest acknowledged tick of a snapshot that carried it, and the node lists of the last 64
//!   snapshots. A snapshot entry carries everything changed since that tick, so loss,
//!   duplication and reordering are harmless; clients discard snapshots not newer than the
//!   newest applied, and acknowledge a snapshot only when they could apply all of it. The
//!   server's cost follows what changed: a client's snapshot walks only its nodes changed and
//!   not acknowledged since, and each distinct entry is encoded once per tick and copied into
//!   every packet that carries it.
//! - **Ticks** are `u32` counts of network ticks and are compared plainly (no wrap-around
//!   arithmetic): the tick wraps after 2³² ticks, 4.5 years at 30 Hz but 195 days at the
//!   maximum 255 Hz. After a wrap clients discard every snapshot as stale and time out, so a
//!   server meant to run that long restarts with a fresh [`Multiplayer`] (which counts from 0)
//!   before then.
//! - **RPCs.** `mp.rpc(handle).name(..)` sends one message (net id, wire id, arguments) from a
//!   client to the server or from the server to its clients; the receiver checks the mode
//!   against the transport's sender, rate limits, and catches failing bodies. The handshake
//!   fingerprint covers the RPC signatures of the spawnable scenes' types. See [`rpc`].
//! - **Interest.** By default every client gets every spawn group. With
//!   [`set_relevant`](Multiplayer::set_relevant) or an
//!   [`InterestPolicy`](crate::replication::interest::InterestPolicy) the server spawns and
//!   despawns groups per client as their relevance changes, and filters snapshots and RPCs
//!   (the messages are unchanged). See [`interest`](crate::replication::interest).
//!
//! ```
//! use std::time::Duration;
//! use mf_net::prelude::*;
//! use mf_net::bus::MessageRegistry;
//! use mf_net::replication::{Multiplayer, MultiplayerConfig};
//! use mf_net::transport::loopback::LoopbackNetwork;
//!
//! #[derive(Replicated, Default)]
//! struct Score {
//!     #[replicated]
//!     points: i32,
//! }
//!
//! fn library() -> SceneLibrary {
//!     let mut scenes = SceneLibrary::new();
//!     scenes.register("score", |scene, root| scene.set_value(root, Score::default())).unwrap();
//!     scenes
//! }
//!
//! let net = LoopbackNetwork::new();
//! let messages = MessageRegistry::new(1);
//! let mut server = Multiplayer::new(library(), MultiplayerConfig::default());
//! server.start_server(net.listen("game", 8).unwrap(), messages.clone()).unwrap();
//! let mut client = Multiplayer::new(library(), MultiplayerConfig::default());
//! client.start_client(|data| net.connect("game", data), messages).unwrap();
//!
//! let root = server.scene().root();
//! let score = server.spawn_as::<Score>(SceneIndex::new(0), root, PeerId::SERVER).unwrap();
//! let dt = Duration::from_secs(1) / 30;
//! for frame in 0..10 {
//!     if frame == 5 {
//!         server.scene_mut().get_mut(score).unwrap().points = 7;
//!     }
//!     for mp in [&mut server, &mut client] {
//!         mp.begin_frame(dt);
//!         mp.end_frame();
//!     }
//! }
//! let (_, copy) = client.scene().iter::<Score>().next().unwrap();
//! assert_eq!(copy.points, 7);
//! ```

mod dump;
mod handles;
mod interest;
pub(crate) mod machine;
mod open;
pub(crate) mod role;
pub mod rpc;
mod spawner;

pub use crate::replication::shared::config::{
    MultiplayerConfig, MultiplayerError, SnapshotEncoding, TickSource,
    DEFAULT_INPUT_FLOOD_THRESHOLD, DEFAULT_RPC_FLOOD_THRESHOLD,
};
pub use crate::replication::shared::events::{MultiplayerEvent, MAX_QUEUED_EVENTS};
pub use crate::replication::shared::misconfiguration::{
    Misconfiguration, PLAIN_WRITE_FRAMES, ZERO_DT_FRAMES,
};
pub use crate::replication::shared::net_id::NetId;
pub use crate::replication::shared::spawners::Spawner;
pub use crate::replication::shared::stats::{
    LinkQuality, NetworkStats, PeerNetworkStats, LINK_WINDOW,
};
pub use handles::Handles;
pub use open::{connect_data, IntoTransport};

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use tracing::info;

use self::role::{Replication, Role};
use crate::bus::{MessageBus, MessageRegistry, FIRST_RESERVED_ID};
use crate::replication::client::state::ClientState;
use crate::replication::server::state::{valid_group, ServerState};
use crate::replication::shared::instance::as_scene_mut;
use crate::replication::shared::outbox::{outbox, Outbox};
use crate::replication::shared::protocol;
use crate::replication::shared::state::Shared;
use crate::replication::ReplicationRegistry;
use crate::scene::{NodeId, Scene, SceneIndex, SceneLibrary, SceneShape};
use crate::schema;
use crate::store::Store;
use crate::transport::{DisconnectReason, PeerId, Transport};

/// Replication of one [`Scene`] (the spec's `MultiplayerApi`): a server, a client, or offline
/// (which counts as the server, with local peer id 1, so server-side game logic runs in
/// single-player).
///
/// It runs its own [`MessageBus`]; game messages share it through [`bus_mut`](Self::bus_mut).
/// See the [module documentation](self) for the frame and the protocol.
///
/// It is a thin facade: the replication state machine inside, which is not generic over the
/// transport, handles what the bus receives and sends through the bus as any transport's;
/// `Multiplayer` owns the transport's bus and pumps it through the machine each frame.
pub struct Multiplayer<T: Transport, S: Store = Scene> {
    bus: Option<MessageBus<T>>,
    /// How many buses were started (see [`starts`](Self::starts)).
    starts: u64,
    core: Replication,
    /// The type of `core`'s storage.
    store: PhantomData<fn() -> S>,
}

impl<T: Transport + 'static, S: Store> fmt::Debug for Multiplayer<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Multiplayer")
            .field("server", &self.is_server())
            .field("running", &self.bus.is_some())
            .field("local_peer_id", &self.local_peer_id())
            .field("tick", &self.tick())
            .field("stats", &self.core.shared.stats)
            .finish_non_exhaustive()
    }
}

impl<T: Transport + 'static> Multiplayer<T> {
    /// An offline instance replicating a fresh scene, with the spawnable `scenes` (both ends
    /// must register the same scenes in the same order).
    pub fn new(scenes: SceneLibrary, config: MultiplayerConfig) -> Self {
        Self::from_parts(Scene::new(), scenes, config)
    }

    /// The replicated scene.
    pub fn scene(&self) -> &Scene {
        self.store()
    }

    /// The replicated scene, mutably. Freeing a networked node on the server despawns it at
    /// the end of the frame; so does [detaching](Scene::detach) it, unless it is attached again
    /// before [`end_frame`](Self::end_frame) (then it stays networked). A networked node whose
    /// value is [cleared](Scene::clear_value) or [replaced](Scene::set_value) by a value of
    /// another type (after its spawn went out) is freed and despawned at the end of the frame,
    /// with a warning: clients built it with the old type. Moving or renaming a networked node
    /// after its spawn is not replicated.
    pub fn scene_mut(&mut self) -> &mut Scene {
        self.store_mut()
    }
}

impl<T: Transport + 'static, S: Store> Multiplayer<T, S> {
    /// An offline instance replicating the game's own `store` (see [`crate::store`]) instead
    /// of a scene: its nodes are networked with [`replicate`](Self::replicate), and each
    /// client's store makes them with [`Store::spawn`]. Spawning scenes and spawners, and
    /// binding, need the built-in scene.
    pub fn with_store(store: S, config: MultiplayerConfig) -> Self {
        Self::from_parts(store, SceneLibrary::new(), config)
    }

    fn from_parts(store: S, scenes: SceneLibrary, config: MultiplayerConfig) -> Self {
        Self {
            bus: None,
            starts: 0,
            core: Replication::new(Box::new(store), scenes, config),
            store: PhantomData,
        }
    }

    /// The storage of the replicated values.
    pub fn store(&self) -> &S {
        let store: &dyn Any = &*self.core.shared.store;
        store
            .downcast_ref()
            .expect("the storage is the `S` it was made with")
    }

    /// The storage, mutably. On the server, a networked node that stops being
    /// [alive](Store::alive) is despawned at the end of the frame.
    pub fn store_mut(&mut self) -> &mut S {
        let store: &mut dyn Any = &mut *self.core.shared.store;
        store
            .downcast_mut()
            .expect("the storage is the `S` it was made with")
    }

    fn prepare(&mut self, messages: &mut MessageRegistry) -> Result<(), MultiplayerError> {
        if self.bus.is_some() {
            return Err(MultiplayerError::AlreadyStarted);
        }
        protocol::prepare_registry(messages)?;
        let mut shapes = self.core.shared.library.shapes()?;
        shapes.extend(self.core.shared.spawners.shapes());
        // Bit-packed snapshot entries name types by their registry numbers: both ends must
        // number the same types alike.
        let types = ReplicationRegistry::from_inventory().map_err(MultiplayerError::Types)?;
        let shapes_hash = SceneShape::fingerprint(&shapes);
        self.core.shared.fingerprint = schema::hash_u64(shapes_hash, types.fingerprint());
        self.core.shared.shapes = shapes;
        rpc::prepare(&mut self.core.shared)?;
        self.core.shared.refusal = None;
        self.core.shared.bandwidth.reset_totals();
        Ok(())
    }

    /// Starts serving over `transport` (an accepting endpoint). Nodes spawned while offline
    /// stay networked.
    ///
    /// # Errors
    ///
    /// [`MultiplayerError::AlreadyStarted`], a registry conflict with the reserved ids, or a
    /// scene builder failing while the scene shapes are computed.
    pub fn start_server(
        &mut self,
        transport: T,
        mut messages: MessageRegistry,
    ) -> Result<(), MultiplayerError> {
        self.prepare(&mut messages)?;
        if !matches!(self.core.role, Role::Server(_)) {
            self.core.go_offline();
        }
        if let Role::Server(server) = &mut self.core.role {
            // The settings may have changed since the offline server was made.
            server.start_at(&self.core.shared.config);
        }
        info!(
            tick_rate = self.core.shared.config.tick_rate,
            "multiplayer server started"
        );
        self.bus = Some(MessageBus::server(transport, messages));
        self.starts += 1;
        Ok(())
    }

    /// Starts a client: `open` receives the transport connect data (the fingerprint of
    /// `messages` with the replication messages added) and opens the transport with it, for
    /// example `|data| net.connect("game", data)` or
    /// `|data| EnetTransport::connect("127.0.0.1:7777", data)`. Nodes networked while offline
    /// become plain nodes. Offline again after the session, the instance goes on from the tick
    /// and net ids it had before it, if it had served or run (its plain nodes keep their
    /// instance names, which new spawns do not take again).
    ///
    /// # Errors
    ///
    /// As [`start_server`](Self::start_server), and [`MultiplayerError::Transport`] if `open`
    /// returns an error (nothing is started then).
    pub fn start_client<R: IntoTransport<T>>(
        &mut self,
        open: impl FnOnce(u32) -> R,
        mut messages: MessageRegistry,
    ) -> Result<(), MultiplayerError> {
        if self.bus.is_some() {
            return Err(MultiplayerError::AlreadyStarted);
        }
        let transport = open(connect_data(&messages)?).into_transport()?;
        self.prepare(&mut messages)?;
        self.core
            .become_client(ClientState::new(self.core.shared.now));
        info!("multiplayer client started");
        self.bus = Some(MessageBus::client(transport, messages));
        self.starts += 1;
        Ok(())
    }

    /// Stops. A server disconnects every client ([`Shutdown`](DisconnectReason::Shutdown)),
    /// each leaving as on its own ([`PeerLeft`](MultiplayerEvent::PeerLeft), the nodes it owned
    /// despawned or handed to the server as
    /// [`despawn_owned_on_disconnect`](MultiplayerConfig::despawn_owned_on_disconnect) says),
    /// and keeps its other nodes as plain, non-networked nodes (started again, it goes on from
    /// its tick and net ids, so new spawns take new instance names, and keeps its interest
    /// policy); a client disconnects
    /// ([`Closed`](DisconnectReason::Closed)), frees every spawned node and raises
    /// [`Disconnected`](MultiplayerEvent::Disconnected). Either way the instance is offline
    /// afterwards.
    pub fn stop(&mut self) {
        let Some(mut bus) = self.bus.take() else {
            return;
        };
        match &mut self.core.role {
            Role::Server(server) => {
                for i in (0..bus.peers().len()).rev() {
                    let peer = bus.peers()[i];
                    bus.disconnect(peer, DisconnectReason::Shutdown);
                }
                // Each client leaves as it would on its own: `PeerLeft`, and what it owned
                // despawned or handed to the server.
                let peers: Vec<PeerId> = server.clients.iter().map(|c| c.peer).collect();
                for peer in peers {
                    let shared = &mut self.core.shared;
                    server.peer_left(None, shared, peer, DisconnectReason::Shutdown);
                }
                self.core.stop_serving();
                info!("multiplayer server stopped");
            }
            Role::Client(client) => {
                client.end(
                    &mut *bus,
                    &mut self.core.shared,
                    DisconnectReason::Closed,
                    true,
                );
                self.core.go_offline();
            }
        }
        self.core.shared.stats.networked_nodes = 0;
        bus.flush();
    }

    /// Start of frame: advances the transport's time by `dt` (the only clock), receives and
    /// applies handshakes, spawns, despawns, authority changes and snapshots, and dispatches
    /// game messages to their handlers. A client that interpolates then writes its
    /// `#[replicated(interpolate)]` members, blended at the render tick, into the nodes.
    pub fn begin_frame(&mut self, dt: Duration) {
        let Self { bus, core, .. } = self;
        core.advance(dt);
        let Some(bus) = bus.as_mut() else {
            return;
        };
        bus.transport_mut().advance(dt);
        bus.poll_with(&mut (), |out, ctx, r, _| {
            if ctx.message_id < FIRST_RESERVED_ID {
                return Ok(false);
            }
            core.handle_message(out, ctx.sender, ctx.message_id, ctx.tick, r)
        });
        while let Some(event) = bus.next_event() {
            core.handle_event(&mut **bus, event);
        }
        core.received();
        self.finish_if_disconnected();
    }

    /// The bus (as an outbox, if running) and the state machine, lent together.
    pub(crate) fn parts_mut(&mut self) -> (Option<&mut Outbox>, &mut Replication) {
        (outbox(&mut self.bus), &mut self.core)
    }

    /// End of frame: see the [module documentation](self). Sends everything and flushes the
    /// transport.
    pub fn end_frame(&mut self) {
        self.core.end_frame(outbox(&mut self.bus));
        self.finish_if_disconnected();
    }

    /// One network tick now, with [`TickSource::External`] (an engine's fixed step calls it
    /// once per step, between `begin_frame` and `end_frame`): the server advances its tick by
    /// one, captures every value and queues one snapshot per client, which `end_frame` sends.
    /// Two steps in one frame are two ticks and two snapshots; a frame with no step has none.
    /// On a client, or with [`TickSource::OwnClock`], it does nothing.
    pub fn tick_now(&mut self) {
        self.core.tick_now(outbox(&mut self.bus));
    }

    /// A client whose connection ended is offline again: its bus goes (flushed).
    fn finish_if_disconnected(&mut self) {
        if self.core.finished() {
            if let Some(mut bus) = self.bus.take() {
                bus.flush();
            }
            self.core.go_offline();
        }
    }

    /// The spawnable scenes.
    pub fn scenes(&self) -> &SceneLibrary {
        &self.core.shared.library
    }

    /// The message bus, once started: subscribe to and send game messages through it.
    pub fn bus(&self) -> Option<&MessageBus<T>> {
        self.bus.as_ref()
    }

    /// The message bus, mutably.
    pub fn bus_mut(&mut self) -> Option<&mut MessageBus<T>> {
        self.bus.as_mut()
    }

    /// Spawns an instance of `scene` under `parent` with authority `authority` (server or
    /// offline only), named after the scene and its first network id. The spawn message leaves
    /// at the end of the frame with the state at that moment, so configure the instance in the
    /// same frame. `parent` must be networked, or at the same path on every client.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer), [`UnknownPeer`](MultiplayerError::UnknownPeer)
    /// for an authority that is neither the server nor a joined client, the scene error
    /// ([`NoSuchNode`](crate::scene::SceneError::NoSuchNode) for a parent that is gone or not
    /// in the tree), [`NameTooLong`](MultiplayerError::NameTooLong) for a name, or the path
    /// of a parent that is not networked, longer than clients read
    /// ([`MAX_NAME_BYTES`](crate::replication::MAX_NAME_BYTES)), or
    /// [`StateOverLimit`](MultiplayerError::StateOverLimit) for an instance whose builder left
    /// a string member longer than clients read (the instance is removed). A string member
    /// set over the limit later is not an error: its node's snapshots are withheld, and a spawn
    /// that would carry it is withheld from the clients, each raising
    /// [`StateOverLimit`](MultiplayerEvent::StateOverLimit); both go out with the first
    /// snapshot after the value fits again.
    pub fn spawn(
        &mut self,
        scene: SceneIndex,
        parent: NodeId,
        authority: PeerId,
    ) -> Result<NodeId, MultiplayerError> {
        let Role::Server(server) = &self.core.role else {
            return Err(MultiplayerError::NotServer);
        };
        let name = instance_name(server, &self.core.shared.library, scene)?;
        self.spawn_named(scene, parent, &name, authority)
    }

    /// [`spawn`](Self::spawn) with the instance root named `name`.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn), and [`DuplicateName`](crate::scene::SceneError::DuplicateName)
    /// if `parent` has a child named `name`.
    pub fn spawn_named(
        &mut self,
        scene: SceneIndex,
        parent: NodeId,
        name: &str,
        authority: PeerId,
    ) -> Result<NodeId, MultiplayerError> {
        let (server, shared) = self.spawning(authority)?;
        spawn_instance(server, shared, scene, parent, name, authority)
    }

    /// The preconditions of every spawn: this is the server (or offline), and `authority` is
    /// the server or a joined client. Returns the server half and the shared state.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer), [`UnknownPeer`](MultiplayerError::UnknownPeer).
    fn spawning(
        &mut self,
        authority: PeerId,
    ) -> Result<(&mut ServerState, &mut Shared), MultiplayerError> {
        let Role::Server(server) = &mut self.core.role else {
            return Err(MultiplayerError::NotServer);
        };
        if !server.valid_authority(authority) {
            return Err(MultiplayerError::UnknownPeer(authority));
        }
        Ok((server, &mut self.core.shared))
    }

    /// Networks `node`, a node of a scene every peer loads (server or offline only): it is sent
    /// like a spawn with scene index −1, and each client binds its own node with the same
    /// parent path and name (which must be loaded before the message arrives). The node and its
    /// descendants holding values take consecutive network ids.
    ///
    /// Bound nodes are not part of the handshake fingerprint (they are not known then), so each
    /// client must hold values of the same types at the same places. A client that cannot read
    /// the state (another type, or another number of nodes holding values) raises
    /// [`SpawnFailed`](MultiplayerEvent::SpawnFailed) with its node untouched: a bind is
    /// applied in full or not at all. A type whose encoding happens to read as the client's
    /// type cannot be detected.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer),
    /// [`AlreadyNetworked`](MultiplayerError::AlreadyNetworked),
    /// [`NoValue`](MultiplayerError::NoValue),
    /// [`NoSuchNode`](crate::scene::SceneError::NoSuchNode) (the root, and nodes not in the tree,
    /// cannot be bound), or, as for [`spawn`](Self::spawn),
    /// [`NameTooLong`](MultiplayerError::NameTooLong) and
    /// [`StateOverLimit`](MultiplayerError::StateOverLimit).
    pub fn bind(&mut self, node: NodeId) -> Result<(), MultiplayerError> {
        let Role::Server(server) = &mut self.core.role else {
            return Err(MultiplayerError::NotServer);
        };
        let shared = &mut self.core.shared;
        let scene = shared.scene().ok_or(MultiplayerError::NeedsScene)?;
        let parent = scene
            .parent(node)
            .filter(|_| scene.is_attached(node))
            .ok_or(crate::scene::SceneError::NoSuchNode(node))?;
        if server.by_node.contains(node) {
            return Err(MultiplayerError::AlreadyNetworked(node));
        }
        if scene.value_info(node).is_none() {
            return Err(MultiplayerError::NoValue(node));
        }
        server.check_names(scene, parent, scene.name(node).unwrap_or_default())?;
        server.check_states(&mut *shared.store, node)?;
        let store = &*shared.store;
        server.add_group(
            store,
            node,
            protocol::SCENE_BIND,
            Some(parent),
            PeerId::SERVER,
        )?;
        Ok(())
    }

    /// Networks `node`, a node of the storage holding a replicated value, with authority
    /// `authority` (server or offline only): each client's storage makes a node of the same
    /// type ([`Store::spawn`]) and reads its state into it. The spawn message leaves at the
    /// end of the frame with the state at that moment. This is how a game that keeps its own
    /// storage ([`with_store`](Self::with_store)) spawns; the node is despawned on every
    /// client when it stops being [alive](Store::alive) on the server.
    ///
    /// The node goes with the nodes of its storage's [`group`](Store::group) (alone, by
    /// default: the other values of its object and its children, for a storage that has
    /// them), in one spawn with consecutive net ids; each is named by its type's schema hash
    /// and made by the client's storage as its link says ([`Store::spawn_linked`]). The group's
    /// root goes under its [`parent`](Store::parent), if that is networked: a child of the
    /// client's copy, or another value of it when [`beside_parent`](Store::beside_parent) says
    /// so. A client whose registry has no such type, or whose storage makes no such node,
    /// raises [`SpawnFailed`](MultiplayerEvent::SpawnFailed).
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer), [`UnknownPeer`](MultiplayerError::UnknownPeer),
    /// [`ReplicateInScene`](MultiplayerError::ReplicateInScene) over the built-in scene,
    /// [`AlreadyNetworked`](MultiplayerError::AlreadyNetworked),
    /// [`NoValue`](MultiplayerError::NoValue) (also for a node that is not alive),
    /// [`InvalidGroup`](MultiplayerError::InvalidGroup),
    /// [`StateOverLimit`](MultiplayerError::StateOverLimit),
    /// [`NetIdsExhausted`](MultiplayerError::NetIdsExhausted).
    pub fn replicate(
        &mut self,
        node: NodeId,
        authority: PeerId,
    ) -> Result<NetId, MultiplayerError> {
        let (server, shared) = self.spawning(authority)?;
        if shared.scene().is_some() {
            return Err(MultiplayerError::ReplicateInScene);
        }
        if server.by_node.contains(node) {
            return Err(MultiplayerError::AlreadyNetworked(node));
        }
        if !shared.store.alive(node) || shared.store.value_type(node).is_none() {
            return Err(MultiplayerError::NoValue(node));
        }
        if !valid_group(&*shared.store, node, &server.by_node) {
            return Err(MultiplayerError::InvalidGroup(node));
        }
        server.check_states(&mut *shared.store, node)?;
        let store = &*shared.store;
        let parent = store.parent(node).filter(|&p| server.by_node.contains(p));
        let first = server.add_group(store, node, protocol::SCENE_TYPED, parent, authority)?;
        NetId::new(first).ok_or(MultiplayerError::NetIdsExhausted)
    }

    /// Sends again, whole, at the next capture, the state of every networked node that holds a
    /// reference to `node` (server only; elsewhere it does nothing). For an engine's own
    /// reference type that travels as one of several nodes of an object
    /// ([`refs::encode_node`](crate::refs::encode_node)), when that node changes or is
    /// networked anew (mf-net-bevy's `NetEntity` travels as an entity's own node, which takes
    /// a new net id when the entity is networked again). A reference encoded to a node before
    /// it was networked needs no call: the runtime sends its state again when the node is
    /// networked.
    pub fn resend_states_naming(&mut self, node: NodeId) {
        if let Role::Server(server) = &self.core.role {
            server.by_node.renamed(node);
        }
    }

    /// Frees `node` ([`Store::despawn`]; in the scene, with its subtree, as
    /// `scene_mut().remove(node)`): on the server a networked node is despawned at the end of
    /// the frame. Returns whether the node was in the storage.
    pub fn despawn(&mut self, node: NodeId) -> bool {
        self.core.shared.store.despawn(node)
    }

    /// Gives `peer` authority over the networked `node` (and its networked descendants if
    /// `recursive`, the usual choice: in the scene, its subtree's; in a storage of the game's
    /// own, the nodes spawned under it, such as a Bevy entity's other components and the
    /// children that travelled with it), on the server; clients learn it.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer),
    /// [`UnknownPeer`](MultiplayerError::UnknownPeer),
    /// [`NotNetworked`](MultiplayerError::NotNetworked).
    pub fn set_authority(
        &mut self,
        node: NodeId,
        peer: PeerId,
        recursive: bool,
    ) -> Result<(), MultiplayerError> {
        let Role::Server(server) = &mut self.core.role else {
            return Err(MultiplayerError::NotServer);
        };
        if !server.valid_authority(peer) {
            return Err(MultiplayerError::UnknownPeer(peer));
        }
        server
            .set_authority(
                outbox(&mut self.bus),
                &mut self.core.shared,
                node,
                peer,
                recursive,
            )
            .ok_or(MultiplayerError::NotNetworked(node))
    }

    /// Moves the group networked from `root` (a node [`replicate`](Self::replicate) networked)
    /// under the networked node `parent`, or to no parent (`None`), on the server, after the
    /// game moved it in its own storage (a Bevy entity given another `ChildOf`). Clients that
    /// have the group move it too ([`Store::set_parent`]), keeping what they hold of it; one
    /// that lacks the parent's group loses the group, as a group spawned under that parent is
    /// not sent to it. From then on the group goes with its new parent: despawned with it,
    /// handed over with it by a recursive [`set_authority`](Self::set_authority), relevant
    /// only to clients that have it. The engine adapter calls this; nodes of the built-in scene
    /// do not move.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer),
    /// [`NotNetworked`](MultiplayerError::NotNetworked) (`root` or `parent`),
    /// [`NotGroupRoot`](MultiplayerError::NotGroupRoot) (a node inside a group, a scene's, or
    /// the root of a group beside its parent),
    /// [`ParentInside`](MultiplayerError::ParentInside) (`parent` is in the group's subtree).
    pub fn set_parent(
        &mut self,
        root: NodeId,
        parent: Option<NodeId>,
    ) -> Result<(), MultiplayerError> {
        let Role::Server(server) = &mut self.core.role else {
            return Err(MultiplayerError::NotServer);
        };
        server.set_parent(outbox(&mut self.bus), &mut self.core.shared, root, parent)
    }

    /// Moves the scene node `node`, the root of a networked scene or spawner instance, under
    /// the scene node `parent` (with its subtree, as [`Scene::reparent`](crate::scene::Scene::reparent)),
    /// on the server and on every client that has it: the client moves its copy under its
    /// own `parent` (the same networked node, or the node at the same path), keeping what it
    /// holds. A client that lacks `parent`'s group loses the instance, as one spawned under
    /// that parent is not sent to it. From then on the instance goes with its new parent:
    /// despawned with it, handed over with it by a recursive
    /// [`set_authority`](Self::set_authority), and spawned under it for clients that join.
    /// Other networked nodes do not move: a node inside an instance travels with it, and a
    /// bound node stays where every peer's scene has it.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer), [`NeedsScene`](MultiplayerError::NeedsScene),
    /// [`NotNetworked`](MultiplayerError::NotNetworked),
    /// [`NotGroupRoot`](MultiplayerError::NotGroupRoot) (a node inside an instance, or bound),
    /// [`NameTooLong`](MultiplayerError::NameTooLong) (the path of a parent that is not
    /// networked), [`Scene`](MultiplayerError::Scene) (as `Scene::reparent`: a parent inside
    /// the instance, a name taken there). On error nothing moves.
    pub fn reparent(&mut self, node: NodeId, parent: NodeId) -> Result<(), MultiplayerError> {
        let Role::Server(server) = &mut self.core.role else {
            return Err(MultiplayerError::NotServer);
        };
        server.reparent(outbox(&mut self.bus), &mut self.core.shared, node, parent)
    }

    /// The authority of `node`: its owner if networked, the server otherwise.
    pub fn authority(&self, node: NodeId) -> PeerId {
        match &self.core.role {
            Role::Server(s) => s.authority_of(node),
            Role::Client(c) => c.authority_of(node),
        }
        .unwrap_or(PeerId::SERVER)
    }

    /// Whether this peer has authority over `node`: true on the owning peer, and for nodes that
    /// are not networked.
    pub fn is_network_authority(&self, node: NodeId) -> bool {
        match &self.core.role {
            Role::Server(s) => s.authority_of(node),
            Role::Client(c) => c.authority_of(node),
        }
        .map_or(true, |owner| owner == self.local_peer_id())
    }

    /// The network id of `node`, if it is networked.
    pub fn net_id(&self, node: NodeId) -> Option<NetId> {
        match &self.core.role {
            Role::Server(s) => s.net_id(node),
            Role::Client(c) => c.net_id(node),
        }
    }

    /// The node with network id `id`.
    pub fn node(&self, id: NetId) -> Option<NodeId> {
        match &self.core.role {
            Role::Server(s) => s.node_of(id.get()),
            Role::Client(c) => c.node_of(id.get()),
        }
    }

    /// Disconnects a client with `reason` (server only; usually
    /// [`Kicked`](DisconnectReason::Kicked)). It leaves as if it had disconnected.
    pub fn kick(&mut self, peer: PeerId, reason: DisconnectReason) {
        let (Some(bus), Role::Server(server)) = (self.bus.as_mut(), &mut self.core.role) else {
            return;
        };
        info!(%peer, %reason, "kicking client");
        bus.disconnect(peer, reason);
        server.peer_left(Some(&mut **bus), &mut self.core.shared, peer, reason);
    }

    /// Takes the oldest pending event.
    pub fn next_event(&mut self) -> Option<MultiplayerEvent> {
        self.core.shared.events.pop()
    }

    /// Replication and bandwidth counters.
    pub fn stats(&self) -> &NetworkStats {
        &self.core.shared.stats
    }

    /// What the server knows about a client (server only).
    pub fn peer_stats(&self, peer: PeerId) -> Option<&PeerNetworkStats> {
        match &self.core.role {
            Role::Server(s) => s.clients.index_of(peer).map(|c| &s.clients[c].stats),
            Role::Client(_) => None,
        }
    }

    /// Client, welcomed: the quality of the link as the snapshots received show it (loss,
    /// duplicates, reordering, arrival jitter; see [`LinkQuality`]). `None` on the server (see
    /// [`peer_stats`](Self::peer_stats) for its view of each client) and before the welcome.
    pub fn link_quality(&self) -> Option<&LinkQuality> {
        match &self.core.role {
            Role::Client(c) if c.welcomed => Some(&c.link.quality),
            _ => None,
        }
    }

    /// Whether this is the server (or offline, which counts as the server).
    pub fn is_server(&self) -> bool {
        matches!(self.core.role, Role::Server(_))
    }

    /// Whether this is a client (connecting or connected).
    pub fn is_client(&self) -> bool {
        matches!(self.core.role, Role::Client(_))
    }

    /// Whether a server or client is running (not offline).
    pub fn is_running(&self) -> bool {
        self.bus.is_some()
    }

    /// How many times this instance started, as a server or a client: each start makes a new
    /// [`bus`](Self::bus), so an engine adapter that subscribes to game messages does so again
    /// when this changes.
    pub fn starts(&self) -> u64 {
        self.starts
    }

    /// Our peer id: [`PeerId::SERVER`] on the server and offline; on a client, the id the
    /// server gave us (`PeerId(0)` until welcomed).
    pub fn local_peer_id(&self) -> PeerId {
        match &self.core.role {
            Role::Server(_) => PeerId::SERVER,
            Role::Client(c) => c.local_peer,
        }
    }

    /// Server: the clients that joined (completed the handshake). Client: the server, once
    /// welcomed.
    pub fn peers(&self) -> &[PeerId] {
        const SERVER_ONLY: &[PeerId] = &[PeerId::SERVER];
        match &self.core.role {
            Role::Server(s) => &s.joined,
            Role::Client(c) if c.welcomed => SERVER_ONLY,
            Role::Client(_) => &[],
        }
    }

    /// Server: the current network tick. Client: the tick of the newest snapshot applied.
    ///
    /// It wraps after 2³² ticks (195 days at 255 Hz) and counts on from 0: compare ticks by
    /// serial-number arithmetic (`b.wrapping_sub(a) as i32 > 0`: `b` is after `a`), as the
    /// runtime does. It starts at [`MultiplayerConfig::first_tick`]. Serial-number arithmetic
    /// orders ticks less than 2³¹ apart, so the server moves every change tick and
    /// acknowledgement it stores that is older than 2³⁰ ticks (48 days at 255 Hz) up to that
    /// age ([`Capture::age`](crate::replication::Capture::age)), a few nodes per
    /// capture; a single frame must not span 2³⁰ ticks or more.
    pub fn tick(&self) -> u32 {
        match &self.core.role {
            Role::Server(s) => s.tick,
            Role::Client(c) => c.newest_applied,
        }
    }

    /// Network ticks per second: ours on the server, the server's on a welcomed client.
    pub fn tick_rate(&self) -> u8 {
        match &self.core.role {
            Role::Client(c) if c.welcomed => c.tick_rate,
            Role::Server(s) => s.tick_rate(&self.core.shared.config),
            Role::Client(_) => self.core.shared.config.tick_rate.max(1),
        }
    }

    /// Client: whether the newest applied snapshot was truncated by the server's byte budget.
    pub fn last_snapshot_truncated(&self) -> bool {
        matches!(&self.core.role, Role::Client(c) if c.last_truncated)
    }

    /// Client, welcomed with [`interpolation`](MultiplayerConfig::interpolation) enabled: the
    /// interpolation timeline (the estimated server tick, the delay in use and the render tick
    /// at which `#[replicated(interpolate)]` members are shown). `None` otherwise.
    pub fn interpolation(&self) -> Option<&crate::interpolation::InterpolationTimeline> {
        match &self.core.role {
            Role::Client(c) => c.interp.timeline(),
            Role::Server(_) => None,
        }
    }

    /// The settings.
    pub fn config(&self) -> &MultiplayerConfig {
        &self.core.shared.config
    }

    /// The settings, mutably (change them before starting; the byte budget and timeouts may
    /// change at any time, the snapshot encoding for the clients that join after, and the tick
    /// rate from the next start).
    pub fn config_mut(&mut self) -> &mut MultiplayerConfig {
        &mut self.core.shared.config
    }

    /// Why the server refused us, naming the first message type, scene, replicated type or RPC
    /// that differs (client, after a [`ProtocolMismatch`](DisconnectReason::ProtocolMismatch)
    /// disconnect); the same on every transport.
    pub fn refusal(&self) -> Option<&str> {
        self.core.shared.refusal.as_deref()
    }

    /// Our replication fingerprint (a hash of the spawnable scenes' shapes, of the spawners'
    /// names, parent paths and data types, of every linked replicated type's stable name and
    /// schema hash ([`ReplicationRegistry::fingerprint`]: snapshot entries name types by their
    /// registry numbers), and of the RPC signatures of the scenes' types), once started.
    /// [`registry_dump`](Self::registry_dump) lists what it covers.
    pub fn fingerprint(&self) -> u64 {
        self.core.shared.fingerprint
    }
}

/// The name of a spawned instance of `scene` by default: the scene's name and the instance's
/// first network id (`pawn#7`).
fn instance_name(
    server: &ServerState,
    library: &SceneLibrary,
    scene: SceneIndex,
) -> Result<String, MultiplayerError> {
    let scene_name = library
        .name(scene)
        .ok_or(crate::scene::SceneError::UnknownScene(scene))?;
    Ok(format!("{scene_name}#{}", server.name_number()))
}

/// Instantiates `scene` under `parent` (which must be in the tree) with its root named `name`,
/// and networks the instance with `authority` (checked by the caller). On split borrows, so
/// that spawns queued by RPC bodies use it too.
fn spawn_instance(
    server: &mut ServerState,
    shared: &mut Shared,
    scene: SceneIndex,
    parent: NodeId,
    name: &str,
    authority: PeerId,
) -> Result<NodeId, MultiplayerError> {
    let Shared { store, library, .. } = shared;
    let tree = as_scene_mut(&mut **store).ok_or(MultiplayerError::NeedsScene)?;
    if !tree.is_attached(parent) {
        return Err(crate::scene::SceneError::NoSuchNode(parent).into());
    }
    server.check_names(tree, parent, name)?;
    let root = library.instantiate(scene, tree, parent, name)?;
    let index = i32::from(scene.get());
    let added = server
        .check_states(&mut **store, root)
        .and_then(|()| server.add_group(&**store, root, index, Some(parent), authority));
    if let Err(error) = added {
        shared.store.despawn(root);
        return Err(error);
    }
    Ok(root)
}
