//! Node references on the wire: a [`NetRef`](crate::scene::NetRef) in an RPC argument or a
//! replicated member travels as the node's net id and arrives as the receiver's own handle.
//!
//! Values are encoded and decoded without a context ([`NetCodec`](crate::codec::NetCodec)
//! takes none), so the runtime lends its map of net ids for the duration of each encode and
//! decode (a scope, restored when it ends, even by a panic); outside one (a plain
//! [`to_vec`](crate::codec::to_vec)) a reference encodes as the unresolved one.
//!
//! On the wire a reference is a varint: the net id, or 0 for none. What a receiver does with an
//! id it cannot map depends on where the reference is:
//! - An RPC argument arrives [unresolved](crate::scene::NetRef::is_unresolved).
//! - A member keeps its previous value. A client remembers which nodes' states named which net
//!   ids. When a node it lacked arrives (spawned late, or relevant again after leaving its
//!   interest), it asks the server to send the states that name it again, so that their
//!   members take their values.
//!
//! A reference to a node that is not networked goes as none. The server notes such nodes; when
//! one is networked, the states that name it go out again, whole, at the next capture (see
//! [`Multiplayer::resend_states_naming`](crate::replication::Multiplayer::resend_states_naming)).
//!
//! A reference to a node of another type is refused like any malformed value
//! ([`DecodeError::BadReference`]).
//!
//! An engine's own reference type (mf-net-bevy's reference to an entity, which is no one
//! value) writes its codec with [`encode_node`] and [`decode_node`], and sets
//! [`NetCodec::NODE_REFS`](crate::codec::NetCodec::NODE_REFS), so that it is mapped as a
//! `NetRef` is.

mod codec;
mod map;
mod renames;
mod scope;

pub(crate) use map::NetIdMap;
pub(crate) use scope::{asked, held, record, take_named, with_scope, Resolve};

use crate::store::NodeId;
use crate::wire::DecodeError;

/// The net id a reference to `node` travels as in the encode running (0: none, when `node` is
/// not networked or no encode of the runtime runs).
pub fn encode_node(node: NodeId) -> u32 {
    scope::encode(node)
}

/// The node a decoded reference to `net_id` names, whatever its value's type, in the decode
/// running: `None` for unresolved (0, or an id the receiver has no node for; in a replicated
/// member that holds it back, as for a `NetRef`).
///
/// # Errors
///
/// [`DecodeError::BadReference`]: the node holds no value.
pub fn decode_node(net_id: u32) -> Result<Option<NodeId>, DecodeError> {
    scope::decode(net_id, None)
}
