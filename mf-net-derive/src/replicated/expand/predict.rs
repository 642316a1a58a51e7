//! Step 3, client-side prediction: the `Replicated` items about `#[replicated(predict)]`
//! members (`PREDICTED`, `PREDICTS`) and the `Predicted` impl (`restore_predicted`,
//! `predicted_difference`, `smooth_predicted`).
//!
//! They work on the shadow state (`Replicated::State`) the rest of the expansion defines: a
//! predicted member is never quantized (the parser refuses the combination), so its shadow
//! field holds the plain value. As in the rest of the expansion, every use of a member's type goes through
//! `Member::<FieldTy>::..` spanned at the field's type, and every use of a flattened base through
//! `Base::<BaseTy>::..` spanned at the base's type.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::context::Ctx;
use super::tokens::{fields_where, local, mask_of, spanned_item, unchanged};
use crate::replicated::parse::{Field, Member};

/// What the expansion adds for prediction.
pub(super) struct Predict {
    /// `PREDICTED` and `PREDICTS`, for the `impl Replicated` block.
    pub(super) consts: TokenStream,
    /// The `impl Predicted`.
    pub(super) predicted_impl: TokenStream,
}

/// The prediction items of the expansion.
pub(super) fn expand(cx: &Ctx<'_>) -> Predict {
    let own_mask = mask_of(&cx.members, predicted);
    let own_predicts = !fields_where(&cx.members, predicted).is_empty();
    let base_predicts = cx.any_base("PREDICTS");
    let restore = restore_predicted(cx);
    let difference = predicted_difference(cx);
    let smooth = smooth_predicted(cx);
    let (p, ident) = (&cx.p, cx.ident);
    Predict {
        consts: quote! {
            const PREDICTED: u64 = #own_mask;

            const PREDICTS: bool = #own_predicts #(#base_predicts)*;
        },
        predicted_impl: quote! {
            #[automatically_derived]
            impl #p::Predicted<<#ident as #p::Replicated>::State> for #ident {
                #restore

                #difference

                #smooth
            }
        },
    }
}

/// Whether a member is predicted (a quantized one never is: the parser refuses it).
fn predicted(member: &Member) -> bool {
    member.predict && member.quantize.is_none()
}

/// `<Self as Replicated>::State`.
fn state_ty(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    quote!(<Self as #p::Replicated>::State)
}

/// `restore_predicted`: the bases' predicted members, then the own ones.
fn restore_predicted(cx: &Ctx<'_>) -> TokenStream {
    let s = &cx.l.s;
    let restore_bases = cx.each_base(|b| {
        let (field, s) = (&b.field, &b.l.s);
        let restore = b.item("restore_predicted");
        quote_spanned!(b.span=> #restore(&mut self.#field, &#s.#field);)
    });
    let restore_members = fields_where(&cx.members, predicted).into_iter().map(|f| {
        let field = &f.ident;
        let copy_into = spanned_item(&cx.p, &f.ty, "MemberClone", "copy_into");
        quote!(#copy_into(&#s.#field, &mut self.#field);)
    });
    let state = state_ty(cx);
    quote! {
        #[inline]
        fn restore_predicted(&mut self, #s: &#state) {
            #(#restore_bases)*
            #(#restore_members)*
        }
    }
}

/// `predicted_difference`: the first predicted member (bases first) whose shadows differ.
fn predicted_difference(cx: &Ctx<'_>) -> TokenStream {
    let p = &cx.p;
    let (a, b) = (&cx.l.a, &cx.l.b);
    let difference_bases = cx.each_base(|base| {
        let field = &base.field;
        let (a, b) = (&base.l.a, &base.l.b);
        let difference = base.item("predicted_difference");
        let name = local("__name");
        quote_spanned! {base.span=>
            if let #p::Option::Some(#name) = #difference(&#a.#field, &#b.#field) {
                return #p::Option::Some(#name);
            }
        }
    });
    let difference_members = fields_where(&cx.members, predicted)
        .into_iter()
        .map(|f| difference_member(cx, f));
    let state = state_ty(cx);
    quote! {
        #[inline]
        fn predicted_difference(
            #a: &#state,
            #b: &#state,
        ) -> #p::Option<&'static str> {
            #(#difference_bases)*
            #(#difference_members)*
            #p::Option::None
        }
    }
}

/// The statement that returns predicted member `f`'s name when its shadows differ.
fn difference_member(cx: &Ctx<'_>, f: &Field) -> TokenStream {
    let (p, a, b) = (&cx.p, &cx.l.a, &cx.l.b);
    let field = &f.ident;
    let name = f.schema_name();
    let same = unchanged(p, &f.ty, &quote!(&#a.#field), &quote!(&#b.#field));
    quote! {
        if !(#same) {
            return #p::Option::Some(#name);
        }
    }
}

/// `smooth_predicted`: every predicted member that is also interpolated.
fn smooth_predicted(cx: &Ctx<'_>) -> TokenStream {
    let (from, to, weight) = (&cx.l.from, &cx.l.to, &cx.l.weight);
    let smooth_bases = cx.each_base(|b| {
        let field = &b.field;
        let (from, to, weight) = (&b.l.from, &b.l.to, &b.l.weight);
        let smooth = b.item("smooth_predicted");
        quote_spanned!(b.span=> #smooth(&mut self.#field, &#from.#field, &#to.#field, #weight);)
    });
    let smoothed = fields_where(&cx.members, |member| {
        predicted(member) && member.interpolate
    });
    let smooth_members = smoothed.into_iter().map(|f| {
        let field = &f.ident;
        let smooth = spanned_item(&cx.p, &f.ty, "MemberInterpolate", "smooth_member");
        quote!(#smooth(&mut self.#field, &#from.#field, &#to.#field, #weight);)
    });
    let state = state_ty(cx);
    quote! {
        #[inline]
        fn smooth_predicted(&mut self, #from: &#state, #to: &#state, #weight: f32) {
            #(#smooth_bases)*
            #(#smooth_members)*
        }
    }
}
