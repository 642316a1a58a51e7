//! The `impl Capture` methods about one audience's snapshot: which members it carries
//! (`OWNER_EXCLUDED`, `SNAPSHOT_EXCLUDED`, ..), their newest stamps, and their encoding.

use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};

use super::context::Ctx;
use super::state;
use super::tokens::{all_bits, bit, code_value, encode_value};

/// The members a snapshot for `__aud` leaves out.
fn snapshot_excluded(cx: &Ctx<'_>) -> TokenStream {
    let (p, aud) = (&cx.p, &cx.l.aud);
    quote! {
        (<Self as #p::Replicated>::SNAPSHOT_EXCLUDED | #p::Audience::excluded::<Self>(#aud))
    }
}

/// `changed_before`: the newest stamp before `tick` among the members a snapshot for the
/// audience carries.
pub(super) fn changed_before(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, tick, aud, mask, last) = (&cx.l.s, &cx.l.tick, &cx.l.aud, &cx.l.mask, &cx.l.last);
    let ticks = state::ticks();
    let before_members = cx.members.iter().map(|(i, _, _)| {
        let index = Literal::usize_unsuffixed(*i);
        let bit = bit(*i);
        quote! {
            if #mask & #bit == 0 {
                #last = #p::newest_before(#last, #p::Option::Some(#s.#ticks[#index]), #tick);
            }
        }
    });
    let before_bases = cx.each_base(|b| {
        let field = &b.field;
        let (s, h, last, aud, tick) = (&b.l.s, &b.l.h, &b.l.last, &b.l.aud, &b.l.tick);
        let changed_before = b.item("changed_before");
        quote_spanned! {b.span=>
            let #h = #changed_before(&#s.#field, #tick, #aud);
            #last = #p::newest_before(#last, #h, #tick);
        }
    });
    let excluded = snapshot_excluded(cx);
    quote! {
        #[inline]
        fn changed_before(
            #s: &<Self as #p::Replicated>::State,
            #tick: u32,
            #aud: #p::Audience,
        ) -> #p::Option<u32> {
            let #mask: u64 = #excluded;
            let mut #last: #p::Option<u32> = #p::Option::None;
            #(#before_members)*
            #(#before_bases)*
            #last
        }
    }
}

/// `last_changed_for`: the newest stamp among the members a snapshot for the audience carries.
pub(super) fn last_changed_for(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, aud, mask, last) = (&cx.l.s, &cx.l.aud, &cx.l.mask, &cx.l.last);
    let (ticks, own_last, born) = (state::ticks(), state::own_last(), state::born());
    let last_for_members = cx.members.iter().map(|(i, _, _)| {
        let index = Literal::usize_unsuffixed(*i);
        let bit = bit(*i);
        quote! {
            if #mask & #bit == 0 {
                #last = #p::tick_max(#last, #s.#ticks[#index]);
            }
        }
    });
    let last_for_bases = cx.each_base(|b| {
        let field = &b.field;
        let (s, h, last, aud) = (&b.l.s, &b.l.h, &b.l.last, &b.l.aud);
        let last_changed_for = b.item("last_changed_for");
        quote_spanned! {b.span=>
            let #h = #last_changed_for(&#s.#field, #aud);
            #last = #p::tick_max(#last, #h);
        }
    });
    let excluded = snapshot_excluded(cx);
    quote! {
        #[inline]
        fn last_changed_for(#s: &<Self as #p::Replicated>::State, #aud: #p::Audience) -> u32 {
            let #mask: u64 = #excluded;
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
    }
}

/// The statements that encode each own member whose bit is in `__mask`.
fn write_values(cx: &Ctx<'_>) -> Vec<TokenStream> {
    let (s, w, mask) = (&cx.l.s, &cx.l.w, &cx.l.mask);
    cx.members
        .iter()
        .map(|(i, f, member)| {
            let field = &f.ident;
            let bit = bit(*i);
            let encode = encode_value(&cx.p, *i, f, member, &quote!(&#s.#field), w);
            quote! {
                if #mask & #bit != 0 {
                    #encode
                }
            }
        })
        .collect()
}

/// The statements that set `__mask` to the own members stamped after `__since` (all of them
/// without `since`) that a snapshot for the audience carries.
fn since_mask(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, since, mask) = (&cx.l.s, &cx.l.since, &cx.l.mask);
    let ticks = state::ticks();
    let since_mask = cx.members.iter().map(|(i, _, _)| {
        let index = Literal::usize_unsuffixed(*i);
        let bit = bit(*i);
        quote! {
            if #p::tick_after(#s.#ticks[#index], #since) {
                #mask |= #bit;
            }
        }
    });
    let all = all_bits(cx.members.len());
    let excluded = snapshot_excluded(cx);
    quote! {
        let mut #mask: u64 = 0;
        if let #p::Option::Some(#since) = #since {
            #(#since_mask)*
        } else {
            #mask = #all;
        }
        #mask &= !#excluded;
    }
}

