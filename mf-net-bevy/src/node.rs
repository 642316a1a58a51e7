//! How a node of the core names an entity or one of its replicated components: the entity's
//! index times [`MAX_REPLICATED_COMPONENTS`], plus a slot; the entity's generation. Slot 0 is
//! the entity's own node ([`EntityNode`]), the root of its group; each registered component
//! type has the slot of its registration order after it.

use bevy_ecs::component::Component;
use bevy_ecs::entity::{Entity, EntityGeneration, EntityIndex};
use mf_net::replication::Replicated;
use mf_net::store::NodeId;

/// How many nodes an entity has at most: its own ([`entity_node`]) and one per replicated
/// component type, so an app registers at most one type fewer. A node's index is its
/// entity's index times this, plus the slot (so the core's per-node tables stay about this
/// many times the entity count).
pub const MAX_REPLICATED_COMPONENTS: u32 = 16;

/// The entity's own node, held by every networked entity: the root of its group, what its
/// replicated components travel beside and its children's groups hang under. It carries no
/// value: an entity keeps its node (and its entity on clients) whichever of its components
/// come and go.
#[derive(Component, Replicated, Debug, Default, Clone, Copy)]
#[replicated(name = "mf_net_bevy::EntityNode")]
pub(crate) struct EntityNode {}

/// The slot of an entity's own node.
pub(crate) const ENTITY_SLOT: u32 = 0;

/// The node of `entity` itself: the one to hand the entity over with (a recursive
/// `set_authority` gives its replicated components and its networked descendants reached
/// through networked entities; a networked entity under a plain one is a root of its own,
/// handed over on its own), to set its relevance with, and the one a
/// [`NetEntity`](crate::NetEntity) names; its net id is the entity's
/// [`NetworkId`](crate::NetworkId). `None` only for an entity index past what nodes can name.
///
/// ```
/// use bevy_app::App;
/// use bevy_ecs::component::Component;
/// use mf_net::prelude::*;
/// use mf_net_bevy::prelude::*;
///
/// #[derive(Component, Replicated, Default)]
/// struct Ship {
///     #[replicated]
///     hp: i32,
/// }
///
/// let mut app = App::new();
/// app.add_plugins((bevy_time::TimePlugin, MfNetPlugin::default()))
///     .replicate::<Ship>();
/// let ship = app.world_mut().spawn((Ship { hp: 3 }, Networked)).id();
/// app.update();
/// let shown = app.world().get::<NetworkId>(ship).unwrap().0;
/// app.world_mut().net(|mp| {
///     let node = entity_node(ship).unwrap();
///     assert_eq!(mp.net_id(node), Some(shown));
///     // The entity, its components and its networked children: the server's (as they are).
///     mp.set_authority(node, PeerId::SERVER, true).unwrap();
/// });
/// ```
pub fn entity_node(entity: Entity) -> Option<NodeId> {
    node_at(entity, ENTITY_SLOT)
}

/// The node of `entity`, if it is networked (it holds its [`EntityNode`]).
pub(crate) fn networked_node(entity: &bevy_ecs::world::EntityRef<'_>) -> Option<NodeId> {
    entity
        .contains::<EntityNode>()
        .then(|| entity_node(entity.id()))
        .flatten()
}

/// The node of `entity`'s component in slot `slot`.
pub(crate) fn node_at(entity: Entity, slot: u32) -> Option<NodeId> {
    let index = entity
        .index_u32()
        .checked_mul(MAX_REPLICATED_COMPONENTS)?
        .checked_add(slot)?;
    Some(NodeId::new(index, entity.generation().to_bits()))
}

/// The slot of `node`: [`ENTITY_SLOT`] for an entity's own node, else its component type's.
pub(crate) fn slot_of(node: NodeId) -> u32 {
    node.index() % MAX_REPLICATED_COMPONENTS
}

/// The entity `node` is, or whose component it is.
pub fn entity_of(node: NodeId) -> Option<Entity> {
    let index = EntityIndex::from_raw_u32(node.index() / MAX_REPLICATED_COMPONENTS)?;
    let generation = EntityGeneration::from_bits(node.generation());
    Some(Entity::from_index_and_generation(index, generation))
}
