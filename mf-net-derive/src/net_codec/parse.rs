//! Step 1: darling receivers for `#[derive(NetCodec)]` and its `#[net(..)]` options.

use darling::ast::{Data, Fields};
use darling::util::Flag;
use darling::{FromDeriveInput, FromField, FromVariant};
use syn::ext::IdentExt;
use syn::{Attribute, Generics, Ident, Index, LitStr, Member, Type};

/// The item: a struct or an enum with its options.
#[derive(FromDeriveInput)]
#[darling(attributes(net), supports(struct_any, enum_any))]
pub(crate) struct NetCodecInput {
    pub(crate) ident: Ident,
    pub(crate) generics: Generics,
    pub(crate) data: Data<NetCodecVariant, NetCodecField>,
    /// `#[net(name = "..")]`: the stable name, replacing the module path and type name.
    #[darling(with = |m| crate::attr::string("net", "game::Chat", m))]
    pub(crate) name: Option<LitStr>,
}

/// An enum variant.
///
/// Variants have no options yet, so their `#[net(..)]` attributes are forwarded raw and refused
/// by [`check`](super::check) with a message that points to `#[net(skip)]` on fields. When a
/// variant option is added, switch to `#[darling(attributes(net))]` and declare it here.
#[derive(FromVariant)]
#[darling(forward_attrs(net))]
pub(crate) struct NetCodecVariant {
    pub(crate) ident: Ident,
    pub(crate) fields: Fields<NetCodecField>,
    pub(crate) attrs: Vec<Attribute>,
}

/// A field of a struct or of an enum variant.
#[derive(FromField)]
#[darling(attributes(net))]
pub(crate) struct NetCodecField {
    pub(crate) ident: Option<Ident>,
    pub(crate) ty: Type,
    /// `#[net(skip)]`: not sent, decoded as `Default::default()`, not in the schema hash.
    #[darling(with = |m| crate::attr::flag("net", m))]
    pub(crate) skip: Flag,
}

impl NetCodecInput {
    /// Every field of the item, across all variants.
    pub(crate) fn all_fields(&self) -> Vec<&NetCodecField> {
        match &self.data {
            Data::Struct(fields) => fields.iter().collect(),
            Data::Enum(variants) => variants.iter().flat_map(|v| v.fields.iter()).collect(),
        }
    }
}

impl NetCodecVariant {
    /// The variant name as it enters the schema hash (without `r#`).
    pub(crate) fn schema_name(&self) -> String {
        self.ident.unraw().to_string()
    }
}

impl NetCodecField {
    /// Whether the field is on the wire.
    pub(crate) fn is_sent(&self) -> bool {
        !self.skip.is_present()
    }

    /// How to name the field in an access or a struct expression: `name` or `0`.
    pub(crate) fn member(&self, index: usize) -> Member {
        match &self.ident {
            Some(ident) => Member::Named(ident.clone()),
            None => Member::Unnamed(Index::from(index)),
        }
    }

    /// The field name as it enters the schema hash: the name without `r#`, or the index.
    pub(crate) fn schema_name(&self, index: usize) -> String {
        match &self.ident {
            Some(ident) => ident.unraw().to_string(),
            None => index.to_string(),
        }
    }
}
