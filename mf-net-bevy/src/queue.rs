//! RPCs from ordinary systems: [`NetRpc`] queues calls (their arguments encoded at once, node
//! references with the app's net ids), which the adapter applies in `PostUpdate`, before it
//! sends (and in `PreUpdate`, those queued since), the server's new entities networked first.

use bevy_ecs::entity::Entity;
use bevy_ecs::system::{NonSendMut, Res, SystemParam};
use mf_net::rpc::{OutgoingRpc, RpcCommand, RpcContext, RpcMode, RpcSender, RpcTarget};
use mf_net::store::{NodeId, Store};
use mf_net::transport::PeerId;
use tracing::warn;

use crate::node::entity_of;
use crate::store::NetMultiplayer;
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
/// `authority` calls) in `PostUpdate`, once the server has networked the frame's new entities:
/// a call on an entity spawned (or made [`Networked`](crate::Networked)) in the same frame is
/// held until the entity's spawn goes out, and sent after it. What a call returns here says
/// only whether it was queued; a call that fails when applied is logged, and so is one on an
/// entity that is not networked while the app runs (sent to no one; a `call_local` body runs
/// here only). Systems with it run on the main thread.
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

/// The queue's context, out of its resource until [`put_back`].
pub(crate) fn take(mp: &mut NetMultiplayer) -> Option<RpcContext> {
    let world = mp.store_mut().world_mut();
    world.get_non_send_mut::<NetQueue>()?.ctx.take()
}

/// The queue's context, back in its resource.
pub(crate) fn put_back(mp: &mut NetMultiplayer, ctx: RpcContext) {
    if let Some(mut queue) = mp.store_mut().world_mut().get_non_send_mut::<NetQueue>() {
        queue.ctx = Some(ctx);
    }
}

/// Applies what `ctx` queued (see
/// [`apply_queue`](mf_net::replication::Multiplayer::apply_queue)), after warning about the
/// calls the core will send to no one for want of a networked node.
pub(crate) fn apply(mp: &mut NetMultiplayer, ctx: &mut RpcContext) {
    if mp.is_running() {
        warn_not_networked(mp, ctx);
    }
    mp.apply_queue(ctx);
}

/// Warns about each call of `ctx` on a node that is not networked (the core sends it to no
/// one and runs a `call_local` body here only), but for the calls the server runs here as
/// received (see [`runs_here`]) and those on no node at all (the core warns about those).
fn warn_not_networked(mp: &NetMultiplayer, ctx: &RpcContext) {
    for command in ctx.commands() {
        let RpcCommand::Rpc(queued) = command else {
            continue;
        };
        let call = &queued.call;
        let exists = mp.store().value_type(call.node).is_some();
        if !exists || mp.net_id(call.node).is_some() || runs_here(mp, call) {
            continue;
        }
        warn!(
            rpc = call.info.name,
            entity = ?entity_of(call.node),
            "an RPC queued through NetRpc is on an entity that is not networked: it is sent to \
             no one (a call_local body runs here only)"
        );
    }
}

/// Whether the server runs `call`, on a node that is not networked (its authority is the
/// server's), here as received: an `authority` RPC to everyone or to the server.
fn runs_here(mp: &NetMultiplayer, call: &OutgoingRpc) -> bool {
    let to_server = matches!(
        call.target,
        RpcTarget::All | RpcTarget::Peer(PeerId::SERVER)
    );
    mp.is_server() && call.info.mode == RpcMode::Authority && to_server
}
