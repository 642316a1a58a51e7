//! Step 1: darling receivers for `#[derive(Replicated)]` and its `#[replicated(..)]` options.
//!

use darling::util::Flag;
use darling::{FromDeriveInput, FromMeta};
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitStr, Meta, Path, Type};

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
    /// `#[replicated(predict)]`: the owning client simulates the value locally (client-side
    /// prediction with rollback).
    #[darling(with = |m| crate::attr::flag("replicated", m))]
    pub(crate) predict: Flag,
    /// `#[replicated(flatten)]`: the field is a `Replicated` base whose state goes first.
    #[darling(with = |m| crate::attr::flag("replicated", m))]
    pub(crate) flatten: Flag,
    /// `#[replicated(owner_only)]`: sent only to the node's authority client.
    #[darling(with = |m| crate::attr::flag("replicated", m))]
    pub(crate) owner_only: Flag,
    /// `#[replicated(skip_owner)]`: sent to every client but the node's authority.
    #[darling(with = |m| crate::attr::flag("replicated", m))]
    pub(crate) skip_owner: Flag,
    /// `#[replicated(initial_only)]`: sent in the spawn's full state only.
    #[darling(with = |m| crate::attr::flag("replicated", m))]
    pub(crate) initial_only: Flag,
    /// `#[replicated(on_change = path)]`: a `fn(&mut Self)` clients run after applying a
    /// changed value.
    #[darling(default, with = read_on_change)]
    pub(crate) on_change: Option<Hook>,
    /// `#[replicated(quantize(min = .., max = .., bits = ..))]`: sent as a bucket index;
    /// `quantize(smallest_three, bits = ..)`: a rotation in the smallest-three encoding.
    #[darling(default, with = read_quantize)]
    pub(crate) quantize: Option<QuantizeOption>,
}

/// `quantize(..)` as written: where its key is, and its checked arguments (`None` when they
/// had mistakes, already reported).
pub(crate) struct QuantizeOption {
    key: Span,
    args: Option<Quant>,
}

/// A member's checked `quantize(..)` arguments: `min < max`, both finite, `bits` in `1..=32`;
/// or, with `smallest_three`, `bits` in `9..=16` and `min`/`max` = ∓1/√2 (not written).
#[derive(Clone, Copy)]
pub(crate) struct Quant {
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) bits: u32,
    pub(crate) smallest_three: bool,
}

/// The `bits` that `quantize(smallest_three, bits = ..)` accepts
/// (`mf_net::codec::quantize::SMALLEST_THREE_BITS`).
const SMALLEST_THREE_BITS: std::ops::RangeInclusive<u64> = 9..=16;

/// `on_change = path`: the option's name (for messages) and the path.
pub(crate) struct Hook {
    key: Span,
    path: Path,
}

/// Which clients receive a member.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Condition {
    Always,
    OwnerOnly,
    SkipOwner,
}

/// A member's options.
pub(crate) struct Member {
    pub(crate) interpolate: bool,
    pub(crate) predict: bool,
    pub(crate) condition: Condition,
    pub(crate) initial_only: bool,
    pub(crate) on_change: Option<Path>,
    pub(crate) quantize: Option<Quant>,
}

impl Member {
    /// A member without options.
    fn plain() -> Self {
        Self {
            interpolate: false,
            predict: false,
            condition: Condition::Always,
            initial_only: false,
            on_change: None,
            quantize: None,
        }
    }

    /// The options as bits, for the schema hash: interpolate, owner_only, skip_owner,
    /// initial_only, on_change (whether there is a hook, not its path), quantize (its
    /// arguments are hashed separately), smallest_three, predict. Each bit is 0 when its option
    /// is absent, so adding one leaves the hashes of types without it as they were.
    pub(crate) fn flags(&self) -> u64 {
        u64::from(self.interpolate)
            | u64::from(self.condition == Condition::OwnerOnly) << 1
            | u64::from(self.condition == Condition::SkipOwner) << 2
            | u64::from(self.initial_only) << 3
            | u64::from(self.on_change.is_some()) << 4
            | u64::from(self.quantize.is_some()) << 5
            | u64::from(self.quantize.is_some_and(|q| q.smallest_three)) << 6
            | u64::from(self.predict) << 7
    }
}

