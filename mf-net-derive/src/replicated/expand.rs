//! Step 3: the hidden shadow-state struct, the impls of `Replicated` and of its sides
//! (`Capture`, `Apply`; `Interpolated` from `expand_interp`, `Predicted` from
//! `expand_predict`) and the registry entry.
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

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Type};

use super::parse::Condition;
use super::tokens::{
    all_bits, at, bases, bit, check_mask, encode_value, local, mask_of, member_checks, members,
    path_text, quant_const, quant_expr, quant_trait, read_member, record_fired, spanned_item,
    unchanged,
};
use super::Model;
use crate::runtime;

/// The generated functions' local variables.
struct Locals {
    s: Ident,
    tick: Ident,
    w: Ident,
    r: Ident,
    since: Ident,
    h: Ident,
    changed: Ident,
    last: Ident,
    aud: Ident,
    ch: Ident,
    off: Ident,
}

impl Locals {
    fn new() -> Self {
        Self {
            s: local("__s"),
            tick: local("__tick"),
            w: local("__w"),
            r: local("__r"),
            since: local("__since"),
            h: local("__h"),
            changed: local("__changed"),
            last: local("__last"),
            aud: local("__aud"),
            ch: local("__ch"),
            off: local("__off"),
        }
    }

    /// The same variables, reported at `span` (see [`at`]).
    fn at(&self, span: Span) -> Self {
        Self {
            s: at(&self.s, span),
            tick: at(&self.tick, span),
            w: at(&self.w, span),
            r: at(&self.r, span),
            since: at(&self.since, span),
            h: at(&self.h, span),
            changed: at(&self.changed, span),
            last: at(&self.last, span),
            aud: at(&self.aud, span),
            ch: at(&self.ch, span),
            off: at(&self.off, span),
        }
    }
}

