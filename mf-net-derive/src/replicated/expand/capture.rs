//! The `impl Capture`, the server's side of the shadow state: one function per method.
//! `new_state`, `capture`, `age` and `last_changed` are here; the methods that choose and
//! write what a snapshot for an audience carries are in [`write`](mod@super::write).

use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};

use super::context::Ctx;
use super::state;
use super::tokens::{local, quant_const, quant_trait, spanned_item, unchanged};
use super::write;

/// The impl.
pub(super) fn capture_impl(cx: &Ctx<'_>) -> TokenStream {
    let (p, ident) = (&cx.p, cx.ident);
    let new_state = new_state(cx);
    let capture = capture(cx);
    let age = age(cx);
    let last_changed = last_changed(cx);
    let changed_before = write::changed_before(cx);
    let last_changed_for = write::last_changed_for(cx);
    let write_since_for = write::write_since_for(cx);
    let write_full_for = write::write_full_for(cx);
    let write_bits_since_for = write::write_bits_since_for(cx);
    quote! {
        #[automatically_derived]
        impl #p::Capture<<#ident as #p::Replicated>::State> for #ident {
            #new_state

            #capture

            #age

            #last_changed

            #changed_before

            #last_changed_for

            #write_since_for

            #write_full_for

            #write_bits_since_for
        }
    }
}

/// `new_state`: every member's shadow (quantized ones in their wire form), every base's state,
/// and every stamp at `tick`.
fn new_state(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let tick = &cx.l.tick;
    let new_members = cx.members.iter().map(|(i, f, member)| {
        let field = &f.ident;
        if member.quantize.is_some() {
            let to_wire = spanned_item(p, &f.ty, quant_trait(member), "to_wire");
            let q = quant_const(*i);
            return quote!(#field: #to_wire(&self.#field, &#q),);
        }
        let shadow = spanned_item(p, &f.ty, "MemberClone", "shadow");
        quote!(#field: #shadow(&self.#field),)
    });
    let new_bases = cx.each_base(|b| {
        let (field, tick) = (&b.field, &b.l.tick);
        let new_state = b.item("new_state");
        quote_spanned!(b.span=> #field: #new_state(&self.#field, #tick),)
    });
    let (state, ticks, own_last, born) = (
        state::name(),
        state::ticks(),
        state::own_last(),
        state::born(),
    );
    let count = state::count(cx);
    quote! {
        #[inline]
        fn new_state(&self, #tick: u32) -> <Self as #p::Replicated>::State {
            #state {
                #(#new_members)*
                #(#new_bases)*
                #ticks: [#tick; #count],
                #own_last: #tick,
                #born: #tick,
            }
        }
    }
}

/// `capture`: every base's, then every member whose value changed is copied into the shadow
/// and stamped.
fn capture(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, tick, changed, own) = (&cx.l.s, &cx.l.tick, &cx.l.changed, &cx.l.own);
    let (ticks, own_last) = (state::ticks(), state::own_last());
    let capture_bases = cx.each_base(|b| {
        let (field, s, tick, changed) = (&b.field, &b.l.s, &b.l.tick, &b.l.changed);
        let capture = b.item("capture");
        quote_spanned! {b.span=>
            if #capture(&self.#field, &mut #s.#field, #tick) {
                #changed = true;
            }
        }
    });
    let capture_members = cx.members.iter().map(|(i, f, member)| {
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
    quote! {
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
    }
}

/// `age`: every stamp older than the floor moved up to it.
fn age(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, tick, h) = (&cx.l.s, &cx.l.tick, &cx.l.h);
    let (ticks, own_last, born) = (state::ticks(), state::own_last(), state::born());
    let age_bases = cx.each_base(|b| {
        let (field, s, tick) = (&b.field, &b.l.s, &b.l.tick);
        let age = b.item("age");
        quote_spanned!(b.span=> #age(&mut #s.#field, #tick);)
    });
    quote! {
        #[inline]
        fn age(#s: &mut <Self as #p::Replicated>::State, #tick: u32) {
            #(#age_bases)*
            for #h in &mut #s.#ticks {
                *#h = #p::tick_max(*#h, #tick);
            }
            #s.#own_last = #p::tick_max(#s.#own_last, #tick);
            #s.#born = #p::tick_max(#s.#born, #tick);
        }
    }
}

/// `last_changed`: the newest stamp, own or any base's.
fn last_changed(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, last) = (&cx.l.s, &cx.l.last);
    let own_last = state::own_last();
    let last_bases = cx.each_base(|b| {
        let (field, s, h, last) = (&b.field, &b.l.s, &b.l.h, &b.l.last);
        let last_changed = b.item("last_changed");
        quote_spanned! {b.span=>
            let #h = #last_changed(&#s.#field);
            #last = #p::tick_max(#last, #h);
        }
    });
    quote! {
        #[inline]
        fn last_changed(#s: &<Self as #p::Replicated>::State) -> u32 {
            let mut #last = #s.#own_last;
            #(#last_bases)*
            #last
        }
    }
}
