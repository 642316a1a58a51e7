//! The `impl Replicated`: the state types, the stable name, the schema hash, the member table
//! and the per-audience masks and flags.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::context::Ctx;
use super::interp::Interp;
use super::predict::Predict;
use super::state;
use super::tokens::{mask_of, path_text, quant_const, quant_expr, spanned_item};
use crate::replicated::parse::{Condition, Field, Member};

/// The impl, with the interpolation and prediction items `interp` and `predict` add to it.
pub(super) fn replicated_impl(cx: &Ctx<'_>, interp: &Interp, predict: &Predict) -> TokenStream {
    let (p, ident) = (&cx.p, cx.ident);
    let members = &cx.members;
    let state = state::name();
    let name = name(cx);
    let schema_hash = schema_hash(cx);
    let member_infos = members
        .iter()
        .map(|(_, f, member)| member_info(cx, f, member));
    let owner_excluded = mask_of(members, |m| m.condition == Condition::SkipOwner);
    let non_owner_excluded = mask_of(members, |m| m.condition == Condition::OwnerOnly);
    let snapshot_excluded = mask_of(members, |m| m.initial_only);
    let own_conditions = members
        .iter()
        .any(|(_, _, m)| m.condition != Condition::Always);
    let own_on_change = cx.own_on_change();
    let base_conditions = cx.any_base("OWNER_CONDITIONS");
    let base_on_change = cx.any_base("ON_CHANGE");
    let base_node_refs = cx.any_base("NODE_REFS");
    let own_node_refs = members
        .iter()
        .filter(|(_, _, m)| m.quantize.is_none())
        .map(|(_, f, _)| {
            let refs = spanned_item(p, &f.ty, "MemberCodec", "MEMBER_NODE_REFS");
            quote!(|| #refs)
        });
    let base_state_counts = cx.bases.iter().map(|f| {
        let n = cx.base_item(f, "STATE_COUNT");
        quote!(+ #n)
    });
    let layout = layout(cx);
    let (interp_types, interp_consts) = (&interp.types, &interp.consts);
    let predict_consts = &predict.consts;
    quote! {
        #[automatically_derived]
        impl #p::Replicated for #ident {
            type State = #state;

            #interp_types

            const NAME: &'static str = #name;

            const SCHEMA_HASH: u64 = #schema_hash;

            const MEMBERS: &'static [#p::MemberInfo] = &[#(#member_infos)*];

            const STATE_COUNT: usize = 1usize #(#base_state_counts)*;

            const OWNER_EXCLUDED: u64 = #owner_excluded;

            const NON_OWNER_EXCLUDED: u64 = #non_owner_excluded;

            const SNAPSHOT_EXCLUDED: u64 = #snapshot_excluded;

            const OWNER_CONDITIONS: bool = #own_conditions #(#base_conditions)*;

            const ON_CHANGE: bool = #own_on_change #(#base_on_change)*;

            const NODE_REFS: bool = false #(#own_node_refs)* #(#base_node_refs)*;

            const LAYOUT: &'static #p::StateLayout = #layout;

            #interp_consts

            #predict_consts
        }
    }
}

/// `LAYOUT`: each base's layout, then each own member's bit form: a quantized member's from its
/// quantization, any other's from its codec.
fn layout(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let bases = cx.bases.iter().map(|f| cx.base_item(f, "LAYOUT"));
    let members = cx
        .members
        .iter()
        .map(|(i, f, member)| match member.quantize {
            Some(q) if q.smallest_three => {
                let q = quant_const(*i);
                quote!(#p::MemberBits::Rotation { q: #q })
            }
            Some(_) => {
                let q = quant_const(*i);
                let components = spanned_item(p, &f.ty, "Quantize", "COMPONENTS");
                quote!(#p::MemberBits::Quantized { q: #q, components: #components })
            }
            None => spanned_item(p, &f.ty, "MemberCodec", "MEMBER_BITS"),
        });
    quote! {
        &#p::StateLayout {
            bases: &[#(#bases),*],
            members: &[#(#members),*],
        }
    }
}

/// `NAME`: the one given, else the module path without the crate name, then the type name.
fn name(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    match cx.name {
        Some(name) => quote!(#name),
        None => {
            let type_name = cx.ident.to_string();
            let type_name = type_name.strip_prefix("r#").unwrap_or(&type_name);
            quote! {
                #p::strip_crate(::core::concat!(::core::module_path!(), "::", #type_name))
            }
        }
    }
}

/// `SCHEMA_HASH`: the name, each base's hash, then each member's name, type hash and options.
fn schema_hash(cx: &Ctx<'_>) -> TokenStream {
    let (p, h) = (&cx.p, &cx.l.h);
    let hash_bases = cx.bases.iter().map(|f| {
        let hash = cx.base_item(f, "SCHEMA_HASH");
        quote!(let #h = #p::hash_u64(#h, #hash);)
    });
    let hash_members = cx.members.iter().map(|(_, f, member)| {
        let name = f.schema_name();
        let hash = spanned_item(p, &f.ty, "MemberCodec", "MEMBER_SCHEMA_HASH");
        let flags = Literal::u64_suffixed(member.flags());
        // Only quantized members hash more, so other members' hashes stay as they were
        // (`smallest_three` is a flag; its `min`/`max` are ∓1/√2).
        let quant = member.quantize.map(|q| {
            let (min, max) = (
                Literal::u64_suffixed(q.min.to_bits()),
                Literal::u64_suffixed(q.max.to_bits()),
            );
            let bits = Literal::u64_suffixed(u64::from(q.bits));
            quote! {
                let #h = #p::hash_u64(#h, #min);
                let #h = #p::hash_u64(#h, #max);
                let #h = #p::hash_u64(#h, #bits);
            }
        });
        quote! {
            let #h = #p::hash_str(#h, #name);
            let #h = #p::hash_u64(#h, #hash);
            let #h = #p::hash_u64(#h, #flags);
            #quant
        }
    });
    quote! {
        {
            let #h = #p::hash_name(<Self as #p::Replicated>::NAME);
            #(#hash_bases)*
            #(#hash_members)*
            #h
        }
    }
}

/// One member's entry in `MEMBERS`.
fn member_info(cx: &Ctx<'_>, f: &Field, member: &Member) -> TokenStream {
    let p = &cx.p;
    let name = f.schema_name();
    let type_name = spanned_item(p, &f.ty, "MemberCodec", "MEMBER_NAME");
    let hash = spanned_item(p, &f.ty, "MemberCodec", "MEMBER_SCHEMA_HASH");
    let interpolate = member.interpolate;
    let predict = member.predict;
    let condition = match member.condition {
        Condition::Always => quote!(Always),
        Condition::OwnerOnly => quote!(OwnerOnly),
        Condition::SkipOwner => quote!(SkipOwner),
    };
    let initial_only = member.initial_only;
    let on_change = match &member.on_change {
        Some(path) => {
            let text = path_text(path);
            quote!(#p::Option::Some(#text))
        }
        None => quote!(#p::Option::None),
    };
    let quantize = match &member.quantize {
        Some(q) => {
            let q = quant_expr(p, q);
            quote!(#p::Option::Some(#q))
        }
        None => quote!(#p::Option::None),
    };
    quote! {
        #p::MemberInfo {
            name: #name,
            type_name: #type_name,
            schema_hash: #hash,
            interpolate: #interpolate,
            predict: #predict,
            condition: #p::MemberCondition::#condition,
            initial_only: #initial_only,
            on_change: #on_change,
            quantize: #quantize,
        },
    }
}
