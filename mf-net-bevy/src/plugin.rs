//! [`MfNetPlugin`] and [`ReplicateAppExt::replicate`].

use bevy_app::{App, Plugin, PostUpdate, PreUpdate};
use bevy_ecs::component::{Component, Mutable};
use bevy_ecs::lifecycle::Remove;
use bevy_ecs::observer::On;
use bevy_ecs::system::ResMut;
use mf_net::replication::{Multiplayer, MultiplayerConfig, Replicated};

use crate::components::Networked;
use crate::frame::{receive, send, NetEvent};
use crate::net::Net;
use crate::store::{BevyStore, Removals};
use crate::types::ReplicatedComponents;

/// Replication for a Bevy app: the app's world is the core's storage. The app starts offline
/// (the server role, as singleplayer); start it with
/// `world.net(|mp| mp.start_server(..))` or `mp.start_client(..)`. The core receives in
/// `PreUpdate` and sends in `PostUpdate`, on the frame time of Bevy's `Time` (add
/// `bevy_time::TimePlugin`).
#[derive(Debug, Clone, Copy, Default)]
pub struct MfNetPlugin {
    /// The core's settings.
    pub config: MultiplayerConfig,
}

impl Plugin for MfNetPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ReplicatedComponents>()
            .init_resource::<Removals>()
            .add_message::<NetEvent>()
            .add_systems(PreUpdate, receive)
            .add_systems(PostUpdate, send)
            .add_observer(bump_on_remove::<Networked>);
        let mp = Multiplayer::with_store(BevyStore::default(), self.config);
        app.world_mut().insert_non_send(Net { mp });
    }
}

/// Registering replicated component types on an [`App`].
pub trait ReplicateAppExt {
    /// Replicates the component `C`: a [`Networked`] entity holding a `C` is networked by the
    /// server, and each client makes one holding `C`'s default value before it reads the
    /// server's state into it. An entity holds one replicated component. Add
    /// [`MfNetPlugin`] first.
    fn replicate<C>(&mut self) -> &mut Self
    where
        C: Component<Mutability = Mutable> + Replicated + Default;
}

impl ReplicateAppExt for App {
    fn replicate<C>(&mut self) -> &mut Self
    where
        C: Component<Mutability = Mutable> + Replicated + Default,
    {
        self.init_resource::<ReplicatedComponents>();
        self.world_mut()
            .resource_mut::<ReplicatedComponents>()
            .add::<C>();
        self.add_observer(bump_on_remove::<C>)
    }
}

/// A `C` went (removed, or its entity despawned): the server's scan for despawned nodes runs.
fn bump_on_remove<C: Component>(_: On<'_, '_, Remove, C>, mut removals: ResMut<'_, Removals>) {
    removals.bump();
}
