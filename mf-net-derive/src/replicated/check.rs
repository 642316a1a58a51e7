//! Step 2: the rules the darling receivers cannot express.
//!
//! Each failed rule adds one spanned error to the accumulator; nothing stops at the first.

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericParam, Ident};

use super::parse::{self, Field, ReplicatedInput, Role};
use crate::bounds;
use crate::diagnostics::error_at;

/// Most own members per type: the change mask is a `u64` (`mf_net::replication::MAX_MEMBERS`).
const MAX_MEMBERS: usize = 64;

/// Rules on the raw item, checked before (and independently of) the darling receivers: the
/// shape and the generics.
///
/// Returns `false` when the item cannot be read by the receivers at all (a union).
pub(crate) fn item(input: &DeriveInput, errors: &mut Accumulator) -> bool {
    for param in &input.generics.params {
        let (span, what) = match param {
            GenericParam::Type(p) => (p.ident.span(), format!("type parameter `{}`", p.ident)),
            GenericParam::Lifetime(p) => (
                p.lifetime.span(),
                format!("lifetime parameter `{}`", p.lifetime),
            ),
            GenericParam::Const(p) => (p.span(), format!("const parameter `{}`", p.ident)),
        };
        errors.push(error_at(
            span,
            format!(
                "Replicated types cannot be generic: the registry and the wire know each type by \
                 one stable name and schema hash; remove the {what} and declare one concrete \
                 struct per kind of node (shared members can go in a `#[replicated(flatten)]` \
                 base struct)"
            ),
        ));
    }
    let ident = &input.ident;
    match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(_) => {}
            Fields::Unnamed(fields) => errors.push(error_at(
                fields.paren_token.span.join(),
                format!(
                    "Replicated cannot be derived for a tuple struct: members are known by name \
                     in the schema hash; name the fields, e.g. \
                     `struct {ident} {{ #[replicated] health: i32 }}`"
                ),
            )),
            Fields::Unit => errors.push(error_at(
                ident.span(),
                format!(
                    "Replicated cannot be derived for a unit struct: it has no members to \
                     replicate; add named fields marked `#[replicated]`, e.g. \
                     `struct {ident} {{ #[replicated] health: i32 }}`"
                ),
            )),
        },
        Data::Enum(data) => errors.push(error_at(
            data.enum_token.span,
            "Replicated cannot be derived for an enum: replicated types are structs with named \
             fields; derive `NetCodec` for the enum and make it a `#[replicated]` member of a \
             struct",
        )),
        Data::Union(data) => {
            errors.push(error_at(
                data.union_token.span,
                "Replicated cannot be derived for a union: replicated types are structs with \
                 named fields",
            ));
            return false;
        }
    }
    true
}

/// Rules on the item's options.
pub(crate) fn options(input: &ReplicatedInput, errors: &mut Accumulator) {
    if let Some(name) = &input.name {
        if name.value().trim().is_empty() {
            errors.push(error_at(
                name.span(),
                "the stable name must not be empty; write e.g. \
                 `#[replicated(name = \"game::Player\")]` or remove the option to use the module \
                 path and type name",
            ));
        }
    }
}

/// Rules on the fields: their options, the member count, member types. Returns the named
/// fields with their roles (empty for items that [`item`] has refused), each type with `Self`
/// replaced by the type's name.
pub(crate) fn fields(input: &DeriveInput, errors: &mut Accumulator) -> Vec<Field> {
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut members = 0usize;
    let own = &input.ident;
    let self_ty = Ident::new("Self", Span::call_site());
    for field in fields {
        let role = parse::role(&field.attrs, errors);
        let Some(ident) = &field.ident else {
            continue;
        };
        if !matches!(role, Role::Local) {
            let found = bounds::occurrences_outside_refs(&field.ty, &[own, &self_ty]);
            if let Some((name, span)) = found.first() {
                let alias = if *name == own {
                    String::new()
                } else {
                    format!(" (here as `{name}`)")
                };
                errors.push(error_at(
                    *span,
                    format!(
                        "`{own}` cannot contain itself{alias} in a replicated \
                         member: its shadow state and schema hash would never end; keep this \
                         field local (remove `#[replicated]`), or refer to another node holding \
                         one with `NetRef<{own}>`"
                    ),
                ));
            }
        }
        if let Role::Member(_) = role {
            members += 1;
            if members == MAX_MEMBERS + 1 {
                errors.push(error_at(
                    ident.span(),
                    format!(
                        "`{own}` has more than {MAX_MEMBERS} `#[replicated]` members and this is \
                         the {}th: the change mask is a `u64`; move some members into a struct \
                         marked `#[replicated(flatten)]` (it has its own mask), or group \
                         values that change together into one `NetCodec` struct member",
                        MAX_MEMBERS + 1
                    ),
                ));
            }
        }
        out.push(Field {
            ident: ident.clone(),
            // `NetRef<Self>` is a member type like `NetRef<Player>`; the expansion copies member
            // types into items of its own, where `Self` is not this type.
            ty: bounds::replace_self(&field.ty, own),
            role,
        });
    }
    out
}
