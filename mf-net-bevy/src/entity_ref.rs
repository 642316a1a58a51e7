//! [`NetEntity`]: a reference to an entity, in a replicated component or an RPC argument.

use bevy_ecs::entity::Entity;
use mf_net::codec::NetCodec;
use mf_net::refs::{decode_node, encode_node};
use mf_net::schema::hash_name;
use mf_net::wire::{DecodeError, NetReader, NetWriter};

use crate::node::{entity_node, entity_of};

/// A reference to a networked entity, for a `#[replicated]` member or an RPC argument (Bevy's
/// `Entity` cannot take mf-net's codec): it travels as the net id of the entity's own node
/// ([`entity_node`]) and arrives as the receiver's own entity. `None` names no entity: the
/// default, what an entity that is not networked travels as, and what a receiver that does not
/// have the entity gets in an argument. A member naming an entity a client does not have yet
/// keeps its value until the entity is there (the rules of `NetRef`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NetEntity(pub Option<Entity>);

impl From<Entity> for NetEntity {
    fn from(entity: Entity) -> Self {
        Self(Some(entity))
    }
}

impl NetCodec for NetEntity {
    const NAME: &'static str = "mf_net_bevy::NetEntity";
    const SCHEMA_HASH: u64 = hash_name("mf_net_bevy::NetEntity");
    const MIN_SIZE: usize = 1;
    const NODE_REFS: bool = true;

    fn encode(&self, w: &mut NetWriter) {
        let net_id = self.0.and_then(entity_node).map_or(0, encode_node);
        w.write_var_u32(net_id);
    }

    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        let net_id = r.read_var_u32()?;
        Ok(Self(decode_node(net_id)?.and_then(entity_of)))
    }

    fn same_encoding(&self, other: &Self) -> Option<bool> {
        Some(self == other)
    }
}
