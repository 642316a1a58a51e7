//! Flood limits on the server: how many RPC messages
//! ([`rpc_flood_threshold`](super::MultiplayerConfig::rpc_flood_threshold)) and input messages
//! ([`input_flood_threshold`](super::MultiplayerConfig::input_flood_threshold)) one client may
//! send within a second of passed-in time; a client sending more is kicked.

use std::time::Duration;

use tracing::warn;

use super::server::ServerState;
use super::{Outbox, Shared};
use crate::transport::{DisconnectReason, PeerId};

const ONE_SECOND: Duration = Duration::from_secs(1);

/// Counts one client's messages of one kind per one-second window (a window starts with the
/// first message after the previous one ended).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FloodWindow {
    start: Duration,
    count: u32,
}

impl FloodWindow {
    /// Counts one message at `now`; `true` if the client is over `threshold` per second (0:
    /// never).
    pub(crate) fn flooding(&mut self, now: Duration, threshold: u32) -> bool {
        if self.count == 0 || now.saturating_sub(self.start) >= ONE_SECOND {
            self.start = now;
            self.count = 0;
        }
        self.count = self.count.saturating_add(1);
        threshold > 0 && self.count > threshold
    }
}

impl ServerState {
    /// Disconnects `peer` ([`Kicked`](DisconnectReason::Kicked)) for `why`, and lets it go.
    pub(crate) fn kick(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        peer: PeerId,
        why: &'static str,
    ) {
        warn!(%peer, why, "kicking client");
        core.disconnect(peer, DisconnectReason::Kicked);
        self.peer_left(Some(core), shared, peer, DisconnectReason::Kicked);
    }

    /// Counts an input message from `sender`; kicks it, and returns `true` (the message is
    /// dropped), if that takes it over the input flood threshold.
    pub(crate) fn input_flood(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        sender: PeerId,
    ) -> bool {
        let threshold = shared.config.input_flood_threshold;
        let now = shared.now;
        let Some(slot) = self.clients.iter_mut().find(|c| c.peer == sender) else {
            return false;
        };
        slot.stats.input_messages += 1;
        if !slot.input_flood.flooding(now, threshold) {
            return false;
        }
        shared.stats.input_kicks += 1;
        self.kick(core, shared, sender, "input flood");
        true
    }
}

#[cfg(test)]
mod tests {
    use super::FloodWindow;
    use std::time::Duration;

    #[test]
    fn a_window_holds_threshold_messages_per_second() {
        let t = Duration::from_millis;
        let mut w = FloodWindow::default();
        assert!(!w.flooding(t(0), 2) && !w.flooding(t(0), 2) && w.flooding(t(0), 2));
        assert!(!w.flooding(t(1000), 2));
        assert!(!w.flooding(t(5), 0));
    }
}
