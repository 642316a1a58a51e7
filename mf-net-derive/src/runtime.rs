//! Where generated code finds the runtime.
//!
//! Macro output names `mf_net` only through its doc-hidden `__private` module, so the public
//! API can move freely and users need no other dependency.

use proc_macro2::TokenStream;
use quote::quote;

/// `::mf_net::__private`: the module every generated path starts from.
pub(crate) fn private() -> TokenStream {
    quote!(::mf_net::__private)
}
