//! [`BevyStore`]: a Bevy [`World`] as the core's storage. A node is an entity's own node
//! ([`EntityNode`](crate::node::EntityNode)) or one of its replicated components: the entity's
//! index and generation, and the slot (see [`node`](crate::node)). An entity is networked as
//! one group, its own node the root and its replicated components beside it; each of its
//! [`Networked`] children is a group of its own, under it.

use std::any::{Any, TypeId};

use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::world::{World, WorldId};
use mf_net::replication::Multiplayer;
use mf_net::store::{Link, NodeId, Store};
use mf_net::transport::Transport;

use bevy_ecs::query::{QueryState, With, Without};
use mf_net::transport::PeerId;

use crate::components::NetFocus;
use crate::components::{NetOwner, NetworkId, Networked};
use crate::node::{entity_of, networked_node, node_at, slot_of, ENTITY_SLOT};
use crate::removals::Removals;
use crate::types::{ComponentType, ReplicatedComponents};
use crate::unregistered::TypeCheck;

/// The app's replication: a [`Multiplayer`] whose storage is the app's world.
pub type NetMultiplayer = Multiplayer<Box<dyn Transport>, BevyStore>;

/// Entities to tag (and, on the server, to network): [`Networked`], with no
/// [`NetworkId`] yet.
pub(crate) type NewEntities = QueryState<
    (Entity, Option<&'static NetOwner>, Option<&'static ChildOf>),
    (With<Networked>, Without<NetworkId>),
>;

/// The server's query for the entities clients focus on ([`NetFocus`]), with their owners.
pub(crate) type FocusEntities = QueryState<(Entity, &'static NetOwner), With<NetFocus>>;

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
    /// The app world's query for the networked entities, made once.
    pub(crate) networked: Option<QueryState<Entity, With<NetworkId>>>,
    /// Scratch for the networked entities (capacity kept).
    pub(crate) entities: Vec<Entity>,
    /// Each replicated type's query over the app's world (a `QueryState<&mut C>`), made at its
    /// first pass.
    pub(crate) queries: Vec<((TypeId, WorldId), Box<dyn Any>)>,
    /// The server's query for focus entities ([`NetFocus`]), made once.
    pub(crate) focus: Option<FocusEntities>,
    /// Scratch for the focus entities, with their owners (capacity kept).
    pub(crate) to_focus: Vec<(PeerId, Entity)>,
    /// The focus set for each peer.
    pub(crate) focused: Vec<(PeerId, Entity)>,
    /// What was checked of the app's component types for forgotten registrations (see
    /// [`unregistered`](crate::unregistered)).
    pub(crate) type_check: TypeCheck,
    /// The core's count of lost events when the adapter last looked (see `forward_events`).
    pub(crate) events_lost: u64,
    /// The core's starts, and whether it ran, when the adapter last looked (see
    /// [`restarts`](crate::restarts)).
    pub(crate) run: (u64, bool),
}

impl BevyStore {
    fn types(&self) -> Option<&ReplicatedComponents> {
        self.world.get_resource::<ReplicatedComponents>()
    }

    /// The registered type of `node`'s value, if its entity has that component.
    fn type_of(&self, node: NodeId) -> Option<ComponentType> {
        let entity = self.world.get_entity(entity_of(node)?).ok()?;
        let ty = *self.types()?.by_slot(slot_of(node))?;
        entity.contains_type_id(ty.type_id).then_some(ty)
    }

    /// Whether `entity` holds a component of a registered replicated type.
    pub(crate) fn holds_replicated(&self, entity: Entity) -> bool {
        let (Ok(e), Some(types)) = (self.world.get_entity(entity), self.types()) else {
            return false;
        };
        types.iter().any(|t| e.contains_type_id(t.type_id))
    }

