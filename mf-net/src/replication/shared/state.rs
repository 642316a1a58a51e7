//! [`Shared`]: everything of the runtime but the bus and the role's state, lent to the server
//! and client halves.

use std::time::Duration;

use super::config::MultiplayerConfig;
use super::events::EventQueue;
use super::misuse::MisuseWatch;
use super::rpc_state::RpcState;
use super::spawners::SpawnerTable;
use super::stats::{Bandwidth, NetworkStats};
use crate::scene::{Scene, SceneLibrary, SceneShape};

/// Everything but the bus and the role state, lent to the server and client halves.
pub(crate) struct Shared {
    pub(crate) scene: Scene,
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
