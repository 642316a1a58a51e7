//! Type-erased per-node replication state, for the runtime that holds nodes of many types.
//!
//! A scene stores each node's value as `Box<dyn Any>` next to its [`RegisteredType`]. The
//! runtime reaches the value's [`Replicated`] implementation only through the function pointers
//! of that entry ([`RegisteredType::new_state`] and [`RegisteredType::read`]) and through the
//! [`ErasedState`] they create, which wraps the typed shadow state. Boxing happens once, when a
//! node becomes networked; capture, writes and reads allocate nothing.
//!
//! [`RegisteredType`]: super::RegisteredType
//! [`RegisteredType::new_state`]: super::RegisteredType::new_state
//! [`RegisteredType::read`]: super::RegisteredType::read

use std::any::{Any, TypeId};
use std::marker::PhantomData;

use super::{Audience, Replicated};
use crate::wire::{DecodeError, NetReader, NetWriter};

/// A node's typed shadow state behind a trait object: [`Replicated`]'s state functions without
/// the type.
pub trait ErasedState {
    /// [`Replicated::capture`] of `value` (which must be the state's type; any other value
    /// captures nothing and returns `false`).
    fn capture(&mut self, value: &dyn Any, tick: u32) -> bool;
    /// [`Replicated::last_changed`].
    fn last_changed(&self) -> u32;
    /// [`Replicated::write_since`].
    fn write_since(&self, since: u32, w: &mut NetWriter);
    /// [`Replicated::write_full`].
    fn write_full(&self, w: &mut NetWriter);
    /// [`Replicated::last_changed_for`].
    fn last_changed_for(&self, audience: Audience) -> u32;
    /// [`Replicated::write_since_for`].
    fn write_since_for(&self, since: Option<u32>, audience: Audience, w: &mut NetWriter);
    /// [`Replicated::write_full_for`].
    fn write_full_for(&self, audience: Audience, w: &mut NetWriter);
    /// [`Replicated::OWNER_CONDITIONS`]: whether what a client receives depends on whether it
    /// owns the node.
    fn owner_conditions(&self) -> bool;
    /// The [`TypeId`] of the value type whose state this is (what [`capture`](Self::capture)
    /// accepts).
    fn value_type(&self) -> TypeId;
}

/// The shadow state of a `T`, as an [`ErasedState`].
struct StateOf<T: Replicated> {
    state: T::State,
    _type: PhantomData<fn() -> T>,
}

impl<T: Replicated> ErasedState for StateOf<T> {
    #[inline]
    fn capture(&mut self, value: &dyn Any, tick: u32) -> bool {
        match value.downcast_ref::<T>() {
            Some(value) => value.capture(&mut self.state, tick),
            None => false,
        }
    }

    #[inline]
    fn last_changed(&self) -> u32 {
        T::last_changed(&self.state)
    }

    #[inline]
    fn write_since(&self, since: u32, w: &mut NetWriter) {
        T::write_since(&self.state, since, w);
    }

    #[inline]
    fn write_full(&self, w: &mut NetWriter) {
        T::write_full(&self.state, w);
    }

    #[inline]
    fn last_changed_for(&self, audience: Audience) -> u32 {
        T::last_changed_for(&self.state, audience)
    }

    #[inline]
    fn write_since_for(&self, since: Option<u32>, audience: Audience, w: &mut NetWriter) {
        T::write_since_for(&self.state, since, audience, w);
    }

    #[inline]
    fn write_full_for(&self, audience: Audience, w: &mut NetWriter) {
        T::write_full_for(&self.state, audience, w);
    }

    fn owner_conditions(&self) -> bool {
        T::OWNER_CONDITIONS
    }

    fn value_type(&self) -> TypeId {
        TypeId::of::<T>()
    }
}

/// `T::new_state(value, tick)`, boxed; `None` if `value` is not a `T`.
pub(crate) fn new_state<T: Replicated>(value: &dyn Any, tick: u32) -> Option<Box<dyn ErasedState>> {
    let value = value.downcast_ref::<T>()?;
    Some(Box::new(StateOf::<T> {
        state: value.new_state(tick),
        _type: PhantomData,
    }))
}

/// `T::read(value, r)`; [`DecodeError::Invalid`] if `value` is not a `T`.
pub(crate) fn read<T: Replicated>(
    value: &mut dyn Any,
    r: &mut NetReader<'_>,
) -> Result<(), DecodeError> {
    match value.downcast_mut::<T>() {
        Some(value) => value.read(r),
        None => Err(DecodeError::Invalid("node value has another type")),
    }
}

/// `T::read_tracked(value, r, changed)`; [`DecodeError::Invalid`] if `value` is not a `T`.
pub(crate) fn read_tracked<T: Replicated>(
    value: &mut dyn Any,
    r: &mut NetReader<'_>,
    changed: &mut [u64],
) -> Result<(), DecodeError> {
    match value.downcast_mut::<T>() {
        Some(value) => value.read_tracked(r, changed),
        None => Err(DecodeError::Invalid("node value has another type")),
    }
}

/// `T::run_on_change(value, changed)`; nothing if `value` is not a `T`.
pub(crate) fn run_on_change<T: Replicated>(value: &mut dyn Any, changed: &[u64]) {
    if let Some(value) = value.downcast_mut::<T>() {
        value.run_on_change(changed);
    }
}
