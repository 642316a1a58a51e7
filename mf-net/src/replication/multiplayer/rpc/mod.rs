//! RPCs in the [`Multiplayer`] runtime: the [`RpcSink`] that generated senders send through,
//! the receiving side (checks, rate limits, dispatch, failures), the deferred commands of RPC
//! bodies, and the RPC part of the handshake fingerprint.
//!
//! # Wire format
//!
//! One message [`protocol::RPC`] per call: `net id varint · wire id varint · arguments` (the
//! arguments are the parameters' `NetCodec` encodings, nothing else). Reliable RPCs travel on
//! [`Channel::Reliable`], `unreliable` ones on [`Channel::Unreliable`]. Senders encode straight
//! into the bus's writer; nothing is allocated.
//!
//! # Who sends what
//!
//! - A **client** sends to the server only (`name(..)`, or `name_to(PeerId::SERVER, ..)`);
//!   clients never relay, so `name_to` another client is [`RpcSendError::UnknownPeer`].
//! - The **server** sends to every joined client (`name(..)`) or to one (`name_to(peer, ..)`).
//! - Both check the RPC's [`RpcMode`](crate::rpc::RpcMode) against themselves before sending
//!   ([`RpcSendError::NotAllowed`]); the receiver checks it again against the transport's
//!   sender, never anything in the payload.
//! - On a node that is not networked, offline, or with the calling peer as the target, nothing is
//!   sent and only `call_local` bodies run ([`RpcDelivery::NotSent`]), except:
//! - An `authority` RPC the server (or an offline instance) calls on a node it has authority
//!   over, to everyone or named to [`PeerId::SERVER`], goes to itself: the host's own player
//!   on a listen server, or singleplayer. Nothing is
//!   encoded or sent; the body runs at once as a call received from [`PeerId::SERVER`]
//!   ([`RpcDelivery::Here`]): `validate` first, and a rejection or a failure is counted,
//!   raised and returned as the call's error. The RPC's `rate_limit` holds as for a client's
//!   calls ([`RpcSendError::RateLimited`]); flood kicks, which guard against remote peers, do
//!   not apply.
//! - A server RPC on a node spawned this frame is held until the end of the frame, when the
//!   spawn has gone out (so clients know the node when the call arrives).
//!
//! # Receiving (server)
//!
//! In order: the sender must be a joined client; the flood threshold
//! ([`MultiplayerConfig::rpc_flood_threshold`](crate::replication::multiplayer::MultiplayerConfig)) kicks a client sending
//! too many RPCs per second; an unknown node, an unknown wire id or a truncated header is dropped
//! (`rpcs_dropped`); a mode that does not allow the sender is rejected (`rpcs_rejected`,
//! [`MultiplayerEvent::RpcRejected`]); a call over its `rate_limit` is dropped
//! (`rpcs_rate_limited`); then the body runs through [`call_catching`]: undecodable arguments
//! are dropped, a `validate` returning false is rejected, and a body that returns `Err` or panics
//! is logged, counted (`rpcs_failed`), raises [`MultiplayerEvent::RpcFailed`] and, with
//! `kick_on_rpc_failure`, disconnects the sender ([`DisconnectReason::Kicked`]).
//!
//! Clients check the mode against the server and dispatch the same way, without rate limits or
//! kicks.
//!
//! # Commands queued by bodies
//!
//! After a body returns `Ok`, the runtime applies what it queued in its
//! [`RpcContext`], in order (a body that fails has its commands discarded):
//!
//! | command | server | client |
//! | --- | --- | --- |
//! | `spawn` | spawns (the authority must be the server or a joined client) | refused, logged |
//! | `despawn` | frees the node (despawned at the end of the frame) | refused, logged |
//! | `set_authority` | sets it, recursively | refused, logged |
//! | `rpc` | sent like any server call | sent to the server |
//!
//! A queued `call_local` RPC runs its body when it is sent, and what that body queues is applied
//! in turn, up to a nesting depth of [`MAX_COMMAND_DEPTH`].
//!
//! # `panic = "abort"`
//!
//! Catching a panicking body needs unwinding. Built with `panic = "abort"`, a body that panics
//! aborts the process: one client could take the server down with one RPC. Servers that must
//! survive hostile clients keep `panic = "unwind"` (the default), or make sure no body can panic
//! (check inputs with `validate`, return `Err` instead).
//!
//! The caller's own `call_local` run (from `mp.rpc(..)`) is game code calling game code and is
//! not caught: a panic there unwinds into the caller. Queued `call_local` runs applied after a
//! network dispatch are caught and logged like received calls.
//!
//! [`protocol::RPC`]: crate::replication::shared::protocol::RPC
//! [`Channel::Reliable`]: crate::transport::Channel::Reliable
//! [`Channel::Unreliable`]: crate::transport::Channel::Unreliable
//! [`MultiplayerEvent::RpcRejected`]: crate::replication::multiplayer::MultiplayerEvent::RpcRejected
//! [`MultiplayerEvent::RpcFailed`]: crate::replication::multiplayer::MultiplayerEvent::RpcFailed
//! [`call_catching`]: crate::rpc::call_catching
//! [`DisconnectReason::Kicked`]: crate::transport::DisconnectReason::Kicked
//! [`PeerId::SERVER`]: crate::transport::PeerId::SERVER

