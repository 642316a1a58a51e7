//! A stored value's full state, written from the value itself (what every client would read
//! in a spawn): the server checks with it that a new group's states fit the wire.

use std::any::TypeId;

use super::instance::{as_scene, value_info};
use crate::replicated::Replicated;
use crate::scene::NodeId;
use crate::store::{lend, Store};
use crate::wire::NetWriter;

/// How to write a `T`'s full state from the store (a type's [`WriteValue`] runtime part).
pub(crate) type WriteValue = fn(&mut dyn Store, NodeId, &mut NetWriter) -> bool;

/// Writes the full state of `node`'s value to `w`. Returns whether the node holds a value.
pub(crate) fn write_value(store: &mut dyn Store, node: NodeId, w: &mut NetWriter) -> bool {
    if let Some(scene) = as_scene(store) {
        return scene.write_state(node, w);
    }
    let Some(write) = value_info(store, node)
        .and_then(|ty| ty.runtime_part(TypeId::of::<WriteValue>()))
        .and_then(|part| part.downcast_ref::<WriteValue>())
    else {
        return false;
    };
    write(store, node, w)
}

/// [`WriteValue`] of `T`.
fn write_typed<T: Replicated>(store: &mut dyn Store, node: NodeId, w: &mut NetWriter) -> bool {
    let mut written = false;
    lend::<T>(store, &mut |rows| {
        if let Some(value) = rows.get(node) {
            T::write_full(&value.new_state(0), w);
            written = true;
        }
    });
    written
}

/// What a type's registry entry gives [`write_value`].
pub(crate) fn write_value_part<T: Replicated>() -> &'static dyn std::any::Any {
    const { &(write_typed::<T> as WriteValue) }
}
