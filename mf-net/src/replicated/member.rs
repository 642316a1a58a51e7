//! What `#[derive(Replicated)]` requires of a member's type, as traits with messages that name
//! the attribute.
//!
//! Generated code reaches a member's codec, comparison and copy only through these traits, each
//! use spanned at the field's type, so a member type that lacks one of them is reported at the
//! field with a message about `#[replicated]` (rather than, say, `NetCodec`'s note about
//! `#[net(skip)]`). Each trait has a blanket implementation over the standard trait it stands
//! for; nothing implements them by hand.

use crate::codec::quantize::Buckets;
use crate::codec::state_bits::MemberBits;
use crate::codec::NetCodec;
use crate::wire::{DecodeError, NetReader, NetWriter};

/// `NetCodec`, as a `#[replicated]` member needs it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated]` member: it does not implement `NetCodec`",
    label = "not a `NetCodec` type",
    note = "members travel in their `NetCodec` encoding: derive it with `#[derive(NetCodec)]`, \
            implement `NetCodec` by hand, or use a type that has it",
    note = "a field without `#[replicated]` stays local and needs no `NetCodec`",
    note = "`glam::Vec2`, `Vec3`, `Vec4` and `Quat` have it with mf-net's `glam` feature: add \
            `features = [\"glam\"]` to the `mf-net` dependency"
)]
pub trait MemberCodec: Sized {
    /// [`NetCodec::NAME`].
    const NAME: &'static str;
    /// [`NetCodec::SCHEMA_HASH`].
    const SCHEMA_HASH: u64;
    /// [`NetCodec::NODE_REFS`].
    const NODE_REFS: bool;
    /// Its form in a state's bit-packed form ([`NetCodec::BITS`]).
    const BITS: MemberBits;
    /// [`NetCodec::encode`].
    fn encode_member(&self, w: &mut NetWriter);
    /// [`NetCodec::decode`].
    fn decode_member(r: &mut NetReader<'_>) -> Result<Self, DecodeError>;
    /// [`NetCodec::same_encoding`].
    fn same_encoding_member(&self, other: &Self) -> Option<bool>;
    /// [`NetCodec::bit_value`].
    fn bit_value_member(&self) -> Option<Buckets>;
}

impl<T: NetCodec> MemberCodec for T {
    const NAME: &'static str = T::NAME;
    const SCHEMA_HASH: u64 = T::SCHEMA_HASH;
    const NODE_REFS: bool = T::NODE_REFS;
    const BITS: MemberBits = MemberBits::codec::<T>();

    #[inline]
    fn encode_member(&self, w: &mut NetWriter) {
        self.encode(w);
    }

    #[inline]
    fn decode_member(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        T::decode(r)
    }

    #[inline]
    fn same_encoding_member(&self, other: &Self) -> Option<bool> {
        self.same_encoding(other)
    }

    #[inline]
    fn bit_value_member(&self) -> Option<Buckets> {
        self.bit_value()
    }
}

/// `PartialEq`, as a `#[replicated]` member needs it: capture compares the field with its
/// shadow copy, by its encoding where the type tells
/// ([`NetCodec::same_encoding`]: floats by bits), else with `PartialEq`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated]` member: it does not implement `PartialEq`",
    label = "not `PartialEq`",
    note = "change detection compares each member with its shadow copy: derive or implement \
            `PartialEq` for `{Self}`, or remove `#[replicated]` to keep the field local"
)]
pub trait MemberEq {
    /// `self == shadow`.
    fn unchanged(&self, shadow: &Self) -> bool;
}

impl<T: PartialEq> MemberEq for T {
    #[inline]
    fn unchanged(&self, shadow: &Self) -> bool {
        self == shadow
    }
}

/// `Clone`, as a `#[replicated]` member needs it: capture copies a changed field into its
/// shadow.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated]` member: it does not implement `Clone`",
    label = "not `Clone`",
    note = "capture keeps a shadow copy of each member: derive or implement `Clone` for \
            `{Self}`, or remove `#[replicated]` to keep the field local"
)]
pub trait MemberClone: Sized {
    /// A fresh shadow copy (`clone`).
    fn shadow(&self) -> Self;
    /// Copies `self` into an existing shadow (`clone_from`, which reuses the shadow's heap
    /// buffers where the type supports it).
    fn copy_into(&self, shadow: &mut Self);
}

impl<T: Clone> MemberClone for T {
    #[inline]
    fn shadow(&self) -> Self {
        self.clone()
    }

    #[inline]
    fn copy_into(&self, shadow: &mut Self) {
        shadow.clone_from(self);
    }
}