/// What a field is to the derive.
pub(crate) enum Role {
    /// No `#[replicated]`: stays local.
    Local,
    /// `#[replicated]` or `#[replicated(..)]` with member options.
    Member(Member),
    /// `#[replicated(flatten)]`.
    Base,
}

/// Reads `on_change = path`.
fn read_on_change(meta: &Meta) -> darling::Result<Option<Hook>> {
    let usage = "`#[replicated(on_change = Self::on_health_changed)]`, naming a \
                 `fn(&mut Self)`";
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => Ok(Some(Hook {
                key: nv.path.span(),
                path: path.path.clone(),
            })),
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Err(error_at(
                s.span(),
                format!("write the function's path without quotes, e.g. {usage}"),
            )),
            other => Err(error_at(
                other.span(),
                format!("`on_change` expects the path of a function, e.g. {usage}"),
            )),
        },
        _ => Err(error_at(
            meta.span(),
            format!("`on_change` expects a value, e.g. {usage}"),
        )),
    }
}

const QUANTIZE_USAGE: &str = "`#[replicated(quantize(min = -100.0, max = 100.0, bits = 16))]`";
const SMALLEST_THREE_USAGE: &str = "`#[replicated(quantize(smallest_three, bits = 12))]`";

/// A number literal, optionally negated: `-100.0`, `100`, `0.5`.
fn number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>().ok(),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(_) => number(expr).map(|v| -v),
            _ => None,
        },
        Expr::Paren(p) => number(&p.expr),
        _ => None,
    }
}

/// Reads `quantize(min = .., max = .., bits = ..)` or `quantize(smallest_three, bits = ..)`,
/// every mistake spanned at its token.
fn read_quantize(meta: &Meta) -> darling::Result<Option<QuantizeOption>> {
    let key = meta.path().span();
    let list = match meta {
        Meta::List(list) => list,
        _ => {
            return Err(error_at(
                meta.span(),
                format!(
                    "`quantize` expects its range and resolution in parentheses, e.g. \
                     {QUANTIZE_USAGE}"
                ),
            ))
        }
    };
    let items = darling::ast::NestedMeta::parse_meta_list(list.tokens.clone())?;
    let mut errors = darling::Error::accumulator();
    let written = QuantizeArgs::read(&items, &mut errors);
    let args = if written.smallest_three.is_some() {
        smallest_three_args(key, written, errors)?
    } else {
        range_args(key, written, errors)?
    };
    Ok(Some(QuantizeOption { key, args }))
}