/// The whole expansion.
pub(crate) fn impl_replicated(m: &Model) -> TokenStream {
    let p = &runtime::private();
    let ident = &m.ident;
    let state = Ident::new("__MfNetReplicatedState", Span::call_site());
    let locals = Locals::new();
    let Locals {
        s,
        tick,
        w,
        r,
        since,
        h,
        changed,
        last,
        aud,
        ch,
        off,
    } = &locals;
    let (mask, own) = (local("__mask"), local("__own"));
    let ticks = Ident::new("__mf_net_ticks", Span::call_site());
    let own_last = Ident::new("__mf_net_last", Span::call_site());
    let born = Ident::new("__mf_net_born", Span::call_site());

    // Own members with their bit index, and flattened bases, in declaration order.
    let members = members(m);
    let bases = bases(m);
    let count = members.len();
    let count_lit = Literal::usize_unsuffixed(count);
    let all = all_bits(count);

    let codec = |ty: &Type, item: &str| spanned_item(p, ty, "MemberCodec", item);
    let base = |ty: &Type, item: &str| spanned_item(p, ty, "Base", item);

    let name = match &m.name {
        Some(name) => quote!(#name),
        None => {
            let type_name = ident.to_string();
            let type_name = type_name.strip_prefix("r#").unwrap_or(&type_name);
            quote! {
                #p::strip_crate(::core::concat!(::core::module_path!(), "::", #type_name))
            }
        }
    };

    // The state struct's fields.
    // A quantized member's shadow keeps its wire form (bucket indexes): quantized once, at
    // capture.
    let member_fields = members.iter().map(|(_, f, member)| {
        let (field, ty) = (&f.ident, &f.ty);
        if member.quantize.is_some() {
            quote!(#field: #p::Buckets,)
        } else {
            quote!(#field: #ty,)
        }
    });
    let base_fields = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let ty = spanned_item(p, &f.ty, "Replicated", "State");
        quote_spanned!(f.ty.span()=> #field: #ty,)
    });

    // SCHEMA_HASH: the name, each base's hash, then each member's name, type hash and options.
    let hash_bases = bases.iter().map(|f| {
        let hash = base(&f.ty, "SCHEMA_HASH");
        quote!(let #h = #p::hash_u64(#h, #hash);)
    });
    let hash_members = members.iter().map(|(_, f, member)| {
        let name = f.schema_name();
        let hash = codec(&f.ty, "MEMBER_SCHEMA_HASH");
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

    let member_infos = members.iter().map(|(_, f, member)| {
        let name = f.schema_name();
        let type_name = codec(&f.ty, "MEMBER_NAME");
        let hash = codec(&f.ty, "MEMBER_SCHEMA_HASH");
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
    });
    let owner_excluded = mask_of(&members, |m| m.condition == Condition::SkipOwner);
    let non_owner_excluded = mask_of(&members, |m| m.condition == Condition::OwnerOnly);
    let snapshot_excluded = mask_of(&members, |m| m.initial_only);
    let own_conditions = members
        .iter()
        .any(|(_, _, m)| m.condition != Condition::Always);
    let own_on_change = members.iter().any(|(_, _, m)| m.on_change.is_some());
    let base_conditions = bases.iter().map(|f| {
        let flag = base(&f.ty, "OWNER_CONDITIONS");
        quote!(|| #flag)
    });
    let base_on_change = bases.iter().map(|f| {
        let flag = base(&f.ty, "ON_CHANGE");
        quote!(|| #flag)
    });
    let base_state_counts = bases.iter().map(|f| {
        let n = base(&f.ty, "STATE_COUNT");
        quote!(+ #n)
    });

    // new_state
    let new_members = members.iter().map(|(i, f, member)| {
        let field = &f.ident;
        if member.quantize.is_some() {
            let to_wire = spanned_item(p, &f.ty, quant_trait(member), "to_wire");
            let q = quant_const(*i);
            return quote!(#field: #to_wire(&self.#field, &#q),);
        }
        let shadow = spanned_item(p, &f.ty, "MemberClone", "shadow");
        quote!(#field: #shadow(&self.#field),)
    });
    let new_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals { tick, .. } = locals.at(sp);
        let new_state = base(&f.ty, "new_state");
        quote_spanned!(f.ty.span()=> #field: #new_state(&self.#field, #tick),)
    });

    // capture
    let capture_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals {
            s, tick, changed, ..
        } = locals.at(sp);
        let capture = base(&f.ty, "capture");
        quote_spanned! {f.ty.span()=>
            if #capture(&self.#field, &mut #s.#field, #tick) {
                #changed = true;
            }
        }
    });
    let capture_members = members.iter().map(|(i, f, member)| {
        let field = &f.ident;
        let index = Literal::usize_unsuffixed(*i);
        // Quantized members compare bucket indexes, which the shadow keeps: a change within
        // the bucket last sent is not a change.
        if member.quantize.is_some() {
            let to_wire = spanned_item(p, &f.ty, quant_trait(member), "to_wire");
            let q = quant_const(*i);
            let wire = local("__wire");
            return quote! {
                let #wire = #to_wire(&self.#field, &#q);
                if #wire != #s.#field {
                    #s.#field = #wire;
                    #s.#ticks[#index] = #tick;
                    #own = true;
                }
            };
        }
        let unchanged = unchanged(p, &f.ty, &quote!(&self.#field), &quote!(&#s.#field));
        let copy_into = spanned_item(p, &f.ty, "MemberClone", "copy_into");
        quote! {
            if !#unchanged {
                #copy_into(&self.#field, &mut #s.#field);
                #s.#ticks[#index] = #tick;
                #own = true;
            }
        }
    });

    // age: every stamp older than the floor moved up to it.
    let age_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals { s, tick, .. } = locals.at(sp);
        let age = base(&f.ty, "age");
        quote_spanned!(f.ty.span()=> #age(&mut #s.#field, #tick);)
    });

    let last_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals { s, h, last, .. } = locals.at(sp);
        let last_changed = base(&f.ty, "last_changed");
        quote_spanned! {f.ty.span()=>
            let #h = #last_changed(&#s.#field);
            #last = #p::tick_max(#last, #h);
        }
    });

    // last_changed_for: the newest stamp among the members a snapshot for the audience carries.
    let last_for_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals {
            s, h, last, aud, ..
        } = locals.at(sp);
        let last_changed_for = base(&f.ty, "last_changed_for");
        quote_spanned! {f.ty.span()=>
            let #h = #last_changed_for(&#s.#field, #aud);
            #last = #p::tick_max(#last, #h);
        }
    });
    let last_for_members = members.iter().map(|(i, _, _)| {
        let index = Literal::usize_unsuffixed(*i);
        let bit = bit(*i);
        quote! {
            if #mask & #bit == 0 {
                #last = #p::tick_max(#last, #s.#ticks[#index]);
            }
        }
    });
    // changed_before: the newest stamp before `tick` among the members a snapshot for the
    // audience carries.
    let before_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals {
            s,
            h,
            last,
            aud,
            tick,
            ..
        } = locals.at(sp);
        let changed_before = base(&f.ty, "changed_before");
        quote_spanned! {f.ty.span()=>
            let #h = #changed_before(&#s.#field, #tick, #aud);
            #last = #p::newest_before(#last, #h, #tick);
        }
    });
    let before_members = members.iter().map(|(i, _, _)| {
        let index = Literal::usize_unsuffixed(*i);
        let bit = bit(*i);
        quote! {
            if #mask & #bit == 0 {
                #last = #p::newest_before(#last, #p::Option::Some(#s.#ticks[#index]), #tick);
            }
        }
    });
    // The members a snapshot for `aud` leaves out, and those a spawn for `aud` leaves out.
    let snapshot_excl = quote! {
        (<Self as #p::Replicated>::SNAPSHOT_EXCLUDED | #p::Audience::excluded::<Self>(#aud))
    };
    let full_excl = quote!(#p::Audience::excluded::<Self>(#aud));

    // write_since_for / write_full_for
    let since_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals {
            s, w, since, aud, ..
        } = locals.at(sp);
        let write_since_for = base(&f.ty, "write_since_for");
        quote_spanned!(f.ty.span()=> #write_since_for(&#s.#field, #since, #aud, #w);)
    });
    let since_mask = members.iter().map(|(i, _, _)| {
        let index = Literal::usize_unsuffixed(*i);
        let bit = bit(*i);
        quote! {
            if #p::tick_after(#s.#ticks[#index], #since) {
                #mask |= #bit;
            }
        }
    });
    let since_values = members.iter().map(|(i, f, member)| {
        let field = &f.ident;
        let bit = bit(*i);
        let encode = encode_value(p, *i, f, member, &quote!(&#s.#field), w);
        quote! {
            if #mask & #bit != 0 {
                #encode
            }
        }
    });
    let full_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals { s, w, aud, .. } = locals.at(sp);
        let write_full_for = base(&f.ty, "write_full_for");
        quote_spanned!(f.ty.span()=> #write_full_for(&#s.#field, #aud, #w);)
    });
    let full_values = since_values.clone();

    // read
    let read_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals { r, .. } = locals.at(sp);
        let read = base(&f.ty, "read");
        quote_spanned!(f.ty.span()=> #read(&mut self.#field, #r)?;)
    });
    let check_mask = check_mask(p, &mask, count);
    // What each member's type needs, asserted once per trait at the field's type (every other
    // use goes through `Member::<Ty>`, which reports nothing).
    let member_checks = members
        .iter()
        .map(|(_, f, member)| member_checks(p, f, member));
    // `read` assigns every member (spawn state, and clients that do not interpolate); clients
    // that interpolate use `read_buffered` (`expand_interp`), which buffers interpolated ones.
    let read_values = members
        .iter()
        .map(|(i, f, member)| read_member(p, *i, f, member, r, &mask, None));

    // read_tracked: `read`, and a bit in the own state's slot of `__ch` for each `on_change`
    // member whose value differs from the one it replaces.
    let tracked_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals { r, ch, off, .. } = locals.at(sp);
        let read_tracked = base(&f.ty, "read_tracked");
        let n = base(&f.ty, "STATE_COUNT");
        quote_spanned! {f.ty.span()=>
            #read_tracked(
                &mut self.#field,
                #r,
                #p::Option::unwrap_or_default(#ch.get_mut(#off..#off + #n)),
            )?;
            #off += #n;
        }
    });
    let fired = local("__fired");
    let tracked_values = members.iter().map(|(i, f, member)| {
        let fired = member.on_change.is_some().then_some(&fired);
        read_member(p, *i, f, member, r, &mask, fired)
    });
    let record_fired = record_fired(p, own_on_change, &fired, ch, off, h);

    // run_on_change: the bases' hooks, then the own ones, in declaration order.
    let hook_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let Locals { ch, off, .. } = locals.at(sp);
        let run = base(&f.ty, "run_on_change");
        let n = base(&f.ty, "STATE_COUNT");
        let has = base(&f.ty, "ON_CHANGE");
        quote_spanned! {f.ty.span()=>
            if #has {
                #run(
                    &mut self.#field,
                    #p::Option::unwrap_or_default(#ch.get(#off..#off + #n)),
                );
            }
            #off += #n;
        }
    });
    let hook_members = members.iter().filter_map(|(i, _, member)| {
        let path = member.on_change.as_ref()?;
        let bit = bit(*i);
        let hook = local("__hook");
        // Spanned at the path, so a function of another signature is reported there.
        let typed = quote_spanned!(path.span()=> let #hook: fn(&mut Self) = #path;);
        Some(quote! {
            if #fired & #bit != 0 {
                #typed
                #hook(self);
            }
        })
    });
    let run_own_hooks = own_on_change.then(|| {
        quote! {
            let #fired = #p::Option::unwrap_or(#ch.get(#off).copied(), 0);
            #(#hook_members)*
        }
    });

    // The flattened bases, for the RPC tables (`mf_net::rpc::FlattenedBases`): wire ids put a
    // base's RPCs first, and dispatch reaches them through these projections.
    let flattened = (!bases.is_empty()).then(|| {
        let v = local("__v");
        let projections = bases.iter().enumerate().map(|(i, f)| {
            let field = &f.ident;
            let get = Ident::new(&format!("__mf_net_base_{i}"), Span::call_site());
            quote! {
                fn #get(#v: &mut dyn #p::Any) -> #p::Option<&mut dyn #p::Any> {
                    match #v.downcast_mut::<#ident>() {
                        #p::Option::Some(#v) => #p::Option::Some(&mut #v.#field as &mut dyn #p::Any),
                        #p::Option::None => #p::Option::None,
                    }
                }
            }
        });
        let infos = bases.iter().enumerate().map(|(i, f)| {
            let (name, ty) = (f.schema_name(), &f.ty);
            let get = Ident::new(&format!("__mf_net_base_{i}"), Span::call_site());
            quote! {
                #p::BaseInfo {
                    field: #name,
                    type_id: #p::TypeId::of::<#ty>,
                    get_mut: #get,
                },
            }
        });
        quote! {
            #(#projections)*
            #p::inventory::submit! {
                #p::FlattenedBases::new(#p::TypeId::of::<#ident>, &[#(#infos)*])
            }
        }
    });
    // One const per quantized member, for its encode, decode and comparison.
    let quant_consts = members.iter().filter_map(|(i, _, member)| {
        let q = quant_expr(p, member.quantize.as_ref()?);
        let name = quant_const(*i);
        Some(quote!(const #name: #p::Quantization = #q;))
    });
    let interp = super::expand_interp::expand(m);
    let (interp_items, interp_types, interp_consts, interp_impl) = (
        &interp.items,
        &interp.types,
        &interp.consts,
        &interp.impl_items,
    );
    let predict = super::expand_predict::expand(m);
    let (predict_consts, predict_impl) = (&predict.consts, &predict.impl_items);

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

            /// The shadow state of the type's members (`Replicated::State`).
            #[doc(hidden)]
            pub struct #state {
                #(#member_fields)*
                #(#base_fields)*
                #ticks: [u32; #count_lit],
                #own_last: u32,
                #born: u32,
            }

            #[automatically_derived]
            impl #p::Replicated for #ident {
                type State = #state;

                #interp_types

                const NAME: &'static str = #name;

                const SCHEMA_HASH: u64 = {
                    let #h = #p::hash_name(<Self as #p::Replicated>::NAME);
                    #(#hash_bases)*
                    #(#hash_members)*
                    #h
                };

                const MEMBERS: &'static [#p::MemberInfo] = &[#(#member_infos)*];

                const STATE_COUNT: usize = 1usize #(#base_state_counts)*;

                const OWNER_EXCLUDED: u64 = #owner_excluded;

                const NON_OWNER_EXCLUDED: u64 = #non_owner_excluded;

                const SNAPSHOT_EXCLUDED: u64 = #snapshot_excluded;

                const OWNER_CONDITIONS: bool = #own_conditions #(#base_conditions)*;

                const ON_CHANGE: bool = #own_on_change #(#base_on_change)*;

                #interp_consts

                #predict_consts
            }

            #[automatically_derived]
            impl #p::Capture<<#ident as #p::Replicated>::State> for #ident {
                #[inline]
                fn new_state(&self, #tick: u32) -> <Self as #p::Replicated>::State {
                    #state {
                        #(#new_members)*
                        #(#new_bases)*
                        #ticks: [#tick; #count_lit],
                        #own_last: #tick,
                        #born: #tick,
                    }
                }

                #[inline]
                fn capture(&self, #s: &mut <Self as #p::Replicated>::State, #tick: u32) -> bool {
                    let mut #changed = false;
                    #(#capture_bases)*
                    let mut #own = false;
                    #(#capture_members)*
                    if #own {
                        #s.#own_last = #tick;
                    }
                    #changed || #own
                }

                #[inline]
                fn age(#s: &mut <Self as #p::Replicated>::State, #tick: u32) {
                    #(#age_bases)*
                    for #h in &mut #s.#ticks {
                        *#h = #p::tick_max(*#h, #tick);
                    }
                    #s.#own_last = #p::tick_max(#s.#own_last, #tick);
                    #s.#born = #p::tick_max(#s.#born, #tick);
                }

                #[inline]
                fn last_changed(#s: &<Self as #p::Replicated>::State) -> u32 {
                    let mut #last = #s.#own_last;
                    #(#last_bases)*
                    #last
                }

                #[inline]
                fn changed_before(
                    #s: &<Self as #p::Replicated>::State,
                    #tick: u32,
                    #aud: #p::Audience,
                ) -> #p::Option<u32> {
                    let #mask: u64 = #snapshot_excl;
                    let mut #last: #p::Option<u32> = #p::Option::None;
                    #(#before_members)*
                    #(#before_bases)*
                    #last
                }

                #[inline]
                fn last_changed_for(#s: &<Self as #p::Replicated>::State, #aud: #p::Audience) -> u32 {
                    let #mask: u64 = #snapshot_excl;
                    let mut #last = if #mask == 0 {
                        #s.#own_last
                    } else {
                        let mut #last = #s.#born;
                        #(#last_for_members)*
                        #last
                    };
                    #(#last_for_bases)*
                    #last
                }

                #[inline]
                fn write_since_for(
                    #s: &<Self as #p::Replicated>::State,
                    #since: #p::Option<u32>,
                    #aud: #p::Audience,
                    #w: &mut #p::NetWriter,
                ) {
                    #(#since_bases)*
                    let mut #mask: u64 = 0;
                    if let #p::Option::Some(#since) = #since {
                        #(#since_mask)*
                    } else {
                        #mask = #all;
                    }
                    #mask &= !#snapshot_excl;
                    #p::NetWriter::write_var_u64(#w, #mask);
                    #(#since_values)*
                }

                #[inline]
                fn write_full_for(
                    #s: &<Self as #p::Replicated>::State,
                    #aud: #p::Audience,
                    #w: &mut #p::NetWriter,
                ) {
                    #(#full_bases)*
                    let #mask: u64 = #all & !#full_excl;
                    #p::NetWriter::write_var_u64(#w, #mask);
                    #(#full_values)*
                }
            }

            #[automatically_derived]
            impl #p::Apply for #ident {
                #[inline]
                fn read(
                    &mut self,
                    #r: &mut #p::NetReader<'_>,
                ) -> #p::Result<(), #p::DecodeError> {
                    #(#read_bases)*
                    let #mask = #p::NetReader::read_var_u64(#r)?;
                    #check_mask
                    #(#read_values)*
                    #p::Result::Ok(())
                }

                #[inline]
                fn read_tracked(
                    &mut self,
                    #r: &mut #p::NetReader<'_>,
                    #ch: &mut [u64],
                ) -> #p::Result<(), #p::DecodeError> {
                    let mut #off: usize = 0;
                    #(#tracked_bases)*
                    let #mask = #p::NetReader::read_var_u64(#r)?;
                    #check_mask
                    let mut #fired: u64 = 0;
                    #(#tracked_values)*
                    #record_fired
                    #p::Result::Ok(())
                }

                #[inline]
                fn run_on_change(&mut self, #ch: &[u64]) {
                    let mut #off: usize = 0;
                    #(#hook_bases)*
                    #run_own_hooks
                }
            }

            #[automatically_derived]
            impl #p::Interpolated<<#ident as #p::Replicated>::Interp> for #ident {
                #interp_impl
            }

            #[automatically_derived]
            impl #p::Predicted<<#ident as #p::Replicated>::State> for #ident {
                #predict_impl
            }

            #p::inventory::submit! {
                #p::RegisteredType::of::<#ident>()
            }

            #flattened
        };
    }
}

