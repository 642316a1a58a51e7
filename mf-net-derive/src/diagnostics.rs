//! Error collection shared by every macro.
//!
//! Errors are `darling::Error`s: each carries the span of the code the user wrote, and several
//! are gathered with `darling::Error::accumulator()` so that one build reports them all. Before
//! they are emitted, darling's generic wording ("Unknown field", "Duplicate field") is rephrased
//! in terms of the macro's attribute options, keeping darling's "did you mean" suggestion.

use proc_macro2::{Span, TokenStream};

/// A spanned error with a message that says what is wrong and what to do.
pub(crate) fn error_at(span: Span, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

/// Every collected error as `compile_error!` invocations at their spans.
///
/// `attribute` is the macro's helper attribute (`net` for `#[net(..)]`), used in messages.
pub(crate) fn to_compile_errors(errors: darling::Error, attribute: &str) -> TokenStream {
    let mut combined: Option<syn::Error> = None;
    for error in errors.flatten() {
        let error = syn::Error::from(error);
        let error = syn::Error::new(error.span(), rephrase(&error.to_string(), attribute));
        match &mut combined {
            Some(combined) => combined.combine(error),
            None => combined = Some(error),
        }
    }
    combined
        .map(syn::Error::into_compile_error)
        .unwrap_or_default()
}

/// darling's messages about options, in the words of the attribute; others are unchanged.
fn rephrase(message: &str, attribute: &str) -> String {
    if let Some(rest) = message.strip_prefix("Unknown field: ") {
        let (name, tail) = rest.split_once(". ").unwrap_or((rest, ""));
        let hint = if let Some(guess) = tail.strip_prefix("Did you mean ") {
            format!("; did you mean {guess}")
        } else if let Some(options) = tail.strip_prefix("Available values: ") {
            format!("; the options here are {options}")
        } else {
            String::new()
        };
        return format!("unknown `#[{attribute}(..)]` option {name}{hint}");
    }
    if let Some(name) = message.strip_prefix("Duplicate field ") {
        return format!("{name} is given twice; write each `#[{attribute}(..)]` option once");
    }
    message.to_owned()
}

#[cfg(test)]
mod tests {
    use super::rephrase;

    #[test]
    fn rephrases_unknown_and_duplicate_options() {
        assert_eq!(
            rephrase("Unknown field: `skp`. Did you mean `skip`?", "net"),
            "unknown `#[net(..)]` option `skp`; did you mean `skip`?"
        );
        assert_eq!(
            rephrase("Unknown field: `version`. Available values: `name`", "net"),
            "unknown `#[net(..)]` option `version`; the options here are `name`"
        );
        assert_eq!(
            rephrase("Unknown field: `x`", "net"),
            "unknown `#[net(..)]` option `x`"
        );
        assert_eq!(
            rephrase("Duplicate field `skip`", "net"),
            "`skip` is given twice; write each `#[net(..)]` option once"
        );
        assert_eq!(rephrase("something else", "net"), "something else");
    }
}
