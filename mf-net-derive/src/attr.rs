//! Readers for `#[net(..)]` option values, shared by the macros' darling receivers.
//!
//! They accept the same input as darling's own readers but explain what to write instead when
//! the input has the wrong form. Use them with `#[darling(with = ..)]`.

use darling::util::Flag;
use darling::FromMeta;
use quote::ToTokens;
use syn::{Expr, ExprLit, Lit, LitStr, Meta};

use crate::diagnostics::error_at;

/// The option name as the user wrote it, for messages.
fn option_name(meta: &Meta) -> String {
    meta.path().to_token_stream().to_string().replace(' ', "")
}

/// A word option such as `skip`: present or absent, never with a value.
pub(crate) fn flag(meta: &Meta) -> darling::Result<Flag> {
    match meta {
        Meta::Path(_) => Flag::from_meta(meta),
        Meta::NameValue(nv) => {
            let name = option_name(meta);
            Err(error_at(
                syn::spanned::Spanned::span(&nv.value),
                format!("`{name}` takes no value; write `#[net({name})]`"),
            ))
        }
        Meta::List(list) => {
            let name = option_name(meta);
            Err(error_at(
                list.delimiter.span().join(),
                format!("`{name}` takes no arguments; write `#[net({name})]`"),
            ))
        }
    }
}

/// An option whose value is a string literal, such as `name = "game::Chat"`.
pub(crate) fn string(meta: &Meta) -> darling::Result<Option<LitStr>> {
    let name = option_name(meta);
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(Some(s.clone())),
            other => Err(error_at(
                syn::spanned::Spanned::span(other),
                format!("`{name}` expects a string literal, e.g. `#[net({name} = \"game::Chat\")]`"),
            )),
        },
        _ => Err(error_at(
            syn::spanned::Spanned::span(meta),
            format!("`{name}` expects a value, e.g. `#[net({name} = \"game::Chat\")]`"),
        )),
    }
}
