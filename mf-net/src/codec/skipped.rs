//! Support for `#[net(skip)]` fields in derived codecs.

/// The value a `#[net(skip)]` field gets when a derived codec decodes: `Default::default()`.
///
/// Generated code calls it instead of `Default::default()` so that a skipped field whose type
/// has no `Default` is reported with a message about `#[net(skip)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a `#[net(skip)]` field, so it is decoded as `Default::default()`, \
               but it does not implement `Default`",
    label = "skipped field without `Default`",
    note = "derive or implement `Default` for `{Self}`, or remove `#[net(skip)]` to send the field"
)]
pub trait SkippedField: Sized {
    /// `Default::default()`.
    fn skipped() -> Self;
}

impl<T: Default> SkippedField for T {
    #[inline]
    fn skipped() -> Self {
        T::default()
    }
}
