//! What a type's registry entry gives each half of the runtime: the `fn`s that make its
//! columns, and that write a stored value's state. `#[derive(Replicated)]` puts [`runtime_part`] of the type into its entry
//! ([`RegisteredType::with_runtime`](crate::replication::RegisteredType::with_runtime)), so the
//! runtime, which meets types only through their entries, makes typed columns of them.

use std::any::{Any, TypeId};

use super::client::replica_column::NewReplicas;
use super::client::replicas::replicas_part;
use super::server::shadow_column::NewShadows;
use super::server::shadows::shadows_part;
use super::shared::write_value::{write_value_part, WriteValue};
use crate::replicated::Replicated;

/// `T`'s runtime part of kind `kind` (the `fn` type a half asks for), if there is one.
pub fn runtime_part<T: Replicated>(kind: TypeId) -> Option<&'static dyn Any> {
    if kind == TypeId::of::<NewShadows>() {
        Some(shadows_part::<T>())
    } else if kind == TypeId::of::<NewReplicas>() {
        Some(replicas_part::<T>())
    } else if kind == TypeId::of::<WriteValue>() {
        Some(write_value_part::<T>())
    } else {
        None
    }
}
