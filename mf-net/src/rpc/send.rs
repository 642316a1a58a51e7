//! Sending: the [`RpcSink`] a runtime implements, and the [`RpcSender`] that `#[rpcs]`'s
//! extension traits are implemented for.

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;

use super::{RpcCallError, RpcContext, RpcInfo, RpcSendError};
use crate::scene::{NetRef, NodeId};
use crate::transport::PeerId;
use crate::wire::NetWriter;

/// Where a call goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RpcTarget {
    /// Everyone the call normally addresses: on a client, the server; on the server, every
    /// client. Generated `name(..)` senders use it.
    All,
    /// One peer only. Generated `name_to(peer, ..)` senders use it.
    Peer(PeerId),
}

/// What an [`RpcSink`] did with a call, which decides whether a `call_local` body also runs on
/// the caller ([`runs_call_local`](Self::runs_call_local)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RpcDelivery {
    /// Sent to everyone the [`RpcTarget::All`] addresses. The caller counts as one of them:
    /// a `call_local` body runs here too.
    Sent,
    /// Sent to one other peer ([`RpcTarget::Peer`]): the body does not run here.
    SentToPeer,
    /// Nothing was sent: the node is not networked, there is no session (offline), or the
    /// target is the calling peer itself (but for [`Here`](Self::Here)). A `call_local` body
    /// runs here, and only such bodies run.
    NotSent,
    /// Queued in an [`RpcContext`]: the runtime sends it, and runs a `call_local` body, when it
    /// applies the context's commands after the current dispatch. Nothing runs now.
    Deferred,
    /// Not sent: the one peer addressed does not have the node (interest management). Nothing
    /// runs.
    NotRelevant,
    /// Not sent: the call's destination is the caller itself (the server, or an offline
    /// instance, calling an `authority` RPC on a node it has authority over, to everyone or
    /// to itself: the host's own player, or singleplayer). The body runs here now, once, as a call received from the
    /// caller ([`RpcSink::call_here`]), with the arguments moved in: nothing is encoded.
    Here,
}

impl RpcDelivery {
    /// Whether a `call_local` RPC's body runs on the caller now (as a `call_local` run).
    pub fn runs_call_local(self) -> bool {
        matches!(self, Self::Sent | Self::NotSent)
    }
}

/// One call on its way out: which RPC of which node, and to whom.
#[derive(Clone, Copy)]
pub struct OutgoingRpc {
    /// The node the RPC is called on.
    pub node: NodeId,
    /// The type that declares the RPC: the node's value's type, or one of its flattened
    /// bases (see [`RpcSender::base`]).
    pub declaring_type: TypeId,
    /// The RPC's own index in the declaring type's [`Rpcs::RPCS`](super::Rpcs::RPCS); the sink
    /// maps it to the wire id of the node's type with
    /// [`RpcTable::find`](super::RpcTable::find).
    pub rpc_index: u16,
    /// The RPC.
    pub info: &'static RpcInfo,
    /// Where it goes.
    pub target: RpcTarget,
}

impl fmt::Debug for OutgoingRpc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutgoingRpc")
            .field("node", &self.node)
            .field("rpc", &self.info.name)
            .field("rpc_index", &self.rpc_index)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// A local call handed to [`RpcSink::call_local`]: runs the body once on the given value (of
/// the declaring type) with the given context. Running it again does nothing (the arguments
/// were moved into the first run).
pub type LocalCall<'c> = dyn FnMut(&mut dyn Any, &mut RpcContext) -> Result<(), RpcCallError> + 'c;

