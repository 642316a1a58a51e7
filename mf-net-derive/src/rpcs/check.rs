//! Step 2: the rules on the impl block and on each `#[rpc]` method's signature and options.
//!
//! Each failed rule adds one spanned error to the accumulator; nothing stops at the first, and
//! every method is checked even when the block itself is refused.

use std::collections::HashMap;

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    FnArg, Ident, ImplItem, ImplItemFn, ItemImpl, Pat, Path, ReturnType, Signature, Type,
    Visibility,
};

use super::model::{Context, Mode, Param, Rpc};
use super::parse::{self, RpcOptions};
use crate::bounds;
use crate::diagnostics::error_at;

/// Rules on the block: an inherent, non-generic impl of a named type. Returns the type's name
/// (the last segment of its path) when there is one.
pub(crate) fn impl_block(item: &ItemImpl, errors: &mut Accumulator) -> Option<Ident> {
    if let Some((_, path, _)) = &item.trait_ {
        errors.push(error_at(
            path.span(),
            "`#[rpcs]` goes on an inherent impl block (`impl Player { .. }`), not on a trait \
             impl: RPCs are the type's own methods; move the `#[rpc]` methods into an \
             `impl Player { .. }` block marked `#[rpcs]`",
        ));
    }
    if !item.generics.params.is_empty() {
        errors.push(error_at(
            item.generics.params.span(),
            "`#[rpcs]` cannot be used on a generic impl block: replicated types are concrete (the \
             wire knows each type by one name); remove the parameters and write \
             `impl Player { .. }`",
        ));
    } else if let Some(where_clause) = &item.generics.where_clause {
        errors.push(error_at(
            where_clause.span(),
            "`#[rpcs]` cannot be used on an impl block with a `where` clause: replicated types are \
             concrete; remove it",
        ));
    }
    let ident = match &*item.self_ty {
        Type::Path(path) if path.qself.is_none() => {
            path.path.segments.last().map(|s| s.ident.clone())
        }
        _ => None,
    };
    if ident.is_none() {
        errors.push(error_at(
            item.self_ty.span(),
            "`#[rpcs]` goes on an impl block of a named struct that derives `Replicated`, e.g. \
             `#[rpcs] impl Player { .. }`",
        ));
    }
    ident
}

/// Takes the `#[rpc]` attributes out of every item of the block (so the block can be
/// re-emitted without them), and checks and reads each `#[rpc]` method.
pub(crate) fn methods(item: &mut ItemImpl, errors: &mut Accumulator) -> Vec<Rpc> {
    let mut rpcs = Vec::new();
    for impl_item in &mut item.items {
        let (attrs, method) = match impl_item {
            ImplItem::Fn(method) => {
                let attrs = parse::take_rpc_attrs(&mut method.attrs);
                (attrs, Some(&*method))
            }
            ImplItem::Const(c) => (parse::take_rpc_attrs(&mut c.attrs), None),
            ImplItem::Type(t) => (parse::take_rpc_attrs(&mut t.attrs), None),
            ImplItem::Macro(m) => (parse::take_rpc_attrs(&mut m.attrs), None),
            _ => (Vec::new(), None),
        };
        let Some(first) = attrs.first() else {
            continue;
        };
        let Some(method) = method else {
            errors.push(error_at(
                first.path().span(),
                "only methods can be RPCs; remove `#[rpc]` here",
            ));
            continue;
        };
        for extra in &attrs[1..] {
            errors.push(error_at(
                extra.path().span(),
                "this method has more than one `#[rpc]` attribute; write all its options in one, \
                 e.g. `#[rpc(server, call_local)]`",
            ));
        }
        if let Some(cfg) = parse::conditional_attr(&method.attrs) {
            let name = if cfg.path().is_ident("cfg") {
                "cfg"
            } else {
                "cfg_attr"
            };
            errors.push(error_at(
                cfg.path().span(),
                format!(
                    "an RPC method cannot have `#[{name}(..)]`: RPCs are numbered by their \
                     position in the block, and those numbers are their ids on the wire, so \
                     every build must declare the same RPCs; remove `#[{name}(..)]` and put the \
                     condition inside the body, e.g. `if cfg!(feature = \"cheats\") {{ .. }}`"
                ),
            ));
        }
        let mode = mode(&parse::mode_words(first), errors);
        let options = errors.handle(parse::options(first)).unwrap_or_default();
        rpcs.push(method_rpc(method, mode, options, errors));
    }
    names(&rpcs, errors);
    if rpcs.len() > usize::from(u16::MAX) {
        errors.push(error_at(
            item.self_ty.span(),
            format!(
                "a type can have at most {} RPCs; split it into flattened bases",
                u16::MAX
            ),
        ));
    }
    rpcs
}

