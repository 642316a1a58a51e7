//! Step 3, client interpolation: the hidden interpolation-state struct (`Replicated::Interp`),
//! the `Replicated` items about it (`type Interp`, `INTERPOLATED`) and the `Interpolated` impl
//! (`new_interp`, `read_buffered`, `blend`, `snap_interp`).
//!
//! The state holds an `InterpolationBuffer<FieldTy>` per `#[replicated(interpolate)]` member and
//! the `Interp` state of every flattened base; only clients that interpolate create it, so the
//! server's shadow state does not pay for it. As in `expand`, every use of an interpolated
//! member's type goes through `<FieldTy as MemberInterpolate>::..` spanned at the field's type
//! (a type without `Interpolate` is reported there, once, with the attribute's message), every
//! use of a member's codec through `MemberCodec`, and every use of a base through
//! `<BaseTy as Replicated>::..` spanned at the base's type.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use super::tokens::{
    at, bases, bit, check_mask, decode_value, fields_where, local, members, read_member,
    record_fired, spanned_item, unchanged,
};
use super::Model;
use crate::runtime;

/// What the expansion adds for interpolation.
pub(crate) struct Interp {
    /// Items for the `const _` block: the interpolation-state struct.
    pub(crate) items: TokenStream,
    /// `type Interp`, for the `impl Replicated` block.
    pub(crate) types: TokenStream,
    /// `INTERPOLATED`, for the `impl Replicated` block.
    pub(crate) consts: TokenStream,
    /// Items for the `impl Interpolated` block.
    pub(crate) impl_items: TokenStream,
}

