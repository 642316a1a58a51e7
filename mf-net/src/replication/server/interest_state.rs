//! [`Interest`]: the server's interest settings (the policy, manual settings and the
//! evaluation schedule), kept in its state; the evaluation itself is in
//! [`interest`](crate::replication::server::interest).

use std::collections::HashMap;

use crate::replication::interest::InterestPolicy;
use crate::transport::PeerId;

/// The server's interest settings.
#[derive(Default)]
pub(crate) struct Interest {
    pub(crate) policy: Option<Box<dyn InterestPolicy>>,
    pub(crate) every: u32,
    pub(crate) last_eval: Option<u32>,
    /// Something changed that needs an evaluation at the end of the frame.
    pub(crate) dirty: bool,
    /// Manual settings by (group's first net id, peer).
    pub(crate) manual: HashMap<(u32, PeerId), bool>,
}

impl Interest {
    /// Whether nothing restricts relevance (the default): every group goes to every client.
    pub(crate) fn unrestricted(&self) -> bool {
        self.policy.is_none() && self.manual.is_empty()
    }

    /// Whether an evaluation is due at `tick` (something changed, or the policy's interval
    /// has passed).
    pub(crate) fn due(&self, tick: u32) -> bool {
        self.dirty
            || (self.policy.is_some()
                && self
                    .last_eval
                    .map_or(true, |t| tick.wrapping_sub(t) >= self.every.max(1)))
    }

    /// Forgets a client that left.
    pub(crate) fn forget_peer(&mut self, peer: PeerId) {
        if !self.manual.is_empty() {
            self.manual.retain(|&(_, p), _| p != peer);
        }
    }

    /// Forgets a group that is gone.
    pub(crate) fn forget_group(&mut self, first: u32) {
        if !self.manual.is_empty() {
            self.manual.retain(|&(f, _), _| f != first);
        }
    }
}
