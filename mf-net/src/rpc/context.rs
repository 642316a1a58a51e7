//! [`RpcContext`]: what a body learns about its call, and the queue of world changes it asks
//! for.

use std::ops::Range;

use super::{LocalCall, OutgoingRpc, RpcDelivery, RpcSendError, RpcSender, RpcSink};
use crate::refs::{with_scope, NetIdMap, Resolve};
use crate::scene::{NetRef, NodeId, SceneIndex};
use crate::transport::PeerId;
use crate::wire::NetWriter;

/// A world change queued by an RPC body, applied by the runtime after the dispatch.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum RpcCommand {
    /// Spawn the registered scene `scene` under `parent`, owned by `authority`
    /// ([`RpcContext::spawn`]).
    Spawn {
        /// The scene to instantiate.
        scene: SceneIndex,
        /// The node to add it under.
        parent: NodeId,
        /// Its authority.
        authority: PeerId,
    },
    /// Despawn `node` and its descendants ([`RpcContext::despawn`]).
    Despawn {
        /// The node.
        node: NodeId,
    },
    /// Make `peer` the authority of `node` ([`RpcContext::set_authority`]).
    SetAuthority {
        /// The node.
        node: NodeId,
        /// Its new authority.
        peer: PeerId,
    },
    /// Send an RPC ([`RpcContext::rpc`]); its encoded arguments are
    /// [`RpcContext::args`].
    Rpc(QueuedRpc),
}

/// An RPC call queued by a body ([`RpcCommand::Rpc`]).
#[derive(Debug, Clone, Copy)]
pub struct QueuedRpc {
    /// The call, as a sender would hand it to [`RpcSink::send_rpc`].
    pub call: OutgoingRpc,
    args: (u32, u32),
}

impl QueuedRpc {
    fn range(&self) -> Range<usize> {
        self.args.0 as usize..self.args.1 as usize
    }
}

/// What an RPC body knows about its call, and the queue through which it changes the world.
///
/// A body gets it by declaring `&RpcContext` (or `&mut RpcContext`, to queue commands) as its
/// first parameter after `&mut self`; a `validate` function gets `&RpcContext` as its second.
///
/// - [`sender`](Self::sender) is the peer the call came from **as the transport reports it**:
///   never anything read from the payload, so it cannot be spoofed. Read it during the call
///   (copy it into anything that outlives the call).
/// - [`tick`](Self::tick) is the sender's tick from the message header (the local tick for a
///   local call), [`is_local`](Self::is_local) whether this is a `call_local` run on the
///   caller.
/// - [`spawn`](Self::spawn), [`despawn`](Self::despawn), [`set_authority`](Self::set_authority)
///   and [`rpc`](Self::rpc) do not act at once: they queue [`RpcCommand`]s that the runtime
///   applies right after the dispatch returns (a body runs while the runtime holds the node's
///   value, so it cannot change the tree itself). Commands the local peer may not perform (a
///   client spawning) are refused and logged by the runtime then.
///
/// The runtime keeps one context and [`reset`](Self::reset)s it for every call, so queuing
/// allocates only until its buffers have grown to the largest call's needs.
#[derive(Debug)]
pub struct RpcContext {
    node: NodeId,
    sender: PeerId,
    tick: u32,
    local: bool,
    /// A client ran a call from the server after applying a snapshot captured after the call.
    state_newer: bool,
    commands: Vec<RpcCommand>,
    args: NetWriter,
    /// The net ids node references among queued arguments are encoded with, for a context
    /// bound to a runtime outside a body ([`Multiplayer::bind_queue`]); `None`: those of the
    /// call running.
    ///
    /// [`Multiplayer::bind_queue`]: crate::replication::Multiplayer::bind_queue
    net_ids: Option<NetIdMap>,
}

impl RpcContext {
    /// The context of a call of an RPC of `node`, from `sender`, at `tick`; `is_local` for a
    /// `call_local` run on the caller.
    pub fn new(node: NodeId, sender: PeerId, tick: u32, is_local: bool) -> Self {
        Self {
            node,
            sender,
            tick,
            local: is_local,
            state_newer: false,
            commands: Vec::new(),
            args: NetWriter::new(),
            net_ids: None,
        }
    }

