//! A client's resend request ([`RESEND`]): states it applied held a member back, because the
//! member named a node the client did not have yet (its spawn still on the way, or not relevant
//! to the client). The server owes the client each node's whole state again, `initial_only`
//! members included (as a spawn carries it), so the member takes its value once the client has
//! the node it names.

use crate::replication::server::state::ServerState;
use crate::replication::shared::protocol::MAX_RESEND_IDS;
#[cfg(doc)]
use crate::replication::shared::protocol::RESEND;
use crate::replication::shared::state::Shared;
use crate::transport::PeerId;
use crate::wire::{DecodeError, NetReader};

impl ServerState {
    /// A [`RESEND`] from `peer`: every net id it lists of a node the client has (visible or
    /// dormant) is owed a resync, which the snapshots after this tick carry until the client
    /// acknowledges one, with the node's `initial_only` members too, as the server holds them
    /// now (the member held back may be one of them: see
    /// [`owe_whole_resync`](crate::replication::server::send_state::SendState::owe_whole_resync)).
    /// Ids of nodes it does not have are ignored. Requests repeat for as long
    /// as the node named stays away (one state a tick), as a client that withheld its
    /// acknowledgements would have the server do for every change.
    ///
    /// # Errors
    ///
    /// A count of 0 or over [`MAX_RESEND_IDS`], or a malformed id list.
    pub(crate) fn on_resend(
        &mut self,
        shared: &mut Shared,
        peer: PeerId,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        let count = r.read_count(1)?;
        if count == 0 || count > MAX_RESEND_IDS {
            return Err(DecodeError::OutOfRange);
        }
        let client = self.clients.ready_index_of(peer);
        if client.is_none() {
            shared.stats.control_dropped += 1;
        }
        for _ in 0..count {
            let id = r.read_var_u32()?;
            let Some(c) = client else {
                continue;
            };
            if let Some(key) = self.nodes.find(id).filter(|_| self.knows(c, id)) {
                self.clients[c].send.owe_whole_resync(key, self.tick);
            }
        }
        r.finish()?;
        Ok(true)
    }
}
