//! [`NetSystems`]: the adapter's system sets, for ordering a game's systems around them.

use bevy_ecs::schedule::SystemSet;

/// Where the adapter's systems run: order a system `.after(NetSystems::Receive)` to see what
/// arrived this frame, or `.before(NetSystems::Send)` to have its changes in this frame's
/// snapshots (on the own clock) or spawns.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetSystems {
    /// `PreUpdate`: the core receives and applies.
    Receive,
    /// `FixedPostUpdate`: one network tick (capture, one snapshot per client).
    Tick,
    /// `PostUpdate`: new entities, queued RPCs, sending.
    Send,
}
