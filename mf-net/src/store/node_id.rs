//! [`NodeId`]: the generational handle by which the runtime names a node of the engine's
//! storage.

use std::fmt;

/// A node (an entity, an object) of the engine's storage: an arena slot and the generation it
/// had when the node was created. The built-in [`Scene`](crate::scene::Scene) gives these
/// out; another engine maps its own handles onto them (a Bevy `Entity` is an index and a
/// generation too).
///
/// Removing a node bumps its slot's generation, so a stale id never resolves to a later node
/// that reuses the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl NodeId {
    /// The handle of slot `index` in its `generation`: what a storage other than the built-in
    /// scene gives out.
    pub const fn new(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }

    /// The arena slot.
    pub fn index(self) -> u32 {
        self.index
    }

    /// The slot's generation when the node was created.
    pub fn generation(self) -> u32 {
        self.generation
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}