mod commands;
pub(crate) mod limits;
mod named_nodes;
mod own_call;
mod receive;
mod send;

pub(crate) use crate::replication::shared::rpc_signatures::{
    check_hello_body, describe_refusal, prepare,
};
pub use commands::MAX_COMMAND_DEPTH;
pub(crate) use receive::on_rpc;
pub(crate) use send::flush_deferred;

use std::sync::Arc;

use self::commands::apply_commands;
use self::send::{find_entry, send};
use crate::refs::{with_scope, Resolve};
use crate::replication::multiplayer::Multiplayer;
use crate::replication::shared::config::MultiplayerError;
use crate::rpc::{
    LocalCall, OutgoingRpc, RpcContext, RpcDelivery, RpcRegistry, RpcSendError, RpcSender, RpcSink,
};
use crate::scene::NetRef;
use crate::transport::Transport;
use crate::wire::NetWriter;

// -------------------------------------------------------------------------------------------
// Public API on `Multiplayer`
// -------------------------------------------------------------------------------------------

impl<T: Transport + 'static, S: crate::store::Store> Multiplayer<T, S> {
    /// The RPCs of `handle`'s node: `mp.rpc(player).move_by(input)` (client → server, or server
    /// → every joined client) and `mp.rpc(player).hit_to(peer, 10)` (one peer), with the
    /// type's `<Type>Rpcs` extension trait in scope. See [`RpcSink`] for what a call does, and
    /// the [`rpc` module of the runtime](crate::replication::multiplayer::rpc) for the rules.
    pub fn rpc<X: 'static>(&mut self, handle: NetRef<X>) -> RpcSender<'_, Self, X> {
        RpcSender::new(self, handle)
    }

    /// The RPC tables this instance uses: the ones given to
    /// [`set_rpc_registry`](Self::set_rpc_registry), or those of every linked type. Its
    /// [`dump`](RpcRegistry::dump) lists every RPC with its wire id, mode and options.
    ///
    /// # Errors
    ///
    /// [`MultiplayerError::Types`] or [`MultiplayerError::RpcRegistry`] if the linked types'
    /// tables cannot be built (two replicated types with one stable name, a type with too many
    /// RPCs).
    pub fn rpc_registry(&self) -> Result<Arc<RpcRegistry>, MultiplayerError> {
        self.core.shared.rpc.registry()
    }

    /// Uses `registry` instead of the tables of every linked type (set it before starting: the
    /// handshake fingerprint covers the RPC signatures of the spawnable scenes' types).
    ///
    /// # Errors
    ///
    /// [`MultiplayerError::AlreadyStarted`] while running.
    pub fn set_rpc_registry(&mut self, registry: Arc<RpcRegistry>) -> Result<(), MultiplayerError> {
        if self.bus.is_some() {
            return Err(MultiplayerError::AlreadyStarted);
        }
        self.core.shared.rpc.registry = Some(registry);
        Ok(())
    }
}

