//! Step 1: the `#[rpc(..)]` options of one method (a darling receiver), and finding and removing
//! the `#[rpc]` attributes of an impl block.

use darling::util::Flag;
use darling::FromMeta;
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, Meta, Path};

use crate::diagnostics::error_at;

/// The options of one `#[rpc(..)]` attribute.
///
/// The mode flags are declared so that darling accepts them (and refuses them twice), but the
/// mode is read by [`mode_words`], which also sees the order they were written in.
#[derive(FromMeta, Default)]
#[allow(dead_code)]
pub(crate) struct RpcOptions {
    /// `server`: only the server calls it.
    #[darling(with = |m| crate::attr::flag("rpc", m))]
    pub(crate) server: Flag,
    /// `authority`: only the node's authority calls it (the default).
    #[darling(with = |m| crate::attr::flag("rpc", m))]
    pub(crate) authority: Flag,
    /// `any_peer`: any peer calls it.
    #[darling(with = |m| crate::attr::flag("rpc", m))]
    pub(crate) any_peer: Flag,
    /// `call_local`: the body also runs on the caller.
    #[darling(with = |m| crate::attr::flag("rpc", m))]
    pub(crate) call_local: Flag,
    /// `unreliable`: sent on the unreliable channel.
    #[darling(with = |m| crate::attr::flag("rpc", m))]
    pub(crate) unreliable: Flag,
    /// `reliable`: sent on the reliable channel (the default, written out).
    #[darling(with = |m| crate::attr::flag("rpc", m))]
    pub(crate) reliable: Flag,
    /// `rate_limit = N`: calls per second per connection, with the span of `N`.
    #[darling(default, with = read_rate_limit)]
    pub(crate) rate_limit: Option<(u32, Span)>,
    /// `validate = path`: a `fn(&Self, &RpcContext, &Args..) -> bool` run before the body.
    #[darling(default, with = read_validate)]
    pub(crate) validate: Option<Path>,
}

/// How `rate_limit` is written, for messages.
const RATE_LIMIT_USAGE: &str = "`#[rpc(rate_limit = 5)]` (calls per second per connection)";

/// Reads `rate_limit = N` with `N` a whole number of at least 1.
fn read_rate_limit(meta: &Meta) -> darling::Result<Option<(u32, Span)>> {
    let value = match meta {
        Meta::NameValue(nv) => &nv.value,
        _ => {
            return Err(error_at(
                meta.span(),
                format!("`rate_limit` expects a value, e.g. {RATE_LIMIT_USAGE}"),
            ))
        }
    };
    let Expr::Lit(ExprLit {
        lit: Lit::Int(int), ..
    }) = value
    else {
        return Err(error_at(
            value.span(),
            format!("`rate_limit` expects a whole number, e.g. {RATE_LIMIT_USAGE}"),
        ));
    };
    match int.base10_parse::<u32>() {
        Ok(0) => Err(error_at(
            int.span(),
            "`rate_limit = 0` would drop every call; write at least 1 (calls per second per \
             connection), or remove the option for no limit",
        )),
        Ok(limit) => Ok(Some((limit, int.span()))),
        Err(_) => Err(error_at(
            int.span(),
            format!(
                "`rate_limit` must be a whole number of calls per second from 1 to {}, e.g. \
                 {RATE_LIMIT_USAGE}",
                u32::MAX
            ),
        )),
    }
}

/// Reads `validate = path`.
fn read_validate(meta: &Meta) -> darling::Result<Option<Path>> {
    let usage = "`#[rpc(validate = Self::check_move)]`, naming a \
                 `fn(&Self, &RpcContext, &Arg1, ..) -> bool`";
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => {
                Ok(Some(path.path.clone()))
            }
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Err(error_at(
                s.span(),
                format!("write the function's path without quotes, e.g. {usage}"),
            )),
            other => Err(error_at(
                other.span(),
                format!("`validate` expects the path of a function, e.g. {usage}"),
            )),
        },
        _ => Err(error_at(
            meta.span(),
            format!("`validate` expects a value, e.g. {usage}"),
        )),
    }
}

/// Whether `attr` is `#[rpc]` / `#[rpc(..)]`, under any path whose last segment is `rpc`
/// (`#[mf_net::rpc::rpc(..)]`, `#[mf_net::prelude::rpc]`, an alias's module path, ...).
pub(crate) fn is_rpc(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|last| last.ident == "rpc" && last.arguments.is_none())
}

/// The first `#[cfg(..)]` or `#[cfg_attr(..)]` among `attrs`.
pub(crate) fn conditional_attr(attrs: &[Attribute]) -> Option<&Attribute> {
    attrs
        .iter()
        .find(|attr| attr.path().is_ident("cfg") || attr.path().is_ident("cfg_attr"))
}

/// Removes every `#[rpc]` attribute from `attrs` and returns them.
pub(crate) fn take_rpc_attrs(attrs: &mut Vec<Attribute>) -> Vec<Attribute> {
    let (rpc, rest): (Vec<Attribute>, Vec<Attribute>) = attrs.drain(..).partition(is_rpc);
    *attrs = rest;
    rpc
}

/// The mode words (`server`, `authority`, `any_peer`) of an attribute, in the order written,
/// with their spans: read apart from the darling receiver so that conflicting modes are
/// reported even when another option has a mistake.
pub(crate) fn mode_words(attr: &Attribute) -> Vec<(String, Span)> {
    let Meta::List(list) = &attr.meta else {
        return Vec::new();
    };
    let Ok(items) = darling::ast::NestedMeta::parse_meta_list(list.tokens.clone()) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            darling::ast::NestedMeta::Meta(Meta::Path(path)) => path.get_ident(),
            _ => None,
        })
        .filter(|ident| *ident == "server" || *ident == "authority" || *ident == "any_peer")
        .map(|ident| (ident.to_string(), ident.span()))
        .collect()
}

/// Reads one `#[rpc]` / `#[rpc(..)]` attribute.
pub(crate) fn options(attr: &Attribute) -> darling::Result<RpcOptions> {
    match &attr.meta {
        Meta::Path(_) => Ok(RpcOptions::default()),
        Meta::List(list) => {
            let items = darling::ast::NestedMeta::parse_meta_list(list.tokens.clone())?;
            RpcOptions::from_list(&items)
        }
        Meta::NameValue(nv) => Err(error_at(
            nv.eq_token.span(),
            "`#[rpc]` takes options in parentheses, e.g. `#[rpc]`, `#[rpc(server, call_local)]` \
             or `#[rpc(any_peer, rate_limit = 5)]`",
        )),
    }
}

/// `path` as the user wrote it, for listings (`Self::check_move`).
pub(crate) fn path_text(path: &Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}