/// One `#[rpc]` method of mode `mode`, checked (what cannot be read is left out, with an
/// error).
fn method_rpc(
    method: &ImplItemFn,
    mode: Mode,
    options: RpcOptions,
    errors: &mut Accumulator,
) -> Rpc {
    let sig = &method.sig;
    signature_qualifiers(sig, errors);
    let (context, params) = parameters(sig, errors);
    let ret = return_type(&sig.output, errors);
    if let (Mode::Server, Some((_, span))) = (mode, options.rate_limit) {
        errors.push(error_at(
            span,
            "`rate_limit` limits the calls the server receives, and a `server` RPC is only sent by \
             the server; remove `rate_limit`",
        ));
    }
    if options.reliable.is_present() && options.unreliable.is_present() {
        errors.push(error_at(
            options.unreliable.span(),
            "`unreliable` conflicts with `reliable`: an RPC travels on one channel, `reliable` \
             (delivered once, in order; the default) or `unreliable` (may be lost); keep one",
        ));
    }
    let docs = method
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .cloned()
        .collect();
    let deprecated = method
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("deprecated"))
        .cloned()
        .collect();
    Rpc {
        ident: sig.ident.clone(),
        docs,
        deprecated,
        vis: method.vis.clone(),
        mode,
        call_local: options.call_local.is_present(),
        reliable: !options.unreliable.is_present(),
        rate_limit: options.rate_limit.map(|(limit, _)| limit),
        validate: options.validate,
        context,
        params,
        ret,
    }
}

/// The mode from the mode words as written; a second one is refused (a repeated word is
/// darling's "given twice" error).
fn mode(words: &[(String, Span)], errors: &mut Accumulator) -> Mode {
    let Some((first, _)) = words.first() else {
        return Mode::Authority;
    };
    let mode = match first.as_str() {
        "server" => Mode::Server,
        "any_peer" => Mode::AnyPeer,
        _ => Mode::Authority,
    };
    for (other, span) in words[1..].iter().filter(|(other, _)| other != first) {
        errors.push(error_at(
            *span,
            format!(
                "`{other}` conflicts with `{first}`: an RPC has one mode, `server` (server → \
                 clients), `authority` (the node's authority → server; the default) or \
                 `any_peer` (any peer → server); keep one"
            ),
        ));
    }
    mode
}