/// Sends through the runtime: see the
/// [module documentation](crate::replication::multiplayer::rpc).
impl<T: Transport + 'static, S: crate::store::Store> RpcSink for Multiplayer<T, S> {
    fn send_rpc(
        &mut self,
        rpc: OutgoingRpc,
        encode: &mut dyn FnMut(&mut NetWriter),
    ) -> Result<RpcDelivery, RpcSendError> {
        let registry = self.core.shared.rpc.registry_for(&rpc)?;
        let Self { bus, core, .. } = self;
        let crate::replication::multiplayer::role::Replication { shared, role, .. } = core;
        send(
            crate::replication::shared::outbox::outbox(bus),
            role,
            shared,
            &registry,
            rpc,
            encode,
        )
    }

    fn call_local(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError> {
        self.run_on_caller(rpc, call, true)
    }

    /// The host's (or an offline instance's) call to itself: run as a received call from
    /// [`PeerId::SERVER`](crate::transport::PeerId::SERVER), the body's `validate` included; a
    /// rejection or a failure is counted and raised as for a remote call, and returned.
    fn call_here(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError> {
        self.run_on_caller(rpc, call, false)
    }
}

impl<T: Transport + 'static, S: crate::store::Store> Multiplayer<T, S> {
    /// Prepares `ctx` to queue calls and commands for this runtime from outside an RPC body
    /// (where the runtime cannot be reached: an ECS system, another thread's job): clears it,
    /// and has its senders encode node references among the arguments with this runtime's net
    /// ids from now on. Bind it again after the runtime starts or stops. Apply what it queued
    /// with [`apply_queue`](Self::apply_queue).
    pub fn bind_queue(&self, ctx: &mut RpcContext) {
        let node = crate::store::NodeId::new(u32::MAX, u32::MAX);
        ctx.reset(node, self.local_peer_id(), self.tick(), false);
        ctx.bind_net_ids(self.core.role.net_ids().clone());
    }

    /// Applies what `ctx` queued, in order, as the runtime applies what an RPC body queued
    /// (calls sent, run here or run as `call_local`; on the server, spawns, despawns and
    /// authority changes), then clears it. A call that fails is logged and skipped.
    pub fn apply_queue(&mut self, ctx: &mut RpcContext) {
        let Ok(registry) = self.core.shared.rpc.registry() else {
            ctx.clear_commands();
            return;
        };
        let Self { bus, core, .. } = self;
        let crate::replication::multiplayer::role::Replication { shared, role, .. } = core;
        apply_commands(
            crate::replication::shared::outbox::outbox(bus),
            role,
            shared,
            &registry,
            ctx,
            1,
        );
        ctx.clear_commands();
    }
}

impl<T: Transport + 'static, S: crate::store::Store> Multiplayer<T, S> {
    /// Runs a body on the caller: a `call_local` run (`local`), or a call to itself, which
    /// counts as received (`is_local` false, rejections and failures counted and raised).
    fn run_on_caller(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
        local: bool,
    ) -> Result<(), RpcSendError> {
        let registry = self.core.shared.rpc.registry_for(&rpc)?;
        let (caller, tick) = (self.local_peer_id(), self.tick());
        let Self { bus, core, .. } = self;
        let crate::replication::multiplayer::role::Replication { shared, role, .. } = core;
        let entry = find_entry(&registry, shared, &rpc)?;
        let value = shared
            .store
            .value_mut(rpc.node)
            .ok_or(RpcSendError::NoSuchNode(rpc.node))?;
        let value = entry
            .project(value)
            .ok_or(RpcSendError::WrongType(rpc.node))?;
        let mut ctx = shared.rpc.take_context(0, rpc.node);
        ctx.reset(rpc.node, caller, tick, local);
        // Calls the body queues name nodes by this side's net ids.
        let net_ids = role.net_ids().clone();
        let result = with_scope(Some(&net_ids), Resolve::Argument, || call(value, &mut ctx));
        match &result {
            Ok(()) => apply_commands(
                crate::replication::shared::outbox::outbox(bus),
                role,
                shared,
                &registry,
                &ctx,
                1,
            ),
            Err(error) if !local => own_call::count_failure(shared, caller, rpc, error),
            Err(_) => {}
        }
        shared.rpc.put_context(0, ctx);
        result.map_err(RpcSendError::LocalCall)
    }
}
