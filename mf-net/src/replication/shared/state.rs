//! [`Shared`]: everything of the runtime but the bus and the role's state, lent to the server
//! and client halves.

use std::time::Duration;

use super::config::MultiplayerConfig;
use super::events::EventQueue;
use super::instance::as_scene;
use super::misuse::MisuseWatch;
use super::rpc_state::RpcState;
use super::spawners::SpawnerTable;
use super::stats::{Bandwidth, NetworkStats};
use crate::scene::{Scene, SceneLibrary, SceneShape};
use crate::store::Store;

/// Everything but the bus and the role state, lent to the server and client halves.
pub(crate) struct Shared {
    /// The storage of the replicated values (the built-in [`Scene`] unless the game lent
    /// its own).
    pub(crate) store: Box<dyn Store>,
    pub(crate) library: SceneLibrary,
    pub(crate) config: MultiplayerConfig,
    pub(crate) events: EventQueue,
    pub(crate) stats: NetworkStats,
    pub(crate) bandwidth: Bandwidth,
    pub(crate) now: Duration,
    pub(crate) frame_dt: Duration,
    /// Our scene shapes and their fingerprint (computed when starting).
    pub(crate) shapes: Vec<SceneShape>,
    pub(crate) fingerprint: u64,
    pub(crate) refusal: Option<String>,
    /// The registered spawners (scene index −2).
    pub(crate) spawners: SpawnerTable,
    /// RPC tables, contexts, held calls and the RPC signatures of the handshake.
    pub(crate) rpc: RpcState,
    /// Misconfigurations noticed and reported.
    pub(crate) misuse: MisuseWatch,
}

impl Shared {
    /// The storage, if it is the built-in scene (what spawns of scenes and spawners, and
    /// binds, need: a tree, paths, names).
    pub(crate) fn scene(&self) -> Option<&Scene> {
        as_scene(&*self.store)
    }
}
