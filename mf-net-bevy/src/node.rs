//! How a node of the core names a replicated component of an entity: the entity's index times
//! [`MAX_REPLICATED_COMPONENTS`], plus the component type's slot (its registration order); the
//! entity's generation.

use bevy_ecs::component::Component;
use bevy_ecs::entity::{Entity, EntityGeneration, EntityIndex};
use mf_net::store::NodeId;

/// How many replicated component types an app registers at most: a node's index is its
/// entity's index times this, plus the type's slot (so the core's per-node tables stay about
/// this many times the entity count).
pub const MAX_REPLICATED_COMPONENTS: u32 = 16;

/// The slot of a networked entity's first networked component: its group's root, the node its
/// others travel beside and its children's groups hang under (a component inserted since, in a
/// lower slot, is not it).
#[derive(Component, Debug, Clone, Copy)]
pub(crate) struct FirstSlot(pub(crate) u32);

/// The node of `entity`'s first networked component, if it is networked.
pub(crate) fn first_networked(entity: &bevy_ecs::world::EntityRef<'_>) -> Option<NodeId> {
    node_at(entity.id(), entity.get::<FirstSlot>()?.0)
}

/// The node of `entity`'s component in slot `slot`.
pub(crate) fn node_at(entity: Entity, slot: u32) -> Option<NodeId> {
    let index = entity
        .index_u32()
        .checked_mul(MAX_REPLICATED_COMPONENTS)?
        .checked_add(slot)?;
    Some(NodeId::new(index, entity.generation().to_bits()))
}

/// The slot of the component `node` is.
pub(crate) fn slot_of(node: NodeId) -> u32 {
    node.index() % MAX_REPLICATED_COMPONENTS
}

/// The entity whose component `node` is.
pub fn entity_of(node: NodeId) -> Option<Entity> {
    let index = EntityIndex::from_raw_u32(node.index() / MAX_REPLICATED_COMPONENTS)?;
    let generation = EntityGeneration::from_bits(node.generation());
    Some(Entity::from_index_and_generation(index, generation))
}