/// What generated senders send through: implemented by the `Multiplayer` runtime (and by
/// [`RpcContext`], which queues calls until the runtime applies them).
///
/// A generated sender `mp.rpc(node).name(args..)` does, in order:
///
/// 1. [`send_rpc`](Self::send_rpc), with a closure that encodes the arguments (by reference)
///    into the writer the sink passes it; the sink checks the call (node, type, mode, target),
///    writes whatever header it needs, runs the closure and sends the bytes. It does not run
///    the closure when it sends nothing.
/// 2. If the RPC is `call_local` and the returned [`RpcDelivery`]
///    [runs `call_local`](RpcDelivery::runs_call_local): [`call_local`](Self::call_local), with
///    a closure that moves the arguments into the body; if the delivery is
///    [`Here`](RpcDelivery::Here), [`call_here`](Self::call_here) the same way.
///
/// So on a node that is not networked, or offline, only `call_local` RPCs run (the sink
/// returns [`RpcDelivery::NotSent`]), but for an `authority` RPC the server calls on a node it
/// has authority over, which runs here ([`RpcDelivery::Here`]). Arguments are never cloned and
/// nothing is allocated.
pub trait RpcSink {
    /// Sends one call, encoding its arguments with `encode`.
    ///
    /// # Errors
    ///
    /// Whatever stops the call: see [`RpcSendError`].
    fn send_rpc(
        &mut self,
        rpc: OutgoingRpc,
        encode: &mut dyn FnMut(&mut NetWriter),
    ) -> Result<RpcDelivery, RpcSendError>;

    /// Runs a `call_local` body on the caller: finds `rpc.node`'s value, takes the part of the
    /// declaring type (itself, or a flattened base), prepares a context (the sender is the
    /// local peer, [`is_local`](RpcContext::is_local) is true) and runs `call` on them, then
    /// applies the commands the body queued.
    ///
    /// # Errors
    ///
    /// [`RpcSendError::LocalCall`] with the body's error, or an error finding the value.
    fn call_local(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError>;

    /// Runs the body of a call whose destination is the caller ([`RpcDelivery::Here`]) as a
    /// call received from it: [`is_local`](RpcContext::is_local) is false, and the sink applies
    /// what it applies to a received call's result. A sink that never returns
    /// [`RpcDelivery::Here`] need not implement it: by default it runs the body as
    /// [`call_local`](Self::call_local) does.
    ///
    /// # Errors
    ///
    /// As [`call_local`](Self::call_local).
    fn call_here(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError> {
        self.call_local(rpc, call)
    }
}

/// A node's RPCs, ready to send: `mp.rpc(handle)` returns one, and `#[rpcs]` implements the
/// type's `<Type>Rpcs` extension trait for it, so that `mp.rpc(handle).move_by(input)` sends.
///
/// `T` is the type whose RPCs are sent; use [`base`](Self::base) for the RPCs of a flattened
/// base.
pub struct RpcSender<'a, S: ?Sized, T> {
    sink: &'a mut S,
    node: NodeId,
    _type: PhantomData<fn() -> T>,
}

impl<'a, S: RpcSink + ?Sized, T: 'static> RpcSender<'a, S, T> {
    /// The RPCs of `handle`'s node, sent through `sink`.
    pub fn new(sink: &'a mut S, handle: NetRef<T>) -> Self {
        Self::for_node(sink, handle.node())
    }

    /// The RPCs of `T` on `node`, sent through `sink`; the sink checks that the node holds a
    /// `T` (or a type that flattens `T`) when a call is made.
    pub fn for_node(sink: &'a mut S, node: NodeId) -> Self {
        Self {
            sink,
            node,
            _type: PhantomData,
        }
    }

    /// The node the calls go to.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The RPCs of `B`, a flattened base of `T` (`#[replicated(flatten)]`), on the same node:
    /// `mp.rpc(player).base::<Actor>().wave()`. Bases of bases work the same way. The sink
    /// checks the relation when a call is made ([`RpcSendError::WrongType`] if `T` does not
    /// flatten `B`); if `T` flattens `B` more than once, the first such field is addressed.
    pub fn base<B: 'static>(self) -> RpcSender<'a, S, B> {
        RpcSender::for_node(self.sink, self.node)
    }

    /// The sink and the node (for generated code).
    #[doc(hidden)]
    pub fn into_parts(self) -> (&'a mut S, NodeId) {
        (self.sink, self.node)
    }
}

impl<S: ?Sized, T> fmt::Debug for RpcSender<'_, S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcSender")
            .field("node", &self.node)
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}
