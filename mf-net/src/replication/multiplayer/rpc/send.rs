//! Sending: the checks and routing of an outgoing call (see the
//! [module documentation](super)), and the calls held until their node's spawn has gone out.

use tracing::debug;

use crate::refs::{with_scope, Resolve};
use crate::replication::multiplayer::role::Role;
use crate::replication::server::state::ServerState;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::{HELD_RPC, RPC};
use crate::replication::shared::rpc_state::{no_such_rpc, Deferred};
use crate::replication::shared::state::Shared;
use crate::rpc::{
    OutgoingRpc, RpcDelivery, RpcEntry, RpcMode, RpcRegistry, RpcSendError, RpcTarget,
};
use crate::transport::{Channel, PeerId, SendError};
use crate::wire::NetWriter;

/// The registry entry of a call: the node must hold a value whose type is (or flattens) the
/// declaring type.
pub(crate) fn find_entry<'r>(
    registry: &'r RpcRegistry,
    shared: &Shared,
    rpc: &OutgoingRpc,
) -> Result<&'r RpcEntry, RpcSendError> {
    let ty = shared
        .store
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
pub(crate) fn send(
    core: Option<&mut Outbox>,
    role: &mut Role,
    shared: &mut Shared,
    registry: &RpcRegistry,
    rpc: OutgoingRpc,
    encode: &mut dyn FnMut(&mut NetWriter),
) -> Result<RpcDelivery, RpcSendError> {
    let entry = find_entry(registry, shared, &rpc)?;
    let wire_id = entry.wire_id();
    // Node references among the arguments travel as net ids.
    let net_ids = role.net_ids().clone();
    let mut encode = |w: &mut NetWriter| {
        with_scope(Some(&net_ids), Resolve::Argument, || encode(w));
    };
    let encode: &mut dyn FnMut(&mut NetWriter) = &mut encode;
    let channel = rpc.info.channel();
    if let Role::Server(server) = role {
        if runs_here(server, &rpc) {
            return within_rate_limit(server, shared, &rpc).map(|()| RpcDelivery::Here);
        }
    }
    let Some(core) = core else {
        return Ok(RpcDelivery::NotSent);
    };
    match role {
        Role::Server(server) => {
            let Some(net_id) = server.by_node.get(rpc.node) else {
                return Ok(RpcDelivery::NotSent);
            };
            let authority = server.authority_of(rpc.node).unwrap_or(PeerId::SERVER);
            if !rpc.info.mode.allows(PeerId::SERVER, authority) {
                return Err(not_allowed(&rpc, PeerId::SERVER, authority));
            }
            let delivery = match rpc.target {
                RpcTarget::Peer(PeerId::SERVER) => return Ok(RpcDelivery::NotSent),
                RpcTarget::Peer(peer) if !server.joined.contains(&peer) => {
                    return Err(RpcSendError::UnknownPeer(peer))
                }
                RpcTarget::Peer(_) => RpcDelivery::SentToPeer,
                _ => RpcDelivery::Sent,
            };
            let flushed = server.nodes.find(net_id).is_some();
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
            if let RpcTarget::Peer(peer) = rpc.target {
                if !peer_sees(server, peer, net_id) {
                    debug!(%peer, net_id, "RPC to a client that does not have the node skipped");
                    count_not_relevant(shared);
                    return Ok(RpcDelivery::NotRelevant);
                }
            }
            // (Forget an earlier message's mark: this call may encode nothing, for no peer.)
            core.take_over_limit();
            let way = (RPC, channel);
            let sent = server_send(core, server, shared, rpc.target, way, net_id, |w| {
                write_call(w, net_id, wire_id, encode);
            });
            if core.take_over_limit() {
                return Err(RpcSendError::OverLimit);
            }
            match (sent, delivery) {
                (0, RpcDelivery::SentToPeer) => Err(RpcSendError::SendFailed),
                _ => Ok(delivery),
            }
        }
        Role::Client(client) => {
            let Some(net_id) = client.by_node.get(rpc.node) else {
                return Ok(RpcDelivery::NotSent);
            };
            let local = client.local_peer;
            let authority = client.authority_of(rpc.node).unwrap_or(PeerId::SERVER);
            if !rpc.info.mode.allows(local, authority) {
                return Err(not_allowed(&rpc, local, authority));
            }
            let delivery = match rpc.target {
                RpcTarget::Peer(PeerId::SERVER) => RpcDelivery::SentToPeer,
                RpcTarget::Peer(peer) if peer == local => return Ok(RpcDelivery::NotSent),
                // Clients only talk to the server; the server never relays.
                RpcTarget::Peer(peer) => return Err(RpcSendError::UnknownPeer(peer)),
                _ => RpcDelivery::Sent,
            };
            // To the server's transport peer (`PeerId::SERVER` to game code).
            core.send_with(client.server, RPC, channel, |w| {
                write_call(w, net_id, wire_id, encode);
            })
            .map_err(|error| match error {
                SendError::OverLimit => RpcSendError::OverLimit,
                _ => RpcSendError::SendFailed,
            })?;
            shared.stats.rpcs_sent += 1;
            Ok(delivery)
        }
    }
}

