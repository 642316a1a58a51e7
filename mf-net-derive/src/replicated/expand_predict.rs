//! Step 3, client-side prediction: the `Replicated` items about `#[replicated(predict)]`
//! members (`PREDICTED`, `PREDICTS`) and the `Predicted` impl (`restore_predicted`,
//! `predicted_difference`, `smooth_predicted`).
//!
//! They work on the shadow state (`Replicated::State`) the rest of the expansion defines: a
//! predicted member is never quantized (the parser refuses the combination), so its shadow
//! field holds the plain value. As in `expand`, every use of a member's type goes through
//! `Member::<FieldTy>::..` spanned at the field's type, and every use of a flattened base through
//! `Base::<BaseTy>::..` spanned at the base's type.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Type;

use super::tokens::{at, bases, fields_where, local, mask_of, members, spanned_item, unchanged};
use super::Model;
use crate::runtime;

/// What the expansion adds for prediction.
pub(crate) struct Predict {
    /// `PREDICTED` and `PREDICTS`, for the `impl Replicated` block.
    pub(crate) consts: TokenStream,
    /// Items for the `impl Predicted` block.
    pub(crate) impl_items: TokenStream,
}

/// The prediction items of `m`.
pub(crate) fn expand(m: &Model) -> Predict {
    let p = &runtime::private();
    let state = quote!(<Self as #p::Replicated>::State);
    let (s, a, b, from, to, weight) = (
        local("__s"),
        local("__a"),
        local("__b"),
        local("__from"),
        local("__to"),
        local("__weight"),
    );
    let members = members(m);
    let predicted = fields_where(&members, |member| {
        member.predict && member.quantize.is_none()
    });
    let smoothed = fields_where(&members, |member| {
        member.predict && member.interpolate && member.quantize.is_none()
    });
    let bases = bases(m);
    let base = |ty: &Type, item: &str| spanned_item(p, ty, "Base", item);

    let own_mask = mask_of(&members, |member| {
        member.predict && member.quantize.is_none()
    });
    let own_predicts = !predicted.is_empty();
    let base_predicts = bases.iter().map(|f| {
        let flag = base(&f.ty, "PREDICTS");
        quote!(|| #flag)
    });

    // restore_predicted: the bases' predicted members, then the own ones.
    let restore_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let s = at(&s, sp);
        let restore = base(&f.ty, "restore_predicted");
        quote_spanned!(sp=> #restore(&mut self.#field, &#s.#field);)
    });
    let restore_members = predicted.iter().map(|f| {
        let field = &f.ident;
        let copy_into = spanned_item(p, &f.ty, "MemberClone", "copy_into");
        quote!(#copy_into(&#s.#field, &mut self.#field);)
    });

    // predicted_difference: the first predicted member (bases first) whose shadows differ.
    let difference_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let (a, b) = (at(&a, sp), at(&b, sp));
        let difference = base(&f.ty, "predicted_difference");
        let name = local("__name");
        quote_spanned! {sp=>
            if let #p::Option::Some(#name) = #difference(&#a.#field, &#b.#field) {
                return #p::Option::Some(#name);
            }
        }
    });
    let difference_members = predicted.iter().map(|f| {
        let field = &f.ident;
        let name = f.schema_name();
        let same = unchanged(p, &f.ty, &quote!(&#a.#field), &quote!(&#b.#field));
        quote! {
            if !(#same) {
                return #p::Option::Some(#name);
            }
        }
    });

    // smooth_predicted: every predicted member that is also interpolated.
    let smooth_bases = bases.iter().map(|f| {
        let sp = f.ty.span();
        let field = &at(&f.ident, sp);
        let (from, to, weight) = (at(&from, sp), at(&to, sp), at(&weight, sp));
        let smooth = base(&f.ty, "smooth_predicted");
        quote_spanned!(sp=> #smooth(&mut self.#field, &#from.#field, &#to.#field, #weight);)
    });
    let smooth_members = smoothed.iter().map(|f| {
        let field = &f.ident;
        let smooth = spanned_item(p, &f.ty, "MemberInterpolate", "smooth_member");
        quote!(#smooth(&mut self.#field, &#from.#field, &#to.#field, #weight);)
    });

    let consts = quote! {
        const PREDICTED: u64 = #own_mask;

        const PREDICTS: bool = #own_predicts #(#base_predicts)*;
    };
    let impl_items = quote! {
        #[inline]
        fn restore_predicted(&mut self, #s: &#state) {
            #(#restore_bases)*
            #(#restore_members)*
        }

        #[inline]
        fn predicted_difference(
            #a: &#state,
            #b: &#state,
        ) -> #p::Option<&'static str> {
            #(#difference_bases)*
            #(#difference_members)*
            #p::Option::None
        }

        #[inline]
        fn smooth_predicted(&mut self, #from: &#state, #to: &#state, #weight: f32) {
            #(#smooth_bases)*
            #(#smooth_members)*
        }
    };
    Predict { consts, impl_items }
}

/// The placeholder `impl Predicted<()>` items (see `expand::placeholder_impl`).
pub(crate) fn placeholder_items() -> TokenStream {
    let p = runtime::private();
    quote! {
        fn restore_predicted(&mut self, _: &()) {}

        fn predicted_difference(_: &(), _: &()) -> #p::Option<&'static str> {
            #p::Option::None
        }

        fn smooth_predicted(&mut self, _: &(), _: &(), _: f32) {}
    }
}