/// Impls with no behaviour, emitted next to the errors of a declaration that has mistakes:
/// the build fails on those errors anyway, and uses of the type elsewhere then compile instead
/// of adding "`Replicated` is not implemented" errors that would hide the real ones. Generic
/// items get none (their impls would need bounds the user has not written).
pub(crate) fn placeholder_impl(input: &DeriveInput) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let p = runtime::private();
    let ident = &input.ident;
    let interp = super::expand_interp::placeholder_items();
    let predict = super::expand_predict::placeholder_items();
    quote! {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            #[automatically_derived]
            impl #p::Replicated for #ident {
                type State = ();
                type Interp = ();
                const NAME: &'static str = "";
                const SCHEMA_HASH: u64 = 0;
                const MEMBERS: &'static [#p::MemberInfo] = &[];
                const STATE_COUNT: usize = 1;
                const OWNER_EXCLUDED: u64 = 0;
                const NON_OWNER_EXCLUDED: u64 = 0;
                const SNAPSHOT_EXCLUDED: u64 = 0;
                const OWNER_CONDITIONS: bool = false;
                const ON_CHANGE: bool = false;
                const INTERPOLATED: bool = false;
                const PREDICTED: u64 = 0;
                const PREDICTS: bool = false;
            }

            #[automatically_derived]
            impl #p::Capture<()> for #ident {
                fn new_state(&self, _: u32) {}

                fn capture(&self, _: &mut (), _: u32) -> bool {
                    false
                }

                fn age(_: &mut (), _: u32) {}

                fn last_changed(_: &()) -> u32 {
                    0
                }

                fn last_changed_for(_: &(), _: #p::Audience) -> u32 {
                    0
                }

                fn changed_before(_: &(), _: u32, _: #p::Audience) -> #p::Option<u32> {
                    #p::Option::None
                }

                fn write_since_for(
                    _: &(),
                    _: #p::Option<u32>,
                    _: #p::Audience,
                    _: &mut #p::NetWriter,
                ) {
                }

                fn write_full_for(_: &(), _: #p::Audience, _: &mut #p::NetWriter) {}
            }

            #[automatically_derived]
            impl #p::Apply for #ident {
                fn read(
                    &mut self,
                    _: &mut #p::NetReader<'_>,
                ) -> #p::Result<(), #p::DecodeError> {
                    #p::Result::Err(#p::DecodeError::InvalidValue)
                }

                fn read_tracked(
                    &mut self,
                    _: &mut #p::NetReader<'_>,
                    _: &mut [u64],
                ) -> #p::Result<(), #p::DecodeError> {
                    #p::Result::Err(#p::DecodeError::InvalidValue)
                }

                fn run_on_change(&mut self, _: &[u64]) {}
            }

            #[automatically_derived]
            impl #p::Interpolated<()> for #ident {
                #interp
            }

            #[automatically_derived]
            impl #p::Predicted<()> for #ident {
                #predict
            }
        };
    }
}
