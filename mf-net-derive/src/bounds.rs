//! Inferred `where` bounds for generic types, serde-style.
//!
//! A type parameter gets a bound only when a field that the generated code uses mentions it,
//! so `PhantomData<T>` in a skipped field or a type parameter used only by skipped fields does
//! not force `T: NetCodec` on the user.

use std::collections::BTreeSet;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Generics, Ident, Type, WherePredicate};

/// The names of `generics`' type parameters that occur in `ty`.
///
/// The search is over tokens: every identifier in `ty` (inside `<..>`, tuples, arrays, ...)
/// that is not the tail of a `::` path is compared with the parameter names. That can only
/// over-approximate (add a bound nothing needed), never miss a use.
pub(crate) fn type_params_in<'g>(generics: &'g Generics, ty: &Type) -> BTreeSet<&'g Ident> {
    let params: Vec<&Ident> = generics.type_params().map(|p| &p.ident).collect();
    let mut found = BTreeSet::new();
    if !params.is_empty() {
        scan(ty.to_token_stream(), &params, &mut found);
    }
    found
}

fn scan<'g>(tokens: TokenStream, params: &[&'g Ident], found: &mut BTreeSet<&'g Ident>) {
    // Whether the previous two tokens were `::`, so that `a::T` does not count as a use of `T`.
    let mut colons = 0u8;
    for tree in tokens {
        match tree {
            TokenTree::Group(group) => {
                scan(group.stream(), params, found);
                colons = 0;
            }
            TokenTree::Ident(ident) => {
                if colons < 2 {
                    if let Some(param) = params.iter().find(|p| **p == &ident) {
                        found.insert(*param);
                    }
                }
                colons = 0;
            }
            TokenTree::Punct(punct) => {
                colons = if punct.as_char() == ':' { colons + 1 } else { 0 };
            }
            TokenTree::Literal(_) => colons = 0,
        }
    }
}

/// `generics` with `param: bound` added to its where clause for each of `params`.
pub(crate) fn with_param_bounds<'g>(
    generics: &Generics,
    params: impl IntoIterator<Item = &'g Ident>,
    bound: &TokenStream,
) -> Generics {
    let mut generics = generics.clone();
    let where_clause = generics.make_where_clause();
    for param in params {
        let predicate: WherePredicate = syn::parse_quote!(#param: #bound);
        where_clause.predicates.push(predicate);
    }
    generics
}

/// `generics` with `ty: bound` added to its where clause for each of `types`.
pub(crate) fn with_type_bounds<'t>(
    generics: &Generics,
    types: impl IntoIterator<Item = &'t Type>,
    bound: &TokenStream,
) -> Generics {
    let mut generics = generics.clone();
    let where_clause = generics.make_where_clause();
    for ty in types {
        let predicate: WherePredicate = syn::parse_quote!(#ty: #bound);
        where_clause.predicates.push(predicate);
    }
    generics
}