/// Whether a call the server (or an offline instance) makes goes to itself: an `authority` RPC
/// (what a node's owner sends the server) to everyone or to the server, on a node the server
/// has authority over (the host's own player; every node offline; a node that is not
/// networked).
fn runs_here(server: &ServerState, rpc: &OutgoingRpc) -> bool {
    rpc.info.mode == RpcMode::Authority
        && matches!(rpc.target, RpcTarget::All | RpcTarget::Peer(PeerId::SERVER))
        && server.authority_of(rpc.node).unwrap_or(PeerId::SERVER) == PeerId::SERVER
}

/// The `rate_limit` of a call the server makes to itself, kept as a client's calls are.
fn within_rate_limit(
    server: &mut ServerState,
    shared: &mut Shared,
    rpc: &OutgoingRpc,
) -> Result<(), RpcSendError> {
    let Some(limit) = rpc.info.rate_limit else {
        return Ok(());
    };
    if server.host_rpc.allow(rpc.info, limit, shared.now) {
        return Ok(());
    }
    shared.stats.rpcs_rate_limited += 1;
    debug!(
        rpc = rpc.info.name,
        limit, "the server's own call over its rate limit"
    );
    Err(RpcSendError::RateLimited {
        rpc: rpc.info.name,
        limit,
    })
}

fn not_allowed(rpc: &OutgoingRpc, caller: PeerId, authority: PeerId) -> RpcSendError {
    RpcSendError::NotAllowed {
        rpc: rpc.info.name,
        mode: rpc.info.mode,
        node: rpc.node,
        authority,
        caller,
    }
}

/// Whether the joined client `peer` has the flushed node `net_id` (interest management).
fn peer_sees(server: &ServerState, peer: PeerId, net_id: u32) -> bool {
    server
        .clients
        .index_of(peer)
        .map_or(true, |c| server.sees(c, net_id))
}

fn count_not_relevant(shared: &mut Shared) {
    shared.stats.rpcs_not_relevant += 1;
}

/// Sends an RPC message on `net_id` from the server to `target` (every joined client that has
/// the node, or one); returns how many peers the transport accepted it for. Counts `rpcs_sent`,
/// in total and per client, and the clients skipped for not having the node.
fn server_send(
    core: &mut Outbox,
    server: &mut ServerState,
    shared: &mut Shared,
    target: RpcTarget,
    (message, channel): (u16, Channel),
    net_id: u32,
    mut encode: impl FnMut(&mut NetWriter),
) -> usize {
    let mut sent = 0;
    match target {
        RpcTarget::Peer(peer) if !peer_sees(server, peer, net_id) => count_not_relevant(shared),
        RpcTarget::Peer(peer) => {
            if core.send_with(peer, message, channel, &mut encode).is_ok() {
                sent = 1;
                if let Some(c) = server.clients.of_mut(peer) {
                    c.stats.rpcs_sent += 1;
                }
            }
        }
        _ if server.joined.len() == core.peers().len()
            && (0..server.clients.len()).all(|c| server.sees(c, net_id)) =>
        {
            // Every connection joined and has the node: encode once.
            sent = core.broadcast_with(message, channel, None, encode);
            for c in server.clients.iter_mut().filter(|c| c.ready) {
                c.stats.rpcs_sent += 1;
            }
        }
        _ => {
            // The joined clients (those ready).
            for c in 0..server.clients.len() {
                if !server.clients[c].ready {
                    continue;
                }
                if !server.sees(c, net_id) {
                    count_not_relevant(shared);
                    continue;
                }
                let peer = server.clients[c].peer;
                if core.send_with(peer, message, channel, &mut encode).is_ok() {
                    sent += 1;
                    server.clients[c].stats.rpcs_sent += 1;
                }
            }
        }
    }
    shared.stats.rpcs_sent += sent as u64;
    sent
}

/// End of the server's frame: sends the RPCs held for nodes spawned during it (their spawns
/// have gone out now). Calls whose node was freed before its spawn left are dropped.
pub(crate) fn flush_deferred(
    core: Option<&mut Outbox>,
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
            let alive = server.by_node.get(call.node) == Some(call.net_id)
                && server.nodes.find(call.net_id).is_some();
            let payload = bytes.as_slice().get(call.bytes.0..call.bytes.1);
            let (true, Some(payload)) = (alive, payload) else {
                debug!(net_id = call.net_id, "held RPC dropped: its node is gone");
                continue;
            };
            let target = match call.target {
                RpcTarget::Peer(peer) if !server.joined.contains(&peer) => continue,
                target => target,
            };
            let (net_id, way) = (call.net_id, (HELD_RPC, call.channel));
            server_send(core, server, shared, target, way, net_id, |w| {
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
