//! What every expansion function reads: the runtime path, the struct's own members and
//! flattened bases, and the generated functions' local variables.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Type};

use super::tokens::{at, bases, local, members, spanned_item};
use crate::replicated::model::Model;
use crate::replicated::parse::{Field, Member};
use crate::runtime;

/// The checked struct as the expansion reads it.
pub(super) struct Ctx<'a> {
    /// `::mf_net::__private`.
    pub(super) p: TokenStream,
    /// The struct's name.
    pub(super) ident: &'a Ident,
    /// `#[replicated(name = "..")]`, if given.
    pub(super) name: Option<&'a LitStr>,
    /// Own members with their bit index and options, in declaration order.
    pub(super) members: Vec<(usize, &'a Field, &'a Member)>,
    /// Flattened bases, in declaration order.
    pub(super) bases: Vec<&'a Field>,
    /// The generated functions' local variables.
    pub(super) l: Locals,
}

impl<'a> Ctx<'a> {
    /// The context of `m`'s expansion.
    pub(super) fn new(m: &'a Model) -> Self {
        Self {
            p: runtime::private(),
            ident: &m.ident,
            name: m.name.as_ref(),
            members: members(m),
            bases: bases(m),
            l: Locals::new(),
        }
    }

    /// Whether any own member has an `on_change` hook.
    pub(super) fn own_on_change(&self) -> bool {
        self.members.iter().any(|(_, _, m)| m.on_change.is_some())
    }

    /// `Base::<Ty>::item` of base `f` (see [`spanned_item`]).
    pub(super) fn base_item(&self, f: &Field, item: &str) -> TokenStream {
        spanned_item(&self.p, &f.ty, "Base", item)
    }

    /// `|| Base::<Ty>::flag` for each base: the tail of a `bool` const that is true when the
    /// own members say so or any base does.
    pub(super) fn any_base(&self, flag: &str) -> Vec<TokenStream> {
        self.bases
            .iter()
            .map(|f| {
                let flag = self.base_item(f, flag);
                quote::quote!(|| #flag)
            })
            .collect()
    }

    /// `each` applied to every base, seen as the expansion of one method uses it.
    pub(super) fn each_base(&self, each: impl Fn(&BaseUse<'_>) -> TokenStream) -> Vec<TokenStream> {
        self.bases
            .iter()
            .map(|f| {
                let span = f.ty.span();
                each(&BaseUse {
                    field: at(&f.ident, span),
                    l: self.l.at(span),
                    span,
                    ty: &f.ty,
                    p: &self.p,
                })
            })
            .collect()
    }
}

/// A flattened base as one generated method uses it: its field and the locals, all reported at
/// the base's type, so that a base that is not `Replicated` is reported there.
pub(super) struct BaseUse<'a> {
    /// The base's field.
    pub(super) field: Ident,
    /// The locals, reported at the base's type.
    pub(super) l: Locals,
    /// The span of the base's type.
    pub(super) span: Span,
    ty: &'a Type,
    p: &'a TokenStream,
}

impl BaseUse<'_> {
    /// `Base::<Ty>::item` (see [`spanned_item`]).
    pub(super) fn item(&self, item: &str) -> TokenStream {
        spanned_item(self.p, self.ty, "Base", item)
    }

    /// `<Ty as Replicated>::item`, for its state types `State` and `Interp`: a base that is not
    /// `Replicated` is reported there once, with that trait's message.
    pub(super) fn state_type(&self, item: &str) -> TokenStream {
        spanned_item(self.p, self.ty, "Replicated", item)
    }
}

/// Declares [`Locals`] with one field per local variable.
macro_rules! locals {
    ($($field:ident: $name:literal,)*) => {
        /// The generated functions' local variables, with mixed-site hygiene (see [`local`]),
        /// so no user item with the same name can capture them.
        pub(super) struct Locals {
            $(pub(super) $field: Ident,)*
        }

        impl Locals {
            /// The variables.
            fn new() -> Self {
                Self { $($field: local($name),)* }
            }

            /// The same variables, reported at `span` (see [`at`]).
            fn at(&self, span: Span) -> Self {
                Self { $($field: at(&self.$field, span),)* }
            }
        }
    };
}

locals! {
    s: "__s",
    tick: "__tick",
    w: "__w",
    r: "__r",
    since: "__since",
    h: "__h",
    changed: "__changed",
    last: "__last",
    aud: "__aud",
    ch: "__ch",
    off: "__off",
    mask: "__mask",
    own: "__own",
    fired: "__fired",
    i: "__i",
    known: "__known",
    render: "__render",
    max: "__max",
    a: "__a",
    b: "__b",
    from: "__from",
    to: "__to",
    weight: "__weight",
}
