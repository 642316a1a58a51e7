//! Error collection shared by every macro.
//!
//! Errors are `darling::Error`s: each carries the span of the code the user wrote, and several
//! are gathered with `darling::Error::accumulator()` so that one build reports them all.

use proc_macro2::{Span, TokenStream};

/// A spanned error with a message that says what is wrong and what to do.
pub(crate) fn error_at(span: Span, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

/// The expansion, or every collected error as `compile_error!` invocations at their spans.
pub(crate) fn into_tokens(result: darling::Result<TokenStream>) -> TokenStream {
    result.unwrap_or_else(darling::Error::write_errors)
}
