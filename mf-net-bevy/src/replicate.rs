//! [`ReplicateAppExt::replicate`]: registering a replicated component type on an app.

use std::any::TypeId;

use bevy_app::App;
use bevy_ecs::component::{Component, Mutable};
use bevy_ecs::lifecycle::Remove;
use bevy_ecs::observer::On;
use bevy_ecs::system::ResMut;
use mf_net::replication::Replicated;

use crate::late::{note_insert, Inserted};
use crate::node::{EntityNode, ENTITY_SLOT};
use crate::removals::Removals;
use crate::rows::component_type;
use crate::types::ReplicatedComponents;

/// Registering replicated component types on an [`App`].
pub trait ReplicateAppExt {
    /// Replicates the component `C`: a [`Networked`](crate::Networked) entity holding a `C` is networked by the
    /// server, and each client gives its copy of the entity `C`'s default value before it
    /// reads the server's state into it. An entity may hold several replicated components;
    /// they travel together, and the entity's `Networked` children under it. Add
    /// [`MfNetPlugin`](crate::MfNetPlugin) first; at most one type fewer than
    /// [`MAX_REPLICATED_COMPONENTS`](crate::MAX_REPLICATED_COMPONENTS) (15: the entity's own
    /// node takes a slot).
    ///
    /// # Panics
    ///
    /// Past that many types.
    fn replicate<C>(&mut self) -> &mut Self
    where
        C: Component<Mutability = Mutable> + Replicated + Default;
}

impl ReplicateAppExt for App {
    fn replicate<C>(&mut self) -> &mut Self
    where
        C: Component<Mutability = Mutable> + Replicated + Default,
    {
        init_components(self);
        self.world_mut()
            .resource_mut::<ReplicatedComponents>()
            .add(TypeId::of::<C>(), component_type::<C>);
        self.init_resource::<Inserted>();
        self.add_observer(bump_on_remove::<C>)
            .add_observer(note_insert::<C>)
    }
}

/// Gives `app` its [`ReplicatedComponents`] if it has none: the entity's own node, then no
/// component type.
pub(crate) fn init_components(app: &mut App) {
    if !app.world().contains_resource::<ReplicatedComponents>() {
        let entity = component_type::<EntityNode>(ENTITY_SLOT);
        app.insert_resource(ReplicatedComponents::new(entity));
    }
}

/// A `C` went (removed, or its entity despawned): the server's scan for despawned nodes runs.
pub(crate) fn bump_on_remove<C: Component>(
    _: On<'_, '_, Remove, C>,
    mut removals: ResMut<'_, Removals>,
) {
    removals.bump();
}
