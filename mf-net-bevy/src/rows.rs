//! A replicated component type's part of the storage seam: its values in a Bevy [`World`],
//! lent to the core as [`Rows`] through a query made once per type ([`QueryState`], kept in
//! the store), one `Query` per pass, so that a row costs the entity's look-up and nothing more;
//! and its type-erased operations ([`component_type`]).

use std::any::{Any, TypeId};

use bevy_ecs::component::{Component, Mutable};
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::query::QueryState;
use bevy_ecs::system::Query;
use bevy_ecs::world::World;
use mf_net::replication::Replicated;
use mf_net::store::{Lend, NodeId, Rows, Store};

use crate::components::Networked;
use crate::node::{entity_of, slot_of};
use crate::store::BevyStore;
use crate::types::{ComponentType, ReplicatedComponents};

/// The `C` components of a world, by node: only the nodes in `C`'s slot hold one (an
/// entity's other nodes, its own and its other components', hold none).
struct QueryRows<'w, 's, C: Component<Mutability = Mutable>> {
    query: Query<'w, 's, &'static mut C>,
    slot: u32,
}

impl<C: Component<Mutability = Mutable>> QueryRows<'_, '_, C> {
    /// The entity whose `C` `node` is, if it is `C`'s node.
    fn entity(&self, node: NodeId) -> Option<Entity> {
        (slot_of(node) == self.slot)
            .then(|| entity_of(node))
            .flatten()
    }
}

impl<C: Component<Mutability = Mutable>> Rows<C> for QueryRows<'_, '_, C> {
    fn get(&self, node: NodeId) -> Option<&C> {
        self.query.get(self.entity(node)?).ok()
    }

    fn get_mut(&mut self, node: NodeId) -> Option<&mut C> {
        let entity = self.entity(node)?;
        Some(self.query.get_mut(entity).ok()?.into_inner())
    }
}

/// How a [`BevyStore`] lends its `C`s (the type's [`Lend`]).
pub(crate) fn lend_component<C: Component<Mutability = Mutable> + Replicated>(
    store: &mut dyn Store,
    f: &mut dyn FnMut(&mut dyn Rows<C>),
) {
    let store: &mut dyn Any = store;
    let Some(store) = store.downcast_mut::<BevyStore>() else {
        return;
    };
    let BevyStore { world, queries, .. } = store;
    // A type that was never registered has no slot, and no node holds it.
    let registered = world.get_resource::<ReplicatedComponents>();
    let Some(node_slot) = registered
        .and_then(|r| r.get(TypeId::of::<C>()))
        .map(|t| t.slot)
    else {
        return;
    };
    // A query belongs to the world it was made for: one made for another world (a store whose
    // world was replaced) is made again.
    let id = (TypeId::of::<C>(), world.id());
    let slot = match queries.iter().position(|(made_for, _)| *made_for == id) {
        Some(slot) => slot,
        None => {
            queries.retain(|((ty, _), _)| *ty != id.0);
            let state: QueryState<&'static mut C> = world.query();
            queries.push((id, Box::new(state)));
            queries.len() - 1
        }
    };
    let Some(state) = queries[slot].1.downcast_mut::<QueryState<&'static mut C>>() else {
        return;
    };
    f(&mut QueryRows {
        query: state.query_mut(world),
        slot: node_slot,
    });
}

/// The type-erased operations of `C`, for the table of registered types, in `slot`.
pub(crate) fn component_type<C>(slot: u32) -> ComponentType
where
    C: Component<Mutability = Mutable> + Replicated + Default,
{
    ComponentType {
        type_id: TypeId::of::<C>(),
        slot,
        lender: lender::<C>,
        value_mut: value_mut::<C>,
        spawn: spawn::<C>,
        insert: insert::<C>,
        remove: remove::<C>,
    }
}

fn lender<C: Component<Mutability = Mutable> + Replicated>() -> &'static dyn Any {
    const { &(lend_component::<C> as Lend<C>) }
}

fn value_mut<C: Component<Mutability = Mutable> + Replicated>(
    world: &mut World,
    entity: Entity,
) -> Option<&mut dyn Any> {
    Some(world.get_mut::<C>(entity)?.into_inner())
}

fn spawn<C: Component + Replicated + Default>(world: &mut World, parent: Option<Entity>) -> Entity {
    let mut entity = world.spawn((C::default(), Networked));
    if let Some(parent) = parent {
        entity.insert(ChildOf(parent));
    }
    entity.id()
}

fn insert<C: Component + Replicated + Default>(world: &mut World, entity: Entity) -> Option<()> {
    world.get_entity_mut(entity).ok()?.insert(C::default());
    Some(())
}

fn remove<C: Component + Replicated>(world: &mut World, entity: Entity) -> bool {
    world
        .get_entity_mut(entity)
        .ok()
        .and_then(|mut e| e.take::<C>())
        .is_some()
}
