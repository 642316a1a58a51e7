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
//!   sent and only `call_local` bodies run ([`RpcDelivery::NotSent`]).
//! - A server RPC on a node spawned this frame is held until the end of the frame, when the
//!   spawn has gone out (so clients know the node when the call arrives).
//!
//! # Receiving (server)
//!
//! In order: the sender must be a joined client; the flood threshold
//! ([`MultiplayerConfig::rpc_flood_threshold`](super::MultiplayerConfig)) kicks a client sending
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

use std::any::TypeId;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tracing::{debug, warn};

use super::events::MultiplayerEvent;
use super::server::ServerState;
use super::{Multiplayer, MultiplayerError, Role, Shared};
use crate::bus::BusCore;
use crate::replication::protocol::{self, RemoteShape, MAX_NAME_BYTES, RPC};
use crate::replication::ReplicationRegistry;
use crate::rpc::{
    call_catching, LocalCall, OutgoingRpc, RpcCallError, RpcCommand, RpcContext, RpcDelivery,
    RpcEntry, RpcInfo, RpcRegistry, RpcSendError, RpcSender, RpcSink, RpcTarget,
};
use crate::scene::{NetRef, NodeId, SceneError, SceneIndex, SceneShape};
use crate::schema;
use crate::transport::{Channel, DisconnectReason, PeerId, Transport};
use crate::wire::{DecodeError, NetReader, NetWriter};

/// How deep queued `call_local` RPCs may run bodies that queue further RPCs; deeper calls are
/// sent but their local bodies are skipped (and logged).
pub const MAX_COMMAND_DEPTH: usize = 4;

const ONE_SECOND: Duration = Duration::from_secs(1);

/// The RPC tables of every linked type, built once (without panicking: an error is kept).
fn default_registry() -> &'static Result<Arc<RpcRegistry>, String> {
    static DEFAULT: OnceLock<Result<Arc<RpcRegistry>, String>> = OnceLock::new();
    DEFAULT.get_or_init(|| {
        let types = ReplicationRegistry::from_inventory().map_err(|e| e.to_string())?;
        RpcRegistry::from_inventory(&types)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    })
}

/// One type's RPC signatures, as the hello carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TypeSignatures {
    name: String,
    hash: u64,
    /// Each RPC's description (`Declaring::name(params) mode, ..`) and signature hash, in wire
    /// order.
    rpcs: Vec<(String, u64)>,
}

/// One RPC held until the end of the frame (its node's spawn has not gone out yet).
#[derive(Debug, Clone, Copy)]
struct Deferred {
    node: NodeId,
    net_id: u32,
    target: RpcTarget,
    channel: Channel,
    /// The range of `wire id · arguments` in [`RpcState::deferred_bytes`].
    bytes: (usize, usize),
}

/// The runtime's RPC state (in [`Shared`]).
#[derive(Debug, Default)]
pub(crate) struct RpcState {
    /// Set with [`Multiplayer::set_rpc_registry`]; otherwise the default registry.
    registry: Option<Arc<RpcRegistry>>,
    /// One context per nesting depth, taken out while its call runs.
    contexts: Vec<Option<RpcContext>>,
    /// The RPC signatures of the spawnable scenes' types (computed when starting).
    signatures: Vec<TypeSignatures>,
    deferred: Vec<Deferred>,
    deferred_bytes: NetWriter,
}

impl RpcState {
    fn registry(&self) -> Result<Arc<RpcRegistry>, String> {
        match &self.registry {
            Some(registry) => Ok(Arc::clone(registry)),
            None => default_registry().clone(),
        }
    }

    fn take_context(&mut self, depth: usize, node: NodeId) -> RpcContext {
        if self.contexts.len() <= depth {
            self.contexts.resize_with(depth + 1, || None);
        }
        self.contexts[depth]
            .take()
            .unwrap_or_else(|| RpcContext::new(node, PeerId::SERVER, 0, false))
    }

    fn put_context(&mut self, depth: usize, mut ctx: RpcContext) {
        ctx.clear_commands();
        if let Some(slot) = self.contexts.get_mut(depth) {
            *slot = Some(ctx);
        }
    }
}

/// Per-connection RPC accounting on the server (in each client slot): the flood window and one
/// window per rate-limited RPC.
#[derive(Debug, Default)]
pub(crate) struct PeerRpcState {
    flood_start: Duration,
    flood_calls: u32,
    limits: Vec<RateWindow>,
}

#[derive(Debug, Clone, Copy)]
struct RateWindow {
    rpc: &'static RpcInfo,
    start: Duration,
    calls: u32,
}

impl PeerRpcState {
    /// Counts one RPC message; `true` if the client is over `threshold` per second (0: never).
    fn flooding(&mut self, now: Duration, threshold: u32) -> bool {
        if self.flood_calls == 0 || now.saturating_sub(self.flood_start) >= ONE_SECOND {
            self.flood_start = now;
            self.flood_calls = 0;
        }
        self.flood_calls = self.flood_calls.saturating_add(1);
        threshold > 0 && self.flood_calls > threshold
    }

