//! The encoding of a [`NetRef`]: the node's net id as a varint, 0 for none.

use std::any::TypeId;

use super::scope;
use crate::codec::NetCodec;
use crate::replicated::Replicated;
use crate::scene::NetRef;
use crate::schema;
use crate::wire::{DecodeError, NetReader, NetWriter};

/// A reference to a node holding a `T`: its net id on the sender, mapped to the receiver's
/// node on arrival (see [`NetRef`]). The schema hash covers `T`'s name, so a
/// reference to a `Ship` and one to a `Rock` do not agree.
impl<T: Replicated> NetCodec for NetRef<T> {
    const NAME: &'static str = "NetRef";
    const SCHEMA_HASH: u64 =
        schema::hash_u64(schema::hash_name("NetRef"), schema::hash_name(T::NAME));
    const MIN_SIZE: usize = 1;
    const NODE_REFS: bool = true;

    fn encode(&self, w: &mut NetWriter) {
        let net_id = if self.is_unresolved() {
            0
        } else {
            scope::encode(self.node())
        };
        w.write_var_u32(net_id);
    }

    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        let net_id = r.read_var_u32()?;
        Ok(
            scope::decode(net_id, Some(TypeId::of::<T>()))?
                .map_or_else(Self::unresolved, Self::new),
        )
    }

    #[inline]
    fn same_encoding(&self, other: &Self) -> Option<bool> {
        Some(self == other)
    }
}
