//! [`Removals`]: the world's removal stamp, which the core's [`Store::removals`] reports, so
//! that the server looks for despawned nodes only after something went.

use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
#[cfg(doc)]
use mf_net::store::Store;

/// Stamps that no two removals, in any world of the process, share (see [`Store::removals`]).
static NEXT_REMOVAL: AtomicU64 = AtomicU64::new(1);

/// The world's removal stamp: drawn anew whenever a [`Networked`](crate::Networked) entity or a
/// replicated component goes; and the entities they went from since the server last looked.
#[derive(Resource, Debug)]
pub(crate) struct Removals {
    stamp: u64,
    from: Vec<Entity>,
}

impl Default for Removals {
    fn default() -> Self {
        Self {
            stamp: NEXT_REMOVAL.fetch_add(1, Ordering::Relaxed),
            from: Vec::new(),
        }
    }
}

impl Removals {
    /// The stamp.
    pub(crate) fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Something was removed.
    pub(crate) fn bump(&mut self) {
        self.stamp = NEXT_REMOVAL.fetch_add(1, Ordering::Relaxed);
    }

    /// A replicated component (or `Networked`) was removed from `entity`, or it was despawned.
    pub(crate) fn removed_from(&mut self, entity: Entity) {
        self.bump();
        self.from.push(entity);
    }

    /// Forgets the entities [`removed_from`](Self::removed_from) named (a client's: it
    /// networks nothing).
    pub(crate) fn forget_from(&mut self) {
        self.from.clear();
    }

    /// The entities [`removed_from`](Self::removed_from) named since the last call, into `out`
    /// (replacing what it held; capacities are kept).
    pub(crate) fn take_from(&mut self, out: &mut Vec<Entity>) {
        out.clear();
        std::mem::swap(out, &mut self.from);
    }
}
