//! One error per mistake for RPC parameters (as `member_proxy` does for members): `#[rpcs]`
//! asserts [`RpcArg`] once per parameter (a bound of a function of its own expansion, spanned
//! at the parameter's type, so that the error's note points there too) and reaches
//! the codec everywhere else through [`Arg<T>`], whose items fall back to [`ArgFallback`]'s
//! for a type without `NetCodec`. Those only let the expansion type-check after the assertion
//! failed the build; they never run.

use std::marker::PhantomData;

use super::support::RpcArg;
use crate::wire::{DecodeError, NetReader, NetWriter};

/// An RPC parameter's type as generated code uses it.
pub struct Arg<T>(PhantomData<T>);

// `ARG_NAME` and `ARG_SCHEMA_HASH`, not `NAME` and `SCHEMA_HASH`: for a `T` without the trait,
// rustc looks the name up in every trait in scope, and would find `NetCodec`'s through the
// user's `use mf_net::prelude::*`, which then names it `mf_net::codec::NetCodec` in the error.
impl<T: RpcArg> Arg<T> {
    /// [`RpcArg::NAME`].
    pub const ARG_NAME: &'static str = T::NAME;
    /// [`RpcArg::SCHEMA_HASH`].
    pub const ARG_SCHEMA_HASH: u64 = T::SCHEMA_HASH;
    /// [`RpcArg::NODE_REFS`].
    pub const ARG_NODE_REFS: bool = T::NODE_REFS;

    /// [`RpcArg::encode_arg`].
    #[inline]
    pub fn encode_arg(value: &T, w: &mut NetWriter) {
        value.encode_arg(w);
    }

    /// [`RpcArg::decode_arg`].
    #[inline]
    pub fn decode_arg(r: &mut NetReader<'_>) -> Result<T, DecodeError> {
        T::decode_arg(r)
    }
}

/// The items of [`Arg<T>`] for a `T` that is not `NetCodec`; never run.
pub trait ArgFallback<T> {
    /// Stands in for [`Arg::ARG_NAME`].
    const ARG_NAME: &'static str = "";
    /// Stands in for [`Arg::ARG_SCHEMA_HASH`].
    const ARG_SCHEMA_HASH: u64 = 0;
    /// Stands in for [`Arg::ARG_NODE_REFS`].
    const ARG_NODE_REFS: bool = false;

    /// Stands in for [`Arg::encode_arg`].
    fn encode_arg(_value: &T, _w: &mut NetWriter) {}

    /// Stands in for [`Arg::decode_arg`].
    fn decode_arg(_r: &mut NetReader<'_>) -> Result<T, DecodeError> {
        Err(DecodeError::InvalidValue)
    }
}

impl<T> ArgFallback<T> for Arg<T> {}
