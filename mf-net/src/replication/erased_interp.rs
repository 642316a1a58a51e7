//! Type-erased client-side interpolation state, next to [`ErasedState`](super::ErasedState).
//!
//! A client that interpolates creates one per node whose type has `#[replicated(interpolate)]`
//! members, when the node spawns ([`RegisteredType::new_interp`]): the boxed
//! [`Replicated::Interp`] of the node's type. Snapshot entries for the node are then read
//! through it ([`ErasedInterp::read_buffered`]) and every frame blends the buffers into the
//! node's value ([`ErasedInterp::blend`]). Boxing happens once, at spawn; reading and blending
//! allocate nothing.
//!
//! [`RegisteredType::new_interp`]: super::RegisteredType::new_interp

use std::any::Any;
use std::marker::PhantomData;

use super::Replicated;
use crate::wire::{DecodeError, NetReader};

/// A node's typed interpolation state behind a trait object: [`Replicated`]'s interpolation
/// functions without the type. Every method takes the node's value, which must be of the
/// state's type (any other value is left alone; reading it is [`DecodeError::Invalid`]).
pub trait ErasedInterp {
    /// [`Replicated::read_buffered`].
    fn read_buffered(
        &mut self,
        value: &mut dyn Any,
        r: &mut NetReader<'_>,
        known_until: u32,
        tick: u32,
        changed: &mut [u64],
    ) -> Result<(), DecodeError>;
    /// [`Replicated::blend`].
    fn blend(
        &self,
        value: &mut dyn Any,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    );
    /// [`Replicated::snap_interp`].
    fn snap(&mut self, value: &mut dyn Any);
}

/// The interpolation state of a `T`, as an [`ErasedInterp`].
struct InterpOf<T: Replicated> {
    interp: T::Interp,
    _type: PhantomData<fn() -> T>,
}

impl<T: Replicated> ErasedInterp for InterpOf<T> {
    #[inline]
    fn read_buffered(
        &mut self,
        value: &mut dyn Any,
        r: &mut NetReader<'_>,
        known_until: u32,
        tick: u32,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        match value.downcast_mut::<T>() {
            Some(value) => value.read_buffered(&mut self.interp, r, known_until, tick, changed),
            None => Err(DecodeError::Invalid("node value has another type")),
        }
    }

    #[inline]
    fn blend(
        &self,
        value: &mut dyn Any,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    ) {
        if let Some(value) = value.downcast_mut::<T>() {
            value.blend(
                &self.interp,
                render_tick,
                known_until,
                max_extrapolation_ticks,
            );
        }
    }

    #[inline]
    fn snap(&mut self, value: &mut dyn Any) {
        if let Some(value) = value.downcast_mut::<T>() {
            value.snap_interp(&mut self.interp);
        }
    }
}

/// `T::new_interp(value, tick)`, boxed; `None` if `T` has no interpolated member
/// ([`Replicated::INTERPOLATED`]) or `value` is not a `T`.
pub(crate) fn new_interp<T: Replicated>(
    value: &dyn Any,
    tick: u32,
) -> Option<Box<dyn ErasedInterp>> {
    if !T::INTERPOLATED {
        return None;
    }
    let value = value.downcast_ref::<T>()?;
    Some(Box::new(InterpOf::<T> {
        interp: value.new_interp(tick),
        _type: PhantomData,
    }))
}