/// The calls of each base's `method` (`write_since_for` or `write_bits_since_for`) on its
/// state, with the same `since`, audience and writer.
fn since_bases(cx: &Ctx<'_>, method: &str) -> Vec<TokenStream> {
    cx.each_base(|b| {
        let field = &b.field;
        let (s, w, since, aud) = (&b.l.s, &b.l.w, &b.l.since, &b.l.aud);
        let method = b.item(method);
        quote_spanned!(b.span=> #method(&#s.#field, #since, #aud, #w);)
    })
}

/// `write_since_for`: the bases' changes, then the own members stamped after `since` (all of
/// them without `since`) that a snapshot for the audience carries.
pub(super) fn write_since_for(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, w, since, aud, mask) = (&cx.l.s, &cx.l.w, &cx.l.since, &cx.l.aud, &cx.l.mask);
    let since_bases = since_bases(cx, "write_since_for");
    let since_mask = since_mask(cx);
    let values = write_values(cx);
    quote! {
        #[inline]
        fn write_since_for(
            #s: &<Self as #p::Replicated>::State,
            #since: #p::Option<u32>,
            #aud: #p::Audience,
            #w: &mut #p::NetWriter,
        ) {
            #(#since_bases)*
            #since_mask
            #p::NetWriter::write_var_u64(#w, #mask);
            #(#values)*
        }
    }
}

/// `write_bits_since_for`: what `write_since_for` writes, in the bit form: the bases' states,
/// then the own change bits and each own member, carried or not, handed to the coder.
pub(super) fn write_bits_since_for(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, w, since, aud, mask) = (&cx.l.s, &cx.l.w, &cx.l.since, &cx.l.aud, &cx.l.mask);
    let since_bases = since_bases(cx, "write_bits_since_for");
    let since_mask = since_mask(cx);
    let count = Literal::u32_unsuffixed(u32::try_from(cx.members.len()).unwrap_or(u32::MAX));
    let values = cx.members.iter().map(|(i, f, member)| {
        let field = &f.ident;
        let bit = bit(*i);
        let code = code_value(p, *i, f, member, &quote!(&#s.#field), w);
        quote! {
            if #mask & #bit != 0 {
                #code
            } else {
                #p::StateCoder::unchanged(#w);
            }
        }
    });
    quote! {
        #[inline]
        fn write_bits_since_for(
            #s: &<Self as #p::Replicated>::State,
            #since: #p::Option<u32>,
            #aud: #p::Audience,
            #w: &mut #p::StateCoder<'_>,
        ) {
            #(#since_bases)*
            #since_mask
            #p::StateCoder::mask(#w, #mask, #count);
            #(#values)*
        }
    }
}

/// `write_full_for`: the bases' full states, then every own member a spawn for the audience
/// carries.
pub(super) fn write_full_for(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (s, w, aud, mask) = (&cx.l.s, &cx.l.w, &cx.l.aud, &cx.l.mask);
    let full_bases = cx.each_base(|b| {
        let field = &b.field;
        let (s, w, aud) = (&b.l.s, &b.l.w, &b.l.aud);
        let write_full_for = b.item("write_full_for");
        quote_spanned!(b.span=> #write_full_for(&#s.#field, #aud, #w);)
    });
    let all = all_bits(cx.members.len());
    let values = write_values(cx);
    quote! {
        #[inline]
        fn write_full_for(
            #s: &<Self as #p::Replicated>::State,
            #aud: #p::Audience,
            #w: &mut #p::NetWriter,
        ) {
            #(#full_bases)*
            let #mask: u64 = #all & !#p::Audience::excluded::<Self>(#aud);
            #p::NetWriter::write_var_u64(#w, #mask);
            #(#values)*
        }
    }
}
