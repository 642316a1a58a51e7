//! Node references on the wire: a [`NetRef`](crate::scene::NetRef) in an RPC argument or a
//! replicated member travels as the node's net id and arrives as the receiver's own handle.
//!
//! Values are encoded and decoded without a context ([`NetCodec`](crate::codec::NetCodec)
//! takes none), so the runtime lends its map of net ids for the duration of each encode and
//! decode ([`scope`]); outside one (a plain [`to_vec`](crate::codec::to_vec)) a reference
//! encodes as the unresolved one.
//!
//! On the wire a reference is a varint: the net id, or 0 for none. What a receiver does with
//! an id it cannot map depends on where the reference is ([`Resolve`]): an RPC argument
//! arrives [unresolved](crate::scene::NetRef::is_unresolved); a member keeps its previous
//! value. A client remembers which nodes' states named which net ids, and when a node it
//! lacked arrives (spawned late, or relevant again after leaving its interest), it asks the
//! server to send the states that name it again, so that their members take their values. A reference to a node of another type is refused like any
//! malformed value ([`DecodeError::BadReference`](crate::wire::DecodeError::BadReference)).

mod codec;
mod map;
mod scope;

pub(crate) use map::NetIdMap;
pub(crate) use scope::{held, record, take_named, with_scope, Resolve};
