//! Token-building helpers shared by the expansion's modules: hygienic locals, spanned trait
//! items, mask literals, and one member's encode, decode and read.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use crate::replicated::model::Model;
use crate::replicated::parse::{Field, Member, Quant, Role};
use crate::runtime::located_at;

/// A local variable name that user code cannot capture or shadow.
pub(super) fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// `<Ty as Trait>::item`, spanned at `ty` so that a missing impl is reported there. The
/// member traits (`MemberCodec`, `MemberEq`, `MemberClone`, `MemberInterpolate`, `Quantize`,
/// `QuantizeRotation`) are reached through `Member::<Ty>::item` (`Quantized`, `Rotation`)
/// instead, which type-checks whatever `Ty` is: a missing member trait is reported once, by
/// the field's [`member_checks`], not once per use. A flattened base's items are reached the
/// same way, through `Base::<Ty>::item` (tr `"Base"`): only its state types are named as
/// `<Ty as Replicated>::State` / `::Interp`, which report a base that is not `Replicated`
/// once, with that trait's message.
pub(super) fn spanned_item(p: &TokenStream, ty: &Type, tr: &str, item: &str) -> TokenStream {
    let item = Ident::new(item, ty.span());
    let proxy = match tr {
        "MemberCodec" | "MemberEq" | "MemberClone" | "MemberInterpolate" => Some("Member"),
        "Quantize" => Some("Quantized"),
        "QuantizeRotation" => Some("Rotation"),
        "Base" => Some("Base"),
        _ => None,
    };
    if let Some(proxy) = proxy {
        let proxy = Ident::new(proxy, ty.span());
        // The path starts at `#p`: located at `ty` too, so that an expression starting with
        // the path (a base's `new_state(..)`) is reported at `ty`, not at the derive.
        let p = located_at(p, ty.span());
        return quote_spanned!(ty.span()=> #p::#proxy::<#ty>::#item);
    }
    let tr = Ident::new(tr, ty.span());
    quote_spanned!(ty.span()=> <#ty as #p::#tr>::#item)
}

/// Whether the member values `a` and `b` (expressions of references to `ty`) are the same for
/// change detection: by encoding where the type tells (`NetCodec::same_encoding`: floats by
/// bits, so a NaN is stable and `-0.0` differs from `0.0`), else by `PartialEq`.
pub(super) fn unchanged(
    p: &TokenStream,
    ty: &Type,
    a: &TokenStream,
    b: &TokenStream,
) -> TokenStream {
    let same = spanned_item(p, ty, "MemberCodec", "same_encoding_member");
    let eq = spanned_item(p, ty, "MemberEq", "unchanged");
    quote! {
        match #same(#a, #b) {
            #p::Option::Some(__same) => __same,
            #p::Option::None => #eq(#a, #b),
        }
    }
}

/// One assertion per trait a member's type needs, spanned at the field's type: the only place
/// a type that lacks one is reported. Every member needs a codec (its schema hash and
/// encoding); a member that is not quantized also needs `PartialEq` and `Clone` (its shadow),
/// a quantized one `PartialEq` only for an `on_change` hook, and its quantization trait; an
/// interpolated one `Interpolate`.
pub(super) fn member_checks(p: &TokenStream, f: &Field, member: &Member) -> TokenStream {
    let ty = &f.ty;
    let mut needs = vec!["MemberCodec"];
    if member.quantize.is_none() || member.on_change.is_some() {
        needs.push("MemberEq");
    }
    if member.quantize.is_none() {
        needs.push("MemberClone");
    }
    if member.interpolate {
        needs.push("MemberInterpolate");
    }
    match member.quantize {
        Some(q) if q.smallest_three => needs.push("QuantizeRotation"),
        Some(_) => needs.push("Quantize"),
        None => {}
    }
    // Each bound on a function of the expansion, located at the field's type: a type that
    // lacks the trait is reported there, and the note naming the bound points there too
    // (not into mf-net's source).
    let asserts = needs.iter().map(|need| {
        let need = Ident::new(need, ty.span());
        let p = located_at(p, ty.span());
        quote_spanned! {ty.span()=>
            const _: () = {
                const fn replicated_member<T: #p::#need>() {}
                replicated_member::<#ty>()
            };
        }
    });
    quote!(#(#asserts)*)
}

/// `ident`, resolved as before but reported at `span`: expressions that touch a flattened
/// base's state are all located at the base's type, so that a base that is not `Replicated`
/// is reported there (a field access `__s.base` is reported at its first token, which would
/// otherwise be the derive).
pub(super) fn at(ident: &Ident, span: Span) -> Ident {
    let mut ident = ident.clone();
    ident.set_span(ident.span().located_at(span));
    ident
}

/// The bit of member `index` in the change mask.
pub(super) fn bit(index: usize) -> Literal {
    Literal::u64_suffixed(1u64 << index)
}

/// The mask with a bit for each of `count` members.
pub(super) fn all_bits(count: usize) -> Literal {
    Literal::u64_suffixed(if count >= 64 {
        u64::MAX
    } else {
        (1u64 << count) - 1
    })
}

/// The own members of `m` with their bit index and options, in declaration order.
pub(super) fn members(m: &Model) -> Vec<(usize, &Field, &Member)> {
    m.fields
        .iter()
        .filter_map(|f| match &f.role {
            Role::Member(member) => Some((f, member)),
            _ => None,
        })
        .enumerate()
        .map(|(i, (f, member))| (i, f, member))
        .collect()
}

/// The flattened bases of `m`, in declaration order.
pub(super) fn bases(m: &Model) -> Vec<&Field> {
    m.fields
        .iter()
        .filter(|f| matches!(f.role, Role::Base))
        .collect()
}

/// The fields of the members among `members` for which `keep` holds, in declaration order.
pub(super) fn fields_where<'a>(
    members: &[(usize, &'a Field, &'a Member)],
    keep: impl Fn(&Member) -> bool,
) -> Vec<&'a Field> {
    members
        .iter()
        .filter(|(_, _, member)| keep(member))
        .map(|(_, f, _)| *f)
        .collect()
}

