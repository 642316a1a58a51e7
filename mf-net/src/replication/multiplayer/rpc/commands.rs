//! The commands RPC bodies queue in their [`RpcContext`]: spawns, despawns, authority changes
//! and further RPCs, applied after the body returns `Ok` (see the
//! [module documentation](super)).

use crate::refs::{with_scope, Resolve};
use tracing::warn;

use crate::replication::multiplayer::role::Role;
use crate::replication::multiplayer::rpc::own_call;
use crate::replication::multiplayer::rpc::send::{find_entry, send};
use crate::replication::multiplayer::{instance_name, spawn_instance};
use crate::replication::server::state::ServerState;
use crate::replication::shared::config::MultiplayerError;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::state::Shared;
use crate::rpc::{call_catching, OutgoingRpc, RpcCommand, RpcContext, RpcDelivery, RpcRegistry};
use crate::scene::{NodeId, SceneIndex};
use crate::transport::PeerId;
use crate::wire::{NetReader, NetWriter};

/// How deep queued `call_local` RPCs may run bodies that queue further RPCs; deeper calls are
/// sent but their local bodies are skipped (and logged).
pub const MAX_COMMAND_DEPTH: usize = 4;

/// Applies what a body queued in `ctx` (see the module documentation). `depth` is the nesting
/// depth of the call that queued them plus one.
pub(crate) fn apply_commands(
    mut core: Option<&mut Outbox>,
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
            Ok(delivery)
                if delivery == RpcDelivery::Here
                    || (call.info.call_local && delivery.runs_call_local()) =>
            {
                let queued = Queued {
                    call,
                    args,
                    local: delivery != RpcDelivery::Here,
                };
                run_queued(core.as_deref_mut(), role, shared, registry, queued, depth);
            }
            Ok(_) => {}
            Err(error) => warn!(rpc = call.info.name, %error, "queued RPC not sent"),
        }
    }
}

/// A spawn, despawn or authority change queued by a body, on the server.
fn apply_server_command(
    core: Option<&mut Outbox>,
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
            shared.store.despawn(node);
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

/// A queued call whose body runs on the caller: a `call_local` run (`local`), or a call of the
/// server to itself ([`RpcDelivery::Here`]).
struct Queued<'a> {
    call: OutgoingRpc,
    args: &'a [u8],
    local: bool,
}

/// Runs the body of a queued call on the caller, from its encoded arguments. A call of the
/// server to itself counts as received: its rejection or failure is counted and raised.
fn run_queued(
    core: Option<&mut Outbox>,
    role: &mut Role,
    shared: &mut Shared,
    registry: &RpcRegistry,
    queued: Queued<'_>,
    depth: usize,
) {
    let Queued { call, args, local } = queued;
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
    let (caller, tick) = match role {
        Role::Server(server) => (PeerId::SERVER, server.tick),
        Role::Client(client) => (client.local_peer, client.newest_applied),
    };
    let Some(value) = shared.store.value_mut(call.node) else {
        return;
    };
    let mut ctx = shared.rpc.take_context(depth, call.node);
    ctx.reset(call.node, caller, tick, local);
    let net_ids = role.net_ids().clone();
    let result = with_scope(Some(&net_ids), Resolve::Argument, || {
        call_catching(|| entry.dispatch(value, &mut ctx, &mut NetReader::new(args)))
    });
    match result {
        Ok(()) => apply_commands(core, role, shared, registry, &ctx, depth + 1),
        Err(error) if !local => own_call::count_failure(shared, caller, call, &error),
        Err(error) => warn!(rpc = call.info.name, %error, "queued local RPC failed"),
    }
    shared.rpc.put_context(depth, ctx);
}

/// [`Multiplayer::spawn`](crate::replication::Multiplayer::spawn) on split borrows.
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
    let name = instance_name(server, &shared.library, scene)?;
    spawn_instance(server, shared, scene, parent, &name, authority)
}
