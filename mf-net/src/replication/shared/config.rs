//! [`MultiplayerConfig`] and [`MultiplayerError`].

use std::fmt;
use std::time::Duration;

use crate::bus::RegistryError;
use crate::interpolation::InterpolationConfig;
use crate::replication::shared::prediction_config::PredictionConfig;
use crate::replication::ReplicationRegistryError;
use crate::rpc::RpcRegistryError;
use crate::scene::{NodeId, SceneError, SceneIndex};
use crate::transport::PeerId;

/// Settings of a [`Multiplayer`](crate::replication::multiplayer::Multiplayer); set them before starting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MultiplayerConfig {
    /// Network ticks per second (1–255; 0 reads as 1): how often the server captures changes
    /// and sends snapshots, and how often clients send their ack heartbeat. Clients learn the
    /// server's rate in the handshake. Default 30. The server remembers about two seconds of
    /// the snapshots it sent each client (at least 64), which bounds the round trip a client
    /// can acknowledge them over. A server keeps the rate it started with: a rate changed
    /// while it serves applies from its next start.
    pub tick_rate: u8,
    /// What advances the server's network ticks: its own clock, from the frame times
    /// (the default), or the engine ([`TickSource::External`]).
    pub tick_source: TickSource,
    /// Largest snapshot packet in bytes, header included (0 = unlimited, the default; about
    /// 1200 for internet play). Nodes that do not fit go out in the next ticks.
    pub max_snapshot_bytes: usize,
    /// A client that has not said hello this long after connecting is disconnected
    /// ([`Timeout`](crate::transport::DisconnectReason::Timeout)); a client that has not been
    /// welcomed this long after starting disconnects itself, with
    /// [`ConnectFailed`](crate::transport::DisconnectReason::ConnectFailed) if its transport
    /// never connected (nobody listens there) and `Timeout` otherwise. Default 5 s.
    pub handshake_timeout: Duration,
    /// A client that sends no ack, or whose acks stop advancing, for this long is disconnected;
    /// a client that receives no snapshot for this long disconnects itself (both
    /// [`Timeout`](crate::transport::DisconnectReason::Timeout)). Default 15 s, so that a
    /// client that stalls for up to 10 s (a loading hitch, a debugger, a window in the
    /// background) keeps its connection.
    pub peer_timeout: Duration,
    /// Whether the nodes a leaving client had authority over are despawned (the default) or
    /// handed to the server.
    pub despawn_owned_on_disconnect: bool,
    /// Whether a client whose RPC body fails on the server (returns `Err` or panics) is
    /// disconnected ([`Kicked`](crate::transport::DisconnectReason::Kicked)). Default `false`:
    /// the failure is only logged, counted and raised as
    /// [`RpcFailed`](crate::replication::multiplayer::MultiplayerEvent::RpcFailed).
    pub kick_on_rpc_failure: bool,
    /// Server: RPC messages one client may send within one second of passed-in time (every RPC
    /// message counts, whatever becomes of it); a client sending more is disconnected
    /// ([`Kicked`](crate::transport::DisconnectReason::Kicked)). The default,
    /// [`DEFAULT_RPC_FLOOD_THRESHOLD`] (600: ten a frame at 60 frames a second, or an input
    /// RPC every frame at 240 with room to spare), stops a client flooding the server without
    /// touching honest play; raise it for a game that sends more, or set 0 to disable the
    /// check. Per-RPC `rate_limit`s apply either way.
    pub rpc_flood_threshold: u32,
    /// Server: input messages one client may send within one second of passed-in time (every
    /// input message counts, whatever becomes of it: see
    /// [`PeerNetworkStats::input_messages`](crate::replication::multiplayer::PeerNetworkStats::input_messages)); a client
    /// sending more is disconnected ([`Kicked`](crate::transport::DisconnectReason::Kicked),
    /// counted in [`NetworkStats::input_kicks`](crate::replication::multiplayer::NetworkStats::input_kicks)). A
    /// [`Simulation`](crate::prediction::Simulation) sends one a simulated tick, at most 255 a
    /// second in steady play; the default, [`DEFAULT_INPUT_FLOOD_THRESHOLD`] (600, as for
    /// RPCs), leaves room for a client catching up after a stall. Set 0 to disable the check.
    pub input_flood_threshold: u32,
    /// Server: the net id the first spawn takes (default 1; 0 counts as 1). Ids go upwards
    /// from it; once `u32::MAX` is reached, ids freed by despawns are handed out again, each
    /// only after every client has acknowledged a snapshot from after its despawn, and a spawn
    /// that finds no free run of ids long enough is refused
    /// ([`NetIdsExhausted`](MultiplayerError::NetIdsExhausted)). Set it to test that, or to go
    /// on numbering where a persisted world left off. Read when the server state is made
    /// (with the [`Multiplayer`](crate::replication::multiplayer::Multiplayer), and after a
    /// client's session ends) and again by
    /// [`start_server`](crate::replication::multiplayer::Multiplayer::start_server) if the
    /// server has not yet run a frame or spawned anything.
    pub first_net_id: u32,
    /// How a client shows `#[replicated(interpolate)]` members: blended a delay in the past
    /// (the default), or snapped to every snapshot (`enabled = false`); the delay, optionally
    /// adaptive, and the extrapolation cap. Read when the client is welcomed.
    pub interpolation: InterpolationConfig,
    /// The server's tick when the [`Multiplayer`](crate::replication::multiplayer::Multiplayer) is created (and after a
    /// client's session ends), default 0: for servers that persist their tick across restarts,
    /// and for tests that run a server across the tick's wrap. Ticks are `u32` and wrap after
    /// 2³² ticks (195 days at 255 Hz); every comparison of ticks is by serial-number
    /// arithmetic (RFC 1982), so a server runs on across the wrap with its clients joined.
    /// [`start_server`](crate::replication::multiplayer::Multiplayer::start_server) reads it
    /// again if the server has not yet run a frame or spawned anything. A server that has
    /// run keeps its tick through [`stop`](crate::replication::multiplayer::Multiplayer::stop)
    /// and a new `start_server`; changing this then has no effect.
    pub first_tick: u32,
    /// Inputs and client-side prediction: input redundancy and delay, the missing-input
    /// policy, the client's lead margin, prediction history, error smoothing and the
    /// determinism check. Used once a [`Simulation`](crate::prediction::Simulation) runs.
    pub prediction: PredictionConfig,
    /// Server: how snapshots are encoded ([`SnapshotEncoding`]). Default
    /// [`Bits`](SnapshotEncoding::Bits). The server tells each client in the handshake;
    /// clients read either, whatever their own setting. Changed while clients are joined, it
    /// applies to the clients that join after (each keeps the encoding its handshake named).
    pub snapshot_encoding: SnapshotEncoding,
}

