//! Step 2: the rules the darling receivers cannot express.
//!
//! Each failed rule adds one spanned error to the accumulator; nothing stops at the first.

use darling::error::Accumulator;
use syn::{Data, DeriveInput, GenericParam};

use super::parse::NetCodecInput;
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

/// Rules on the options that were read.
pub(crate) fn options(input: &NetCodecInput, errors: &mut Accumulator) {
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
