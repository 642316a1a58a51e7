//! Inferred `where` bounds for generic types, serde-style.
//!
//! A type parameter gets a bound only when a field that the generated code uses mentions it,
//! so `PhantomData<T>` in a skipped field or a type parameter used only by skipped fields does
//! not force `T: NetCodec` on the user.

use std::collections::BTreeSet;

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Generics, Ident, Type, WherePredicate};

/// The names of `generics`' type parameters that occur in `ty`.
///
/// The search is over tokens (see [`occurrences`]), so it can only over-approximate (add a
/// bound nothing needed), never miss a use.
pub(crate) fn type_params_in<'g>(generics: &'g Generics, ty: &Type) -> BTreeSet<&'g Ident> {
    let params: Vec<&Ident> = generics.type_params().map(|p| &p.ident).collect();
    if params.is_empty() {
        return BTreeSet::new();
    }
    occurrences(ty, &params)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// Every place where one of `names` occurs in `ty`, with the span of that occurrence.
///
/// Every identifier in `ty` (inside `<..>`, tuples, arrays, ...) that is not the tail of a
/// `::` path is compared with `names`, so `T` in `Vec<T>` counts but `a::T` does not.
pub(crate) fn occurrences<'n>(ty: &Type, names: &[&'n Ident]) -> Vec<(&'n Ident, Span)> {
    let mut found = Vec::new();
    scan(ty.to_token_stream(), names, &mut found);
    found
}

/// [`occurrences`], leaving out the arguments of every `NetRef<..>` in `ty`: a node reference
/// holds a net id, not the value it names.
pub(crate) fn occurrences_outside_refs<'n>(
    ty: &Type,
    names: &[&'n Ident],
) -> Vec<(&'n Ident, Span)> {
    let mut found = Vec::new();
    scan(
        without_ref_arguments(ty.to_token_stream()),
        names,
        &mut found,
    );
    found
}

/// `tokens` without what follows each `NetRef` between its `<` and the matching `>`.
fn without_ref_arguments(tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut trees = tokens.into_iter().peekable();
    while let Some(tree) = trees.next() {
        match tree {
            TokenTree::Group(group) => {
                let mut inner =
                    Group::new(group.delimiter(), without_ref_arguments(group.stream()));
                inner.set_span(group.span());
                out.push(TokenTree::Group(inner));
            }
            TokenTree::Ident(ident) if ident == "NetRef" => {
                out.push(TokenTree::Ident(ident));
                let opens = matches!(trees.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '<');
                if opens {
                    let mut depth = 0usize;
                    for tree in trees.by_ref() {
                        if let TokenTree::Punct(p) = &tree {
                            match p.as_char() {
                                '<' => depth += 1,
                                '>' => depth -= 1,
                                _ => {}
                            }
                        }
                        if depth == 0 {
                            break;
                        }
                    }
                }
            }
            tree => out.push(tree),
        }
    }
    out.into_iter().collect()
}

fn scan<'n>(tokens: TokenStream, names: &[&'n Ident], found: &mut Vec<(&'n Ident, Span)>) {
    // How many `:` came just before, so that `a::T` does not count as a use of `T`.
    let mut colons = 0u8;
    for tree in tokens {
        match tree {
            TokenTree::Group(group) => {
                scan(group.stream(), names, found);
                colons = 0;
            }
            TokenTree::Ident(ident) => {
                if colons < 2 {
                    if let Some(name) = names.iter().find(|n| **n == &ident) {
                        found.push((*name, ident.span()));
                    }
                }
                colons = 0;
            }
            TokenTree::Punct(punct) => {
                colons = if punct.as_char() == ':' {
                    colons.saturating_add(1)
                } else {
                    0
                };
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