/// No generics, `async`, `const`, `unsafe` or ABI.
fn signature_qualifiers(sig: &Signature, errors: &mut Accumulator) {
    if !sig.generics.params.is_empty() {
        errors.push(error_at(
            sig.generics.params.span(),
            "RPCs cannot be generic: both ends decode the arguments with one fixed signature; use \
             concrete parameter types (an enum deriving `NetCodec` for alternatives)",
        ));
    } else if let Some(where_clause) = &sig.generics.where_clause {
        errors.push(error_at(
            where_clause.span(),
            "RPCs cannot have a `where` clause: their signature is fixed; remove it",
        ));
    }
    if let Some(token) = &sig.asyncness {
        errors.push(error_at(
            token.span,
            "RPCs cannot be `async`: a call runs to completion in the frame that receives it; \
             remove `async` (queue follow-up work with `&mut RpcContext`, or keep it in game \
             state)",
        ));
    }
    if let Some(token) = &sig.constness {
        errors.push(error_at(
            token.span,
            "RPCs cannot be `const fn`: they run on received data at run time; remove `const`",
        ));
    }
    if let Some(token) = &sig.unsafety {
        errors.push(error_at(
            token.span,
            "RPCs cannot be `unsafe`: a remote peer decides when they run, so no caller can uphold \
             a safety contract; remove `unsafe` and check the arguments in the body or with \
             `validate`",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(error_at(
            abi.span(),
            "RPCs cannot have an `extern` ABI: the generated dispatcher calls them as Rust \
             methods; remove it",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(error_at(
            variadic.span(),
            "RPCs cannot be variadic; take a `Vec<T>` instead",
        ));
    }
}

/// The receiver (`&mut self`), the optional context and the sent parameters.
fn parameters(sig: &Signature, errors: &mut Accumulator) -> (Option<Context>, Vec<Param>) {
    let mut inputs = sig.inputs.iter().peekable();
    match inputs.peek() {
        Some(FnArg::Receiver(receiver)) => {
            inputs.next();
            receiver_rule(receiver, errors);
        }
        _ => errors.push(error_at(
            sig.ident.span(),
            format!(
                "an RPC runs on a node's value, so it takes `&mut self` first: write \
                 `fn {}(&mut self, ..)` (an associated function without `self` cannot be an RPC)",
                sig.ident
            ),
        )),
    }
    let mut context = None;
    let mut params = Vec::new();
    for (index, input) in inputs.enumerate() {
        let FnArg::Typed(arg) = input else {
            continue;
        };
        if let Some(mutable) = context_ref(&arg.ty) {
            context_rule(&arg.ty, index, context.is_some(), errors);
            context = Some(Context { mutable });
        } else if let Some(param) = sent_param(arg, errors) {
            params.push(param);
        }
    }
    (context, params)
}

/// The `&RpcContext` parameter `ty`, at `index` among the parameters after the receiver:
/// one, first.
fn context_rule(ty: &Type, index: usize, repeated: bool, errors: &mut Accumulator) {
    if repeated {
        errors.push(error_at(
            ty.span(),
            "an RPC takes at most one `&RpcContext` parameter; remove this one",
        ));
    } else if index != 0 {
        let at = match ty {
            Type::Reference(reference) => reference.elem.span(),
            _ => ty.span(),
        };
        errors.push(error_at(
            at,
            "the `&RpcContext` parameter must come first, right after `&mut self`: \
             `fn name(&mut self, ctx: &RpcContext, ..)`",
        ));
    }
}

/// A sent parameter: a plain name and a concrete by-value type without `Self`; `None` (with
/// its errors) otherwise.
fn sent_param(arg: &syn::PatType, errors: &mut Accumulator) -> Option<Param> {
    let ty = &*arg.ty;
    if is_context_by_value(ty) {
        errors.push(error_at(
            ty.span(),
            "take the context by reference: `ctx: &RpcContext` (or `&mut RpcContext` to queue \
             world changes), as the first parameter after `&mut self`",
        ));
        return None;
    }
    let ok = sent_type_rule(ty, errors);
    let ident = match &*arg.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(pat.ident.clone()),
        pat => {
            errors.push(error_at(
                pat.span(),
                "RPC parameters must be plain names, e.g. `damage: i32`: the generated \
                 senders take the same parameters by name; destructure inside the body (and \
                 name unused ones `_damage`)",
            ));
            None
        }
    };
    Some(Param {
        ident: ident.filter(|_| ok)?,
        ty: ty.clone(),
    })
}

/// Whether a sent parameter's type is by value, concrete and without `Self`; the first rule it
/// breaks goes to `errors`.
fn sent_type_rule(ty: &Type, errors: &mut Accumulator) -> bool {
    match ty {
        Type::Reference(reference) => {
            errors.push(error_at(
                reference.and_token.span,
                "RPC parameters are sent by value: write `String` for `&str`, `Vec<T>` for \
                 `&[T]` and `T` for `&T` (the only reference parameter is a first \
                 `&RpcContext`)",
            ));
            return false;
        }
        Type::ImplTrait(_) => {
            errors.push(error_at(
                ty.span(),
                "RPC parameters need a concrete `NetCodec` type: both ends decode the \
                 arguments with one fixed signature",
            ));
            return false;
        }
        _ => {}
    }
    let self_ident = Ident::new("Self", Span::call_site());
    if let Some((_, span)) = bounds::occurrences(ty, &[&self_ident]).first() {
        errors.push(error_at(
            *span,
            "write the type's name instead of `Self` in RPC parameters: the generated \
             sender trait has its own `Self`",
        ));
        return false;
    }
    true
}

/// `&mut self` (or `self: &mut Self`).
fn receiver_rule(receiver: &syn::Receiver, errors: &mut Accumulator) {
    let by_mut_ref = if receiver.colon_token.is_some() {
        matches!(&*receiver.ty, Type::Reference(r)
            if r.mutability.is_some() && matches!(&*r.elem, Type::Path(p) if p.path.is_ident("Self")))
    } else {
        receiver.reference.is_some() && receiver.mutability.is_some()
    };
    if by_mut_ref {
        return;
    }
    let message = if receiver.colon_token.is_none() && receiver.reference.is_none() {
        "RPCs take `&mut self`, not `self` by value: the body runs on the node's value in place; \
         write `&mut self`"
    } else if receiver.colon_token.is_none() {
        "RPCs take `&mut self`, not `&self`: the body runs on the node's value and may change it; \
         write `&mut self` (a body that only reads works the same)"
    } else {
        "RPCs take `&mut self`: the body runs on the node's value in place; write `&mut self`"
    };
    errors.push(error_at(receiver.span(), message));
}

/// `Some(mutable)` if `ty` is `&RpcContext` / `&mut RpcContext` (any path ending in
/// `RpcContext`).
fn context_ref(ty: &Type) -> Option<bool> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    is_context_by_value(&reference.elem).then_some(reference.mutability.is_some())
}

/// Whether `ty` is a path ending in `RpcContext`.
fn is_context_by_value(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "RpcContext"))
}

