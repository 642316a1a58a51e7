//! Step 3: the `NetCodec` impl.
//!
//! - Every use of a field's type goes through `<FieldTy as NetCodec>::..` spanned at the
//!   field's type, so a field whose type is not a codec is reported by rustc at that type.
//! - Every runtime item is named through `::mf_net::__private`.
//! - Local variables (`__w`, `__r`, `__h`, `__f0`..) have mixed-site hygiene, so no user item
//!   with the same name (a `const __w`, say) can capture them.

use std::collections::BTreeSet;

use darling::ast::{Data, Fields};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Type};

use super::parse::{NetCodecField, NetCodecInput, NetCodecVariant};
use crate::bounds;
use crate::runtime;

/// Names shared by every piece of one expansion.
struct Ctx {
    /// `::mf_net::__private`.
    p: TokenStream,
    /// The writer parameter of `encode`.
    w: Ident,
    /// The reader parameter of `decode`.
    r: Ident,
    /// The running hash in `SCHEMA_HASH`.
    h: Ident,
}

impl Ctx {
    fn new() -> Self {
        Self {
            p: runtime::private(),
            w: local("__w"),
            r: local("__r"),
            h: local("__h"),
        }
    }

    /// `__MfNetField::<FieldTy>::item` (see [`field_proxy`]), spanned at the field's type: the
    /// `NetCodec` item for a codec type, a silent stand-in otherwise (the field's
    /// [`field_checks`] reports it, once).
    fn codec_item(&self, ty: &Type, item: &str) -> TokenStream {
        let item = Ident::new(item, ty.span());
        let proxy = proxy_ident(ty.span());
        quote_spanned!(ty.span()=> #proxy::<#ty>::#item)
    }

    /// `Default::default()` for a skipped field, spanned at its type; through `SkippedField`
    /// so that a type without `Default` is reported with a message about `#[net(skip)]`.
    fn skipped_value(&self, ty: &Type) -> TokenStream {
        let p = &self.p;
        let call = quote_spanned!(ty.span()=> <#ty as #p::SkippedField>::skipped);
        quote!(#call())
    }
}

/// The field proxy's name (an item of the expansion's `const _` block).
fn proxy_ident(span: Span) -> Ident {
    Ident::new("__MfNetCodecField", span)
}

/// The proxy through which every use of a field's type reaches its codec, so that a field type
/// without `NetCodec` is one error (its [`field_checks`]), not one per use: the inherent items
/// of `__MfNetCodecField<T>` exist when `T: NetCodec`; otherwise the same names resolve to the
/// fallback trait's, which type-check for any `T` and never run (the check failed the build).
///
/// The names differ from `NetCodec`'s (`FIELD_SCHEMA_HASH`, `encode_field`, ..): for a `T`
/// without the trait, rustc would otherwise also look them up in `NetCodec`, in scope through
/// the user's `use mf_net::prelude::*`.
fn field_proxy(p: &TokenStream) -> TokenStream {
    let proxy = proxy_ident(Span::call_site());
    let fallback = Ident::new("__MfNetCodecFieldFallback", Span::call_site());
    let (value, other, w, r) = (
        local("__value"),
        local("__other"),
        local("__w"),
        local("__r"),
    );
    quote! {
        struct #proxy<T>(::core::marker::PhantomData<T>);

        impl<T: #p::NetCodec> #proxy<T> {
            const FIELD_SCHEMA_HASH: u64 = <T as #p::NetCodec>::SCHEMA_HASH;
            const FIELD_MIN_SIZE: usize = <T as #p::NetCodec>::MIN_SIZE;
            const FIELD_NODE_REFS: bool = <T as #p::NetCodec>::NODE_REFS;

            #[inline]
            fn encode_field(#value: &T, #w: &mut #p::NetWriter) {
                <T as #p::NetCodec>::encode(#value, #w);
            }

            #[inline]
            fn decode_field(#r: &mut #p::NetReader<'_>) -> #p::Result<T, #p::DecodeError> {
                <T as #p::NetCodec>::decode(#r)
            }

            #[inline]
            fn same_encoding_field(#value: &T, #other: &T) -> #p::Option<bool> {
                <T as #p::NetCodec>::same_encoding(#value, #other)
            }
        }

        trait #fallback<T> {
            const FIELD_SCHEMA_HASH: u64 = 0;
            const FIELD_MIN_SIZE: usize = 0;
            const FIELD_NODE_REFS: bool = false;

            fn encode_field(_: &T, _: &mut #p::NetWriter) {}

            fn decode_field(_: &mut #p::NetReader<'_>) -> #p::Result<T, #p::DecodeError> {
                #p::Result::Err(#p::DecodeError::InvalidValue)
            }

            fn same_encoding_field(_: &T, _: &T) -> #p::Option<bool> {
                #p::Option::None
            }
        }

        impl<T> #fallback<T> for #proxy<T> {}
    }
}

/// For every sent field whose type mentions no type or const parameter, a use of
/// `<FieldTy as NetCodec>::encode` spanned at that type, in a `const _` of its own: a type
/// without `NetCodec` is reported there, once, with the trait's message. (A field type that mentions a type
/// parameter is bounded in the impl's `where` clause instead, see [`inferred_generics`].)
fn field_checks(input: &NetCodecInput, p: &TokenStream) -> TokenStream {
    let checks = input
        .all_fields()
        .into_iter()
        .filter(|f| f.is_sent() && !bounds::mentions_params(&input.generics, &f.ty))
        .map(|f| {
            let ty = &f.ty;
            let p = runtime::located_at(p, ty.span());
            let encode = quote_spanned!(ty.span()=> <#ty as #p::NetCodec>::encode);
            quote! {
                const _: () = {
                    let _ = #encode;
                };
            }
        });
    quote!(#(#checks)*)
}

/// A local variable name that user code cannot capture or shadow.
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The local bound to field `index` when an enum variant is destructured.
fn field_binding(index: usize) -> Ident {
    format_ident!("__f{}", index, span = Span::mixed_site())
}

/// The local bound to field `index` of the other value in `same_encoding`.
fn other_binding(index: usize) -> Ident {
    format_ident!("__g{}", index, span = Span::mixed_site())
}

/// The whole expansion: one `impl NetCodec` wrapped in an anonymous const.
pub(crate) fn impl_net_codec(input: &NetCodecInput) -> TokenStream {
    let cx = Ctx::new();
    let Ctx { p, w, r, h } = &cx;
    let ident = &input.ident;
    let generics = inferred_generics(input, p);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let name = match &input.name {
        Some(name) => quote!(#name),
        None => {
            let type_name = ident.to_string();
            let type_name = type_name.strip_prefix("r#").unwrap_or(&type_name);
            quote! {
                #p::strip_crate(::core::concat!(::core::module_path!(), "::", #type_name))
            }
        }
    };

    let node_refs = node_refs(&cx, &input.data);
    let (schema_hash, min_size, encode, decode, same) = match &input.data {
        Data::Struct(fields) => (
            hash_fields(&cx, fields),
            struct_min_size(&cx, fields),
            encode_struct(&cx, fields),
            decode_struct(&cx, fields),
            same_struct(&cx, fields),
        ),
        Data::Enum(variants) => (
            hash_variants(&cx, variants),
            quote!(1),
            encode_enum(&cx, variants),
            decode_enum(&cx, variants),
            same_enum(&cx, variants),
        ),
    };
    let other = local("__other");
    let proxy = field_proxy(p);
    let checks = field_checks(input, p);

    quote! {
        #[doc(hidden)]
        #[allow(unused_qualifications, dead_code, clippy::all)]
        const _: () = {
            #proxy
            #checks

            #[automatically_derived]
            impl #impl_generics #p::NetCodec for #ident #ty_generics #where_clause {
                const NAME: &'static str = #name;

                const SCHEMA_HASH: u64 = {
                    let #h = #p::hash_name(<Self as #p::NetCodec>::NAME);
                    #schema_hash
                    #h
                };

                const MIN_SIZE: usize = #min_size;

                const NODE_REFS: bool = #node_refs;

                #[inline]
                fn encode(&self, #w: &mut #p::NetWriter) {
                    #encode
                }

                #[inline]
                fn decode(
                    #r: &mut #p::NetReader<'_>,
                ) -> #p::Result<Self, #p::DecodeError> {
                    #decode
                }

                #[inline]
                fn same_encoding(&self, #other: &Self) -> #p::Option<bool> {
                    #same
                }
            }
        };
    }
}

/// An impl with no behaviour, emitted next to the errors of a declaration that has mistakes:
/// the build fails on those errors anyway, and uses of the type elsewhere then compile instead
/// of adding "`NetCodec` is not implemented" errors that would hide the real ones.
pub(crate) fn placeholder_impl(input: &DeriveInput) -> TokenStream {
    let p = runtime::private();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #p::NetCodec for #ident #ty_generics #where_clause {
                const NAME: &'static str = "";
                const SCHEMA_HASH: u64 = 0;

                fn encode(&self, _: &mut #p::NetWriter) {}

                fn decode(
                    _: &mut #p::NetReader<'_>,
                ) -> #p::Result<Self, #p::DecodeError> {
                    #p::Result::Err(#p::DecodeError::InvalidValue)
                }
            }
        };
    }
}

