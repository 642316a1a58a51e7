//! `#[rpcs]` on an impl block and its `#[rpc(..)]` methods: parse (darling receiver for the
//! options) → check (signatures, options, the block) → expand.
//!
//! The impl block is always re-emitted, minus its `#[rpc]` attributes, so that a declaration
//! with mistakes still defines its methods and the only errors are the ones about the mistakes.

mod check;
mod expand;
mod model;
mod parse;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ItemImpl;

use crate::diagnostics::{self, error_at};
use model::Model;

/// The expansion of `#[rpcs]` with arguments `args` on `input`.
pub(crate) fn rpcs(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut item: ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = error_at(
                Span::call_site(),
                "`#[rpcs]` goes on an impl block of a replicated type, e.g. \
                 `#[rpcs] impl Player { #[rpc] fn move_by(&mut self, dx: f32) { .. } }`",
            );
            let mut out = diagnostics::to_compile_errors(error, "rpc");
            out.extend(input);
            return out;
        }
    };
    let mut errors = darling::Error::accumulator();
    if !args.is_empty() {
        errors.push(error_at(
            syn::spanned::Spanned::span(&args),
            "`#[rpcs]` takes no options; options go on each method's `#[rpc(..)]`",
        ));
    }
    let type_ident = check::impl_block(&item, &mut errors);
    let rpcs = check::methods(&mut item, &mut errors);
    let assertion = type_ident
        .is_some()
        .then(|| expand::assert_replicated(&item.self_ty));
    match (errors.finish(), type_ident) {
        (Ok(()), Some(type_ident)) => expand::expand(&Model {
            item: &item,
            type_ident,
            rpcs,
        }),
        (Err(errors), _) => {
            let mut out = diagnostics::to_compile_errors(errors, "rpc");
            out.extend(quote!(#item #assertion));
            out
        }
        // `impl_block` pushes an error whenever it returns no name.
        (Ok(()), None) => quote!(#item),
    }
}

/// The expansion of a `#[rpc]` that no `#[rpcs]` consumed: an error, and the item unchanged.
pub(crate) fn stray_rpc(input: TokenStream) -> TokenStream {
    let error = error_at(
        Span::call_site(),
        "`#[rpc]` marks a method of an impl block that has `#[rpcs]`: put `#[rpcs]` on the impl \
         block, e.g. `#[rpcs] impl Player { #[rpc] fn move_by(&mut self, dx: f32) { .. } }`",
    );
    let mut out = diagnostics::to_compile_errors(error, "rpc");
    out.extend(input);
    out
}
