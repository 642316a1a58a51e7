//! [`RpcState`]: the runtime's RPC tables, contexts and held calls, kept in
//! [`Shared`](super::state::Shared) for both halves.

use std::sync::{Arc, OnceLock};

use super::config::MultiplayerError;
use crate::replication::ReplicationRegistry;
use crate::rpc::{OutgoingRpc, RpcContext, RpcRegistry, RpcSendError, RpcTarget};
use crate::scene::NodeId;
use crate::transport::{Channel, PeerId};
use crate::wire::NetWriter;

/// The RPC tables of every linked type, built once (without panicking: an error is kept).
fn default_registry() -> &'static Result<Arc<RpcRegistry>, MultiplayerError> {
    static DEFAULT: OnceLock<Result<Arc<RpcRegistry>, MultiplayerError>> = OnceLock::new();
    DEFAULT.get_or_init(|| {
        let types = ReplicationRegistry::from_inventory().map_err(MultiplayerError::Types)?;
        RpcRegistry::from_inventory(&types)
            .map(Arc::new)
            .map_err(MultiplayerError::RpcRegistry)
    })
}

/// The runtime's RPC state (in [`Shared`](super::state::Shared)).
#[derive(Debug, Default)]
pub(crate) struct RpcState {
    /// Set with [`Multiplayer::set_rpc_registry`](crate::replication::Multiplayer::set_rpc_registry); otherwise the default registry.
    pub(crate) registry: Option<Arc<RpcRegistry>>,
    /// One context per nesting depth, taken out while its call runs.
    pub(crate) contexts: Vec<Option<RpcContext>>,
    /// The RPC signatures of the spawnable scenes' types (computed when starting).
    pub(crate) signatures: Vec<TypeSignatures>,
    pub(crate) deferred: Vec<Deferred>,
    pub(crate) deferred_bytes: NetWriter,
    /// The net ids a client's call names (scratch for the server's check, capacity kept).
    pub(crate) named: Vec<u32>,
}

impl RpcState {
    pub(crate) fn registry(&self) -> Result<Arc<RpcRegistry>, MultiplayerError> {
        match &self.registry {
            Some(registry) => Ok(Arc::clone(registry)),
            None => default_registry().clone(),
        }
    }

    /// [`registry`](Self::registry) for sending `rpc`: none is `NoSuchRpc` for it.
    pub(crate) fn registry_for(&self, rpc: &OutgoingRpc) -> Result<Arc<RpcRegistry>, RpcSendError> {
        self.registry().map_err(|_| no_such_rpc(rpc))
    }

    pub(crate) fn take_context(&mut self, depth: usize, node: NodeId) -> RpcContext {
        if self.contexts.len() <= depth {
            self.contexts.resize_with(depth + 1, || None);
        }
        self.contexts[depth]
            .take()
            .unwrap_or_else(|| RpcContext::new(node, PeerId::SERVER, 0, false))
    }

    pub(crate) fn put_context(&mut self, depth: usize, mut ctx: RpcContext) {
        ctx.clear_commands();
        if let Some(slot) = self.contexts.get_mut(depth) {
            *slot = Some(ctx);
        }
    }
}

/// One type's RPC signatures, as the hello carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeSignatures {
    pub(crate) name: String,
    pub(crate) hash: u64,
    /// Each RPC's description (`Declaring::name(params) mode, ..`) and signature hash, in wire
    /// order.
    pub(crate) rpcs: Vec<(String, u64)>,
}

/// One RPC held until the end of the frame (its node's spawn has not gone out yet).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deferred {
    pub(crate) node: NodeId,
    pub(crate) net_id: u32,
    pub(crate) target: RpcTarget,
    pub(crate) channel: Channel,
    /// The range of `wire id · arguments` in
    /// [`RpcState::deferred_bytes`](RpcState::deferred_bytes).
    pub(crate) bytes: (usize, usize),
}

/// The error for a call whose node's type has no such RPC.
pub(crate) fn no_such_rpc(rpc: &OutgoingRpc) -> RpcSendError {
    RpcSendError::NoSuchRpc {
        node: rpc.node,
        rpc: rpc.info.name,
    }
}
