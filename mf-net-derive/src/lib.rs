//! Derive and attribute macros for mf-net. Use them through `mf_net`, which re-exports them.
//!
//! Every macro follows the same three steps, after `serde_derive`:
//!
//! 1. **parse**: `darling` receivers read the item and its `#[net(..)]` options;
//! 2. **check**: rules the receivers cannot express (no unions, no lifetimes, ...);
//! 3. **expand**: the generated code, which names the runtime only through
//!    `::mf_net::__private`.
//!
//! All errors of steps 1 and 2 are collected and reported together, each at the span of the
//! code the user wrote, so one build shows every mistake in a declaration.

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

mod attr;
mod bounds;
mod diagnostics;
mod net_codec;
mod replicated;
mod rpcs;
mod runtime;

/// Derives `mf_net::codec::NetCodec` for a struct or an enum.
///
/// Fields are encoded in declaration order; an enum writes its variant index (declaration
/// order) as a varint, then the variant's fields. Options:
///
/// - `#[net(name = "game::Chat")]` on the type: the stable name (default: the module path
///   without the crate name, then the type name);
/// - `#[net(skip)]` on a field: not sent, decoded as `Default::default()`, not part of the
///   schema hash.
///
/// Every sent field whose type mentions a type parameter gets a `FieldTy: NetCodec` bound (so
/// `NetRef<T>` asks for `NetRef<T>: NetCodec`, not `T: NetCodec`; `K::Id` for `K::Id`). Lifetime parameters and
/// unions are refused: decoding produces owned values.
#[proc_macro_derive(NetCodec, attributes(net))]
pub fn derive_net_codec(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    net_codec::derive(&input).into()
}

/// Derives `mf_net::replication::Replicated` for a struct with named fields.
///
/// Fields marked `#[replicated]` are members (their types must be `NetCodec + PartialEq +
/// Clone`); other fields stay local. Options:
///
/// - `#[replicated(name = "game::Player")]` on the struct: the stable name (default: the module
///   path without the crate name, then the type name);
/// - `#[replicated(interpolate)]` on a field: a member that clients blend between snapshots;
/// - `#[replicated(flatten)]` on a field whose type is `Replicated`: a base whose state goes on
///   the wire before this type's members.
///
/// At most 64 members per type. Generic types, tuple and unit structs, enums and unions are
/// refused. The type is registered in the link-time table that
/// `mf_net::replication::ReplicationRegistry` reads.
#[proc_macro_derive(Replicated, attributes(replicated, predict))]
pub fn derive_replicated(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    replicated::derive(&input).into()
}

/// Generates RPCs from the `#[rpc(..)]` methods of an impl block of a `Replicated` type.
///
/// Per RPC: a dispatcher that decodes the arguments and runs the method (the type's
/// `mf_net::rpc::Rpcs::RPCS` table, registered at link time), and two senders in the generated
/// extension trait `<Type>Rpcs`: `name(args..)` (client → server, or server → every client) and
/// `name_to(peer, args..)` (one peer). Methods without `#[rpc]` are left alone; the block is
/// re-emitted without its `#[rpc]` attributes.
///
/// Options of `#[rpc(..)]`: a mode, `server`, `authority` (the default) or `any_peer`;
/// `call_local` (also runs on the caller); `unreliable` (default reliable); `rate_limit = N`
/// (calls per second per connection, N ≥ 1); `validate = path` (a
/// `fn(&Self, &RpcContext, &Arg1, ..) -> bool` run before the body).
///
/// An RPC method takes `&mut self`, optionally `&RpcContext` (or `&mut RpcContext`) next, then
/// by-value `NetCodec` parameters, and returns `()` or `Result<(), E>` with `E: Display`. See
/// `mf_net::rpc` for the whole story.
///
/// One `#[rpcs]` block per type: an RPC's wire id is its position in the block (after the
/// flattened bases' RPCs), so all of a type's RPCs are declared together, and the same ones in
/// every build: an RPC method cannot have `#[cfg(..)]` or `#[cfg_attr(..)]` (test the
/// condition inside the body, `if cfg!(..) { .. }`). A second block fails to build, first with
/// "the name `Player_takes_one_rpcs_block_merge_the_blocks` is defined multiple times".
/// `#[deprecated]` on an RPC method is copied onto its senders.
#[proc_macro_attribute]
pub fn rpcs(args: TokenStream, input: TokenStream) -> TokenStream {
    rpcs::rpcs(args.into(), input.into()).into()
}

/// Marks an RPC method inside an impl block that has `#[rpcs]` (which reads and removes it).
///
/// On its own, outside `#[rpcs]`, it is an error that says to add `#[rpcs]` to the impl block.
#[proc_macro_attribute]
pub fn rpc(_args: TokenStream, input: TokenStream) -> TokenStream {
    rpcs::stray_rpc(input.into()).into()
}