    /// Whether one more call of `rpc` fits `limit` calls in the current one-second window (a
    /// window starts with the first call after the previous one ended).
    fn allow(&mut self, rpc: &'static RpcInfo, limit: u32, now: Duration) -> bool {
        let index = match self.limits.iter().position(|w| std::ptr::eq(w.rpc, rpc)) {
            Some(index) => index,
            None => {
                self.limits.push(RateWindow {
                    rpc,
                    start: now,
                    calls: 0,
                });
                self.limits.len() - 1
            }
        };
        let window = &mut self.limits[index];
        if window.calls == 0 || now.saturating_sub(window.start) >= ONE_SECOND {
            window.start = now;
            window.calls = 0;
        }
        if window.calls < limit {
            window.calls += 1;
            true
        } else {
            false
        }
    }
}

// -------------------------------------------------------------------------------------------
// Public API on `Multiplayer`
// -------------------------------------------------------------------------------------------

impl<T: Transport + 'static> Multiplayer<T> {
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
    /// [`MultiplayerError::RpcRegistry`] if the linked types' tables cannot be built (two
    /// replicated types with one stable name).
    pub fn rpc_registry(&self) -> Result<Arc<RpcRegistry>, MultiplayerError> {
        self.shared
            .rpc
            .registry()
            .map_err(MultiplayerError::RpcRegistry)
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
        self.shared.rpc.registry = Some(registry);
        Ok(())
    }
}

/// Sends through the runtime: see the
/// [module documentation](crate::replication::multiplayer::rpc).
impl<T: Transport + 'static> RpcSink for Multiplayer<T> {
    fn send_rpc(
        &mut self,
        rpc: OutgoingRpc,
        encode: &mut dyn FnMut(&mut NetWriter),
    ) -> Result<RpcDelivery, RpcSendError> {
        let registry = self.shared.rpc.registry().map_err(|_| no_such_rpc(&rpc))?;
        let Self { bus, shared, role } = self;
        send(bus.as_deref_mut(), role, shared, &registry, rpc, encode)
    }

    fn call_local(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError> {
        let registry = self.shared.rpc.registry().map_err(|_| no_such_rpc(&rpc))?;
        let (local, tick) = (self.local_peer_id(), self.tick());
        let Self { bus, shared, role } = self;
        let entry = find_entry(&registry, shared, &rpc)?;
        let value = shared
            .scene
            .value_any_mut(rpc.node)
            .ok_or(RpcSendError::NoSuchNode(rpc.node))?;
        let value = entry
            .project(value)
            .ok_or(RpcSendError::WrongType(rpc.node))?;
        let mut ctx = shared.rpc.take_context(0, rpc.node);
        ctx.reset(rpc.node, local, tick, true);
        let result = call(value, &mut ctx);
        if result.is_ok() {
            apply_commands(bus.as_deref_mut(), role, shared, &registry, &ctx, 1);
        }
        shared.rpc.put_context(0, ctx);
        result.map_err(RpcSendError::LocalCall)
    }
}

fn no_such_rpc(rpc: &OutgoingRpc) -> RpcSendError {
    RpcSendError::NoSuchRpc {
        node: rpc.node,
        rpc: rpc.info.name,
    }
}

/// The registry entry of a call: the node must hold a value whose type is (or flattens) the
/// declaring type.
fn find_entry<'r>(
    registry: &'r RpcRegistry,
    shared: &Shared,
    rpc: &OutgoingRpc,
) -> Result<&'r RpcEntry, RpcSendError> {
    let ty = shared
        .scene
        .value_type(rpc.node)
        .ok_or(RpcSendError::NoSuchNode(rpc.node))?;
    let table = registry.table_of(ty);
    if let Some(entry) = table.and_then(|t| t.find(rpc.declaring_type, rpc.rpc_index)) {
        return Ok(entry);
    }
    let declared_somewhere = ty == rpc.declaring_type
        || table.is_some_and(|t| {
            t.entries()
                .iter()
                .any(|e| e.declaring_type() == rpc.declaring_type)
        });
    if declared_somewhere {
        Err(no_such_rpc(rpc))
    } else {
        Err(RpcSendError::WrongType(rpc.node))
    }
}

/// Writes an RPC message's payload.
fn write_call(
    w: &mut NetWriter,
    net_id: u32,
    wire_id: u16,
    encode: &mut dyn FnMut(&mut NetWriter),
) {
    w.write_var_u32(net_id);
    w.write_var_u32(u32::from(wire_id));
    encode(w);
}

