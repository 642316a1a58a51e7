//! Step 3, client interpolation: the hidden interpolation-state struct (`Replicated::Interp`),
//! the `Replicated` items about it (`type Interp`, `INTERPOLATED`) and the `Interpolated` impl
//! (`new_interp`, `read_buffered`, `blend`, `snap_interp`), one function each.
//!
//! The state holds an `InterpolationBuffer<FieldTy>` per `#[replicated(interpolate)]` member and
//! the `Interp` state of every flattened base; only clients that interpolate create it, so the
//! server's shadow state does not pay for it. As in the rest of the expansion, every use of an interpolated
//! member's type goes through `<FieldTy as MemberInterpolate>::..` spanned at the field's type
//! (a type without `Interpolate` is reported there, once, with the attribute's message), every
//! use of a member's codec through `MemberCodec`, and every use of a base through
//! `<BaseTy as Replicated>::..` spanned at the base's type.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

use super::apply::read_bases_tracked;
use super::context::Ctx;
use super::tokens::{
    bit, check_mask, decode_value, fields_where, local, read_member, record_fired, spanned_item,
    unchanged,
};
use crate::replicated::parse::{Field, Member};

/// What the expansion adds for interpolation.
pub(super) struct Interp {
    /// Items for the `const _` block: the interpolation-state struct.
    pub(super) items: TokenStream,
    /// `type Interp`, for the `impl Replicated` block.
    pub(super) types: TokenStream,
    /// `INTERPOLATED`, for the `impl Replicated` block.
    pub(super) consts: TokenStream,
    /// The `impl Interpolated`.
    pub(super) interpolated_impl: TokenStream,
}

/// The interpolation items of the expansion.
pub(super) fn expand(cx: &Ctx<'_>) -> Interp {
    let interp = name();
    let own_interpolated = !interpolated(cx).is_empty();
    let base_interpolated = cx.any_base("INTERPOLATED");
    let new_interp = new_interp(cx);
    let read_buffered = read_buffered(cx);
    let blend = blend(cx);
    let snap_interp = snap_interp(cx);
    let (p, ident) = (&cx.p, cx.ident);
    Interp {
        items: interp_struct(cx),
        types: quote!(type Interp = #interp;),
        // Any own interpolated member, or any base's.
        consts: quote!(const INTERPOLATED: bool = #own_interpolated #(#base_interpolated)*;),
        interpolated_impl: quote! {
            #[automatically_derived]
            impl #p::Interpolated<<#ident as #p::Replicated>::Interp> for #ident {
                #new_interp

                #read_buffered

                #blend

                #snap_interp
            }
        },
    }
}

/// The struct's name.
fn name() -> Ident {
    Ident::new("__MfNetReplicatedInterp", Span::call_site())
}

/// A sized last field, so that the struct's `Sized` check never involves a base's state (a
/// base that is not `Replicated` is reported once, at its type, not again here).
fn end() -> Ident {
    Ident::new("__mf_net_end", Span::call_site())
}

/// The own interpolated members.
fn interpolated<'a>(cx: &Ctx<'a>) -> Vec<&'a Field> {
    fields_where(&cx.members, |member| member.interpolate)
}

