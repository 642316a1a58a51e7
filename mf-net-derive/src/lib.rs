//! Derive and attribute macros for mf-net. Use them through `mf_net`, which re-exports them.

use proc_macro::TokenStream;

/// Derives `mf_net::codec::NetCodec` (placeholder until the derive lands).
#[proc_macro_derive(NetCodec, attributes(net))]
pub fn derive_net_codec(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