/// Sends one call (see the module documentation), on split borrows so that deferred commands
/// can use it while the bus is polling.
fn send<T: Transport>(
    core: Option<&mut BusCore<T>>,
    role: &mut Role,
    shared: &mut Shared,
    registry: &RpcRegistry,
    rpc: OutgoingRpc,
    encode: &mut dyn FnMut(&mut NetWriter),
) -> Result<RpcDelivery, RpcSendError> {
    let entry = find_entry(registry, shared, &rpc)?;
    let wire_id = entry.wire_id();
    let channel = rpc.info.channel();
    let Some(core) = core else {
        return Ok(RpcDelivery::NotSent);
    };
    match role {
        Role::Server(server) => {
            let Some(&net_id) = server.by_node.get(&rpc.node) else {
                return Ok(RpcDelivery::NotSent);
            };
            let authority = server.authority_of(rpc.node).unwrap_or(PeerId::SERVER);
            if !rpc.info.mode.allows(PeerId::SERVER, authority) {
                return Err(not_allowed(&rpc));
            }
            let delivery = match rpc.target {
                RpcTarget::Peer(PeerId::SERVER) => return Ok(RpcDelivery::NotSent),
                RpcTarget::Peer(peer) if !server.joined.contains(&peer) => {
                    return Err(RpcSendError::UnknownPeer(peer))
                }
                RpcTarget::Peer(_) => RpcDelivery::SentToPeer,
                _ => RpcDelivery::Sent,
            };
            let flushed = server
                .nodes
                .binary_search_by_key(&net_id, |n| n.net_id)
                .is_ok();
            if !flushed {
                // Spawned this frame: hold the call until the spawn has gone out.
                let state = &mut shared.rpc;
                let start = state.deferred_bytes.len();
                state.deferred_bytes.write_var_u32(u32::from(wire_id));
                encode(&mut state.deferred_bytes);
                state.deferred.push(Deferred {
                    node: rpc.node,
                    net_id,
                    target: rpc.target,
                    channel,
                    bytes: (start, state.deferred_bytes.len()),
                });
                return Ok(delivery);
            }
            let sent = server_send(core, server, shared, rpc.target, channel, |w| {
                write_call(w, net_id, wire_id, encode);
            });
            match (sent, delivery) {
                (0, RpcDelivery::SentToPeer) => Err(RpcSendError::SendFailed),
                _ => Ok(delivery),
            }
        }
        Role::Client(client) => {
            let Some(&net_id) = client.by_node.get(&rpc.node) else {
                return Ok(RpcDelivery::NotSent);
            };
            let local = client.local_peer;
            let authority = client.authority_of(rpc.node).unwrap_or(PeerId::SERVER);
            if !rpc.info.mode.allows(local, authority) {
                return Err(not_allowed(&rpc));
            }
            let delivery = match rpc.target {
                RpcTarget::Peer(PeerId::SERVER) => RpcDelivery::SentToPeer,
                RpcTarget::Peer(peer) if peer == local => return Ok(RpcDelivery::NotSent),
                // Clients only talk to the server; the server never relays.
                RpcTarget::Peer(peer) => return Err(RpcSendError::UnknownPeer(peer)),
                _ => RpcDelivery::Sent,
            };
            core.send_with(PeerId::SERVER, RPC, channel, |w| {
                write_call(w, net_id, wire_id, encode);
            })
            .map_err(|_| RpcSendError::SendFailed)?;
            shared.stats.rpcs_sent += 1;
            Ok(delivery)
        }
    }
}

fn not_allowed(rpc: &OutgoingRpc) -> RpcSendError {
    RpcSendError::NotAllowed {
        rpc: rpc.info.name,
        mode: rpc.info.mode,
    }
}

/// Sends an RPC message from the server to `target` (every joined client, or one); returns how
/// many peers the transport accepted it for. Counts `rpcs_sent`, in total and per client.
fn server_send<T: Transport>(
    core: &mut BusCore<T>,
    server: &mut ServerState,
    shared: &mut Shared,
    target: RpcTarget,
    channel: Channel,
    mut encode: impl FnMut(&mut NetWriter),
) -> usize {
    let mut sent = 0;
    match target {
        RpcTarget::Peer(peer) => {
            if core.send_with(peer, RPC, channel, &mut encode).is_ok() {
                sent = 1;
                count_sent(server, peer);
            }
        }
        _ if server.joined.len() == core.peers().len() => {
            // Every connection joined: encode once.
            sent = core.broadcast_with(RPC, channel, None, encode);
            for i in 0..server.joined.len() {
                let peer = server.joined[i];
                count_sent(server, peer);
            }
        }
        _ => {
            for i in 0..server.joined.len() {
                let peer = server.joined[i];
                if core.send_with(peer, RPC, channel, &mut encode).is_ok() {
                    sent += 1;
                    count_sent(server, peer);
                }
            }
        }
    }
    shared.stats.rpcs_sent += sent as u64;
    sent
}

