//! Step 2: the rules the darling receivers cannot express.
//!
//! Each failed rule adds one spanned error to the accumulator; nothing stops at the first.

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, GenericParam, Ident, Meta};

use super::parse::NetCodecInput;
use crate::bounds;
use crate::diagnostics::error_at;

/// Rules on the raw item, checked before (and independently of) the darling receivers.
///
/// Returns `false` when the item cannot be read by the receivers at all (a union).
pub(crate) fn item(input: &DeriveInput, errors: &mut Accumulator) -> bool {
    for param in &input.generics.params {
        if let GenericParam::Lifetime(lifetime) = param {
            let name = &lifetime.lifetime;
            errors.push(error_at(
                name.span(),
                format!(
                    "NetCodec cannot be derived for a type with a lifetime parameter (`{name}`): \
                     decoding produces owned values; remove `{name}` and use owned field types \
                     (`String` instead of `&{name} str`, `Vec<T>` instead of `&{name} [T]`)"
                ),
            ));
        }
    }
    if let Data::Union(data) = &input.data {
        errors.push(error_at(
            data.union_token.span,
            "NetCodec cannot be derived for unions; use a struct or an enum",
        ));
        return false;
    }
    true
}

/// Rules on the receivers: options and field types.
pub(crate) fn receivers(input: &NetCodecInput, errors: &mut Accumulator) {
    recursion(input, errors);
    if let darling::ast::Data::Enum(variants) = &input.data {
        for attr in variants.iter().flat_map(|v| &v.attrs) {
            errors.push(error_at(
                first_option_span(&attr.meta),
                "enum variants take no `#[net(..)]` options; to leave a field out of the \
                 message, put `#[net(skip)]` on the field",
            ));
        }
    }
    if let Some(name) = &input.name {
        if name.value().trim().is_empty() {
            errors.push(error_at(
                name.span(),
                "the stable name must not be empty; write e.g. `#[net(name = \"game::Chat\")]` \
                 or remove the option to use the module path and type name",
            ));
        }
    }
}

/// A sent field whose type names the type itself would make `SCHEMA_HASH` infinite (rustc
/// reports a query cycle); say so at the field instead.
///
/// Only direct recursion is seen here: `A` containing `B` containing `A` is still reported by
/// rustc as a cycle.
fn recursion(input: &NetCodecInput, errors: &mut Accumulator) {
    let own = &input.ident;
    let self_ty = Ident::new("Self", Span::call_site());
    for field in input.all_fields().into_iter().filter(|f| f.is_sent()) {
        if let Some((_, span)) = bounds::occurrences(&field.ty, &[own, &self_ty]).first() {
            errors.push(error_at(
                *span,
                format!(
                    "`{own}` contains itself here: NetCodec cannot be derived for a recursive \
                     type, because its schema hash would never end; send the structure \
                     flattened (e.g. a `Vec` of nodes that refer to each other by index), or \
                     mark the field `#[net(skip)]`"
                ),
            ));
        }
    }
}

/// The span of the first option in `#[net(option, ..)]`, or of `net` when there is none.
fn first_option_span(meta: &Meta) -> Span {
    match meta {
        Meta::List(list) => match list.tokens.clone().into_iter().next() {
            Some(token) => token.span(),
            None => list.delimiter.span().join(),
        },
        other => other.path().span(),
    }
}
