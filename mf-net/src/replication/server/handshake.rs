//! The server's side of the handshake: a client's hello is checked against our replication
//! fingerprint; a mismatch is refused with a text naming the first difference, a match is
//! welcomed and sent every live spawn relevant to it (late join).

use std::time::Duration;

use tracing::{info, warn};

use crate::replication::multiplayer::rpc::{check_hello_body, describe_refusal};
use crate::replication::server::group_vis::{GroupVis, Vis};
use crate::replication::server::node_table::group_keys;
use crate::replication::server::state::ServerState;
use crate::replication::shared::config::SnapshotEncoding;
use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::{REFUSE, WELCOME};
use crate::replication::shared::state::Shared;
use crate::transport::{Channel, DisconnectReason, PeerId};
use crate::wire::{DecodeError, NetReader};

impl ServerState {
    /// A client's hello.
    pub(crate) fn on_hello(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        peer: PeerId,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        let fingerprint = r.read_u64()?;
        if !core.is_connected(peer) {
            return Ok(true);
        }
        self.peer_connected(peer, shared.now);
        let Some(index) = self.clients.index_of(peer) else {
            return Ok(true);
        };
        if self.clients[index].ready {
            shared.stats.control_dropped += 1;
            return Ok(true);
        }
        let refusal = match fingerprint == shared.fingerprint {
            false => Some(describe_refusal(shared, r)),
            true => check_hello_body(shared, r)
                .err()
                .map(|error| format!("malformed hello: {error}")),
        };
        if let Some(text) = refusal {
            warn!(%peer, %text, "refusing client: replication mismatch");
            let _ = core.send_with(peer, REFUSE, Channel::Reliable, |w| w.write_str(&text));
            core.disconnect(peer, DisconnectReason::ProtocolMismatch);
            self.clients.swap_remove(index);
            shared.events.push(MultiplayerEvent::PeerRefused {
                peer,
                refusal: text,
            });
            return Ok(true);
        }
        let tick = self.tick;
        let rate = self.tick_rate(&shared.config);
        let bits = shared.config.snapshot_encoding == SnapshotEncoding::Bits;
        self.clients[index].bits = bits;
        self.send_control(core, shared, peer, WELCOME, |w| {
            w.write_u64(peer.0);
            w.write_u8(rate);
            w.write_u32(tick);
            w.write_u8(u8::from(bits));
        });
        self.send_world(core, shared, index);
        self.flush_queued(core, shared, index);
        if !self.failed.is_empty() {
            self.drop_failed(core, shared);
            return Ok(true);
        }
        self.make_ready(index, shared.now);
        self.joined.push(peer);
        info!(%peer, tick, "client joined");
        shared.events.push(MultiplayerEvent::PeerJoined(peer));
        Ok(true)
    }

    /// Late join of the client at `index`: decides every group's visibility for it and sends
    /// every live group relevant to it, in id order, with the state captured so far.
    fn send_world(&mut self, core: &mut Outbox, shared: &mut Shared, index: usize) {
        let client = &mut self.clients[index];
        client.tiered = false;
        client.tiered_groups.clear();
        for i in 0..self.groups.len() {
            let g = self.groups.keys()[i];
            self.set_vis(index, g, GroupVis::HIDDEN);
        }
        for i in 0..self.groups.len() {
            let g = self.groups.keys()[i];
            if self.group_gone(&*shared.store, g) || !self.failed.is_empty() {
                continue;
            }
            let Some(vis) = self.initially_visible(shared, index, g) else {
                continue;
            };
            self.set_vis(index, g, vis);
            self.queue_group(core, shared, g, index);
        }
    }

    /// The client at `index`, sent the world, joins at `now`: from the current tick it has
    /// every node of the groups visible to it and none of the others.
    fn make_ready(&mut self, index: usize, now: Duration) {
        let tick = self.tick;
        let slot = &mut self.clients[index];
        slot.ready = true;
        slot.stats.ready = true;
        let (nodes, groups, vis) = (&self.nodes, &self.groups, &slot.vis);
        let visible = groups
            .keys()
            .iter()
            .filter(|&&g| vis.state(g) == Some(Vis::Visible))
            .filter_map(|&g| groups.get(g))
            .flat_map(|group| group_keys(nodes, group).iter().copied());
        slot.send.join(visible, tick, nodes);
        slot.last_heard = now;
        slot.last_progress = now;
        slot.stats.acknowledged_tick = tick;
    }
}