impl Default for MultiplayerConfig {
    fn default() -> Self {
        Self {
            tick_rate: 30,
            tick_source: TickSource::OwnClock,
            max_snapshot_bytes: 0,
            handshake_timeout: Duration::from_secs(5),
            peer_timeout: Duration::from_secs(15),
            despawn_owned_on_disconnect: true,
            kick_on_rpc_failure: false,
            rpc_flood_threshold: DEFAULT_RPC_FLOOD_THRESHOLD,
            input_flood_threshold: DEFAULT_INPUT_FLOOD_THRESHOLD,
            first_net_id: 1,
            interpolation: InterpolationConfig::default(),
            first_tick: 0,
            prediction: PredictionConfig::default(),
            snapshot_encoding: SnapshotEncoding::default(),
        }
    }
}

/// How a server encodes its snapshots ([`MultiplayerConfig::snapshot_encoding`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SnapshotEncoding {
    /// Each changed member's full value in bytes, behind a byte change mask, per entry a net
    /// id and a length (the source's format). Costs the server and the clients less time, and
    /// the link two to three times the bytes of [`Bits`](Self::Bits).
    Bytes,
    /// Bit-packed (the default): each entry coded against the state the client acknowledged
    /// ([`state_bits`](crate::codec::state_bits)): quantized members, floats and integers as
    /// differences, ids as differences from the previous entry's. The server keeps each node's
    /// recent values, and the client the values of its recent snapshots, to code against.
    #[default]
    Bits,
}

