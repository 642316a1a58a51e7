//! [`BevyStore`]: a Bevy [`World`] as the core's storage. A node is an entity (its index and
//! generation); its value is the entity's one component of a
//! [replicated](crate::ReplicateAppExt::replicate) type.

use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::entity::{Entity, EntityGeneration, EntityIndex};
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use mf_net::store::{NodeId, Store};

use bevy_ecs::query::{QueryState, With, Without};
use mf_net::transport::PeerId;

use crate::components::{NetOwner, NetworkId, Networked};
use crate::types::{ComponentType, ReplicatedComponents};

/// The node of `entity`: its index and generation (the index stays small, as the core's
/// per-node tables want).
pub fn node_of(entity: Entity) -> NodeId {
    NodeId::new(entity.index_u32(), entity.generation().to_bits())
}

/// The entity of `node`, if `node` names one (see [`node_of`]).
pub fn entity_of(node: NodeId) -> Option<Entity> {
    let index = EntityIndex::from_raw_u32(node.index())?;
    let generation = EntityGeneration::from_bits(node.generation());
    Some(Entity::from_index_and_generation(index, generation))
}

/// Stamps that no two removals, in any world of the process, share (see [`Store::removals`]).
static NEXT_REMOVAL: AtomicU64 = AtomicU64::new(1);

/// The world's removal stamp: drawn anew whenever a [`Networked`] entity or a replicated
/// component goes.
#[derive(Resource, Debug)]
pub(crate) struct Removals(u64);

impl Default for Removals {
    fn default() -> Self {
        Self(NEXT_REMOVAL.fetch_add(1, Ordering::Relaxed))
    }
}

impl Removals {
    /// Something was removed.
    pub(crate) fn bump(&mut self) {
        self.0 = NEXT_REMOVAL.fetch_add(1, Ordering::Relaxed);
    }
}

/// The server's query for entities to network: [`Networked`], with no
/// [`NetworkId`](crate::NetworkId) yet.
pub(crate) type NewEntities =
    QueryState<(Entity, Option<&'static NetOwner>), (With<Networked>, Without<NetworkId>)>;

/// A Bevy [`World`] as the core's [`Store`]. The adapter keeps the app's world here while the
/// core runs (see [`NetWorldExt::net`](crate::NetWorldExt::net)); the rest of the time it holds
/// an empty one.
#[derive(Default)]
pub struct BevyStore {
    pub(crate) world: World,
    /// The app world's [`NewEntities`] query, made once.
    pub(crate) new_entities: Option<NewEntities>,
    /// Scratch for the entities to network (capacity kept).
    pub(crate) to_network: Vec<(Entity, PeerId)>,
}

impl BevyStore {
    fn types(&self) -> Option<&ReplicatedComponents> {
        self.world.get_resource::<ReplicatedComponents>()
    }

    /// The registered type of `node`'s value.
    fn type_of(&self, node: NodeId) -> Option<ComponentType> {
        let entity = self.world.get_entity(entity_of(node)?).ok()?;
        let types = self.types()?;
        types
            .iter()
            .find(|t| entity.contains_type_id(t.type_id))
            .copied()
    }

    /// The world the core works on (the app's, while the core runs).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// [`world`](Self::world), mutably.
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }
}

impl Store for BevyStore {
    fn value_type(&self, node: NodeId) -> Option<TypeId> {
        self.type_of(node).map(|t| t.type_id)
    }

    fn lender(&self, ty: TypeId) -> Option<&'static dyn Any> {
        self.types()?.get(ty).map(|t| (t.lender)())
    }

    fn alive(&self, node: NodeId) -> bool {
        entity_of(node)
            .and_then(|e| self.world.get_entity(e).ok())
            .is_some_and(|e| e.contains::<Networked>())
    }

    fn removals(&self) -> u64 {
        self.world.get_resource::<Removals>().map_or(0, |r| r.0)
    }

    fn value_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
        let ty = self.type_of(node)?;
        (ty.value_mut)(&mut self.world, entity_of(node)?)
    }

    fn despawn(&mut self, node: NodeId) -> bool {
        entity_of(node).is_some_and(|e| self.world.despawn(e))
    }

    fn spawn(&mut self, ty: TypeId) -> Option<NodeId> {
        let spawn = self.types()?.get(ty)?.spawn;
        Some(node_of(spawn(&mut self.world)))
    }
}
