//! One error per mistake: how generated code reaches a member's codec, comparison, copy and
//! interpolation.
//!
//! `#[derive(Replicated)]` uses a member's type in many places (schema hash, capture, writes,
//! reads, interpolation). Had each use named `<Ty as MemberCodec>`, a type without `NetCodec`
//! would be reported once per use. Instead the derive asserts the member traits once per field
//! ([`assert_codec`], [`assert_partial_eq`], [`assert_clone`], [`assert_interpolated`], spanned at the field's type, with the messages
//! of [`MemberCodec`], [`MemberEq`], [`MemberClone`] and [`MemberInterpolate`]), and every
//! other use goes through [`Member<T>`]: its inherent items exist when `T` has the trait, and
//! otherwise the same names resolve to [`MemberFallback`]'s, which type-check for any `T` and
//! are never run (the assertion has already failed the build).

use std::marker::PhantomData;

use crate::codec::quantize::{Buckets, Quantization, Quantize, QuantizeRotation};
use crate::interpolation::member::MemberInterpolate;
use crate::interpolation::InterpolationBuffer;
use crate::replicated::member::{MemberClone, MemberCodec, MemberEq};
use crate::wire::{DecodeError, NetReader, NetWriter};

/// Asserts that `T` has the codec a `#[replicated]` member needs.
pub const fn assert_codec<T: MemberCodec>() {}

/// Asserts that `T` has the comparison a `#[replicated]` member needs.
pub const fn assert_partial_eq<T: MemberEq>() {}

/// Asserts that `T` has the copy a `#[replicated]` member needs.
pub const fn assert_clone<T: MemberClone>() {}

/// Asserts that `T` can be a `#[replicated(interpolate)]` member.
pub const fn assert_interpolated<T: MemberInterpolate>() {}

/// Asserts that `T` can be a `#[replicated(quantize(min = .., max = .., bits = ..))]` member.
pub const fn assert_quantize<T: Quantize>() {}

/// Asserts that `T` can be a `#[replicated(quantize(smallest_three, ..))]` member.
pub const fn assert_quantize_rotation<T: QuantizeRotation>() {}

/// A member's type as generated code uses it: its items exist when `T` has the member trait;
/// otherwise the same names resolve to [`MemberFallback`]'s.
pub struct Member<T>(PhantomData<T>);

impl<T: MemberCodec> Member<T> {
    /// [`MemberCodec::NAME`].
    pub const NAME: &'static str = T::NAME;
    /// [`MemberCodec::SCHEMA_HASH`].
    pub const SCHEMA_HASH: u64 = T::SCHEMA_HASH;

    /// [`MemberCodec::encode_member`].
    #[inline]
    pub fn encode_member(value: &T, w: &mut NetWriter) {
        value.encode_member(w);
    }

    /// [`MemberCodec::decode_member`].
    #[inline]
    pub fn decode_member(r: &mut NetReader<'_>) -> Result<T, DecodeError> {
        T::decode_member(r)
    }

    /// [`MemberCodec::same_encoding_member`].
    #[inline]
    pub fn same_encoding_member(value: &T, other: &T) -> Option<bool> {
        value.same_encoding_member(other)
    }
}

impl<T: MemberEq> Member<T> {
    /// [`MemberEq::unchanged`].
    #[inline]
    pub fn unchanged(value: &T, shadow: &T) -> bool {
        value.unchanged(shadow)
    }
}

impl<T: MemberClone> Member<T> {
    /// [`MemberClone::shadow`].
    #[inline]
    pub fn shadow(value: &T) -> T {
        value.shadow()
    }

    /// [`MemberClone::copy_into`].
    #[inline]
    pub fn copy_into(value: &T, shadow: &mut T) {
        value.copy_into(shadow);
    }
}

impl<T: MemberInterpolate> Member<T> {
    /// [`MemberInterpolate::EXTRAPOLATE`].
    pub const EXTRAPOLATE: bool = T::EXTRAPOLATE;

    /// [`MemberInterpolate::new_buffer`].
    #[inline]
    pub fn new_buffer(value: &T, tick: u32) -> InterpolationBuffer<T> {
        value.new_buffer(tick)
    }

    /// [`MemberInterpolate::push_member`].
    #[inline]
    pub fn push_member(
        buffer: &mut InterpolationBuffer<T>,
        known_until: u32,
        tick: u32,
        value: T,
    ) -> bool {
        T::push_member(buffer, known_until, tick, value)
    }

    /// [`MemberInterpolate::blend_member`].
    #[inline]
    pub fn blend_member(
        value: &mut T,
        buffer: &InterpolationBuffer<T>,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    ) {
        value.blend_member(buffer, render_tick, known_until, max_extrapolation_ticks);
    }

    /// [`MemberInterpolate::snap_member`].
    #[inline]
    pub fn snap_member(value: &mut T, buffer: &mut InterpolationBuffer<T>) {
        value.snap_member(buffer);
    }