fn count_sent(server: &mut ServerState, peer: PeerId) {
    if let Some(c) = server.clients.iter_mut().find(|c| c.peer == peer) {
        c.stats.rpcs_sent += 1;
    }
}

/// End of the server's frame: sends the RPCs held for nodes spawned during it (their spawns
/// have gone out now). Calls whose node was freed before its spawn left are dropped.
pub(super) fn flush_deferred<T: Transport>(
    core: Option<&mut BusCore<T>>,
    server: &mut ServerState,
    shared: &mut Shared,
) {
    if shared.rpc.deferred.is_empty() {
        return;
    }
    let deferred = std::mem::take(&mut shared.rpc.deferred);
    let bytes = std::mem::take(&mut shared.rpc.deferred_bytes);
    if let Some(core) = core {
        for call in &deferred {
            let alive = server.by_node.get(&call.node) == Some(&call.net_id)
                && server
                    .nodes
                    .binary_search_by_key(&call.net_id, |n| n.net_id)
                    .is_ok();
            let payload = bytes.as_slice().get(call.bytes.0..call.bytes.1);
            let (true, Some(payload)) = (alive, payload) else {
                debug!(net_id = call.net_id, "held RPC dropped: its node is gone");
                continue;
            };
            let target = match call.target {
                RpcTarget::Peer(peer) if !server.joined.contains(&peer) => continue,
                target => target,
            };
            let net_id = call.net_id;
            server_send(core, server, shared, target, call.channel, |w| {
                w.write_var_u32(net_id);
                w.write_bytes(payload);
            });
        }
    }
    // Keep the buffers (cleared) for the next frame.
    let mut deferred = deferred;
    deferred.clear();
    let mut bytes = bytes;
    bytes.clear();
    shared.rpc.deferred = deferred;
    shared.rpc.deferred_bytes = bytes;
}

// -------------------------------------------------------------------------------------------
// Receiving
// -------------------------------------------------------------------------------------------

/// What the checks before the dispatch decided.
enum Verdict<'r> {
    Dispatch(NodeId, &'r RpcEntry),
    Done,
}

/// An RPC message from `sender` (the transport's peer), with the sender's `tick`. Always
/// handled here (counted, never an error for the bus).
pub(super) fn on_rpc<T: Transport>(
    role: &mut Role,
    core: &mut BusCore<T>,
    shared: &mut Shared,
    sender: PeerId,
    tick: u32,
    r: &mut NetReader<'_>,
) -> Result<bool, DecodeError> {
    shared.stats.rpcs_received += 1;
    let Ok(registry) = shared.rpc.registry() else {
        shared.stats.rpcs_dropped += 1;
        return Ok(true);
    };
    let verdict = match role {
        Role::Server(server) => server_checks(server, core, shared, &registry, sender, r),
        Role::Client(client) => {
            let known = sender == PeerId::SERVER && client.welcomed;
            match header(r).ok().filter(|_| known) {
                None => drop_call(shared, None, "malformed RPC header"),
                Some((net_id, wire_id)) => match client.node_of(net_id) {
                    None => drop_call(shared, None, "RPC for an unknown node"),
                    Some(node) => match lookup(&registry, shared, node, wire_id) {
                        None => drop_call(shared, None, "unknown RPC id"),
                        Some(entry) => {
                            let authority = client.authority_of(node).unwrap_or(PeerId::SERVER);
                            if entry.info().mode.allows(sender, authority) {
                                Verdict::Dispatch(node, entry)
                            } else {
                                reject(shared, None, sender, node, entry.info())
                            }
                        }
                    },
                },
            }
        }
    };
    let Verdict::Dispatch(node, entry) = verdict else {
        return Ok(true);
    };
    let Some(value) = shared.scene.value_any_mut(node) else {
        return Ok(true);
    };
    let mut ctx = shared.rpc.take_context(0, node);
    ctx.reset(node, sender, tick, false);
    let result = call_catching(|| entry.dispatch(value, &mut ctx, r));
    let info = entry.info();
    match result {
        Ok(()) => {
            debug!(%sender, rpc = info.name, "RPC dispatched");
            apply_commands(Some(core), role, shared, &registry, &ctx, 1);
        }
        Err(RpcCallError::Malformed(error)) => {
            debug!(%sender, rpc = info.name, %error, "RPC with malformed arguments dropped");
            let server = server_of(role);
            drop_call(shared, server.map(|s| (s, sender)), "malformed arguments");
        }
        Err(RpcCallError::Rejected) => {
            reject(shared, server_of(role), sender, node, info);
        }
        Err(error @ (RpcCallError::Failed(_) | RpcCallError::Panicked(_))) => {
            warn!(%sender, rpc = info.name, %error, "RPC failed");
            shared.stats.rpcs_failed += 1;
            if let Some(c) = client_slot(role, sender) {
                c.stats.rpcs_failed += 1;
            }
            shared.events.push(MultiplayerEvent::RpcFailed {
                peer: sender,
                node,
                rpc: info.name,
                error,
            });
            if shared.config.kick_on_rpc_failure && sender != PeerId::SERVER {
                if let Role::Server(server) = role {
                    kick(core, server, shared, sender, "its RPC failed");
                }
            }
        }
        Err(error) => {
            warn!(%sender, rpc = info.name, %error, "RPC not run");
            drop_call(shared, server_of(role).map(|s| (s, sender)), "RPC not run");
        }
    }
    shared.rpc.put_context(0, ctx);
    Ok(true)
}

