//! [`NodeId`]: a generational id of a node of a [`Scene`].

use std::fmt;

#[cfg(doc)]
use super::Scene;

/// A node of a [`Scene`]: an arena slot and the generation it had when the node was created.
///
/// Removing a node bumps its slot's generation, so a stale id never resolves to a later node
/// that reuses the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId {
    pub(super) index: u32,
    pub(super) generation: u32,
}

impl NodeId {
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
