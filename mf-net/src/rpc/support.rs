//! What `#[rpcs]` output calls, re-exported through `mf_net::__private`. Not a public API.
//!
//! Each requirement on user code is a trait with a message that names `#[rpc]`, reached through
//! a use spanned at the user's code, so that a mistake is reported there in the attribute's
//! terms (the same pattern as the `Replicated` derive's member traits).

use std::fmt::Display;

pub use super::arg_proxy::{Arg, ArgFallback};

pub use super::{
    BaseInfo, FlattenedBases, LocalCall, OutgoingRpc, RpcCallError, RpcContext, RpcDelivery,
    RpcInfo, RpcMode, RpcParam, RpcRegistration, RpcSendError, RpcSender, RpcSink, RpcTarget, Rpcs,
};
use crate::codec::NetCodec;
use crate::replicated::Replicated;
use crate::scene::NodeId;
pub use crate::transport::PeerId;
use crate::wire::{DecodeError, NetReader, NetWriter};
pub use std::any::{Any, TypeId};
pub use std::option::Option;

/// `NetCodec`, as an RPC parameter needs it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an RPC parameter: it does not implement `NetCodec`",
    label = "not a `NetCodec` type",
    note = "RPC arguments travel in their `NetCodec` encoding: derive it with \
            `#[derive(NetCodec)]`, implement `NetCodec` by hand, or use a type that has it \
            (`String` for `&str`, `Vec<T>` for a slice)",
    note = "the only parameter that is not sent is a first `&RpcContext`"
)]
pub trait RpcArg: Sized {
    /// [`NetCodec::NAME`].
    const NAME: &'static str;
    /// [`NetCodec::SCHEMA_HASH`].
    const SCHEMA_HASH: u64;
    /// [`NetCodec::NODE_REFS`].
    const NODE_REFS: bool;
    /// [`NetCodec::encode`].
    fn encode_arg(&self, w: &mut NetWriter);
    /// [`NetCodec::decode`].
    fn decode_arg(r: &mut NetReader<'_>) -> Result<Self, DecodeError>;
}

impl<T: NetCodec> RpcArg for T {
    const NAME: &'static str = T::NAME;
    const SCHEMA_HASH: u64 = T::SCHEMA_HASH;
    const NODE_REFS: bool = T::NODE_REFS;

    #[inline]
    fn encode_arg(&self, w: &mut NetWriter) {
        self.encode(w);
    }

    #[inline]
    fn decode_arg(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        T::decode(r)
    }
}

/// What an RPC body may return: `()`, or `Result<(), E>` with `E: Display` (an `Err` is a
/// failed call, logged with that text).
#[diagnostic::on_unimplemented(
    message = "an RPC cannot return `{Self}`",
    label = "not `()` or `Result<(), E>` with `E: Display`",
    note = "an RPC body returns nothing or `Result<(), E>`; an `Err` counts as a failed call and \
            is logged with its `Display` text, so `E` must implement `std::fmt::Display`"
)]
pub trait RpcReturn {
    /// `Ok(())`, or [`RpcCallError::Failed`] with the error's text.
    fn into_rpc_result(self) -> Result<(), RpcCallError>;
}

impl RpcReturn for () {
    #[inline]
    fn into_rpc_result(self) -> Result<(), RpcCallError> {
        Ok(())
    }
}

impl<E: Display> RpcReturn for Result<(), E> {
    #[inline]
    fn into_rpc_result(self) -> Result<(), RpcCallError> {
        self.map_err(|error| RpcCallError::Failed(error.to_string()))
    }
}

/// `Replicated`, as the type of an `#[rpcs]` impl block needs it.
#[diagnostic::on_unimplemented(
    message = "`#[rpcs]` needs a replicated type, and `{Self}` does not implement `Replicated`",
    label = "not `Replicated`",
    note = "RPCs are called on networked nodes, whose values are `Replicated`: add \
            `#[derive(Replicated)]` to `{Self}` (a type with no replicated members can derive it \
            too)"
)]
pub trait RpcOwner {}

impl<T: Replicated> RpcOwner for T {}