fn server_of(role: &mut Role) -> Option<&mut ServerState> {
    match role {
        Role::Server(server) => Some(server),
        Role::Client(_) => None,
    }
}

fn client_slot(role: &mut Role, peer: PeerId) -> Option<&mut super::server::ClientSlot> {
    server_of(role)?.clients.iter_mut().find(|c| c.peer == peer)
}

/// Reads the net id and wire id.
fn header(r: &mut NetReader<'_>) -> Result<(u32, u16), DecodeError> {
    let net_id = r.read_var_u32()?;
    let wire_id =
        u16::try_from(r.read_var_u32()?).map_err(|_| DecodeError::Invalid("RPC wire id"))?;
    Ok((net_id, wire_id))
}

fn lookup<'r>(
    registry: &'r RpcRegistry,
    shared: &Shared,
    node: NodeId,
    wire_id: u16,
) -> Option<&'r RpcEntry> {
    let ty: TypeId = shared.scene.value_type(node)?;
    registry.table_of(ty)?.get(wire_id)
}

/// Counts a dropped call (in total, and for the sending client on the server).
fn drop_call<'r>(
    shared: &mut Shared,
    server: Option<(&mut ServerState, PeerId)>,
    why: &'static str,
) -> Verdict<'r> {
    debug!(why, "RPC dropped");
    shared.stats.rpcs_dropped += 1;
    if let Some((server, peer)) = server {
        if let Some(c) = server.clients.iter_mut().find(|c| c.peer == peer) {
            c.stats.rpcs_dropped += 1;
        }
    }
    Verdict::Done
}

/// Counts a rejected call and raises [`MultiplayerEvent::RpcRejected`].
fn reject<'r>(
    shared: &mut Shared,
    server: Option<&mut ServerState>,
    sender: PeerId,
    node: NodeId,
    info: &RpcInfo,
) -> Verdict<'r> {
    debug!(%sender, rpc = info.name, mode = %info.mode, "RPC rejected");
    shared.stats.rpcs_rejected += 1;
    if let Some(c) = server.and_then(|s| s.clients.iter_mut().find(|c| c.peer == sender)) {
        c.stats.rpcs_rejected += 1;
    }
    shared.events.push(MultiplayerEvent::RpcRejected {
        peer: sender,
        node,
        rpc: info.name,
    });
    Verdict::Done
}

/// The server's checks before a dispatch.
fn server_checks<'r, T: Transport>(
    server: &mut ServerState,
    core: &mut BusCore<T>,
    shared: &mut Shared,
    registry: &'r RpcRegistry,
    sender: PeerId,
    r: &mut NetReader<'_>,
) -> Verdict<'r> {
    let now = shared.now;
    let threshold = shared.config.rpc_flood_threshold;
    let Some(slot) = server
        .clients
        .iter_mut()
        .find(|c| c.peer == sender && c.ready)
    else {
        return drop_call(shared, None, "RPC from a client that has not joined");
    };
    slot.stats.rpcs_received += 1;
    if slot.rpc.flooding(now, threshold) {
        shared.stats.rpcs_dropped += 1;
        kick(core, server, shared, sender, "RPC flood");
        return Verdict::Done;
    }
    let Ok((net_id, wire_id)) = header(r) else {
        return drop_call(shared, Some((server, sender)), "malformed RPC header");
    };
    let Some(node) = server.node_of(net_id) else {
        return drop_call(shared, Some((server, sender)), "RPC for an unknown node");
    };
    let Some(entry) = lookup(registry, shared, node, wire_id) else {
        return drop_call(shared, Some((server, sender)), "unknown RPC id");
    };
    let info = entry.info();
    let authority = server.authority_of(node).unwrap_or(PeerId::SERVER);
    if !info.mode.allows(sender, authority) {
        return reject(shared, Some(server), sender, node, info);
    }
    if let Some(limit) = info.rate_limit {
        let Some(slot) = server.clients.iter_mut().find(|c| c.peer == sender) else {
            return Verdict::Done;
        };
        if !slot.rpc.allow(info, limit, now) {
            slot.stats.rpcs_rate_limited += 1;
            shared.stats.rpcs_rate_limited += 1;
            debug!(%sender, rpc = info.name, limit, "RPC over its rate limit dropped");
            return Verdict::Done;
        }
    }
    Verdict::Dispatch(node, entry)
}

