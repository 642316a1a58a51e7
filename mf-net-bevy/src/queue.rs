//! RPCs from ordinary systems: [`NetRpc`] queues calls (their arguments encoded at once, node
//! references with the app's net ids), which the adapter applies in `PostUpdate`, before it
//! sends.

use bevy_ecs::entity::Entity;
use bevy_ecs::system::{NonSendMut, Res, SystemParam};
use mf_net::rpc::{RpcContext, RpcSender};
use mf_net::store::NodeId;
use mf_net::transport::PeerId;

use crate::types::ReplicatedComponents;

/// The app's queue of calls (a non-send resource), bound to the core every frame.
pub struct NetQueue {
    pub(crate) ctx: Option<RpcContext>,
}

impl Default for NetQueue {
    fn default() -> Self {
        let ctx = RpcContext::new(NodeId::new(u32::MAX, u32::MAX), PeerId::SERVER, 0, false);
        Self { ctx: Some(ctx) }
    }
}

/// A system parameter that sends RPCs: `rpc.on::<Ship>(entity).thrust(dir)` queues the call
/// with its arguments encoded; the adapter sends it (or runs it, for the server's own
/// `authority` calls) in `PostUpdate`. What a call returns here says only whether it was
/// queued; a call that fails when applied is logged. Systems with it run on the main thread.
#[derive(SystemParam)]
pub struct NetRpc<'w> {
    queue: NonSendMut<'w, NetQueue>,
    types: Res<'w, ReplicatedComponents>,
}

impl NetRpc<'_> {
    /// The RPCs of `C` on `entity`'s `C` component, queued (for a `C` that is not
    /// [replicated](crate::ReplicateAppExt::replicate), they name no node and fail when
    /// applied).
    ///
    /// # Panics
    ///
    /// Not while the adapter applies the queue (no system runs then).
    pub fn on<C: 'static>(&mut self, entity: Entity) -> RpcSender<'_, RpcContext, C> {
        let node = self.types.node_of::<C>(entity);
        let node = node.unwrap_or(NodeId::new(u32::MAX, u32::MAX));
        let ctx = self
            .queue
            .ctx
            .as_mut()
            .expect("the queue is here between frames");
        RpcSender::for_node(ctx, node)
    }
}
