//! Readers for option values in a macro's helper attribute (`#[net(..)]`, ...), shared by the
//! macros' darling receivers.
//!
//! They accept what darling's own readers accept, but when the input has the wrong form they
//! say what to write instead. Use them with a closure naming the attribute:
//! `#[darling(with = |m| crate::attr::flag("net", m))]`.

use darling::util::Flag;
use darling::FromMeta;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr, Meta};

use crate::diagnostics::error_at;

/// The option name as the user wrote it, for messages.
fn option_name(meta: &Meta) -> String {
    meta.path().to_token_stream().to_string().replace(' ', "")
}

/// A word option such as `skip` in `#[attribute(skip)]`: present or absent, never a value.
pub(crate) fn flag(attribute: &str, meta: &Meta) -> darling::Result<Flag> {
    let name = option_name(meta);
    match meta {
        Meta::Path(_) => Flag::from_meta(meta),
        Meta::NameValue(nv) => Err(error_at(
            nv.value.span(),
            format!("`{name}` takes no value; write `#[{attribute}({name})]`"),
        )),
        Meta::List(list) => Err(error_at(
            list.delimiter.span().join(),
            format!("`{name}` takes no arguments; write `#[{attribute}({name})]`"),
        )),
    }
}

/// An option whose value is a string literal, such as `name = "game::Chat"`; `example` is a
/// value to show in messages.
pub(crate) fn string(
    attribute: &str,
    example: &str,
    meta: &Meta,
) -> darling::Result<Option<LitStr>> {
    let name = option_name(meta);
    let usage = format!("`#[{attribute}({name} = {example:?})]`");
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Ok(Some(s.clone())),
            other => Err(error_at(
                other.span(),
                format!("`{name}` expects a string literal, e.g. {usage}"),
            )),
        },
        _ => Err(error_at(
            meta.span(),
            format!("`{name}` expects a value, e.g. {usage}"),
        )),
    }
}
