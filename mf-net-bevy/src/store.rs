//! [`BevyStore`]: a Bevy [`World`] as the core's storage. A node is one replicated component
//! of an entity: the entity's index and generation, and the component type's slot (its
//! registration order). An entity is networked as one group of its replicated components; each
//! of its [`Networked`] children is a group of its own, under it.

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
use crate::components::{NetOwner, NetworkId, Networked, Renetwork};
use crate::node::{entity_of, first_networked, node_at, slot_of, FirstSlot};
use crate::removals::Removals;
use crate::types::{ComponentType, ReplicatedComponents};

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
    /// Whether the app's component types were checked for forgotten registrations.
    pub(crate) checked_types: bool,
    /// The core's count of lost events when the adapter last looked (see `forward_events`).
    pub(crate) events_lost: u64,
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

    /// The node of `entity`'s first replicated component present: its group's root when it is
    /// networked now (later, a component inserted in a lower slot comes first: the entity's
    /// [`FirstSlot`] says which is).
    pub(crate) fn first_node(&self, entity: Entity) -> Option<NodeId> {
        let e = self.world.get_entity(entity).ok()?;
        let ty = self
            .types()?
            .iter()
            .find(|t| e.contains_type_id(t.type_id))?;
        node_at(entity, ty.slot)
    }

    /// Appends the nodes of the replicated components of `root`'s entity but `root` (which
    /// `group` holds), each beside it; none for a component inserted since the entity was
    /// networked (a group of its own, beside the entity's first networked component).
    fn push_components(&self, root: NodeId, group: &mut Vec<(NodeId, Link<u32>)>) {
        let Some(entity) = entity_of(root) else {
            return;
        };
        let (Ok(e), Some(types)) = (self.world.get_entity(entity), self.types()) else {
            return;
        };
        if first_networked(&e).is_some_and(|first| first != root) {
            return;
        }
        let held = types.iter().filter(|t| e.contains_type_id(t.type_id));
        let others = held.filter_map(|ty| node_at(entity, ty.slot));
        group.extend(others.filter(|&n| n != root).map(|n| (n, Link::Beside(0))));
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
        // An entity networked again counts as gone until the frame's end has despawned it.
        let networked = entity_of(node)
            .and_then(|e| self.world.get_entity(e).ok())
            .is_some_and(|e| e.contains::<Networked>() && !e.contains::<Renetwork>());
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

    /// The node of a networked entity's first networked component despawns the entity, with
    /// its children: the entity is the unit of existence. Another component's node removes
    /// that component only (as the server does when a game removes it).
    fn despawn(&mut self, node: NodeId) -> bool {
        let Some(entity) = entity_of(node) else {
            return false;
        };
        let first = self
            .world
            .get_entity(entity)
            .ok()
            .and_then(|e| first_networked(&e));
        if first.is_some_and(|first| first != node) {
            return self
                .type_of(node)
                .is_some_and(|ty| (ty.remove)(&mut self.world, entity));
        }
        self.world.despawn(entity)
    }

    fn spawn(&mut self, ty: TypeId) -> Option<NodeId> {
        self.spawn_linked(ty, Link::Root)
    }

    /// An entity's group is its replicated components; its `Networked` children are groups
    /// of their own, under it.
    fn group(&self, root: NodeId, group: &mut Vec<(NodeId, Link<u32>)>) {
        self.push_components(root, group);
    }

    /// The first networked component of the entity's parent, if the parent is networked (and
    /// not being networked again: see `renetwork`) and that component is still there; for a
    /// component inserted since its entity was networked, the entity's first networked one.
    fn parent(&self, root: NodeId) -> Option<NodeId> {
        let entity = self.world.get_entity(entity_of(root)?).ok()?;
        if let Some(first) = first_networked(&entity).filter(|&first| first != root) {
            return Some(first);
        }
        let parent = entity.get::<ChildOf>()?.parent();
        let parent = self.world.get_entity(parent).ok()?;
        if !parent.contains::<Networked>() || parent.contains::<Renetwork>() {
            return None;
        }
        let first = first_networked(&parent)?;
        self.type_of(first).is_some().then_some(first)
    }

    /// A component inserted since its entity was networked goes beside the entity's first
    /// networked component.
    fn beside_parent(&self, root: NodeId) -> bool {
        let entity = entity_of(root).and_then(|e| self.world.get_entity(e).ok());
        let first = entity.and_then(|e| first_networked(&e));
        first.is_some_and(|first| first != root)
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
        // A new entity's first networked component is the one it is made with (a component
        // in a lower slot may arrive beside it later).
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
        self.world.entity_mut(entity).insert(FirstSlot(ty.slot));
        node_at(entity, ty.slot)
    }
}
