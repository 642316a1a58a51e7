//! [`MfNetPlugin`]: the adapter's resources, messages and systems.

use bevy_app::{App, FixedPostUpdate, Plugin, PostUpdate, PreUpdate};
use bevy_ecs::schedule::IntoScheduleConfigs;
use bevy_time::{Fixed, Time};
use mf_net::replication::{Multiplayer, MultiplayerConfig, TickSource};

use crate::components::Networked;
use crate::frame::{fixed_tick, receive, send, NetEvent};
use crate::net::Net;
use crate::not_replicated::NotReplicated;
use crate::owner::{note_owner_writes, OwnerWrites};
use crate::queue::NetQueue;
use crate::removals::Removals;
use crate::reparent::{note_insert, note_remove, Reparented};
use crate::replicate::{bump_on_remove, init_components};
use crate::schedule::NetSystems;
use crate::status::NetStatus;
use crate::store::BevyStore;
use crate::unregistered::UnregisteredComponent;

/// Replication for a Bevy app: the app's world is the core's storage. The app starts offline
/// (the server role, as singleplayer); start it with
/// `world.net(|mp| mp.start_server(..))` or `mp.start_client(..)`. Add
/// `bevy_time::TimePlugin`: the core runs on Bevy's time.
///
/// The core receives in `PreUpdate`. By default ([`TickSource::External`]) the server's network
/// ticks are Bevy's fixed steps: each `FixedPostUpdate` captures and queues one snapshot per
/// client, so that a change belongs to exactly one tick, and the plugin sets the fixed step to
/// the core's `tick_rate`. `PostUpdate` networks the new entities and sends. With
/// [`TickSource::OwnClock`] (an app without a fixed loop), the core counts its ticks from the
/// frame times and captures in `PostUpdate`.
#[derive(Debug, Clone, Copy)]
pub struct MfNetPlugin {
    /// The core's settings.
    pub config: MultiplayerConfig,
}

impl Default for MfNetPlugin {
    fn default() -> Self {
        Self {
            config: MultiplayerConfig {
                tick_source: TickSource::External,
                ..MultiplayerConfig::default()
            },
        }
    }
}

impl Plugin for MfNetPlugin {
    fn build(&self, app: &mut App) {
        init_components(app);
        app.init_resource::<Removals>()
            .add_message::<NetEvent>()
            .add_message::<NotReplicated>()
            .add_message::<UnregisteredComponent>()
            .add_systems(PreUpdate, receive.in_set(NetSystems::Receive))
            .add_systems(FixedPostUpdate, fixed_tick.in_set(NetSystems::Tick))
            .add_systems(PostUpdate, send.in_set(NetSystems::Send))
            .init_resource::<OwnerWrites>()
            .add_systems(PreUpdate, note_owner_writes.before(NetSystems::Receive))
            .add_systems(PostUpdate, note_owner_writes.before(NetSystems::Send))
            .add_observer(bump_on_remove::<Networked>)
            .init_resource::<Reparented>()
            .add_observer(note_insert)
            .add_observer(note_remove)
            .configure_sets(PreUpdate, NetSystems::Receive)
            .configure_sets(FixedPostUpdate, NetSystems::Tick)
            .configure_sets(PostUpdate, NetSystems::Send);
        if self.config.tick_source == TickSource::External {
            let rate = f64::from(self.config.tick_rate.max(1));
            app.insert_resource(Time::<Fixed>::from_hz(rate));
        }
        let mp = Multiplayer::with_store(BevyStore::default(), self.config);
        let status = NetStatus {
            local_peer: mp.local_peer_id(),
            is_server: true,
            is_running: false,
        };
        app.insert_resource(status);
        app.world_mut().insert_non_send(Net { mp });
        app.world_mut().insert_non_send(NetQueue::default());
    }
}
