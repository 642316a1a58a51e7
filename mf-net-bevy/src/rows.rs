//! A replicated component type's values in a Bevy [`World`], lent to the core as [`Rows`]:
//! through a query made once per type ([`QueryState`], kept in the store), one `Query` per
//! pass, so that a row costs the entity's look-up and nothing more.

use std::any::{Any, TypeId};

use bevy_ecs::component::{Component, Mutable};
use bevy_ecs::query::QueryState;
use bevy_ecs::system::Query;
use mf_net::replication::Replicated;
use mf_net::store::{NodeId, Rows, Store};

use crate::store::{entity_of, BevyStore};

/// The `C` components of a world, by node.
struct QueryRows<'w, 's, C: Component<Mutability = Mutable>> {
    query: Query<'w, 's, &'static mut C>,
}

impl<C: Component<Mutability = Mutable>> Rows<C> for QueryRows<'_, '_, C> {
    fn get(&self, node: NodeId) -> Option<&C> {
        self.query.get(entity_of(node)?).ok()
    }

    fn get_mut(&mut self, node: NodeId) -> Option<&mut C> {
        Some(self.query.get_mut(entity_of(node)?).ok()?.into_inner())
    }
}

/// How a [`BevyStore`] lends its `C`s (the type's [`Lend`](mf_net::store::Lend)).
pub(crate) fn lend_component<C: Component<Mutability = Mutable> + Replicated>(
    store: &mut dyn Store,
    f: &mut dyn FnMut(&mut dyn Rows<C>),
) {
    let store: &mut dyn Any = store;
    let Some(store) = store.downcast_mut::<BevyStore>() else {
        return;
    };
    let BevyStore { world, queries, .. } = store;
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
    });
}