/// The mask of the members among `members` for which `pick` holds.
pub(super) fn mask_of(
    members: &[(usize, &Field, &Member)],
    pick: impl Fn(&Member) -> bool,
) -> Literal {
    let mask = members
        .iter()
        .filter(|(_, _, member)| pick(member))
        .fold(0u64, |mask, (i, _, _)| mask | 1u64 << i);
    Literal::u64_suffixed(mask)
}

/// The const holding own member `index`'s `Quantization` (inside the expansion's `const _`
/// block).
pub(super) fn quant_const(index: usize) -> Ident {
    Ident::new(&format!("__MF_NET_QUANTIZE_{index}"), Span::call_site())
}

/// An `f64` literal, negated if negative (a negative literal token is not portable).
pub(super) fn f64_tokens(v: f64) -> TokenStream {
    let lit = Literal::f64_suffixed(v.abs());
    if v < 0.0 {
        quote!(-#lit)
    } else {
        quote!(#lit)
    }
}

/// `Quantization::new(min, max, bits)`, or `Quantization::smallest_three(bits)`.
pub(super) fn quant_expr(p: &TokenStream, q: &Quant) -> TokenStream {
    let bits = Literal::u32_suffixed(q.bits);
    if q.smallest_three {
        return quote!(#p::Quantization::smallest_three(#bits));
    }
    let (min, max) = (f64_tokens(q.min), f64_tokens(q.max));
    quote!(#p::Quantization::new(#min, #max, #bits))
}

/// The trait a quantized member's type implements: `QuantizeRotation` for
/// `quantize(smallest_three, ..)`, else `Quantize` (both name their items alike).
pub(super) fn quant_trait(member: &Member) -> &'static str {
    match member.quantize {
        Some(q) if q.smallest_three => "QuantizeRotation",
        _ => "Quantize",
    }
}

/// The statement that appends member `index`'s shadow `value` to `w`: its `NetCodec`
/// encoding, or for `quantize(..)` members the bucket indexes the shadow keeps.
pub(super) fn encode_value(
    p: &TokenStream,
    index: usize,
    f: &Field,
    member: &Member,
    value: &TokenStream,
    w: &Ident,
) -> TokenStream {
    if member.quantize.is_some() {
        let encode = spanned_item(p, &f.ty, quant_trait(member), "encode_wire");
        let q = quant_const(index);
        quote!(#encode(#value, &#q, #w);)
    } else {
        let encode = spanned_item(p, &f.ty, "MemberCodec", "encode_member");
        quote!(#encode(#value, #w);)
    }
}

/// The statement that hands member `index`'s shadow `value` to the state coder `coder`: for
/// `quantize(..)` members the bucket indexes the shadow keeps, for any other its form, its
/// bit-packed value where its type gives one, and its `NetCodec` encoding.
pub(super) fn code_value(
    p: &TokenStream,
    index: usize,
    f: &Field,
    member: &Member,
    value: &TokenStream,
    coder: &Ident,
) -> TokenStream {
    let q = quant_const(index);
    match member.quantize {
        Some(q_opts) if q_opts.smallest_three => {
            quote!(#p::StateCoder::rotation(#coder, &#q, #value);)
        }
        Some(_) => {
            let components = spanned_item(p, &f.ty, "Quantize", "COMPONENTS");
            quote!(#p::StateCoder::quantized(#coder, &#q, #components, #value);)
        }
        None => {
            let bits = spanned_item(p, &f.ty, "MemberCodec", "MEMBER_BITS");
            let bit_value = spanned_item(p, &f.ty, "MemberCodec", "bit_value_member");
            let encode = spanned_item(p, &f.ty, "MemberCodec", "encode_member");
            let w = local("__bw");
            quote!(#p::StateCoder::member(#coder, #bits, #bit_value(#value), |#w| #encode(#value, #w));)
        }
    }
}

/// The expression (a `Result`) that reads member `index`'s value from `r`.
pub(super) fn decode_value(
    p: &TokenStream,
    index: usize,
    f: &Field,
    member: &Member,
    r: &Ident,
) -> TokenStream {
    if member.quantize.is_some() {
        let decode = spanned_item(p, &f.ty, quant_trait(member), "decode_quantized");
        let q = quant_const(index);
        quote!(#decode(&#q, #r))
    } else {
        let decode = spanned_item(p, &f.ty, "MemberCodec", "decode_member");
        quote!(#decode(#r))
    }
}

/// The statement that reads member `index` from `r` into `self.field` when its bit is in
/// `mask`. With `fired` (the member has an `on_change` hook), the member's bit is also set in
/// `fired` when the new value differs from the one it replaces.
pub(super) fn read_member(
    p: &TokenStream,
    index: usize,
    f: &Field,
    member: &Member,
    r: &Ident,
    mask: &Ident,
    fired: Option<&Ident>,
) -> TokenStream {
    let field = &f.ident;
    let bit = bit(index);
    let decode = decode_value(p, index, f, member, r);
    let v = local("__v");
    let assign = match fired {
        Some(fired) => {
            let unchanged = unchanged(p, &f.ty, &quote!(&#v), &quote!(&self.#field));
            quote! {
                if !(#unchanged) {
                    #fired |= #bit;
                }
                self.#field = #v;
            }
        }
        None => quote!(self.#field = #v;),
    };
    // A value naming a node this end does not have yet is not assigned (see `mf_net::refs`);
    // the check folds away for types without node references.
    let assign = match member.quantize {
        Some(_) => assign,
        None => {
            let held = spanned_item(p, &f.ty, "MemberCodec", "held_member");
            quote! {
                if !#held() {
                    #assign
                }
            }
        }
    };
    quote! {
        if #mask & #bit != 0 {
            let #v = #decode?;
            #assign
        }
    }
}

/// The check that `mask` has no bit past the last of `count` members (none with 64).
pub(super) fn check_mask(p: &TokenStream, mask: &Ident, count: usize) -> Option<TokenStream> {
    let all = all_bits(count);
    (count < 64).then(|| {
        quote! {
            if #mask & !#all != 0 {
                return #p::Result::Err(#p::DecodeError::BadMask);
            }
        }
    })
}

/// With own `on_change` members, the statement that adds `fired` to the own state's slot
/// (`ch[off]`) of the changed-bits buffer; `slot` names the slot's binding.
pub(super) fn record_fired(
    p: &TokenStream,
    own_on_change: bool,
    fired: &Ident,
    ch: &Ident,
    off: &Ident,
    slot: &Ident,
) -> Option<TokenStream> {
    own_on_change.then(|| {
        quote! {
            if #fired != 0 {
                if let #p::Option::Some(#slot) = #ch.get_mut(#off) {
                    *#slot |= #fired;
                }
            }
        }
    })
}

/// A path as the user wrote it, without the spaces `to_string` puts between tokens.
pub(super) fn path_text(path: &syn::Path) -> String {
    quote!(#path).to_string().replace(' ', "")
}
