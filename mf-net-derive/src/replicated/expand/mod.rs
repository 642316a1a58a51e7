//! Step 3: the hidden shadow-state struct ([`state`]), the impls of `Replicated` ([`schema`])
//! and of its sides (`Capture`: [`capture`] and [`write`](mod@write); `Apply`: [`apply`];
//! `Interpolated`: [`interp`]; `Predicted`: [`predict`]), the registry entries (and
//! [`flattened`] bases' for the RPC tables), and the [`placeholder`] impls of a declaration
//! with mistakes. One function per generated item; [`context`] and [`tokens`] hold what they
//! share.
//!
//! - Every use of a member's type goes through `Member::<FieldTy>::..` spanned at the field's
//!   type (its member traits asserted once per field), and every use of a flattened base
//!   through `Base::<BaseTy>::..`, except its state types, named `<BaseTy as Replicated>::State`
//!   and `::Interp` spanned at the base's type: a type that lacks what it needs is reported by
//!   rustc at that field, once per missing trait, with a message about `#[replicated]`
//!   (`Replicated`'s for a base, whichever of its sides the base lacks).
//! - Every runtime item is named through `::mf_net::__private`, and everything is wrapped in
//!   `const _: () = { .. };`, so the state struct cannot be named from outside.
//! - Local variables (`__s`, `__w`, `__r`, `__tick`, ..) have mixed-site hygiene, so no user
//!   item with the same name can capture them.

mod apply;
mod capture;
mod context;
mod flattened;
mod interp;
mod placeholder;
mod predict;
mod schema;
mod state;
mod tokens;
mod write;

use proc_macro2::TokenStream;
use quote::quote;

use super::model::Model;
use context::Ctx;
use tokens::{member_checks, quant_const, quant_expr};

pub(crate) use placeholder::placeholder_impl;

/// The whole expansion, wrapped in `const _: () = { .. };`.
pub(crate) fn impl_replicated(m: &Model) -> TokenStream {
    let cx = Ctx::new(m);
    let (p, ident) = (&cx.p, cx.ident);
    // What each member's type needs, asserted once per trait at the field's type (every other
    // use goes through `Member::<Ty>`, which reports nothing).
    let member_checks = cx
        .members
        .iter()
        .map(|(_, f, member)| member_checks(p, f, member));
    let quant_consts = quant_consts(&cx);
    let interp = interp::expand(&cx);
    let predict = predict::expand(&cx);
    let interp_items = &interp.items;
    let state_struct = state::state_struct(&cx);
    let replicated_impl = schema::replicated_impl(&cx, &interp, &predict);
    let capture_impl = capture::capture_impl(&cx);
    let apply_impl = apply::apply_impl(&cx);
    let (interpolated_impl, predicted_impl) = (&interp.interpolated_impl, &predict.predicted_impl);
    let flattened = flattened::flattened_bases(&cx);
    quote! {
        #[doc(hidden)]
        #[allow(
            unused_qualifications,
            unused_mut,
            unused_variables,
            unreachable_pub,
            missing_docs,
            non_camel_case_types,
            clippy::all
        )]
        const _: () = {
            use #p::BaseFallback as _;
            use #p::MemberFallback as _;
            use #p::QuantizedFallback as _;

            #(#member_checks)*

            #(#quant_consts)*

            #interp_items

            #state_struct

            #replicated_impl

            #capture_impl

            #apply_impl

            #interpolated_impl

            #predicted_impl

            #p::inventory::submit! {
                #p::RegisteredType::of::<#ident>()
                    .with_runtime(#p::runtime_part::<#ident>)
            }

            #flattened
        };
    }
}

/// One const per quantized member, for its encode, decode and comparison.
fn quant_consts(cx: &Ctx<'_>) -> Vec<TokenStream> {
    let p = &cx.p;
    cx.members
        .iter()
        .filter_map(|(i, _, member)| {
            let q = quant_expr(p, member.quantize.as_ref()?);
            let name = quant_const(*i);
            Some(quote!(const #name: #p::Quantization = #q;))
        })
        .collect()
}