    /// Binds the context to a runtime's net ids, for queuing calls outside a body.
    pub(crate) fn bind_net_ids(&mut self, net_ids: NetIdMap) {
        self.net_ids = Some(net_ids);
    }

    /// Prepares the context for another call, dropping the queued commands (apply them first)
    /// but keeping the buffers.
    pub fn reset(&mut self, node: NodeId, sender: PeerId, tick: u32, is_local: bool) {
        self.node = node;
        self.sender = sender;
        self.tick = tick;
        self.local = is_local;
        self.state_newer = false;
        self.clear_commands();
    }

    /// Marks a call received from the server after a snapshot captured after the call: the
    /// replicated members already hold its changes, so the body's changes to them are undone
    /// after it runs (see [`Received::invoke`](super::support::Received::invoke)).
    pub(crate) fn set_state_newer(&mut self, newer: bool) {
        self.state_newer = newer;
    }

    /// Whether the replicated state is newer than the call (see
    /// [`set_state_newer`](Self::set_state_newer)).
    pub(crate) fn state_newer(&self) -> bool {
        self.state_newer
    }

    /// The node whose RPC is running.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The peer that made the call, as the transport reports it ([`PeerId::SERVER`] for the
    /// server; the local peer for a local call).
    pub fn sender(&self) -> PeerId {
        self.sender
    }

    /// The sender's tick when it made the call. Ticks wrap after 2³² (see
    /// [`Multiplayer::tick`](crate::replication::Multiplayer::tick)): compare them by
    /// serial-number arithmetic.
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// Whether this run is the `call_local` run on the caller rather than a call received
    /// from the network.
    pub fn is_local(&self) -> bool {
        self.local
    }

    /// Queues spawning the registered scene `scene` under `parent`, owned by `authority` (the
    /// server only).
    pub fn spawn(&mut self, scene: SceneIndex, parent: NodeId, authority: PeerId) {
        self.commands.push(RpcCommand::Spawn {
            scene,
            parent,
            authority,
        });
    }

    /// Queues despawning `node` and its descendants (the server only).
    pub fn despawn(&mut self, node: NodeId) {
        self.commands.push(RpcCommand::Despawn { node });
    }

    /// Queues making `peer` the authority of `node` (the server only).
    pub fn set_authority(&mut self, node: NodeId, peer: PeerId) {
        self.commands.push(RpcCommand::SetAuthority { node, peer });
    }

    /// The RPCs of `handle`'s node, queued: `ctx.rpc(other).hit(5)` encodes the arguments now
    /// and queues an [`RpcCommand::Rpc`]; the runtime sends it (and runs a `call_local` body)
    /// after the dispatch.
    pub fn rpc<T: 'static>(&mut self, handle: NetRef<T>) -> RpcSender<'_, Self, T> {
        RpcSender::new(self, handle)
    }

    /// The queued commands, in the order they were queued.
    pub fn commands(&self) -> &[RpcCommand] {
        &self.commands
    }

    /// The encoded arguments of a queued RPC of this context (empty for another context's).
    pub fn args(&self, rpc: &QueuedRpc) -> &[u8] {
        self.args.as_slice().get(rpc.range()).unwrap_or_default()
    }

    /// Drops the queued commands, keeping the buffers.
    pub fn clear_commands(&mut self) {
        self.commands.clear();
        self.args.clear();
    }
}