/// The arguments of `quantize(..)` as written: each value with its span, and where
/// `smallest_three` is.
struct QuantizeArgs<'a> {
    min: Option<(Span, &'a Expr)>,
    max: Option<(Span, &'a Expr)>,
    bits: Option<(Span, &'a Expr)>,
    smallest_three: Option<Span>,
}

impl<'a> QuantizeArgs<'a> {
    /// Sorts `items` into the arguments; unknown and repeated ones go to `errors`.
    fn read(
        items: &'a [darling::ast::NestedMeta],
        errors: &mut darling::error::Accumulator,
    ) -> Self {
        let mut args = Self {
            min: None,
            max: None,
            bits: None,
            smallest_three: None,
        };
        for item in items {
            let nv = match item {
                darling::ast::NestedMeta::Meta(Meta::NameValue(nv)) => nv,
                darling::ast::NestedMeta::Meta(Meta::Path(path))
                    if path.is_ident("smallest_three") =>
                {
                    if args.smallest_three.is_some() {
                        errors.push(error_at(
                            path.span(),
                            "`smallest_three` is given twice in `quantize(..)`; keep one",
                        ));
                    } else {
                        args.smallest_three = Some(path.span());
                    }
                    continue;
                }
                other => {
                    errors.push(error_at(
                        other.span(),
                        format!(
                            "`quantize` takes `min = ..`, `max = ..` and `bits = ..`, e.g. \
                             {QUANTIZE_USAGE}"
                        ),
                    ));
                    continue;
                }
            };
            args.value(nv, errors);
        }
        args
    }

    /// Stores `name = value`; an unknown or repeated name goes to `errors`.
    fn value(&mut self, nv: &'a syn::MetaNameValue, errors: &mut darling::error::Accumulator) {
        let name = nv
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        let slot = match name.as_str() {
            "min" => &mut self.min,
            "max" => &mut self.max,
            "bits" => &mut self.bits,
            _ => {
                errors.push(error_at(
                    nv.path.span(),
                    format!(
                        "unknown `quantize` argument; expected `min`, `max` or `bits`, e.g. \
                         {QUANTIZE_USAGE}, or `smallest_three` and `bits`"
                    ),
                ));
                return;
            }
        };
        if slot.is_some() {
            errors.push(error_at(
                nv.path.span(),
                format!("`{name}` is given twice in `quantize(..)`; keep one"),
            ));
            return;
        }
        *slot = Some((nv.value.span(), &nv.value));
    }
}

/// `quantize(smallest_three, bits = ..)`: `bits` only, in [`SMALLEST_THREE_BITS`].
fn smallest_three_args(
    key: Span,
    written: QuantizeArgs<'_>,
    mut errors: darling::error::Accumulator,
) -> darling::Result<Option<Quant>> {
    for (name, arg) in [("min", written.min), ("max", written.max)] {
        if let Some((span, _)) = arg {
            errors.push(error_at(
                span,
                format!(
                    "`quantize(smallest_three, ..)` takes only `bits`: the three components \
                     sent always lie in ±1/√2; remove `{name}`, e.g. {SMALLEST_THREE_USAGE}"
                ),
            ));
        }
    }
    let bits = written
        .bits
        .and_then(|arg| bits_value(arg, true, &mut errors));
    if written.bits.is_none() {
        errors.push(error_at(
            key,
            format!(
                "`quantize(smallest_three, ..)` is missing `bits`, e.g. {SMALLEST_THREE_USAGE}"
            ),
        ));
    }
    errors.finish()?;
    Ok(bits.map(|bits| Quant {
        min: -std::f64::consts::FRAC_1_SQRT_2,
        max: std::f64::consts::FRAC_1_SQRT_2,
        bits,
        smallest_three: true,
    }))
}

/// `quantize(min = .., max = .., bits = ..)`: all three, `min < max`.
fn range_args(
    key: Span,
    written: QuantizeArgs<'_>,
    mut errors: darling::error::Accumulator,
) -> darling::Result<Option<Quant>> {
    let QuantizeArgs { min, max, bits, .. } = written;
    let min_v = min.and_then(|arg| range_value("min", arg, &mut errors));
    let max_v = max.and_then(|arg| range_value("max", arg, &mut errors));
    let bits_v = bits.and_then(|arg| bits_value(arg, false, &mut errors));
    let missing: Vec<&str> = [
        ("min", min.is_none()),
        ("max", max.is_none()),
        ("bits", bits.is_none()),
    ]
    .into_iter()
    .filter_map(|(name, missing)| missing.then_some(name))
    .collect();
    if !missing.is_empty() {
        errors.push(error_at(
            key,
            format!(
                "`quantize` is missing {}; write all three, e.g. {QUANTIZE_USAGE}{}",
                match missing.as_slice() {
                    [one] => format!("`{one}`"),
                    [first, second] => format!("`{first}` and `{second}`"),
                    _ => "`min`, `max` and `bits`".to_owned(),
                },
                if min.is_none() && max.is_none() {
                    format!(" (or, for a `glam::Quat`, {SMALLEST_THREE_USAGE})")
                } else {
                    String::new()
                }
            ),
        ));
    }
    if let (Some((_, lo)), Some((hi_span, hi))) = (min_v, max_v) {
        if lo >= hi {
            errors.push(error_at(
                hi_span,
                format!(
                    "`max` ({hi:?}) must be greater than `min` ({lo:?}): values are clamped to \
                     `min..=max`"
                ),
            ));
        }
    }
    errors.finish()?;
    Ok(match (min_v, max_v, bits_v) {
        (Some((_, min)), Some((_, max)), Some(bits)) => Some(Quant {
            // `-0.0` and `0.0` quantize alike; one spelling keeps the schema hash one.
            min: if min == 0.0 { 0.0 } else { min },
            max: if max == 0.0 { 0.0 } else { max },
            bits,
            smallest_three: false,
        }),
        _ => None,
    })
}

/// The value of `min` or `max` (`name`): a finite number literal, else an error.
fn range_value(
    name: &str,
    (span, expr): (Span, &Expr),
    errors: &mut darling::error::Accumulator,
) -> Option<(Span, f64)> {
    match number(expr) {
        Some(v) if v.is_finite() => Some((span, v)),
        _ => {
            errors.push(error_at(
                span,
                format!("`{name}` must be a finite number literal, e.g. {QUANTIZE_USAGE}"),
            ));
            None
        }
    }
}

/// The value of `bits`: an integer in `1..=32`, or in [`SMALLEST_THREE_BITS`] with
/// `smallest_three`; else an error.
fn bits_value(
    (span, expr): (Span, &Expr),
    smallest_three: bool,
    errors: &mut darling::error::Accumulator,
) -> Option<u32> {
    let parsed = match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    };
    match parsed {
        Some(b) if smallest_three && SMALLEST_THREE_BITS.contains(&b) => u32::try_from(b).ok(),
        _ if smallest_three => {
            errors.push(error_at(
                span,
                format!(
                    "`bits` must be an integer from {} to {} with `smallest_three`: the bits \
                     of each of the three components sent ({} bits: 4 bytes, within 0.55°; \
                     {} bits: 7 bytes, within 0.005°)",
                    SMALLEST_THREE_BITS.start(),
                    SMALLEST_THREE_BITS.end(),
                    SMALLEST_THREE_BITS.start(),
                    SMALLEST_THREE_BITS.end(),
                ),
            ));
            None
        }
        Some(b @ 1..=32) => u32::try_from(b).ok(),
        _ => {
            errors.push(error_at(
                span,
                "`bits` must be an integer from 1 to 32: the bucket index is a `u32`, \
                 written in 1 to 4 bytes",
            ));
            None
        }
    }
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
            "`#[replicated]` takes no value; write `#[replicated]`, or options in \
             parentheses: `#[replicated(interpolate)]`, `#[replicated(owner_only)]`, \
             `#[replicated(flatten)]`, ..",
        )),
    }
}