fn kick<T: Transport>(
    core: &mut BusCore<T>,
    server: &mut ServerState,
    shared: &mut Shared,
    peer: PeerId,
    why: &'static str,
) {
    warn!(%peer, why, "kicking client");
    shared.stats.rpc_kicks += 1;
    core.disconnect(peer, DisconnectReason::Kicked);
    server.peer_left(Some(core), shared, peer, DisconnectReason::Kicked);
}

// -------------------------------------------------------------------------------------------
// Commands
// -------------------------------------------------------------------------------------------

/// Applies what a body queued in `ctx` (see the module documentation). `depth` is the nesting
/// depth of the call that queued them plus one.
fn apply_commands<T: Transport>(
    mut core: Option<&mut BusCore<T>>,
    role: &mut Role,
    shared: &mut Shared,
    registry: &RpcRegistry,
    ctx: &RpcContext,
    depth: usize,
) {
    for command in ctx.commands() {
        let queued = match *command {
            RpcCommand::Rpc(queued) => queued,
            other => {
                match role {
                    Role::Server(server) => {
                        apply_server_command(core.as_deref_mut(), server, shared, other)
                    }
                    Role::Client(_) => warn!(
                        command = ?other,
                        "a client cannot spawn, despawn or set authority; command dropped"
                    ),
                }
                continue;
            }
        };
        let args = ctx.args(&queued);
        let mut encode = |w: &mut NetWriter| w.write_bytes(args);
        let call = queued.call;
        match send(
            core.as_deref_mut(),
            role,
            shared,
            registry,
            call,
            &mut encode,
        ) {
            Ok(delivery) if call.info.call_local && delivery.runs_call_local() => {
                run_queued_local(
                    core.as_deref_mut(),
                    role,
                    shared,
                    registry,
                    call,
                    args,
                    depth,
                );
            }
            Ok(_) => {}
            Err(error) => warn!(rpc = call.info.name, %error, "queued RPC not sent"),
        }
    }
}

/// A spawn, despawn or authority change queued by a body, on the server.
fn apply_server_command<T: Transport>(
    core: Option<&mut BusCore<T>>,
    server: &mut ServerState,
    shared: &mut Shared,
    command: RpcCommand,
) {
    match command {
        RpcCommand::Spawn {
            scene,
            parent,
            authority,
        } => {
            if let Err(error) = spawn(server, shared, scene, parent, authority) {
                warn!(%error, "spawn queued by an RPC failed");
            }
        }
        RpcCommand::Despawn { node } => {
            shared.scene.remove(node);
        }
        RpcCommand::SetAuthority { node, peer } => {
            if !server.valid_authority(peer) {
                warn!(%peer, "authority queued by an RPC: unknown peer");
            } else if server
                .set_authority(core, shared, node, peer, true)
                .is_none()
            {
                warn!(%node, "authority queued by an RPC: node not networked");
            }
        }
        RpcCommand::Rpc(_) => {}
    }
}

/// Runs the body of a queued `call_local` RPC on the caller, from its encoded arguments.
fn run_queued_local<T: Transport>(
    core: Option<&mut BusCore<T>>,
    role: &mut Role,
    shared: &mut Shared,
    registry: &RpcRegistry,
    call: OutgoingRpc,
    args: &[u8],
    depth: usize,
) {
    if depth > MAX_COMMAND_DEPTH {
        warn!(
            rpc = call.info.name,
            "queued call_local RPCs nested too deep; body skipped"
        );
        return;
    }
    let Ok(entry) = find_entry(registry, shared, &call) else {
        return;
    };
    let (local, tick) = match role {
        Role::Server(server) => (PeerId::SERVER, server.tick),
        Role::Client(client) => (client.local_peer, client.newest_applied),
    };
    let Some(value) = shared.scene.value_any_mut(call.node) else {
        return;
    };
    let mut ctx = shared.rpc.take_context(depth, call.node);
    ctx.reset(call.node, local, tick, true);
    let result = call_catching(|| entry.dispatch(value, &mut ctx, &mut NetReader::new(args)));
    match result {
        Ok(()) => apply_commands(core, role, shared, registry, &ctx, depth + 1),
        Err(error) => warn!(rpc = call.info.name, %error, "queued local RPC failed"),
    }
    shared.rpc.put_context(depth, ctx);
}

/// `Multiplayer::spawn` on split borrows.
fn spawn(
    server: &mut ServerState,
    shared: &mut Shared,
    scene: SceneIndex,
    parent: NodeId,
    authority: PeerId,
) -> Result<NodeId, MultiplayerError> {
    if !server.valid_authority(authority) {
        return Err(MultiplayerError::UnknownPeer(authority));
    }
    if !shared.scene.is_attached(parent) {
        return Err(SceneError::NoSuchNode(parent).into());
    }
    let scene_name = shared
        .library
        .name(scene)
        .ok_or(SceneError::UnknownScene(scene))?;
    let name = format!("{scene_name}#{}", server.next_net_id());
    let root = shared
        .library
        .instantiate(scene, &mut shared.scene, parent, &name)?;
    server.add_group(
        &shared.scene,
        root,
        i32::from(scene.get()),
        parent,
        authority,
    );
    Ok(root)
}

