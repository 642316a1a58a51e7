//! The `impl Apply`, the client's side of a snapshot without interpolation: `read`,
//! `read_tracked` and `run_on_change`, one function each.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::context::{BaseUse, Ctx};
use super::tokens::{bit, check_mask, local, read_member, record_fired};

/// The impl.
pub(super) fn apply_impl(cx: &Ctx<'_>) -> TokenStream {
    let (p, ident) = (&cx.p, cx.ident);
    let read = read(cx);
    let read_tracked = read_tracked(cx);
    let run_on_change = run_on_change(cx);
    quote! {
        #[automatically_derived]
        impl #p::Apply for #ident {
            #read

            #read_tracked

            #run_on_change
        }
    }
}

/// `read`: the bases' states, then the own mask and every member it names. It assigns every
/// member (spawn state, and clients that do not interpolate); clients that interpolate use
/// `read_buffered` ([`interp`](super::interp)), which buffers interpolated ones.
fn read(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (r, mask) = (&cx.l.r, &cx.l.mask);
    let read_bases = cx.each_base(|b| {
        let (field, r) = (&b.field, &b.l.r);
        let read = b.item("read");
        quote_spanned!(b.span=> #read(&mut self.#field, #r)?;)
    });
    let check_mask = check_mask(p, mask, cx.members.len());
    let read_values = cx
        .members
        .iter()
        .map(|(i, f, member)| read_member(p, *i, f, member, r, mask, None));
    quote! {
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
    }
}

/// The statements that read each base's state with `read_tracked` or `read_buffered` (`item`)
/// and move `__off` past its slots of the changed-bits buffer `__ch`; `args` are the
/// arguments between the base's field and its slots.
pub(super) fn read_bases_tracked(
    cx: &Ctx<'_>,
    item: &str,
    args: impl Fn(&BaseUse<'_>) -> TokenStream,
) -> Vec<TokenStream> {
    let p = &cx.p;
    cx.each_base(|b| {
        let (field, ch, off) = (&b.field, &b.l.ch, &b.l.off);
        let read = b.item(item);
        let n = b.item("STATE_COUNT");
        let args = args(b);
        quote_spanned! {b.span=>
            #read(
                &mut self.#field,
                #args
                #p::Option::unwrap_or_default(#ch.get_mut(#off..#off + #n)),
            )?;
            #off += #n;
        }
    })
}

/// `read_tracked`: `read`, and a bit in the own state's slot of `__ch` for each `on_change`
/// member whose value differs from the one it replaces.
fn read_tracked(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (r, ch, off, mask, fired) = (&cx.l.r, &cx.l.ch, &cx.l.off, &cx.l.mask, &cx.l.fired);
    let tracked_bases = read_bases_tracked(cx, "read_tracked", |b| {
        let r = &b.l.r;
        quote_spanned!(b.span=> #r,)
    });
    let check_mask = check_mask(p, mask, cx.members.len());
    let tracked_values = cx.members.iter().map(|(i, f, member)| {
        let fired = member.on_change.is_some().then_some(fired);
        read_member(p, *i, f, member, r, mask, fired)
    });
    let record_fired = record_fired(p, cx.own_on_change(), fired, ch, off, &cx.l.h);
    quote! {
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
    }
}

/// `run_on_change`: the bases' hooks, then the own ones, in declaration order.
fn run_on_change(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (ch, off, fired) = (&cx.l.ch, &cx.l.off, &cx.l.fired);
    let hook_bases = cx.each_base(|b| {
        let (field, ch, off) = (&b.field, &b.l.ch, &b.l.off);
        let run = b.item("run_on_change");
        let n = b.item("STATE_COUNT");
        let has = b.item("ON_CHANGE");
        quote_spanned! {b.span=>
            if #has {
                #run(
                    &mut self.#field,
                    #p::Option::unwrap_or_default(#ch.get(#off..#off + #n)),
                );
            }
            #off += #n;
        }
    });
    let hook_members = cx.members.iter().filter_map(|(i, _, member)| {
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
    let run_own_hooks = cx.own_on_change().then(|| {
        quote! {
            let #fired = #p::Option::unwrap_or(#ch.get(#off).copied(), 0);
            #(#hook_members)*
        }
    });
    quote! {
        #[inline]
        fn run_on_change(&mut self, #ch: &[u64]) {
            let mut #off: usize = 0;
            #(#hook_bases)*
            #run_own_hooks
        }
    }
}