/// The role of a field with attributes `attrs`, from its `#[replicated]` attributes; mistakes
/// go to `errors` (and the field is treated as well as can be guessed, so later checks still
/// run).
pub(crate) fn role(attrs: &[Attribute], errors: &mut darling::error::Accumulator) -> Role {
    for stray in attrs.iter().filter(|a| a.path().is_ident("predict")) {
        errors.push(error_at(
            stray.path().span(),
            "`predict` is an option of `#[replicated]`, not an attribute of its own: write \
             `#[replicated(predict)]` (with the field's other options, if any)",
        ));
    }
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
        return Role::Member(Member::plain());
    };
    if options.flatten.is_present() {
        base_conflicts(&options, errors);
        return Role::Base;
    }
    Role::Member(member(options, errors))
}

/// A `#[replicated(flatten)]` base's other options, each an error at the option the message
/// says to remove.
fn base_conflicts(options: &MemberOptions, errors: &mut darling::error::Accumulator) {
    if options.interpolate.is_present() {
        errors.push(error_at(
            options.interpolate.span(),
            "`interpolate` and `flatten` cannot be combined: a flattened base's own members \
             say whether they are interpolated; remove `interpolate` here and mark the \
             base's fields `#[replicated(interpolate)]`",
        ));
    }
    let flags = [
        ("owner_only", &options.owner_only),
        ("skip_owner", &options.skip_owner),
        ("initial_only", &options.initial_only),
        ("predict", &options.predict),
    ];
    for (name, flag) in flags {
        if flag.is_present() {
            errors.push(error_at(
                flag.span(),
                format!(
                    "`{name}` cannot be used on a `#[replicated(flatten)]` base: a base is \
                     not one member but a state of its own; remove `{name}` here and mark \
                     the base's fields `#[replicated({name})]`"
                ),
            ));
        }
    }
    if let Some(q) = &options.quantize {
        errors.push(error_at(
            q.key,
            "`quantize` cannot be used on a `#[replicated(flatten)]` base: a base is not one \
             value but a state of its own; remove it here and mark the base's float fields \
             `#[replicated(quantize(..))]`",
        ));
    }
    if let Some(hook) = &options.on_change {
        errors.push(error_at(
            hook.key,
            "`on_change` cannot be used on a `#[replicated(flatten)]` base: hooks belong to \
             members; remove it here and mark the base's fields \
             `#[replicated(on_change = ..)]`",
        ));
    }
}