/// What advances the server's network ticks ([`MultiplayerConfig::tick_source`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TickSource {
    /// The server's own clock: `end_frame` advances by the ticks of `tick_rate` that fell in
    /// the frame times passed to `begin_frame`, capturing and sending once for them all.
    #[default]
    OwnClock,
    /// The engine's fixed step: the server advances one tick, capturing and sending its
    /// snapshots, each time the engine calls
    /// [`tick_now`](crate::replication::multiplayer::Multiplayer::tick_now) (once per fixed
    /// step, at `tick_rate` steps a second), so that a change belongs to exactly one tick;
    /// `end_frame` advances none. The server's
    /// [`Simulation::run`](crate::prediction::Simulation::run) then steps one tick per call,
    /// made once per fixed step before `tick_now`.
    External,
}

/// The default [`rpc_flood_threshold`](MultiplayerConfig::rpc_flood_threshold): RPC messages
/// per client per second.
pub const DEFAULT_RPC_FLOOD_THRESHOLD: u32 = 600;

/// The default [`input_flood_threshold`](MultiplayerConfig::input_flood_threshold): input
/// messages per client per second.
pub const DEFAULT_INPUT_FLOOD_THRESHOLD: u32 = 600;

/// Why a [`Multiplayer`](crate::replication::multiplayer::Multiplayer) call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MultiplayerError {
    /// A server or client is running already; [`stop`](crate::replication::multiplayer::Multiplayer::stop) it first.
    AlreadyStarted,
    /// Only the server (or an offline instance) may do this.
    NotServer,
    /// The node is not networked.
    NotNetworked(NodeId),
    /// The node is networked already.
    AlreadyNetworked(NodeId),
    /// The node holds no replicated value (bind needs one).
    NoValue(NodeId),
    /// The storage's [`group`](crate::store::Store::group) of the node is not one clients can
    /// build: a node there holds no replicated value, is listed twice or is networked
    /// already, or is linked to itself or a node after it.
    InvalidGroup(NodeId),
    /// Spawning a scene or a spawner, and binding, need the built-in
    /// [`Scene`](crate::scene::Scene) as the storage; with another storage, network its nodes
    /// with [`replicate`](crate::replication::Multiplayer::replicate).
    NeedsScene,
    /// [`replicate`](crate::replication::Multiplayer::replicate) over the built-in scene:
    /// clients' scenes make nodes from scenes, spawners and binds, not from a type alone.
    ReplicateInScene,
    /// The peer is neither the server nor a client that joined.
    UnknownPeer(PeerId),
    /// [`set_parent`](crate::replication::Multiplayer::set_parent) moves the root of a group
    /// [`replicate`](crate::replication::Multiplayer::replicate) networked, and
    /// [`reparent`](crate::replication::Multiplayer::reparent) the root of a networked scene or
    /// spawner instance; this node travels inside its group (or is bound, or is another
    /// kind's).
    NotGroupRoot(NodeId),
    /// [`set_parent`](crate::replication::Multiplayer::set_parent): the parent is in the
    /// group's own subtree.
    ParentInside(NodeId),
    /// A scene operation failed (unknown scene, missing parent, duplicate name, builder error).
    Scene(SceneError),
    /// The replication messages could not be registered.
    Registry(RegistryError),
    /// The table of linked replicated types could not be built (two types with one stable
    /// name).
    Types(ReplicationRegistryError),
    /// The RPC tables of the linked types could not be built (a type with too many RPCs).
    RpcRegistry(RpcRegistryError),
    /// A spawner with this name is already registered.
    DuplicateSpawner(String),
    /// More spawners than a `u16` index can number.
    TooManySpawners,
    /// No spawner with this index and data type is registered (a handle from another
    /// instance).
    UnknownSpawner(u16),
    /// No node is at this absolute path in the tree (a spawner's parent).
    NoSuchPath(String),
    /// A spawn function returned this node without adding exactly one new child of the
    /// spawner's parent and returning it.
    SpawnerRoot(NodeId),
    /// A spawned or bound node's name, or the path of a parent that is not networked, is
    /// longer than clients read ([`MAX_NAME_BYTES`](crate::replication::MAX_NAME_BYTES)):
    /// nothing was spawned.
    NameTooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// This node's state holds a string member longer than clients read
    /// ([`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)): nothing was spawned or bound.
    StateOverLimit(NodeId),
    /// Every net id is in use, or was freed too recently for every client to have forgotten
    /// it (ids are reused once fresh ones run out, at about 4 billion): nothing was spawned.
    NetIdsExhausted,
    /// A spawner's data holds a string longer than clients read
    /// ([`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)): nothing was spawned.
    SpawnDataOverLimit,
    /// [`spawn_as`](crate::replication::multiplayer::Multiplayer::spawn_as): the scene's root holds no value of the
    /// expected type.
    RootType {
        /// The scene spawned.
        scene: SceneIndex,
        /// The type asked for.
        expected: &'static str,
    },
    /// The client's transport could not be opened (the text of the transport's error: an
    /// address that does not resolve, a socket that cannot be bound).
    Transport(String),
}

