//! `#[derive(Replicated)]`: parse (darling receivers) → check → expand.

mod check;
mod expand;
mod model;
mod parse;

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use syn::DeriveInput;

use crate::diagnostics;
use model::Model;
use parse::ReplicatedInput;

/// The expansion; or, when the declaration has mistakes, all of them as spanned errors plus a
/// placeholder impl so that uses of the type do not add "Replicated is not implemented" noise.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    match parse_and_check(input) {
        Ok(model) => expand::impl_replicated(&model),
        Err(errors) => {
            let mut out = diagnostics::to_compile_errors(errors, "replicated");
            out.extend(expand::placeholder_impl(input));
            out
        }
    }
}

/// Steps 1 and 2, with every error of both collected.
fn parse_and_check(input: &DeriveInput) -> darling::Result<Model> {
    let mut errors = darling::Error::accumulator();
    let readable = check::item(input, &mut errors);
    let parsed = if readable {
        errors.handle(ReplicatedInput::from_derive_input(input))
    } else {
        None
    };
    if let Some(parsed) = &parsed {
        check::options(parsed, &mut errors);
    }
    let fields = check::fields(input, &mut errors);
    errors.finish()?;
    // `parsed` is `None` only when an error was pushed, so `finish` has returned already.
    let parsed =
        parsed.ok_or_else(|| darling::Error::custom("Replicated: the item could not be read"))?;
    Ok(Model {
        ident: parsed.ident,
        name: parsed.name,
        fields,
    })
}
