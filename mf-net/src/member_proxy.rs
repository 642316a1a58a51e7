//! One error per mistake: how generated code reaches a member's codec, comparison, copy and
//! interpolation.
//!
//! `#[derive(Replicated)]` uses a member's type in many places (schema hash, capture, writes,
//! reads, interpolation). Had each use named `<Ty as MemberCodec>`, a type without `NetCodec`
//! would be reported once per use. Instead the derive asserts the member traits once per field
//! (a bound of a function of its own expansion, spanned at the field's type, so that both the
//! error and its note point at the field: with the messages of [`MemberCodec`], [`MemberEq`],
//! [`MemberClone`], [`MemberInterpolate`], [`Quantize`] and [`QuantizeRotation`]), and every
//! other use goes through [`Member<T>`]: its inherent items exist when `T` has the trait, and
//! otherwise the same names resolve to [`MemberFallback`]'s, which type-check for any `T` and
//! are never run (the assertion has already failed the build).
//!
//! A flattened base is reached the same way: [`Base<T>`] has the items of every side of
//! [`Replicated`] (sub-traits included) when `T` is `Replicated`, and [`BaseFallback`]'s
//! otherwise. What reports a base that is not `Replicated` is the derive's use of its state
//! types, `<T as Replicated>::State` and `<T as Replicated>::Interp`: one trait, so one error
//! with `Replicated`'s message, whichever sides the base lacks.

use std::marker::PhantomData;

use crate::codec::quantize::{Buckets, Quantization, Quantize, QuantizeRotation};
use crate::codec::state_bits::{MemberBits, StateLayout};
use crate::codec::state_coder::StateCoder;
use crate::interpolation::member::MemberInterpolate;
use crate::interpolation::InterpolationBuffer;
use crate::replicated::member::{MemberClone, MemberCodec, MemberEq};
use crate::replicated::{Audience, Replicated};
use crate::wire::{DecodeError, NetReader, NetWriter};

/// A member's type as generated code uses it: its items exist when `T` has the member trait;
/// otherwise the same names resolve to [`MemberFallback`]'s.
pub struct Member<T>(PhantomData<T>);

// `MEMBER_NAME` and `MEMBER_SCHEMA_HASH`, not `NAME` and `SCHEMA_HASH`: for a `T` without the
// trait, rustc looks the name up in every trait in scope, and would find `NetCodec`'s and
// `Replicated`'s through the user's `use mf_net::prelude::*`; a glob import used so makes
// its names print as full paths (`mf_net::codec::NetCodec`) in that error.
impl<T: MemberCodec> Member<T> {
    /// [`MemberCodec::NAME`].
    pub const MEMBER_NAME: &'static str = T::NAME;
    /// [`MemberCodec::SCHEMA_HASH`].
    pub const MEMBER_SCHEMA_HASH: u64 = T::SCHEMA_HASH;

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

    /// [`MemberCodec::bit_value_member`].
    #[inline]
    pub fn bit_value_member(value: &T) -> Option<Buckets> {
        value.bit_value_member()
    }

    /// Whether the value just decoded names a node this end does not have yet, so the member
    /// keeps its previous value (see [`NetRef`](crate::scene::NetRef)); always false for a type without node
    /// references.
    #[inline]
    pub fn held_member() -> bool {
        T::NODE_REFS && crate::refs::held()
    }

    /// [`MemberCodec::NODE_REFS`].
    pub const MEMBER_NODE_REFS: bool = T::NODE_REFS;
    /// [`MemberCodec::BITS`].
    pub const MEMBER_BITS: MemberBits = T::BITS;
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
    /// Stands in for [`Member::MEMBER_NAME`].
    const MEMBER_NAME: &'static str = "";
    /// Stands in for [`Member::MEMBER_SCHEMA_HASH`].
    const MEMBER_SCHEMA_HASH: u64 = 0;
    /// Stands in for [`Member::EXTRAPOLATE`].
    const EXTRAPOLATE: bool = false;
    /// Stands in for [`Member::MEMBER_NODE_REFS`].
    const MEMBER_NODE_REFS: bool = false;
    /// Stands in for [`Member::MEMBER_BITS`].
    const MEMBER_BITS: MemberBits = MemberBits::Bool;

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

    /// Stands in for [`Member::bit_value_member`].
    fn bit_value_member(_value: &T) -> Option<Buckets> {
        None
    }

