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
/// Every type parameter used by a sent field gets a `NetCodec` bound. Lifetime parameters and
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
#[proc_macro_derive(Replicated, attributes(replicated))]
pub fn derive_replicated(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    replicated::derive(&input).into()
}
