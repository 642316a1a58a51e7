//! A replicated component type's values in a Bevy [`World`], lent to the core as [`Rows`].

use bevy_ecs::component::{Component, Mutable};
use bevy_ecs::world::World;
use mf_net::replication::Replicated;
use mf_net::store::{NodeId, Rows, Store};

use crate::store::{entity_of, BevyStore};

/// The `C` components of a world, by node (the entity).
struct WorldRows<'w> {
    world: &'w mut World,
}

impl<C: Component<Mutability = Mutable>> Rows<C> for WorldRows<'_> {
    fn get(&self, node: NodeId) -> Option<&C> {
        self.world.get::<C>(entity_of(node)?)
    }

    fn get_mut(&mut self, node: NodeId) -> Option<&mut C> {
        Some(self.world.get_mut::<C>(entity_of(node)?)?.into_inner())
    }
}

/// How a [`BevyStore`] lends its `C`s (the type's [`Lend`](mf_net::store::Lend)).
pub(crate) fn lend_component<C: Component<Mutability = Mutable> + Replicated>(
    store: &mut dyn Store,
    f: &mut dyn FnMut(&mut dyn Rows<C>),
) {
    let store: &mut dyn std::any::Any = store;
    if let Some(store) = store.downcast_mut::<BevyStore>() {
        f(&mut WorldRows {
            world: &mut store.world,
        });
    }
}
