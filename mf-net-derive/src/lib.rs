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