    /// Appends the nodes of the replicated components of the entity whose own node is `root`
    /// (which `group` holds), each beside it; none for a component's node (a component
    /// inserted since its entity was networked is a group of its own, beside the entity's
    /// node).
    fn push_components(&self, root: NodeId, group: &mut Vec<(NodeId, Link<u32>)>) {
        let Some(entity) = entity_of(root).filter(|_| slot_of(root) == ENTITY_SLOT) else {
            return;
        };
        let (Ok(e), Some(types)) = (self.world.get_entity(entity), self.types()) else {
            return;
        };
        let held = types.iter().filter(|t| e.contains_type_id(t.type_id));
        let nodes = held.filter_map(|ty| node_at(entity, ty.slot));
        group.extend(nodes.map(|n| (n, Link::Beside(0))));
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
        let networked = entity_of(node)
            .and_then(|e| self.world.get_entity(e).ok())
            .is_some_and(|e| e.contains::<Networked>());
        networked && self.type_of(node).is_some()
    }

    fn removals(&self) -> u64 {
        self.world
            .get_resource::<Removals>()
            .map_or(0, Removals::stamp)
    }

    fn value_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
        let ty = self.type_of(node)?;
        (ty.value_mut)(&mut self.world, entity_of(node)?)
    }

    /// An entity's own node despawns the entity, with its children: the entity is the unit of
    /// existence. A component's node removes that component only (as the server does when a
    /// game removes it).
    fn despawn(&mut self, node: NodeId) -> bool {
        let Some(entity) = entity_of(node) else {
            return false;
        };
        if slot_of(node) != ENTITY_SLOT {
            return self
                .type_of(node)
                .is_some_and(|ty| (ty.remove)(&mut self.world, entity));
        }
        self.world.despawn(entity)
    }

    fn spawn(&mut self, ty: TypeId) -> Option<NodeId> {
        self.spawn_linked(ty, Link::Root)
    }

    /// An entity's group is its own node and its replicated components; its `Networked`
    /// children are groups of their own, under it.
    fn group(&self, root: NodeId, group: &mut Vec<(NodeId, Link<u32>)>) {
        self.push_components(root, group);
    }

    /// The node of the entity's parent, if the parent is networked; for a component inserted
    /// since its entity was networked, the entity's node.
    fn parent(&self, root: NodeId) -> Option<NodeId> {
        let entity = self.world.get_entity(entity_of(root)?).ok()?;
        if slot_of(root) != ENTITY_SLOT {
            return networked_node(&entity);
        }
        let parent = entity.get::<ChildOf>()?.parent();
        let parent = self.world.get_entity(parent).ok()?;
        if !parent.contains::<Networked>() {
            return None;
        }
        networked_node(&parent)
    }

    /// A component inserted since its entity was networked goes beside the entity's node.
    fn beside_parent(&self, root: NodeId) -> bool {
        slot_of(root) != ENTITY_SLOT
    }

    /// A client: the entity of `root` becomes a child of `parent`'s entity (`ChildOf`), or a
    /// root.
    fn set_parent(&mut self, root: NodeId, parent: Option<NodeId>) -> bool {
        let Some(mut entity) = entity_of(root).and_then(|e| self.world.get_entity_mut(e).ok())
        else {
            return false;
        };
        match parent.and_then(entity_of) {
            Some(parent) => {
                entity.insert(ChildOf(parent));
            }
            None => {
                entity.remove::<ChildOf>();
            }
        }
        true
    }

    fn spawn_linked(&mut self, ty: TypeId, link: Link<NodeId>) -> Option<NodeId> {
        let ty = *self.types()?.get(ty)?;
        // An entity is made with its own node; a component is inserted into one.
        if matches!(link, Link::Beside(_)) == (ty.slot == ENTITY_SLOT) {
            return None;
        }
        let entity = match link {
            Link::Root => (ty.spawn)(&mut self.world, None),
            Link::ChildOf(parent) => {
                let parent = entity_of(parent)?;
                self.world.get_entity(parent).ok()?;
                (ty.spawn)(&mut self.world, Some(parent))
            }
            Link::Beside(other) => {
                let entity = entity_of(other)?;
                (ty.insert)(&mut self.world, entity)?;
                return node_at(entity, ty.slot);
            }
        };
        node_at(entity, ty.slot)
    }
}
