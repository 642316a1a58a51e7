//! [`Removals`]: the world's removal stamp, which the core's [`Store::removals`] reports, so
//! that the server looks for despawned nodes only after something went.

use std::sync::atomic::{AtomicU64, Ordering};

use bevy_ecs::resource::Resource;
#[cfg(doc)]
use mf_net::store::Store;

/// Stamps that no two removals, in any world of the process, share (see [`Store::removals`]).
static NEXT_REMOVAL: AtomicU64 = AtomicU64::new(1);

/// The world's removal stamp: drawn anew whenever a [`Networked`](crate::Networked) entity or a
/// replicated component goes.
#[derive(Resource, Debug)]
pub(crate) struct Removals {
    stamp: u64,
}

impl Default for Removals {
    fn default() -> Self {
        Self {
            stamp: NEXT_REMOVAL.fetch_add(1, Ordering::Relaxed),
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
}