// -------------------------------------------------------------------------------------------
// Handshake
// -------------------------------------------------------------------------------------------

/// When starting (after the shapes): collects the RPC signatures of the spawnable scenes' types
/// and folds them into the replication fingerprint (left as it is when none has RPCs).
pub(super) fn prepare(shared: &mut Shared) -> Result<(), MultiplayerError> {
    let registry = shared
        .rpc
        .registry()
        .map_err(MultiplayerError::RpcRegistry)?;
    let signatures = signatures_of(&registry, &shared.shapes);
    shared.fingerprint = fold(shared.fingerprint, &signatures);
    shared.rpc.signatures = signatures;
    Ok(())
}

/// The RPC signatures of the types of `shapes` that have RPCs, each type once, in order of
/// first appearance.
fn signatures_of(registry: &RpcRegistry, shapes: &[SceneShape]) -> Vec<TypeSignatures> {
    let mut signatures: Vec<TypeSignatures> = Vec::new();
    for shape in shapes {
        for &(name, _) in &shape.types {
            if signatures.iter().any(|s| s.name == name) {
                continue;
            }
            let Some(table) = registry.table_named(name).filter(|t| !t.is_empty()) else {
                continue;
            };
            signatures.push(TypeSignatures {
                name: name.to_owned(),
                hash: table.signature_hash(),
                rpcs: table
                    .entries()
                    .iter()
                    .map(|e| {
                        (
                            format!("{}::{}", e.declaring_name(), e.info()),
                            e.info().signature_hash(),
                        )
                    })
                    .collect(),
            });
        }
    }
    signatures
}

fn fold(fingerprint: u64, signatures: &[TypeSignatures]) -> u64 {
    if signatures.is_empty() {
        return fingerprint;
    }
    let mut hash = schema::hash_name("mf_net::replication::Rpc");
    hash = schema::hash_u64(hash, signatures.len() as u64);
    for s in signatures {
        hash = schema::hash_str(hash, &s.name);
        hash = schema::hash_u64(hash, s.hash);
    }
    schema::hash_u64(fingerprint, hash)
}

/// Appends the RPC signatures to a hello (after the shapes; nothing when no type has RPCs):
/// type count varint · per type: name string · RPC count varint · per RPC: description string,
/// signature hash `u64`.
pub(super) fn write_signatures(w: &mut NetWriter, state: &RpcState) {
    if state.signatures.is_empty() {
        return;
    }
    w.write_len(state.signatures.len());
    for s in &state.signatures {
        w.write_str(&s.name);
        w.write_len(s.rpcs.len());
        for (text, hash) in &s.rpcs {
            w.write_str(text);
            w.write_u64(*hash);
        }
    }
}

fn read_signatures(r: &mut NetReader<'_>) -> Result<Vec<TypeSignatures>, DecodeError> {
    if r.remaining() == 0 {
        return Ok(Vec::new());
    }
    let types = r.read_count(2)?;
    let mut out = Vec::with_capacity(types);
    for _ in 0..types {
        let name = r.read_str_max(MAX_NAME_BYTES)?.to_owned();
        let count = r.read_count(9)?;
        let mut rpcs = Vec::with_capacity(count);
        for _ in 0..count {
            let text = r.read_str_max(MAX_NAME_BYTES)?.to_owned();
            rpcs.push((text, r.read_u64()?));
        }
        out.push(TypeSignatures {
            name,
            hash: 0,
            rpcs,
        });
    }
    Ok(out)
}

fn same_shapes(ours: &[SceneShape], theirs: &[RemoteShape]) -> bool {
    ours.len() == theirs.len()
        && ours.iter().zip(theirs).all(|(a, b)| {
            a.name == b.name
                && a.types.len() == b.types.len()
                && a.types
                    .iter()
                    .zip(&b.types)
                    .all(|(x, y)| x.0 == y.0 && x.1 == y.1)
        })
}

/// The server's refusal text for a hello whose fingerprint differs (the reader is after the
/// fingerprint): the first differing scene or node type, else the first differing RPC.
pub(super) fn describe_refusal(shared: &Shared, r: &mut NetReader<'_>) -> String {
    match protocol::read_shapes(r) {
        Ok(theirs) if !same_shapes(&shared.shapes, &theirs) => {
            protocol::describe_difference(&shared.shapes, &theirs)
        }
        Ok(_) => match read_signatures(r) {
            Ok(theirs) => describe_rpc_difference(&shared.rpc.signatures, &theirs),
            Err(_) => "replication fingerprints differ".to_owned(),
        },
        Err(_) => "replication fingerprints differ".to_owned(),
    }
}

