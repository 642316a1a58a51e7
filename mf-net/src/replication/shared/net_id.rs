//! [`NetId`]: a networked node's id, the same on every peer.

use std::fmt;
use std::num::NonZeroU32;

/// A networked node's id, the same on every peer (1 or more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NetId(NonZeroU32);

impl NetId {
    /// The id numbered `id`; `None` for 0.
    pub const fn new(id: u32) -> Option<Self> {
        match NonZeroU32::new(id) {
            Some(id) => Some(Self(id)),
            None => None,
        }
    }

    /// The number.
    pub const fn get(self) -> u32 {
        self.0.get()
    }
}

impl fmt::Display for NetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "net#{}", self.0)
    }
}