impl fmt::Display for MultiplayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyStarted => f.write_str("multiplayer is already running; stop it first"),
            Self::NotServer => f.write_str("only the server can do this"),
            Self::NotNetworked(node) => write!(f, "node {node} is not networked"),
            Self::NotGroupRoot(node) => write!(
                f,
                "node {node} is not the root of a replicated group: move the root `replicate` networked"
            ),
            Self::ParentInside(node) => write!(
                f,
                "the new parent of node {node} is in its own subtree: pick a node outside it"
            ),
            Self::AlreadyNetworked(node) => write!(f, "node {node} is already networked"),
            Self::NoValue(node) => write!(f, "node {node} holds no replicated value"),
            Self::InvalidGroup(node) => write!(
                f,
                "the storage's group of node {node} cannot be built by clients (a node without \
                 a value, listed twice or networked already, or a link to itself or a later node)"
            ),
            Self::NeedsScene => f.write_str(
                "this needs the built-in scene as storage; network a node of another storage \
                 with `replicate`",
            ),
            Self::ReplicateInScene => f.write_str(
                "`replicate` is for a storage of the game's own; in the scene, network nodes \
                 with `spawn`, `spawn_with` or `bind`",
            ),
            Self::UnknownPeer(peer) => {
                write!(f, "{peer} is neither the server nor a joined client")
            }
            Self::Scene(e) => write!(f, "scene error: {e}"),
            Self::Registry(e) => write!(f, "message registry error: {e}"),
            Self::Types(e) => write!(f, "replicated type registry error: {e}"),
            Self::RpcRegistry(e) => write!(f, "RPC registry error: {e}"),
            Self::DuplicateSpawner(name) => {
                write!(f, "a spawner named `{name}` is already registered")
            }
            Self::TooManySpawners => f.write_str("too many spawners for a u16 index"),
            Self::UnknownSpawner(index) => {
                write!(f, "no spawner with index {index} and this data type")
            }
            Self::NoSuchPath(path) => write!(f, "no node at `{path}`"),
            Self::StateOverLimit(node) => {
                write!(
                    f,
                    "node {node}'s state holds a string longer than clients read"
                )
            }
            Self::NetIdsExhausted => f.write_str("no free net id run is long enough for the spawn"),
            Self::SpawnDataOverLimit => {
                f.write_str("the spawn data holds a string longer than clients read")
            }
            Self::NameTooLong { len, limit } => write!(
                f,
                "a node name or parent path of {len} bytes is longer than clients read \
                 ({limit} bytes)"
            ),
            Self::SpawnerRoot(node) => write!(
                f,
                "the spawn function returned {node} but must add exactly one new child of the \
                 spawner's parent and return it"
            ),
            Self::RootType { scene, expected } => {
                write!(f, "the root of scene {} holds no `{expected}`", scene.get())
            }
            Self::Transport(e) => write!(f, "the transport could not be opened: {e}"),
        }
    }
}

impl std::error::Error for MultiplayerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Scene(e) => Some(e),
            Self::Registry(e) => Some(e),
            Self::Types(e) => Some(e),
            Self::RpcRegistry(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SceneError> for MultiplayerError {
    fn from(e: SceneError) -> Self {
        Self::Scene(e)
    }
}

impl From<RegistryError> for MultiplayerError {
    fn from(e: RegistryError) -> Self {
        Self::Registry(e)
    }
}