    /// Stands in for [`Member::held_member`].
    fn held_member() -> bool {
        false
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

impl<T: Quantize> Quantized<T> {
    /// [`Quantize::COMPONENTS`].
    pub const COMPONENTS: u8 = T::COMPONENTS;
}

/// The items of [`Quantized<T>`] and [`Rotation<T>`] for a `T` that lacks the trait; like
/// [`MemberFallback`], never run.
pub trait QuantizedFallback<T> {
    /// Stands in for `COMPONENTS`.
    const COMPONENTS: u8 = 1;

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

/// A flattened base's type as generated code uses it: the items of [`Replicated`] and of its
/// sides when `T` is `Replicated`; otherwise the same names resolve to [`BaseFallback`]'s.
pub struct Base<T>(PhantomData<T>);

impl<T: Replicated> Base<T> {
    /// [`Replicated::SCHEMA_HASH`].
    pub const SCHEMA_HASH: u64 = T::SCHEMA_HASH;
    /// [`Replicated::STATE_COUNT`].
    pub const STATE_COUNT: usize = T::STATE_COUNT;
    /// [`Replicated::OWNER_CONDITIONS`].
    pub const OWNER_CONDITIONS: bool = T::OWNER_CONDITIONS;
    /// [`Replicated::ON_CHANGE`].
    pub const ON_CHANGE: bool = T::ON_CHANGE;
    /// [`Replicated::NODE_REFS`].
    pub const NODE_REFS: bool = T::NODE_REFS;
    /// [`Replicated::INTERPOLATED`].
    pub const INTERPOLATED: bool = T::INTERPOLATED;
    /// [`Replicated::PREDICTS`].
    pub const PREDICTS: bool = T::PREDICTS;
    /// [`Replicated::LAYOUT`].
    pub const LAYOUT: &'static StateLayout = T::LAYOUT;

    /// [`Capture::new_state`](crate::replicated::Capture::new_state).
    #[inline]
    pub fn new_state(value: &T, tick: u32) -> T::State {
        value.new_state(tick)
    }

    /// [`Capture::capture`](crate::replicated::Capture::capture).
    #[inline]
    pub fn capture(value: &T, state: &mut T::State, tick: u32) -> bool {
        value.capture(state, tick)
    }

    /// [`Capture::age`](crate::replicated::Capture::age).
    #[inline]
    pub fn age(state: &mut T::State, floor: u32) {
        T::age(state, floor);
    }

    /// [`Capture::last_changed`](crate::replicated::Capture::last_changed).
    #[inline]
    pub fn last_changed(state: &T::State) -> u32 {
        T::last_changed(state)
    }

    /// [`Capture::last_changed_for`](crate::replicated::Capture::last_changed_for).
    #[inline]
    pub fn last_changed_for(state: &T::State, audience: Audience) -> u32 {
        T::last_changed_for(state, audience)
    }

    /// [`Capture::changed_before`](crate::replicated::Capture::changed_before).
    #[inline]
    pub fn changed_before(state: &T::State, limit: u32, audience: Audience) -> Option<u32> {
        T::changed_before(state, limit, audience)
    }

    /// [`Capture::write_since_for`](crate::replicated::Capture::write_since_for).
    #[inline]
    pub fn write_since_for(
        state: &T::State,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) {
        T::write_since_for(state, since, audience, w);
    }

    /// [`Capture::write_bits_since_for`](crate::replicated::Capture::write_bits_since_for).
    #[inline]
    pub fn write_bits_since_for(
        state: &T::State,
        since: Option<u32>,
        audience: Audience,
        coder: &mut StateCoder<'_>,
    ) {
        T::write_bits_since_for(state, since, audience, coder);
    }

    /// [`Capture::write_full_for`](crate::replicated::Capture::write_full_for).
    #[inline]
    pub fn write_full_for(state: &T::State, audience: Audience, w: &mut NetWriter) {
        T::write_full_for(state, audience, w);
    }

    /// [`Apply::read`](crate::replicated::Apply::read).
    #[inline]
    pub fn read(value: &mut T, r: &mut NetReader<'_>) -> Result<(), DecodeError> {
        value.read(r)
    }

    /// [`Apply::read_tracked`](crate::replicated::Apply::read_tracked).
    #[inline]
    pub fn read_tracked(
        value: &mut T,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        value.read_tracked(r, changed)
    }

    /// [`Apply::run_on_change`](crate::replicated::Apply::run_on_change).
    #[inline]
    pub fn run_on_change(value: &mut T, changed: &[u64]) {
        value.run_on_change(changed);
    }

    /// [`Interpolated::new_interp`](crate::replicated::Interpolated::new_interp).
    #[inline]
    pub fn new_interp(value: &T, tick: u32) -> T::Interp {
        value.new_interp(tick)
    }

    /// [`Interpolated::read_buffered`](crate::replicated::Interpolated::read_buffered).
    #[inline]
    pub fn read_buffered(
        value: &mut T,
        interp: &mut T::Interp,
        r: &mut NetReader<'_>,
        known_until: u32,
        tick: u32,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        value.read_buffered(interp, r, known_until, tick, changed)
    }

    /// [`Interpolated::blend`](crate::replicated::Interpolated::blend).
    #[inline]
    pub fn blend(
        value: &mut T,
        interp: &T::Interp,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    ) {
        value.blend(interp, render_tick, known_until, max_extrapolation_ticks);
    }

    /// [`Interpolated::snap_interp`](crate::replicated::Interpolated::snap_interp).
    #[inline]
    pub fn snap_interp(value: &mut T, interp: &mut T::Interp) {
        value.snap_interp(interp);
    }

    /// [`Predicted::restore_predicted`](crate::replicated::Predicted::restore_predicted).
    #[inline]
    pub fn restore_predicted(value: &mut T, state: &T::State) {
        value.restore_predicted(state);
    }

    /// [`Predicted::predicted_difference`](crate::replicated::Predicted::predicted_difference).
    #[inline]
    pub fn predicted_difference(a: &T::State, b: &T::State) -> Option<&'static str> {
        T::predicted_difference(a, b)
    }

    /// [`Predicted::smooth_predicted`](crate::replicated::Predicted::smooth_predicted).
    #[inline]
    pub fn smooth_predicted(value: &mut T, from: &T::State, to: &T::State, weight: f32) {
        value.smooth_predicted(from, to, weight);
    }
}

/// The items of [`Base<T>`] for a `T` that is not [`Replicated`]: generic over the state
/// types, which then do not exist. Like [`MemberFallback`], they only let the rest of the
/// expansion type-check after the base was reported; none of them ever runs.
pub trait BaseFallback<T> {
    /// Stands in for [`Base::SCHEMA_HASH`].
    const SCHEMA_HASH: u64 = 0;
    /// Stands in for [`Base::STATE_COUNT`].
    const STATE_COUNT: usize = 0;
    /// Stands in for [`Base::OWNER_CONDITIONS`].
    const OWNER_CONDITIONS: bool = false;
    /// Stands in for [`Base::ON_CHANGE`].
    const ON_CHANGE: bool = false;
    /// Stands in for [`Base::NODE_REFS`].
    const NODE_REFS: bool = false;
    /// Stands in for [`Base::INTERPOLATED`].
    const INTERPOLATED: bool = false;
    /// Stands in for [`Base::PREDICTS`].
    const PREDICTS: bool = false;
    /// Stands in for [`Base::LAYOUT`].
    const LAYOUT: &'static StateLayout = &StateLayout::EMPTY;

    /// Stands in for [`Base::new_state`].
    fn new_state<S>(_value: &T, _tick: u32) -> S {
        unreachable!("a flattened base that is not `Replicated` does not compile")
    }

    /// Stands in for [`Base::capture`].
    fn capture<S>(_value: &T, _state: &mut S, _tick: u32) -> bool {
        false
    }

    /// Stands in for [`Base::age`].
    fn age<S>(_state: &mut S, _floor: u32) {}

    /// Stands in for [`Base::last_changed`].
    fn last_changed<S>(_state: &S) -> u32 {
        0
    }

    /// Stands in for [`Base::last_changed_for`].
    fn last_changed_for<S>(_state: &S, _audience: Audience) -> u32 {
        0
    }

    /// Stands in for [`Base::changed_before`].
    fn changed_before<S>(_state: &S, _limit: u32, _audience: Audience) -> Option<u32> {
        None
    }

    /// Stands in for [`Base::write_since_for`].
    fn write_since_for<S>(
        _state: &S,
        _since: Option<u32>,
        _audience: Audience,
        _w: &mut NetWriter,
    ) {
    }

    /// Stands in for [`Base::write_bits_since_for`].
    fn write_bits_since_for<S>(
        _state: &S,
        _since: Option<u32>,
        _audience: Audience,
        _coder: &mut StateCoder<'_>,
    ) {
    }

    /// Stands in for [`Base::write_full_for`].
    fn write_full_for<S>(_state: &S, _audience: Audience, _w: &mut NetWriter) {}

    /// Stands in for [`Base::read`].
    fn read(_value: &mut T, _r: &mut NetReader<'_>) -> Result<(), DecodeError> {
        Err(DecodeError::InvalidValue)
    }

    /// Stands in for [`Base::read_tracked`].
    fn read_tracked(
        _value: &mut T,
        _r: &mut NetReader<'_>,
        _changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        Err(DecodeError::InvalidValue)
    }

    /// Stands in for [`Base::run_on_change`].
    fn run_on_change(_value: &mut T, _changed: &[u64]) {}

    /// Stands in for [`Base::new_interp`].
    fn new_interp<I>(_value: &T, _tick: u32) -> I {
        unreachable!("a flattened base that is not `Replicated` does not compile")
    }

    /// Stands in for [`Base::read_buffered`].
    fn read_buffered<I>(
        _value: &mut T,
        _interp: &mut I,
        _r: &mut NetReader<'_>,
        _known_until: u32,
        _tick: u32,
        _changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        Err(DecodeError::InvalidValue)
    }

    /// Stands in for [`Base::blend`].
    fn blend<I>(
        _value: &mut T,
        _interp: &I,
        _render_tick: f64,
        _known_until: u32,
        _max_extrapolation_ticks: f64,
    ) {
    }

    /// Stands in for [`Base::snap_interp`].
    fn snap_interp<I>(_value: &mut T, _interp: &mut I) {}

    /// Stands in for [`Base::restore_predicted`].
    fn restore_predicted<S>(_value: &mut T, _state: &S) {}

    /// Stands in for [`Base::predicted_difference`].
    fn predicted_difference<S>(_a: &S, _b: &S) -> Option<&'static str> {
        None
    }

    /// Stands in for [`Base::smooth_predicted`].
    fn smooth_predicted<S>(_value: &mut T, _from: &S, _to: &S, _weight: f32) {}
}

impl<T> BaseFallback<T> for Base<T> {}