/// `<Self as Replicated>::Interp`.
fn interp_ty(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    quote!(<Self as #p::Replicated>::Interp)
}

/// `<Ty as MemberInterpolate>::item` of an interpolated member (see [`spanned_item`]).
fn member_item(cx: &Ctx<'_>, f: &Field, item: &str) -> TokenStream {
    spanned_item(&cx.p, &f.ty, "MemberInterpolate", item)
}

/// The struct: a buffer per interpolated member, then the bases' states.
fn interp_struct(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let buffer_fields = interpolated(cx).into_iter().map(|f| {
        let (field, ty) = (&f.ident, &f.ty);
        quote_spanned!(ty.span()=> #field: #p::InterpolationBuffer<#ty>,)
    });
    let base_fields = cx.each_base(|b| {
        let field = &b.field;
        let ty = b.state_type("Interp");
        quote_spanned!(b.span=> #field: #ty,)
    });
    let (interp, end) = (name(), end());
    quote! {
        /// The client-side interpolation state of the type's members (`Replicated::Interp`).
        #[doc(hidden)]
        pub struct #interp {
            #(#buffer_fields)*
            #(#base_fields)*
            #end: (),
        }
    }
}

/// `new_interp`: a buffer per interpolated member holding its value at `tick`, and each base's
/// interpolation state.
fn new_interp(cx: &Ctx<'_>) -> TokenStream {
    let tick = &cx.l.tick;
    let new_buffers = interpolated(cx).into_iter().map(|f| {
        let field = &f.ident;
        let new_buffer = member_item(cx, f, "new_buffer");
        quote!(#field: #new_buffer(&self.#field, #tick),)
    });
    let new_bases = cx.each_base(|b| {
        let (field, tick) = (&b.field, &b.l.tick);
        let new_interp = b.item("new_interp");
        quote_spanned!(b.span=> #field: #new_interp(&self.#field, #tick),)
    });
    let (interp, end, interp_ty) = (name(), end(), interp_ty(cx));
    quote! {
        #[inline]
        fn new_interp(&self, #tick: u32) -> #interp_ty {
            #interp {
                #(#new_buffers)*
                #(#new_bases)*
                #end: (),
            }
        }
    }
}

/// `read_buffered`: bases first (wire order), then the own mask and values, interpolated ones
/// into their buffers.
fn read_buffered(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let l = &cx.l;
    let (i, r, known, tick, mask) = (&l.i, &l.r, &l.known, &l.tick, &l.mask);
    let (ch, off, fired) = (&l.ch, &l.off, &l.fired);
    let read_bases = read_bases_tracked(cx, "read_buffered", |b| {
        let field = &b.field;
        let (i, r, known, tick) = (&b.l.i, &b.l.r, &b.l.known, &b.l.tick);
        quote_spanned!(b.span=> &mut #i.#field, #r, #known, #tick,)
    });
    let check_mask = check_mask(p, mask, cx.members.len());
    let read_values = cx.members.iter().map(|(index, f, member)| {
        if member.interpolate {
            buffer_member(cx, *index, f, member)
        } else {
            let fired = member.on_change.is_some().then_some(fired);
            read_member(p, *index, f, member, r, mask, fired)
        }
    });
    let record_fired = record_fired(p, cx.own_on_change(), fired, ch, off, &local("__newest"));
    let interp_ty = interp_ty(cx);
    quote! {
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
    }
}

/// The statement that pushes interpolated member `index` into its buffer when its bit is in
/// the mask; with an `on_change` hook, its bit is also set in `__fired` when the new sample
/// differs from the newest one buffered (or, with an empty buffer, from the value shown).
fn buffer_member(cx: &Ctx<'_>, index: usize, f: &Field, member: &Member) -> TokenStream {
    let p = &cx.p;
    let l = &cx.l;
    let (i, r, known, tick, mask, fired) = (&l.i, &l.r, &l.known, &l.tick, &l.mask, &l.fired);
    let field = &f.ident;
    let bit = bit(index);
    let decode = decode_value(p, index, f, member, r);
    let push = member_item(cx, f, "push_member");
    if member.on_change.is_none() {
        return quote! {
            if #mask & #bit != 0 {
                #push(&mut #i.#field, #known, #tick, #decode?);
            }
        };
    }
    let (v, known_differs, newest) = (local("__v"), local("__differs"), local("__newest"));
    let differs = |a: TokenStream, b: TokenStream| {
        let same = unchanged(p, &f.ty, &a, &b);
        quote!(!(#same))
    };
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
}

/// `blend`: each base, then each interpolated member, shown at `render`.
fn blend(cx: &Ctx<'_>) -> TokenStream {
    let (i, render, known, max) = (&cx.l.i, &cx.l.render, &cx.l.known, &cx.l.max);
    let blend_bases = cx.each_base(|b| {
        let field = &b.field;
        let (i, render, known, max) = (&b.l.i, &b.l.render, &b.l.known, &b.l.max);
        let blend = b.item("blend");
        quote_spanned!(b.span=> #blend(&mut self.#field, &#i.#field, #render, #known, #max);)
    });
    let blend_members = interpolated(cx).into_iter().map(|f| {
        let field = &f.ident;
        let blend = member_item(cx, f, "blend_member");
        quote!(#blend(&mut self.#field, &#i.#field, #render, #known, #max);)
    });
    let interp_ty = interp_ty(cx);
    quote! {
        #[inline]
        fn blend(&mut self, #i: &#interp_ty, #render: f64, #known: u32, #max: f64) {
            #(#blend_bases)*
            #(#blend_members)*
        }
    }
}

/// `snap_interp`: each base, then each interpolated member, set to its newest sample.
fn snap_interp(cx: &Ctx<'_>) -> TokenStream {
    let i = &cx.l.i;
    let snap_bases = cx.each_base(|b| {
        let (field, i) = (&b.field, &b.l.i);
        let snap = b.item("snap_interp");
        quote_spanned!(b.span=> #snap(&mut self.#field, &mut #i.#field);)
    });
    let snap_members = interpolated(cx).into_iter().map(|f| {
        let field = &f.ident;
        let snap = member_item(cx, f, "snap_member");
        quote!(#snap(&mut self.#field, &mut #i.#field);)
    });
    let interp_ty = interp_ty(cx);
    quote! {
        #[inline]
        fn snap_interp(&mut self, #i: &mut #interp_ty) {
            #(#snap_bases)*
            #(#snap_members)*
        }
    }
}
