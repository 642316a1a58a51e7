//! The hidden shadow-state struct (`Replicated::State`): the server's copy of each member as
//! last captured, each flattened base's state, and the change stamps.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

use super::context::Ctx;

/// The struct's name.
pub(super) fn name() -> Ident {
    Ident::new("__MfNetReplicatedState", Span::call_site())
}

/// The field holding each own member's change stamp.
pub(super) fn ticks() -> Ident {
    Ident::new("__mf_net_ticks", Span::call_site())
}

/// The field holding the newest own change stamp.
pub(super) fn own_last() -> Ident {
    Ident::new("__mf_net_last", Span::call_site())
}

/// The field holding the tick the state was created at.
pub(super) fn born() -> Ident {
    Ident::new("__mf_net_born", Span::call_site())
}

/// The number of own members, as the length of the stamp array.
pub(super) fn count(cx: &Ctx<'_>) -> Literal {
    Literal::usize_unsuffixed(cx.members.len())
}

/// The struct. A quantized member's shadow keeps its wire form (bucket indexes): quantized
/// once, at capture.
pub(super) fn state_struct(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let member_fields = cx.members.iter().map(|(_, f, member)| {
        let (field, ty) = (&f.ident, &f.ty);
        if member.quantize.is_some() {
            quote!(#field: #p::Buckets,)
        } else {
            quote!(#field: #ty,)
        }
    });
    let base_fields = cx.each_base(|b| {
        let field = &b.field;
        let ty = b.state_type("State");
        quote_spanned!(b.span=> #field: #ty,)
    });
    let (state, ticks, own_last, born) = (name(), ticks(), own_last(), born());
    let count = count(cx);
    quote! {
        /// The shadow state of the type's members (`Replicated::State`).
        #[doc(hidden)]
        pub struct #state {
            #(#member_fields)*
            #(#base_fields)*
            #ticks: [u32; #count],
            #own_last: u32,
            #born: u32,
        }
    }
}