/// Queues the call ([`RpcDelivery::Deferred`]); see [`RpcContext::rpc`].
impl RpcSink for RpcContext {
    fn send_rpc(
        &mut self,
        rpc: OutgoingRpc,
        encode: &mut dyn FnMut(&mut NetWriter),
    ) -> Result<RpcDelivery, RpcSendError> {
        let start = self.args.len();
        match &self.net_ids {
            Some(net_ids) => {
                let args = &mut self.args;
                with_scope(Some(net_ids), Resolve::Argument, || encode(args));
            }
            None => encode(&mut self.args),
        }
        let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(self.args.len())) else {
            self.args.truncate(start);
            return Err(RpcSendError::SendFailed);
        };
        self.commands.push(RpcCommand::Rpc(QueuedRpc {
            call: rpc,
            args: (start, end),
        }));
        Ok(RpcDelivery::Deferred)
    }

    /// Never called by generated senders ([`RpcDelivery::Deferred`] does not run `call_local`
    /// bodies); does nothing.
    fn call_local(
        &mut self,
        _rpc: OutgoingRpc,
        _call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::{RpcCallError, RpcInfo, RpcMode, RpcTarget};
    use crate::scene::Scene;
    use crate::wire::NetReader;

    fn no_dispatch(
        _: &mut dyn std::any::Any,
        _: &mut RpcContext,
        _: &mut NetReader<'_>,
    ) -> Result<(), RpcCallError> {
        Ok(())
    }

    static INFO: RpcInfo = RpcInfo {
        name: "ping",
        mode: RpcMode::AnyPeer,
        call_local: true,
        reliable: true,
        rate_limit: None,
        validate: None,
        params: &[],
        dispatch: no_dispatch,
        read_args: None,
    };

    fn call(node: NodeId, target: RpcTarget) -> OutgoingRpc {
        OutgoingRpc {
            node,
            declaring_type: std::any::TypeId::of::<u8>(),
            rpc_index: 0,
            info: &INFO,
            target,
        }
    }

    #[test]
    fn reports_the_call_and_queues_commands_in_order() {
        let scene = Scene::new();
        let root = scene.root();
        let mut ctx = RpcContext::new(root, PeerId(7), 99, false);
        assert_eq!(
            (ctx.node(), ctx.sender(), ctx.tick()),
            (root, PeerId(7), 99)
        );
        assert!(!ctx.is_local());
        ctx.spawn(SceneIndex::new(2), root, PeerId(7));
        ctx.set_authority(root, PeerId::SERVER);
        ctx.despawn(root);
        assert!(matches!(
            ctx.commands(),
            [
                RpcCommand::Spawn { .. },
                RpcCommand::SetAuthority { .. },
                RpcCommand::Despawn { .. }
            ]
        ));
        ctx.reset(root, PeerId(8), 100, true);
        assert!(ctx.commands().is_empty());
        assert!(ctx.is_local());
    }

    #[test]
    fn queued_rpcs_keep_their_encoded_arguments() {
        let root = Scene::new().root();
        let mut ctx = RpcContext::new(root, PeerId(2), 0, false);
        let first = ctx
            .send_rpc(call(root, RpcTarget::All), &mut |w| w.write_u16(0x0102))
            .unwrap_or(RpcDelivery::Sent);
        let second = ctx
            .send_rpc(call(root, RpcTarget::Peer(PeerId(3))), &mut |w| {
                w.write_u8(9)
            })
            .unwrap_or(RpcDelivery::Sent);
        assert_eq!(
            (first, second),
            (RpcDelivery::Deferred, RpcDelivery::Deferred)
        );
        assert!(!RpcDelivery::Deferred.runs_call_local());
        let args: Vec<(RpcTarget, Vec<u8>)> = ctx
            .commands()
            .iter()
            .filter_map(|command| match command {
                RpcCommand::Rpc(rpc) => Some((rpc.call.target, ctx.args(rpc).to_vec())),
                _ => None,
            })
            .collect();
        assert_eq!(
            args,
            [
                (RpcTarget::All, vec![2, 1]),
                (RpcTarget::Peer(PeerId(3)), vec![9])
            ]
        );
        // Once cleared, old queued calls resolve to no bytes instead of another call's.
        let RpcCommand::Rpc(stale) = ctx.commands()[0] else {
            unreachable!("the first command is an RPC");
        };
        ctx.clear_commands();
        assert_eq!(ctx.args(&stale), &[] as &[u8]);
        // A deferred context never runs local calls.
        let mut ran = false;
        let result = ctx.call_local(call(root, RpcTarget::All), &mut |_, _| {
            ran = true;
            Ok(())
        });
        assert!(result.is_ok() && !ran);
    }
}