/// Names the first RPC difference between the server's signatures and a client's.
fn describe_rpc_difference(ours: &[TypeSignatures], theirs: &[TypeSignatures]) -> String {
    for a in ours {
        let Some(b) = theirs.iter().find(|b| b.name == a.name) else {
            return format!(
                "type `{}` has {} RPC(s) on the server and none on the client (first: `{}`)",
                a.name,
                a.rpcs.len(),
                a.rpcs.first().map_or("", |r| r.0.as_str())
            );
        };
        for (wire_id, (x, y)) in a.rpcs.iter().zip(&b.rpcs).enumerate() {
            if x.1 != y.1 {
                return format!(
                    "type `{}`, RPC wire id {wire_id}: `{}` on the server but `{}` on the client",
                    a.name, x.0, y.0
                );
            }
        }
        if a.rpcs.len() != b.rpcs.len() {
            let extra = a
                .rpcs
                .get(b.rpcs.len())
                .or_else(|| b.rpcs.get(a.rpcs.len()))
                .map_or("", |r| r.0.as_str());
            return format!(
                "type `{}` has {} RPC(s) on the server and {} on the client (first extra: `{extra}`)",
                a.name,
                a.rpcs.len(),
                b.rpcs.len()
            );
        }
    }
    if let Some(b) = theirs
        .iter()
        .find(|b| !ours.iter().any(|a| a.name == b.name))
    {
        return format!(
            "type `{}` has {} RPC(s) on the client and none on the server (first: `{}`)",
            b.name,
            b.rpcs.len(),
            b.rpcs.first().map_or("", |r| r.0.as_str())
        );
    }
    "replication fingerprints differ".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigs(name: &str, rpcs: &[(&str, u64)]) -> TypeSignatures {
        TypeSignatures {
            name: name.to_owned(),
            hash: 0,
            rpcs: rpcs.iter().map(|(t, h)| ((*t).to_owned(), *h)).collect(),
        }
    }

    #[test]
    fn rpc_differences_name_the_type_and_the_rpc() {
        let ours = [sigs(
            "Pawn",
            &[("Pawn::hit(d: i32) server", 1), ("Pawn::go() authority", 2)],
        )];
        let changed = [sigs(
            "Pawn",
            &[("Pawn::hit(d: u8) server", 3), ("Pawn::go() authority", 2)],
        )];
        let text = describe_rpc_difference(&ours, &changed);
        assert!(
            text.contains("wire id 0") && text.contains("hit(d: u8)"),
            "{text}"
        );
        let fewer = [sigs("Pawn", &[("Pawn::hit(d: i32) server", 1)])];
        let text = describe_rpc_difference(&ours, &fewer);
        assert!(
            text.contains("2 RPC(s) on the server and 1") && text.contains("go()"),
            "{text}"
        );
        let text = describe_rpc_difference(&ours, &[]);
        assert!(text.contains("none on the client"), "{text}");
        let text = describe_rpc_difference(&[], &ours);
        assert!(text.contains("none on the server"), "{text}");
    }

    #[test]
    fn signatures_round_trip_through_the_hello() {
        let state = RpcState {
            signatures: vec![sigs("Pawn", &[("Pawn::hit(d: i32) server", 7)])],
            ..RpcState::default()
        };
        let mut w = NetWriter::new();
        write_signatures(&mut w, &state);
        let read = read_signatures(&mut NetReader::new(w.as_slice())).unwrap_or_default();
        assert_eq!(read, state.signatures);
        assert!(read_signatures(&mut NetReader::new(&[])).is_ok_and(|s| s.is_empty()));
        assert!(read_signatures(&mut NetReader::new(&[200, 1])).is_err());
    }

    fn none(
        _: &mut dyn std::any::Any,
        _: &mut RpcContext,
        _: &mut NetReader<'_>,
    ) -> Result<(), RpcCallError> {
        Ok(())
    }

    static INFO: RpcInfo = RpcInfo {
        name: "x",
        mode: crate::rpc::RpcMode::AnyPeer,
        call_local: false,
        reliable: true,
        rate_limit: Some(3),
        validate: None,
        params: &[],
        dispatch: none,
    };

    #[test]
    fn rate_windows_hold_limit_calls_per_second() {
        let info = &INFO;
        let mut peer = PeerRpcState::default();
        let t = Duration::from_millis;
        let allowed = (0..10).filter(|_| peer.allow(info, 3, t(100))).count();
        assert_eq!(allowed, 3);
        assert!(!peer.allow(info, 3, t(1099)));
        assert!(peer.allow(info, 3, t(1100)));
        assert!(!peer.flooding(t(0), 2) && !peer.flooding(t(0), 2) && peer.flooding(t(0), 2));
        assert!(!peer.flooding(t(1000), 2));
        assert!(!peer.flooding(t(5), 0));
    }
}
