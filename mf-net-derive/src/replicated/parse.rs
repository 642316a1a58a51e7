//! Step 1: darling receivers for `#[derive(Replicated)]` and its `#[replicated(..)]` options.
//!

use darling::util::Flag;
use darling::{FromDeriveInput, FromMeta};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, LitStr, Meta, Type};

use crate::diagnostics::error_at;

/// The item's own options. Its shape (a struct with named fields, no generics) is checked by
/// [`check`](super::check), so that each wrong shape gets its own message.
///
/// Fields are read from the `syn` item instead: a field is a member when it carries a
/// `#[replicated]` attribute, and darling cannot both parse an attribute and report whether it
/// was present; each field's attribute is read with the [`MemberOptions`] receiver. This also
/// lets field mistakes be reported when the item's own options have mistakes.
#[derive(FromDeriveInput)]
#[darling(attributes(replicated))]
pub(crate) struct ReplicatedInput {
    pub(crate) ident: Ident,
    /// `#[replicated(name = "..")]`: the stable name, replacing the module path and type name.
    #[darling(with = |m| crate::attr::string("replicated", "game::Player", m))]
    pub(crate) name: Option<LitStr>,
}

/// The options of one `#[replicated(..)]` attribute on a field.
#[derive(FromMeta, Default)]
pub(crate) struct MemberOptions {
    /// `#[replicated(interpolate)]`: clients blend the value between snapshots.
    #[darling(with = |m| crate::attr::flag("replicated", m))]
    pub(crate) interpolate: Flag,
    /// `#[replicated(flatten)]`: the field is a `Replicated` base whose state goes first.
    #[darling(with = |m| crate::attr::flag("replicated", m))]
    pub(crate) flatten: Flag,
}

/// What a field is to the derive.
pub(crate) enum Role {
    /// No `#[replicated]`: stays local.
    Local,
    /// `#[replicated]` or `#[replicated(interpolate)]`.
    Member { interpolate: bool },
    /// `#[replicated(flatten)]`.
    Base,
}

/// A field with its options read.
pub(crate) struct Field {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) role: Role,
}

impl Field {
    /// The field name as it enters the schema hash and [`MemberInfo`] (without `r#`).
    pub(crate) fn schema_name(&self) -> String {
        self.ident.unraw().to_string()
    }
}

/// Reads one `#[replicated]` / `#[replicated(..)]` attribute of a field.
fn member_options(attr: &Attribute) -> darling::Result<MemberOptions> {
    match &attr.meta {
        Meta::Path(_) => Ok(MemberOptions::default()),
        Meta::List(list) => {
            let items = darling::ast::NestedMeta::parse_meta_list(list.tokens.clone())?;
            MemberOptions::from_list(&items)
        }
        Meta::NameValue(nv) => Err(error_at(
            nv.eq_token.span(),
            "`#[replicated]` takes no value; write `#[replicated]`, \
             `#[replicated(interpolate)]` or `#[replicated(flatten)]`",
        )),
    }
}

/// The role of a field with attributes `attrs`, from its `#[replicated]` attributes; mistakes
/// go to `errors` (and the field is treated as well as can be guessed, so later checks still
/// run).
pub(crate) fn role(attrs: &[Attribute], errors: &mut darling::error::Accumulator) -> Role {
    let mut attrs = attrs.iter().filter(|a| a.path().is_ident("replicated"));
    let Some(first) = attrs.next() else {
        return Role::Local;
    };
    for extra in attrs {
        errors.push(error_at(
            extra.path().span(),
            "this field has more than one `#[replicated]` attribute; write all its options in \
             one, e.g. `#[replicated(interpolate)]`",
        ));
    }
    let Some(options) = errors.handle(member_options(first)) else {
        return Role::Member { interpolate: false };
    };
    match (
        options.interpolate.is_present(),
        options.flatten.is_present(),
    ) {
        (true, true) => {
            // At `interpolate`: the option the message says to remove.
            errors.push(error_at(
                options.interpolate.span(),
                "`interpolate` and `flatten` cannot be combined: a flattened base's own members \
                 say whether they are interpolated; remove `interpolate` here and mark the \
                 base's fields `#[replicated(interpolate)]`",
            ));
            Role::Base
        }
        (false, true) => Role::Base,
        (interpolate, false) => Role::Member { interpolate },
    }
}
