//! Inferred `where` bounds for generic types, serde-style.
//!
//! A field type gets a bound only when it mentions a type parameter, and the bound is on the
//! field's type (`NetRef<T>: NetCodec`, `K::Id: NetCodec`), not on the parameters it mentions,
//! so a type parameter used only by skipped fields, or only as `NetRef<T>`, does not force
//! `T: NetCodec` on the user.

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

/// Whether `ty` mentions one of `generics`' type or const parameters (so it cannot be named
/// outside the item's impls).
pub(crate) fn mentions_params(generics: &Generics, ty: &Type) -> bool {
    let params: Vec<&Ident> = generics
        .type_params()
        .map(|p| &p.ident)
        .chain(generics.const_params().map(|p| &p.ident))
        .collect();
    !params.is_empty() && !occurrences(ty, &params).is_empty()
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

/// `ty` with every `Self` replaced by `own` (spanned at that `Self`), as serde does: generated
/// code copies field types into items of its own (state structs, constants, other impls), where
/// `Self` means something else or nothing.
///
/// `own` must be the whole self type (a type that is not generic, here): only then is the
/// replacement the same type.
pub(crate) fn replace_self(ty: &Type, own: &Ident) -> Type {
    let replaced = replace_self_tokens(ty.to_token_stream(), own);
    syn::parse2(replaced).unwrap_or_else(|_| ty.clone())
}

fn replace_self_tokens(tokens: TokenStream, own: &Ident) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => {
                let mut inner =
                    Group::new(group.delimiter(), replace_self_tokens(group.stream(), own));
                inner.set_span(group.span());
                TokenTree::Group(inner)
            }
            TokenTree::Ident(ident) if ident == "Self" => {
                let mut replacement = own.clone();
                replacement.set_span(ident.span());
                TokenTree::Ident(replacement)
            }
            tree => tree,
        })
        .collect()
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