/// A member's options; options that cannot be combined are errors.
fn member(options: MemberOptions, errors: &mut darling::error::Accumulator) -> Member {
    let interpolate = options.interpolate.is_present();
    let condition = condition(&options, errors);
    let initial_only = options.initial_only.is_present();
    if initial_only && interpolate {
        errors.push(error_at(
            options.interpolate.span(),
            "`initial_only` and `interpolate` cannot be combined: an `initial_only` member is \
             sent once, in the spawn, so clients have nothing to blend; remove `interpolate`",
        ));
    }
    let predict = options.predict.is_present();
    if predict {
        predict_conflicts(&options, condition, errors);
    }
    Member {
        interpolate: interpolate && !initial_only,
        predict,
        condition,
        initial_only,
        on_change: options.on_change.map(|hook| hook.path),
        quantize: options.quantize.and_then(|q| q.args),
    }
}

/// Which clients receive the member: `owner_only` and `skip_owner` together are an error.
fn condition(options: &MemberOptions, errors: &mut darling::error::Accumulator) -> Condition {
    match (
        options.owner_only.is_present(),
        options.skip_owner.is_present(),
    ) {
        (true, true) => {
            errors.push(error_at(
                options.skip_owner.span(),
                "`owner_only` and `skip_owner` cannot be combined: the first sends the member \
                 only to the node's owner, the second to everyone but the owner, so together \
                 no client would receive it; keep one, or remove `#[replicated]` to keep the \
                 field local",
            ));
            Condition::OwnerOnly
        }
        (true, false) => Condition::OwnerOnly,
        (false, true) => Condition::SkipOwner,
        (false, false) => Condition::Always,
    }
}

/// The options `predict` cannot be combined with, each an error at `predict`.
fn predict_conflicts(
    options: &MemberOptions,
    condition: Condition,
    errors: &mut darling::error::Accumulator,
) {
    let span = options.predict.span();
    if options.quantize.is_some() {
        errors.push(error_at(
            span,
            "`predict` and `quantize` cannot be combined: the server simulates the member at \
             full precision while the owner would re-simulate from the quantized value it \
             receives, so its predictions would never match; remove `quantize` (or \
             `predict`)",
        ));
    }
    if options.initial_only.is_present() {
        errors.push(error_at(
            span,
            "`predict` and `initial_only` cannot be combined: a predicted member must \
             travel in snapshots, where the owner checks its prediction against the \
             server's value, and an `initial_only` member is sent once, in the spawn; \
             remove one of them",
        ));
    }
    if condition == Condition::SkipOwner {
        errors.push(error_at(
            span,
            "`predict` and `skip_owner` cannot be combined: the owner must receive the \
             server's value to check its prediction, and `skip_owner` sends it to everyone \
             but the owner; remove `skip_owner` (or `predict`)",
        ));
    }
}