    /// [`MemberInterpolate::smooth_member`].
    #[inline]
    pub fn smooth_member(value: &mut T, from: &T, to: &T, weight: f32) {
        value.smooth_member(from, to, weight);
    }
}

/// The items of [`Member<T>`] for a `T` that lacks a member trait. They only let the rest of
/// the expansion type-check after the assertion reported the mistake: the build fails, so none
/// of them ever runs.
pub trait MemberFallback<T> {
    /// Stands in for [`Member::NAME`].
    const NAME: &'static str = "";
    /// Stands in for [`Member::SCHEMA_HASH`].
    const SCHEMA_HASH: u64 = 0;
    /// Stands in for [`Member::EXTRAPOLATE`].
    const EXTRAPOLATE: bool = false;

    /// Stands in for [`Member::encode_member`].
    fn encode_member(_value: &T, _w: &mut NetWriter) {}

    /// Stands in for [`Member::decode_member`].
    fn decode_member(_r: &mut NetReader<'_>) -> Result<T, DecodeError> {
        Err(DecodeError::InvalidValue)
    }

    /// Stands in for [`Member::same_encoding_member`].
    fn same_encoding_member(_value: &T, _other: &T) -> Option<bool> {
        None
    }

    /// Stands in for [`Member::unchanged`].
    fn unchanged(_value: &T, _shadow: &T) -> bool {
        true
    }

    /// Stands in for [`Member::shadow`].
    fn shadow(_value: &T) -> T {
        unreachable!("a member type without `Clone` does not compile")
    }

    /// Stands in for [`Member::copy_into`].
    fn copy_into(_value: &T, _shadow: &mut T) {}

    /// Stands in for [`Member::new_buffer`].
    fn new_buffer(_value: &T, _tick: u32) -> InterpolationBuffer<T> {
        InterpolationBuffer::new()
    }

    /// Stands in for [`Member::push_member`].
    fn push_member(
        _buffer: &mut InterpolationBuffer<T>,
        _known_until: u32,
        _tick: u32,
        _value: T,
    ) -> bool {
        false
    }

    /// Stands in for [`Member::blend_member`].
    fn blend_member(
        _value: &mut T,
        _buffer: &InterpolationBuffer<T>,
        _render_tick: f64,
        _known_until: u32,
        _max_extrapolation_ticks: f64,
    ) {
    }

    /// Stands in for [`Member::snap_member`].
    fn snap_member(_value: &mut T, _buffer: &mut InterpolationBuffer<T>) {}

    /// Stands in for [`Member::smooth_member`].
    fn smooth_member(_value: &mut T, _from: &T, _to: &T, _weight: f32) {}
}

impl<T> MemberFallback<T> for Member<T> {}

/// A `quantize(min = .., max = .., bits = ..)` member's type as generated code uses it: the
/// items of [`Quantize`], or [`QuantizedFallback`]'s when `T` lacks it.
pub struct Quantized<T>(PhantomData<T>);

/// A `quantize(smallest_three, ..)` member's type as generated code uses it: the items of
/// [`QuantizeRotation`], or [`QuantizedFallback`]'s when `T` lacks it.
pub struct Rotation<T>(PhantomData<T>);

macro_rules! quantized_items {
    ($proxy:ident, $trait:ident) => {
        impl<T: $trait> $proxy<T> {
            #[doc = concat!("[`", stringify!($trait), "::to_wire`].")]
            #[inline]
            pub fn to_wire(value: &T, q: &Quantization) -> Buckets {
                value.to_wire(q)
            }

            #[doc = concat!("[`", stringify!($trait), "::encode_wire`].")]
            #[inline]
            pub fn encode_wire(wire: &Buckets, q: &Quantization, w: &mut NetWriter) {
                T::encode_wire(wire, q, w);
            }

            #[doc = concat!("[`", stringify!($trait), "::decode_quantized`].")]
            #[inline]
            pub fn decode_quantized(
                q: &Quantization,
                r: &mut NetReader<'_>,
            ) -> Result<T, DecodeError> {
                T::decode_quantized(q, r)
            }
        }

        impl<T> QuantizedFallback<T> for $proxy<T> {}
    };
}

quantized_items!(Quantized, Quantize);
quantized_items!(Rotation, QuantizeRotation);

/// The items of [`Quantized<T>`] and [`Rotation<T>`] for a `T` that lacks the trait; like
/// [`MemberFallback`], never run.
pub trait QuantizedFallback<T> {
    /// Stands in for `to_wire`.
    fn to_wire(_value: &T, _q: &Quantization) -> Buckets {
        Buckets::default()
    }

    /// Stands in for `encode_wire`.
    fn encode_wire(_wire: &Buckets, _q: &Quantization, _w: &mut NetWriter) {}

    /// Stands in for `decode_quantized`.
    fn decode_quantized(_q: &Quantization, _r: &mut NetReader<'_>) -> Result<T, DecodeError> {
        Err(DecodeError::InvalidValue)
    }
}
