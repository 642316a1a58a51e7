//! The server's kicks: a client disconnected for misbehaving (an input flood here; RPC floods
//! and failures in `rpc/`), counted and let go.

use tracing::warn;

use crate::replication::server::state::ServerState;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::state::Shared;
use crate::transport::{DisconnectReason, PeerId};

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
        let Some(slot) = self.clients.of_mut(sender) else {
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