/// `None` for `()` or no return type; the type for `Result<(), E>`; anything else is refused.
fn return_type(output: &ReturnType, errors: &mut Accumulator) -> Option<Type> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    match &**ty {
        Type::Tuple(tuple) if tuple.elems.is_empty() => None,
        Type::Path(path) if path.qself.is_none() && is_result_of_unit(&path.path) => {
            Some((**ty).clone())
        }
        Type::Path(path) if path.qself.is_none() && ok_type_of_result(&path.path).is_some() => {
            let ok = ok_type_of_result(&path.path).unwrap_or(&**ty);
            errors.push(error_at(
                ok.span(),
                "an RPC's `Result` carries no value: write `Result<(), E>`; the caller does not \
                 wait for an answer, so send results back with another RPC (to \
                 `ctx.sender()`)",
            ));
            None
        }
        other => {
            errors.push(error_at(
                other.span(),
                "an RPC returns nothing or `Result<(), E>`: the caller does not wait for an \
                 answer, so a returned value would be lost; send results back with another RPC \
                 (to `ctx.sender()`), and return `Err` to report a failed call",
            ));
            None
        }
    }
}

/// A path ending in `Result<(), ..>` (`Result<(), E>`, `io::Result<()>`) or in a bare `Result`
/// alias (`fmt::Result`).
fn is_result_of_unit(path: &Path) -> bool {
    let Some(last) = path.segments.last() else {
        return false;
    };
    if last.ident != "Result" {
        return false;
    }
    match &last.arguments {
        // An alias such as `std::fmt::Result`; `RpcReturn` checks what it stands for.
        syn::PathArguments::None => true,
        syn::PathArguments::AngleBracketed(args) => matches!(
            args.args.first(),
            Some(syn::GenericArgument::Type(Type::Tuple(t))) if t.elems.is_empty()
        ),
        syn::PathArguments::Parenthesized(_) => false,
    }
}

/// The `Ok` type of a path ending in `Result<T, ..>`.
fn ok_type_of_result(path: &Path) -> Option<&Type> {
    let last = path.segments.last().filter(|last| last.ident == "Result")?;
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(ty)) => Some(ty),
        _ => None,
    }
}

/// Unique names, and no RPC named like another's one-peer sender (`hit` and `hit_to`).
fn names(rpcs: &[Rpc], errors: &mut Accumulator) {
    let mut seen: HashMap<String, &Ident> = HashMap::new();
    for rpc in rpcs {
        let name = rpc.ident.to_string();
        if let Some(first) = seen.get(&name) {
            errors.push(error_at(
                rpc.ident.span(),
                format!(
                    "an RPC named `{first}` is already declared in this block; RPC names must be \
                     unique within a type (they name the generated senders); rename one"
                ),
            ));
        } else {
            seen.insert(name, &rpc.ident);
        }
    }
    for rpc in rpcs {
        let name = rpc.ident.to_string();
        if let Some(base) = name.strip_suffix("_to") {
            if let Some(other) = seen.get(base) {
                errors.push(error_at(
                    rpc.ident.span(),
                    format!(
                        "the RPC `{name}` has the same name as the generated sender `{name}` of \
                         the RPC `{other}` (which sends `{other}` to one peer); rename one of \
                         them"
                    ),
                ));
            }
        }
    }
}

/// The visibility of the sender trait: the widest of the RPC methods' visibilities, so that
/// whoever can call an RPC method can send it.
pub(crate) fn trait_visibility(rpcs: &[Rpc]) -> Visibility {
    fn rank(vis: &Visibility) -> u8 {
        match vis {
            Visibility::Inherited => 0,
            Visibility::Restricted(r) if r.path.is_ident("self") => 0,
            Visibility::Restricted(r) if r.path.is_ident("crate") => 3,
            Visibility::Restricted(_) => 2,
            Visibility::Public(_) => 4,
        }
    }
    rpcs.iter()
        .map(|rpc| &rpc.vis)
        .max_by_key(|vis| rank(vis))
        .cloned()
        .unwrap_or(Visibility::Inherited)
}
