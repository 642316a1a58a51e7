//! Room in the handshake for a peer that connects: who makes it, when the handshake holds
//! [`max_pending`](crate::ServerConfig::max_pending) peers or the newcomer takes the inner
//! transport's last free slot.

use std::time::Duration;

use mf_net::transport::{DisconnectReason, Transport};

use crate::pending::Stage;
use crate::server::SecureServer;

impl<T: Transport> SecureServer<T> {
    /// Makes room for a peer that just connected on the inner transport (not pending yet);
    /// whether it may stay. Room is made when the handshake is full, or when the newcomer takes
    /// the inner transport's last free slot ([`Transport::capacity`]: one stays free, so that
    /// the next newcomer can connect at all). It is made by the pending peer that has waited
    /// longest without sending its request (a genuine client sends it at once; for the last
    /// slot, one that connected before this moment: peers that connected together have had no
    /// chance to send theirs yet), else by the challenged peer that has waited longest whose
    /// token another pending peer presented too (a request replayed from many connections holds
    /// one place at most); without either, a full handshake drops the newcomer, and one short
    /// of slots keeps it (it takes the last slot). Either way without an answer.
    pub(crate) fn make_room(&mut self) -> bool {
        let full = self.pending.len() >= self.config.max_pending;
        let used = self.pending.len() + self.peers.len() + 1;
        let last_slot = self.inner.capacity().is_some_and(|slots| used >= slots);
        if !full && !last_slot {
            return true;
        }
        let before = if full { None } else { Some(self.now) };
        let stranger = self.oldest_stranger(before);
        let Some(i) = stranger.or_else(|| self.oldest_repeated()) else {
            if full {
                self.stats.strangers_dropped += 1;
            }
            return !full;
        };
        self.stats.strangers_dropped += 1;
        let pending = self.pending.swap_remove(i);
        self.inner
            .disconnect(pending.peer, DisconnectReason::ConnectFailed);
        true
    }

    /// The pending peer that has waited longest without sending its request (of those that
    /// connected before `before`, if given).
    fn oldest_stranger(&self, before: Option<Duration>) -> Option<usize> {
        (0..self.pending.len())
            .filter(|&i| matches!(self.pending[i].stage, Stage::AwaitingRequest))
            .filter(|&i| before.is_none_or(|t| self.pending[i].since < t))
            .min_by_key(|&i| self.pending[i].since)
    }

    /// The challenged peer that has waited longest whose token another pending peer presented
    /// too: the request of one token replayed from other connections (by its scratch list of
    /// the challenged peers' tokens, sorted).
    fn oldest_repeated(&mut self) -> Option<usize> {
        let mut tags = std::mem::take(&mut self.repeated);
        tags.clear();
        tags.extend(
            self.pending
                .iter()
                .enumerate()
                .filter_map(|(i, p)| match &p.stage {
                    Stage::Challenged(c) => Some((c.ticket.tag, p.since, i)),
                    Stage::AwaitingRequest => None,
                }),
        );
        tags.sort_unstable();
        let oldest = tags
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .flat_map(|w| [w[0], w[1]])
            .min_by_key(|&(_, since, _)| since)
            .map(|(_, _, i)| i);
        self.repeated = tags;
        oldest
    }
}
