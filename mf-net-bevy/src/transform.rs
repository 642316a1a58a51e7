//! [`NetTransform`]: Bevy's `Transform` cannot take the derive, so a replicated component
//! stands in for it, quantized, and the [`NetTransformPlugin`] keeps the two in step.

use bevy_app::{App, FixedPostUpdate, Plugin, PostUpdate, PreUpdate};
use bevy_ecs::component::Component;
use bevy_ecs::query::{Added, Changed, Or};
use bevy_ecs::schedule::IntoScheduleConfigs;
use bevy_ecs::system::{Query, Res};
use bevy_transform::components::Transform;
use glam::{Quat, Vec3};
use mf_net::replication::Replicated;

use crate::replicate::ReplicateAppExt;
use crate::schedule::NetSystems;
use crate::status::NetStatus;

/// A replicated stand-in for an entity's [`Transform`]: its translation quantized to 20 bits
/// per axis over ±4096 (steps of 1/128), its rotation in the smallest-three encoding at 12 bits
/// per component (6 bytes), both interpolated on clients. Scale is not sent.
///
/// With [`NetTransformPlugin`], the server copies a `Transform` that changed (or the
/// entity's `Transform`, once the `NetTransform` is new) into it before each capture, and clients copy it into the entity's `Transform` (which it requires) after
/// each receive. A game whose world is larger, or that needs finer steps, declares its own
/// component the same way.
#[derive(Component, Replicated, Debug, Clone, PartialEq)]
#[require(Transform)]
#[replicated(name = "mf_net_bevy::NetTransform")]
pub struct NetTransform {
    /// The translation.
    #[replicated(interpolate, quantize(min = -4096.0, max = 4096.0, bits = 20))]
    pub translation: Vec3,
    /// The rotation.
    #[replicated(interpolate, quantize(smallest_three, bits = 12))]
    pub rotation: Quat,
}

impl Default for NetTransform {
    fn default() -> Self {
        Self {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        }
    }
}

impl NetTransform {
    /// The stand-in for `transform` (Bevy's glam and the core's are different versions: the
    /// values go through arrays).
    pub fn from_transform(transform: &Transform) -> Self {
        Self {
            translation: Vec3::from_array(transform.translation.to_array()),
            rotation: Quat::from_array(transform.rotation.to_array()),
        }
    }

    /// Writes the translation and rotation into `transform` (its scale stays).
    pub fn write_to(&self, transform: &mut Transform) {
        transform.translation = bevy_math::Vec3::from_array(self.translation.to_array());
        transform.rotation = bevy_math::Quat::from_array(self.rotation.to_array());
    }
}

/// Replicates [`NetTransform`] and keeps it in step with `Transform`: on the server, before
/// each capture and before new entities are networked; on clients, after each receive. Add
/// [`MfNetPlugin`](crate::MfNetPlugin) first.
#[derive(Debug, Clone, Copy, Default)]
pub struct NetTransformPlugin;

impl Plugin for NetTransformPlugin {
    fn build(&self, app: &mut App) {
        app.replicate::<NetTransform>()
            .add_systems(FixedPostUpdate, to_net.before(NetSystems::Tick))
            .add_systems(PostUpdate, to_net.before(NetSystems::Send))
            .add_systems(PreUpdate, from_net.after(NetSystems::Receive));
    }
}

/// The entities whose `Transform` changed or whose [`NetTransform`] is new.
type Moved = Or<(Changed<Transform>, Added<NetTransform>)>;

/// The server: every `Transform` that changed, or whose [`NetTransform`] is new (given to a
/// still entity, or inserted later), into its `NetTransform`.
fn to_net(
    status: Res<'_, NetStatus>,
    mut moved: Query<'_, '_, (&Transform, &mut NetTransform), Moved>,
) {
    if !status.is_server {
        return;
    }
    for (transform, mut net) in &mut moved {
        let new = NetTransform::from_transform(transform);
        if *net != new {
            *net = new;
        }
    }
}

/// A client: every [`NetTransform`] that changed, into its `Transform`.
fn from_net(
    status: Res<'_, NetStatus>,
    mut changed: Query<'_, '_, (&NetTransform, &mut Transform), Changed<NetTransform>>,
) {
    if status.is_server {
        return;
    }
    for (net, mut transform) in &mut changed {
        net.write_to(&mut transform);
    }
}