/// The item's generics plus `FieldTy: NetCodec` for each sent field whose type mentions a type
/// parameter, and `FieldTy: SkippedField` (that is, `Default`) for each such skipped field.
///
/// Bounding the field's type rather than the parameters it mentions asks for exactly what the
/// impl uses: `NetRef<T>` is a codec for any replicated `T` (which is not a codec itself), and
/// `K::Id` is bounded as `K::Id`, not as `K`. Each type is bounded once.
fn inferred_generics(input: &NetCodecInput, p: &TokenStream) -> syn::Generics {
    let fields = input.all_fields();
    let generic = |sent: bool| {
        let mut seen = BTreeSet::new();
        fields
            .iter()
            .filter(|f| f.is_sent() == sent)
            .filter(|f| !bounds::type_params_in(&input.generics, &f.ty).is_empty())
            .map(|f| &f.ty)
            .filter(|ty| seen.insert(ty.to_token_stream().to_string()))
            .collect::<Vec<&Type>>()
    };
    let generics = bounds::with_type_bounds(&input.generics, generic(true), &quote!(#p::NetCodec));
    bounds::with_type_bounds(&generics, generic(false), &quote!(#p::SkippedField))
}

/// The sent fields with their declaration index (the index names tuple fields).
fn sent(fields: &Fields<NetCodecField>) -> impl Iterator<Item = (usize, &NetCodecField)> {
    fields.iter().enumerate().filter(|(_, f)| f.is_sent())
}

/// Statements folding the sent fields' names and schema hashes into the running hash.
fn hash_fields(cx: &Ctx, fields: &Fields<NetCodecField>) -> TokenStream {
    let Ctx { p, h, .. } = cx;
    let steps = sent(fields).map(|(i, f)| {
        let name = f.schema_name(i);
        let hash = cx.codec_item(&f.ty, "FIELD_SCHEMA_HASH");
        quote! {
            let #h = #p::hash_str(#h, #name);
            let #h = #p::hash_u64(#h, #hash);
        }
    });
    quote!(#(#steps)*)
}

/// Statements folding each variant's name, then its fields, into the running hash.
fn hash_variants(cx: &Ctx, variants: &[NetCodecVariant]) -> TokenStream {
    let Ctx { p, h, .. } = cx;
    let steps = variants.iter().map(|v| {
        let name = v.schema_name();
        let fields = hash_fields(cx, &v.fields);
        quote! {
            let #h = #p::hash_str(#h, #name);
            #fields
        }
    });
    quote!(#(#steps)*)
}

/// Whether any sent field (of any variant) can hold node references.
fn node_refs(cx: &Ctx, data: &Data<NetCodecVariant, NetCodecField>) -> TokenStream {
    let fields: Vec<&Fields<NetCodecField>> = match data {
        Data::Struct(fields) => vec![fields],
        Data::Enum(variants) => variants.iter().map(|v| &v.fields).collect(),
    };
    let parts = fields
        .into_iter()
        .flat_map(|fields| sent(fields).map(|(_, f)| cx.codec_item(&f.ty, "FIELD_NODE_REFS")));
    quote!(false #(|| #parts)*)
}

/// The sum of the sent fields' minimum sizes.
fn struct_min_size(cx: &Ctx, fields: &Fields<NetCodecField>) -> TokenStream {
    let sizes: Vec<TokenStream> = sent(fields)
        .map(|(_, f)| cx.codec_item(&f.ty, "FIELD_MIN_SIZE"))
        .collect();
    if sizes.is_empty() {
        quote!(0)
    } else {
        quote!(#(#sizes)+*)
    }
}

/// Encodes `self.field` for each sent field, in declaration order.
fn encode_struct(cx: &Ctx, fields: &Fields<NetCodecField>) -> TokenStream {
    let w = &cx.w;
    let steps = sent(fields).map(|(i, f)| {
        let member = f.member(i);
        let encode = cx.codec_item(&f.ty, "encode_field");
        quote!(#encode(&self.#member, #w);)
    });
    quote!(#(#steps)*)
}

/// `Path { field: decoded or default, .. }` in declaration order, so reads happen in the
/// order the fields were written. Braces with `0:`-style members work for every shape.
fn construct(cx: &Ctx, path: TokenStream, fields: &Fields<NetCodecField>) -> TokenStream {
    let r = &cx.r;
    let inits = fields.iter().enumerate().map(|(i, f)| {
        let member = f.member(i);
        let value = if f.is_sent() {
            let decode = cx.codec_item(&f.ty, "decode_field");
            quote!(#decode(#r)?)
        } else {
            cx.skipped_value(&f.ty)
        };
        quote!(#member: #value)
    });
    quote!(#path { #(#inits,)* })
}

fn decode_struct(cx: &Ctx, fields: &Fields<NetCodecField>) -> TokenStream {
    let p = &cx.p;
    let value = construct(cx, quote!(Self), fields);
    quote!(#p::Result::Ok(#value))
}

/// `match self`, one arm per variant: the index as a varint, then the sent fields.
fn encode_enum(cx: &Ctx, variants: &[NetCodecVariant]) -> TokenStream {
    let Ctx { p, w, .. } = cx;
    if variants.is_empty() {
        return quote!(match *self {});
    }
    let arms = variants.iter().enumerate().map(|(index, v)| {
        let ident = &v.ident;
        let index = variant_index(index);
        let bindings = sent(&v.fields).map(|(i, f)| {
            let member = f.member(i);
            let binding = field_binding(i);
            quote!(#member: #binding)
        });
        let encodes = sent(&v.fields).map(|(i, f)| {
            let binding = field_binding(i);
            let encode = cx.codec_item(&f.ty, "encode_field");
            quote!(#encode(#binding, #w);)
        });
        quote! {
            Self::#ident { #(#bindings,)* .. } => {
                #p::NetWriter::write_var_u32(#w, #index);
                #(#encodes)*
            }
        }
    });
    quote! {
        match self {
            #(#arms)*
        }
    }
}

/// `same_encoding` over the sent fields of `self` and `__other` (the skipped ones are not sent).
fn same_struct(cx: &Ctx, fields: &Fields<NetCodecField>) -> TokenStream {
    let other = local("__other");
    let parts = sent(fields).map(|(i, f)| {
        let member = f.member(i);
        let same = cx.codec_item(&f.ty, "same_encoding_field");
        quote!(#same(&self.#member, &#other.#member))
    });
    all_same(cx, parts.collect())
}

/// `all_same` of `parts` (each an `Option<bool>`); `Some(true)` for none.
fn all_same(cx: &Ctx, parts: Vec<TokenStream>) -> TokenStream {
    let p = &cx.p;
    if parts.is_empty() {
        return quote!(#p::Option::Some(true));
    }
    quote!(#p::all_same([#(#parts),*]))
}

/// `same_encoding` of two enum values: the same variant and the same sent fields.
fn same_enum(cx: &Ctx, variants: &[NetCodecVariant]) -> TokenStream {
    let p = &cx.p;
    let other = local("__other");
    if variants.is_empty() {
        return quote!(match *self {});
    }
    let arms = variants.iter().map(|v| {
        let ident = &v.ident;
        let ours = sent(&v.fields).map(|(i, f)| {
            let (member, binding) = (f.member(i), field_binding(i));
            quote!(#member: #binding)
        });
        let theirs = sent(&v.fields).map(|(i, f)| {
            let (member, binding) = (f.member(i), other_binding(i));
            quote!(#member: #binding)
        });
        let parts = sent(&v.fields).map(|(i, f)| {
            let (a, b) = (field_binding(i), other_binding(i));
            let same = cx.codec_item(&f.ty, "same_encoding_field");
            quote!(#same(#a, #b))
        });
        let same = all_same(cx, parts.collect());
        quote! {
            (Self::#ident { #(#ours,)* .. }, Self::#ident { #(#theirs,)* .. }) => #same,
        }
    });
    quote! {
        #[allow(unreachable_patterns)]
        match (self, #other) {
            #(#arms)*
            _ => #p::Option::Some(false),
        }
    }
}

/// Reads the variant index, then that variant's fields; an unknown index is invalid.
fn decode_enum(cx: &Ctx, variants: &[NetCodecVariant]) -> TokenStream {
    let Ctx { p, r, .. } = cx;
    if variants.is_empty() {
        // No variant: no byte string is a valid encoding.
        return quote! {
            let _ = #r;
            #p::Result::Err(#p::DecodeError::InvalidValue)
        };
    }
    let arms = variants.iter().enumerate().map(|(index, v)| {
        let ident = &v.ident;
        let index = variant_index(index);
        let value = construct(cx, quote!(Self::#ident), &v.fields);
        quote!(#index => #p::Result::Ok(#value),)
    });
    quote! {
        match #p::NetReader::read_var_u32(#r)? {
            #(#arms)*
            tag => #p::Result::Err(#p::DecodeError::UnknownVariant(tag)),
        }
    }
}

fn variant_index(index: usize) -> Literal {
    // More than u32::MAX variants cannot be declared; saturate rather than panic.
    Literal::u32_suffixed(u32::try_from(index).unwrap_or(u32::MAX))
}