/// The interpolation items of `m`.
pub(crate) fn expand(m: &Model) -> Interp {
    let p = &runtime::private();
    let interp = Ident::new("__MfNetReplicatedInterp", Span::call_site());
    let (i, r, known, tick, mask) = (
        local("__i"),
        local("__r"),
        local("__known"),
        local("__tick"),
        local("__mask"),
    );
    let (render, max) = (local("__render"), local("__max"));
    // A sized last field, so that the struct's `Sized` check never involves a base's state
    // (a base that is not `Replicated` is reported once, at its type, not again here).
    let end = Ident::new("__mf_net_end", Span::call_site());

    let members = members(m);
    let interpolated = fields_where(&members, |member| member.interpolate);
    let (ch, off, fired, v) = (
        local("__ch"),
        local("__off"),
        local("__fired"),
        local("__v"),
    );
    let own_on_change = members.iter().any(|(_, _, m)| m.on_change.is_some());
    let bases = bases(m);
    let base = |ty: &Type, item: &str| spanned_item(p, ty, "Base", item);
    let member_item = |ty: &Type, item: &str| spanned_item(p, ty, "MemberInterpolate", item);
    let (known_differs, newest) = (local("__differs"), local("__newest"));

    // The struct: a buffer per interpolated member, then the bases' states.
    let buffer_fields = interpolated.iter().map(|f| {
        let (field, ty) = (&f.ident, &f.ty);
        quote_spanned!(ty.span()=> #field: #p::InterpolationBuffer<#ty>,)
    });
    let base_fields = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let ty = spanned_item(p, &f.ty, "Replicated", "Interp");
        quote_spanned!(sp=> #field: #ty,)
    });

    // INTERPOLATED: any own interpolated member, or any base's.
    let own_interpolated = !interpolated.is_empty();
    let base_interpolated = bases.iter().map(|f| {
        let flag = base(&f.ty, "INTERPOLATED");
        quote!(|| #flag)
    });

    // new_interp
    let new_buffers = interpolated.iter().map(|f| {
        let field = &f.ident;
        let new_buffer = member_item(&f.ty, "new_buffer");
        quote!(#field: #new_buffer(&self.#field, #tick),)
    });
    let new_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let tick = at(&tick, sp);
        let new_interp = base(&f.ty, "new_interp");
        quote_spanned!(sp=> #field: #new_interp(&self.#field, #tick),)
    });

    // read_buffered: bases first (wire order), then the own mask and values.
    let read_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let (i, r, known, tick) = (at(&i, sp), at(&r, sp), at(&known, sp), at(&tick, sp));
        let (ch, off) = (at(&ch, sp), at(&off, sp));
        let read_buffered = base(&f.ty, "read_buffered");
        let n = base(&f.ty, "STATE_COUNT");
        quote_spanned! {sp=>
            #read_buffered(
                &mut self.#field,
                &mut #i.#field,
                #r,
                #known,
                #tick,
                #p::Option::unwrap_or_default(#ch.get_mut(#off..#off + #n)),
            )?;
            #off += #n;
        }
    });
    let check_mask = check_mask(p, &mask, members.len());
    let read_values = members.iter().map(|(index, f, member)| {
        let hook = member.on_change.is_some();
        if !member.interpolate {
            return read_member(p, *index, f, member, &r, &mask, hook.then_some(&fired));
        }
        let field = &f.ident;
        let bit = bit(*index);
        let decode = decode_value(p, *index, f, member, &r);
        let differs = |a: TokenStream, b: TokenStream| {
            let same = unchanged(p, &f.ty, &a, &b);
            quote!(!(#same))
        };
        let push = member_item(&f.ty, "push_member");
        if hook {
            // Changed: the new sample differs from the newest one buffered (or, with an
            // empty buffer, from the value shown).
            let newest_differs = differs(quote!(&#v), quote!(#newest));
            let shown_differs = differs(quote!(&#v), quote!(&self.#field));
            quote! {
                if #mask & #bit != 0 {
                    let #v = #decode?;
                    let #known_differs = match #p::InterpolationBuffer::newest(&#i.#field) {
                        #p::Option::Some((_, #newest)) => #newest_differs,
                        #p::Option::None => #shown_differs,
                    };
                    if #push(&mut #i.#field, #known, #tick, #v) && #known_differs {
                        #fired |= #bit;
                    }
                }
            }
        } else {
            quote! {
                if #mask & #bit != 0 {
                    #push(&mut #i.#field, #known, #tick, #decode?);
                }
            }
        }
    });
    let record_fired = record_fired(p, own_on_change, &fired, &ch, &off, &newest);

    // blend / snap_interp
    let blend_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let (i, render, known, max) = (at(&i, sp), at(&render, sp), at(&known, sp), at(&max, sp));
        let blend = base(&f.ty, "blend");
        quote_spanned!(sp=> #blend(&mut self.#field, &#i.#field, #render, #known, #max);)
    });
    let blend_members = interpolated.iter().map(|f| {
        let field = &f.ident;
        let blend = member_item(&f.ty, "blend_member");
        quote!(#blend(&mut self.#field, &#i.#field, #render, #known, #max);)
    });
    let snap_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let i = at(&i, sp);
        let snap = base(&f.ty, "snap_interp");
        quote_spanned!(sp=> #snap(&mut self.#field, &mut #i.#field);)
    });
    let snap_members = interpolated.iter().map(|f| {
        let field = &f.ident;
        let snap = member_item(&f.ty, "snap_member");
        quote!(#snap(&mut self.#field, &mut #i.#field);)
    });

    let items = quote! {
        /// The client-side interpolation state of the type's members (`Replicated::Interp`).
        #[doc(hidden)]
        pub struct #interp {
            #(#buffer_fields)*
            #(#base_fields)*
            #end: (),
        }
    };
    let types = quote!(type Interp = #interp;);
    let consts = quote!(const INTERPOLATED: bool = #own_interpolated #(#base_interpolated)*;);
    let interp_ty = quote!(<Self as #p::Replicated>::Interp);
    let impl_items = quote! {
        #[inline]
        fn new_interp(&self, #tick: u32) -> #interp_ty {
            #interp {
                #(#new_buffers)*
                #(#new_bases)*
                #end: (),
            }
        }

        #[inline]
        fn read_buffered(
            &mut self,
            #i: &mut #interp_ty,
            #r: &mut #p::NetReader<'_>,
            #known: u32,
            #tick: u32,
            #ch: &mut [u64],
        ) -> #p::Result<(), #p::DecodeError> {
            let mut #off: usize = 0;
            #(#read_bases)*
            let #mask = #p::NetReader::read_var_u64(#r)?;
            #check_mask
            let mut #fired: u64 = 0;
            #(#read_values)*
            #record_fired
            #p::Result::Ok(())
        }

        #[inline]
        fn blend(&mut self, #i: &#interp_ty, #render: f64, #known: u32, #max: f64) {
            #(#blend_bases)*
            #(#blend_members)*
        }

        #[inline]
        fn snap_interp(&mut self, #i: &mut #interp_ty) {
            #(#snap_bases)*
            #(#snap_members)*
        }
    };
    Interp {
        items,
        types,
        consts,
        impl_items,
    }
}

/// The placeholder `impl Interpolated<()>` items (see `expand::placeholder_impl`).
pub(crate) fn placeholder_items() -> TokenStream {
    let p = runtime::private();
    quote! {
        fn new_interp(&self, _: u32) {}

        fn read_buffered(
            &mut self,
            _: &mut (),
            _: &mut #p::NetReader<'_>,
            _: u32,
            _: u32,
            _: &mut [u64],
        ) -> #p::Result<(), #p::DecodeError> {
            #p::Result::Err(#p::DecodeError::InvalidValue)
        }

        fn blend(&mut self, _: &(), _: f64, _: u32, _: f64) {}

        fn snap_interp(&mut self, _: &mut ()) {}
    }
}