/// Compiles only if `T` is `Replicated` (reported with [`RpcOwner`]'s message).
pub const fn assert_rpc_owner<T: RpcOwner + ?Sized>() {}

/// How a received call runs on a value of type `T` (see [`Received::invoke`]). Reached as
/// `Received::<T>::invoke`, which resolves to [`ReceivedFallback::invoke`] when `T` is not
/// `Replicated` (that mistake is reported once, by [`assert_rpc_owner`]).
pub struct Received<T>(std::marker::PhantomData<T>);

impl<T: Replicated> Received<T> {
    /// Runs a received call's `body` on `this`. On a client whose replicated state is already
    /// newer than the call (a snapshot captured after the server made it arrived first, which
    /// unreliable snapshots may do), the replicated members are put back as they were before
    /// the body: they hold the call's changes already, and would otherwise get them twice
    /// until the next snapshot. Effects on local fields stay. Allocates only in that
    /// out-of-order case.
    ///
    /// # Errors
    ///
    /// What `body` returns.
    pub fn invoke(
        this: &mut T,
        ctx: &mut RpcContext,
        body: impl FnOnce(&mut T, &mut RpcContext) -> Result<(), RpcCallError>,
    ) -> Result<(), RpcCallError> {
        if !ctx.state_newer() {
            return body(this, ctx);
        }
        let state = this.new_state(0);
        let result = body(this, ctx);
        let mut w = NetWriter::new();
        T::write_full_for(&state, crate::replicated::Audience::All, &mut w);
        let _ = this.read(&mut NetReader::new(w.as_slice()));
        result
    }
}

/// [`Received::invoke`] for a type that is not `Replicated`: the build fails on
/// [`assert_rpc_owner`] anyway; this only lets the rest of the expansion type-check.
pub trait ReceivedFallback<T> {
    /// Runs `body`.
    ///
    /// # Errors
    ///
    /// What `body` returns.
    fn invoke(
        this: &mut T,
        ctx: &mut RpcContext,
        body: impl FnOnce(&mut T, &mut RpcContext) -> Result<(), RpcCallError>,
    ) -> Result<(), RpcCallError> {
        body(this, ctx)
    }
}

impl<T> ReceivedFallback<T> for Received<T> {}

/// The value a call runs on, as the declaring type.
#[inline]
pub fn downcast<T: 'static>(value: &mut dyn Any) -> Result<&mut T, RpcCallError> {
    value.downcast_mut::<T>().ok_or(RpcCallError::WrongType)
}

/// Whether, and how, a generated sender runs the body after sending (see [`RpcSink`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// The body does not run here.
    No,
    /// A `call_local` run on the caller.
    Local,
    /// The call's destination is the caller: the body runs here as a received call.
    Here,
}

/// Step 1 of a generated sender (see [`RpcSink`]): sends the call and says whether, and how,
/// the body runs here.
#[inline]
pub fn send<S: RpcSink + ?Sized, T: 'static>(
    sink: &mut S,
    node: NodeId,
    rpc_index: u16,
    info: &'static RpcInfo,
    target: RpcTarget,
    encode: &mut dyn FnMut(&mut NetWriter),
) -> Result<(OutgoingRpc, Run), RpcSendError> {
    let rpc = OutgoingRpc {
        node,
        declaring_type: TypeId::of::<T>(),
        rpc_index,
        info,
        target,
    };
    let run = match sink.send_rpc(rpc, encode)? {
        RpcDelivery::Here => Run::Here,
        delivery if info.call_local && delivery.runs_call_local() => Run::Local,
        _ => Run::No,
    };
    Ok((rpc, run))
}

/// Step 2 of a generated sender: runs the body as `run` says.
#[inline]
pub fn run_body<S: RpcSink + ?Sized>(
    sink: &mut S,
    rpc: OutgoingRpc,
    run: Run,
    call: &mut LocalCall<'_>,
) -> Result<(), RpcSendError> {
    match run {
        Run::No => Ok(()),
        Run::Local => sink.call_local(rpc, call),
        Run::Here => sink.call_here(rpc, call),
    }
}
