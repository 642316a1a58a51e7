//! mf-net under Bevy: the same replication core, with a Bevy `World` as its storage.
//!
//! Add [`MfNetPlugin`], register each replicated component type with
//! [`ReplicateAppExt::replicate`], and mark the entities to replicate with [`Networked`]
//! (and [`NetOwner`] for a client's). The core runs in the app's schedules: it receives in
//! `PreUpdate` and captures and sends in `PostUpdate`. Its events arrive as [`NetEvent`]
//! messages, and [`NetStatus`] says what this peer is. Systems send RPCs through the
//! [`NetRpc`] parameter (queued, sent in `PostUpdate`), and game messages as [`NetSend`] and
//! [`NetReceived`] (see [`NetMessageAppExt::add_net_message`]); other calls of the core that
//! touch values (starting it, for one) go through [`NetWorldExt::net`], which lends it the
//! world.
//!
//! ```
//! use bevy_app::App;
//! use bevy_ecs::component::Component;
//! use mf_net::prelude::*;
//! use mf_net_bevy::prelude::*;
//!
//! #[derive(Component, Replicated, Default)]
//! struct Ship {
//!     #[replicated]
//!     hp: i32,
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((bevy_time::TimePlugin, MfNetPlugin::default()))
//!     .replicate::<Ship>();
//! let ship = app.world_mut().spawn((Ship { hp: 3 }, Networked)).id();
//! app.update();
//! // Offline, the app is the server: the ship is networked at the end of the frame.
//! assert!(app.world().get::<NetworkId>(ship).is_some());
//! ```
//!
//! Bevy's `Transform` travels through [`NetTransform`] (quantized, interpolated) with
//! [`NetTransformPlugin`].
//!
//! Version policy: one release of this crate per Bevy minor version (this one: Bevy 0.19).

mod client_kept;
mod components;
mod entity_ref;
mod frame;
mod interest;
mod late;
mod messages;
mod net;
mod node;
mod not_replicated;
mod owner;
mod plugin;
mod predict;
mod queue;
mod removals;
mod reparent;
mod replicate;
mod restarts;
mod rows;
mod schedule;
mod status;
mod store;
mod transform;
mod types;
mod unregistered;
mod world_changes;

pub use components::{NetFocus, NetOwner, NetworkId, Networked};
pub use entity_ref::NetEntity;
pub use frame::NetEvent;
pub use interest::NetGrid;
pub use messages::{NetMessageAppExt, NetMessageTypes, NetReceived, NetSend, SendTo};
pub use net::{Net, NetWorldExt};
pub use node::{entity_node, entity_of, MAX_REPLICATED_COMPONENTS};
pub use not_replicated::NotReplicated;
pub use plugin::MfNetPlugin;
pub use predict::{LocalInput, NetPredictionPlugin, NetStep, StepInputs};
pub use queue::{NetQueue, NetRpc};
pub use replicate::ReplicateAppExt;
pub use schedule::NetSystems;
pub use status::NetStatus;
pub use store::{BevyStore, NetMultiplayer};
pub use transform::{NetTransform, NetTransformPlugin};
pub use types::ReplicatedComponents;
pub use unregistered::UnregisteredComponent;

/// The adapter's items for a glob import.
pub mod prelude {
    pub use crate::{
        entity_node, entity_of, LocalInput, MfNetPlugin, NetEntity, NetEvent, NetFocus, NetGrid,
        NetMessageAppExt, NetMessageTypes, NetOwner, NetPredictionPlugin, NetReceived, NetRpc,
        NetSend, NetStatus, NetStep, NetTransform, NetTransformPlugin, NetWorldExt, NetworkId,
        Networked, NotReplicated, ReplicateAppExt, SendTo, StepInputs, UnregisteredComponent,
    };
}
