//! Receiving: the checks a call passes before its body runs (server: joined sender, flood,
//! header, mode, rate limit; client: mode), the dispatch, and what a failing body costs its
//! sender. See the [module documentation](super).

use std::any::TypeId;

use tracing::{debug, warn};

use crate::refs::{with_scope, Resolve};
use crate::replication::multiplayer::role::Role;
use crate::replication::multiplayer::rpc::commands::apply_commands;
use crate::replication::multiplayer::rpc::named_nodes;
use crate::replication::server::client_slot::ClientSlot;
use crate::replication::server::state::ServerState;
use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::state::Shared;
use crate::rpc::{call_catching, RpcCallError, RpcEntry, RpcInfo, RpcRegistry};
use crate::scene::NodeId;
use crate::tick::tick_after;
use crate::transport::PeerId;
use crate::wire::{DecodeError, NetReader, ProtocolViolation};

/// What the checks before the dispatch decided.
enum Verdict<'r> {
    Dispatch(NodeId, &'r RpcEntry),
    Done,
}

/// An RPC message from `sender` (the transport's peer; on a client, the server's transport peer
/// is passed on as [`PeerId::SERVER`]), with the sender's `tick`; `held` for a
/// [`HELD_RPC`](crate::replication::message_ids::HELD_RPC) (at a client, from its server).
/// Always handled here (counted, never an error for the bus).
pub(crate) fn on_rpc(
    role: &mut Role,
    core: &mut Outbox,
    shared: &mut Shared,
    (sender, tick): (PeerId, u32),
    held: bool,
    r: &mut NetReader<'_>,
) -> Result<bool, DecodeError> {
    shared.stats.rpcs_received += 1;
    let Ok(registry) = shared.rpc.registry() else {
        shared.stats.rpcs_dropped += 1;
        return Ok(true);
    };
    // On a client, calls come from the server's transport peer (which is not `PeerId::SERVER`
    // on every transport): game code sees it as `PeerId::SERVER`.
    let from_server = matches!(role, Role::Client(client) if sender == client.server);
    let sender = if from_server { PeerId::SERVER } else { sender };
    let verdict = match role {
        Role::Server(server) => server_checks(server, core, shared, &registry, sender, r),
        Role::Client(client) => {
            let known = from_server && client.welcomed;
            match header(r).ok().filter(|_| known) {
                None if !known => drop_call(shared, None, "RPC before the welcome"),
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
    if let Role::Server(server) = role {
        let named = &mut shared.rpc.named;
        if !named_nodes::client_may_name(server, sender, entry.info(), r, named) {
            shared.stats.references_refused += 1;
            drop_call(
                shared,
                Some((server, sender)),
                "names a node the client may not",
            );
            return Ok(true);
        }
    }
    let Some(value) = shared.store.value_mut(node) else {
        return Ok(true);
    };
    let mut ctx = shared.rpc.take_context(0, node);
    ctx.reset(node, sender, tick, false);
    // A server RPC sent at `tick` is newer than the snapshots up to `tick` (captured before
    // the call): one arriving later, out of order, would undo what the call changed; it is
    // discarded. A snapshot after `tick` already applied holds the call's changes: the body's
    // changes to replicated members are undone after it runs (`Received::invoke`). So are
    // those of a held call (`held`: made before its node's spawn went out, which holds the
    // state after it).
    if let Role::Client(client) = role {
        client.discard_up_to(tick);
        ctx.set_state_newer(held || tick_after(client.newest_applied, tick));
    }
    // Node references among the arguments (and in calls the body queues) are the net ids of
    // this side's nodes.
    let net_ids = role.net_ids().clone();
    let result = with_scope(Some(&net_ids), Resolve::Argument, || {
        call_catching(|| entry.dispatch(value, &mut ctx, r))
    });
    let info = entry.info();
    match result {
        Ok(()) => {
            debug!(%sender, rpc = info.name, "RPC dispatched");
            apply_commands(Some(core), role, shared, &registry, &ctx, 1);
        }
        Err(RpcCallError::Malformed(error)) => {
            if error == DecodeError::BadReference {
                shared.stats.references_refused += 1;
            }
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
                    shared.stats.rpc_kicks += 1;
                    server.kick(core, shared, sender, "its RPC failed");
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

fn client_slot(role: &mut Role, peer: PeerId) -> Option<&mut ClientSlot> {
    server_of(role)?.clients.of_mut(peer)
}

/// Reads the net id and wire id.
fn header(r: &mut NetReader<'_>) -> Result<(u32, u16), DecodeError> {
    let net_id = r.read_var_u32()?;
    let wire_id = u16::try_from(r.read_var_u32()?)
        .map_err(|_| DecodeError::Protocol(ProtocolViolation::UnknownRpc))?;
    Ok((net_id, wire_id))
}

fn lookup<'r>(
    registry: &'r RpcRegistry,
    shared: &Shared,
    node: NodeId,
    wire_id: u16,
) -> Option<&'r RpcEntry> {
    let ty: TypeId = shared.store.value_type(node)?;
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
        if let Some(c) = server.clients.of_mut(peer) {
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
    if let Some(c) = server.and_then(|s| s.clients.of_mut(sender)) {
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
fn server_checks<'r>(
    server: &mut ServerState,
    core: &mut Outbox,
    shared: &mut Shared,
    registry: &'r RpcRegistry,
    sender: PeerId,
    r: &mut NetReader<'_>,
) -> Verdict<'r> {
    let now = shared.now;
    let threshold = shared.config.rpc_flood_threshold;
    let Some(c) = server.clients.ready_index_of(sender) else {
        return drop_call(shared, None, "RPC from a client that has not joined");
    };
    let slot = &mut server.clients[c];
    slot.stats.rpcs_received += 1;
    if slot.rpc.flooding(now, threshold) {
        shared.stats.rpcs_dropped += 1;
        shared.stats.rpc_kicks += 1;
        server.kick(core, shared, sender, "RPC flood");
        return Verdict::Done;
    }
    let Ok((net_id, wire_id)) = header(r) else {
        return drop_call(shared, Some((server, sender)), "malformed RPC header");
    };
    let Some(node) = server.node_of(net_id) else {
        return drop_call(shared, Some((server, sender)), "RPC for an unknown node");
    };
    // A node whose spawn has not gone out is one no client has yet (a client that names it
    // guessed its net id).
    let flushed = server.nodes.by_id(net_id).is_some();
    if !flushed || !server.sees(c, net_id) {
        shared.stats.rpcs_not_relevant += 1;
        return drop_call(
            shared,
            Some((server, sender)),
            "RPC on a node the client does not have",
        );
    }
    let Some(entry) = lookup(registry, shared, node, wire_id) else {
        return drop_call(shared, Some((server, sender)), "unknown RPC id");
    };
    let info = entry.info();
    let authority = server.authority_of(node).unwrap_or(PeerId::SERVER);
    if !info.mode.allows(sender, authority) {
        return reject(shared, Some(server), sender, node, info);
    }
    if let Some(limit) = info.rate_limit {
        let slot = &mut server.clients[c];
        if !slot.rpc.allow(info, limit, now) {
            slot.stats.rpcs_rate_limited += 1;
            shared.stats.rpcs_rate_limited += 1;
            debug!(%sender, rpc = info.name, limit, "RPC over its rate limit dropped");
            return Verdict::Done;
        }
    }
    Verdict::Dispatch(node, entry)
}
