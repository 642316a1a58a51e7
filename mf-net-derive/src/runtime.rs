//! Where generated code finds the runtime.
//!
//! Macro output names `mf_net` only through its doc-hidden `__private` module, so the public
//! API can move freely and users need no other dependency.

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// `::mf_net::__private`: the module every generated path starts from.
pub(crate) fn private() -> TokenStream {
    quote!(::mf_net::__private)
}

/// `tokens`, resolved as before but reported at `span`: a path into the runtime spanned at the
/// user's code, so that an error about it (or a note naming it) points there.
pub(crate) fn located_at(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut token| {
            token.set_span(token.span().located_at(span));
            token
        })
        .collect()
}
