//! [`LoopbackTransport`]: one endpoint of a [`LoopbackNetwork`], and how it sends, polls,
//! flushes, disconnects and leaves.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use super::net_state::{Endpoint, Incoming, LinkState, Outgoing};
use super::LoopbackNetwork;
use crate::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

/// One endpoint (a server or a client) of a [`LoopbackNetwork`].
///
/// See the [module documentation](super) for how it behaves. Dropping it disconnects its peers.
pub struct LoopbackTransport {
    network: LoopbackNetwork,
    endpoint: usize,
    is_server: bool,
    outbox: VecDeque<Outgoing>,
    /// The buffer of the last [`TransportEvent::Received`], lent until the next poll.
    lent: Option<Vec<u8>>,
    stats: TransportStats,
}

impl LoopbackTransport {
    /// A transport for `endpoint` of `network`.
    pub(super) fn new(network: LoopbackNetwork, endpoint: usize, is_server: bool) -> Self {
        Self {
            network,
            endpoint,
            is_server,
            outbox: VecDeque::new(),
            lent: None,
            stats: TransportStats::default(),
        }
    }

    /// The network this endpoint belongs to.
    pub fn network(&self) -> &LoopbackNetwork {
        &self.network
    }

    /// Whether this endpoint is a server (from [`LoopbackNetwork::listen`] or the server half of
    /// [`LoopbackNetwork::pair`]).
    pub fn is_server(&self) -> bool {
        self.is_server
    }

    /// How many peers are connected, counting those whose `Connected` event is not polled yet
    /// and not counting those that have left.
    pub fn peer_count(&self) -> usize {
        let state = self.network.state.borrow();
        state
            .endpoint(self.endpoint)
            .map_or(0, Endpoint::active_links)
    }

    /// Whether `send` to `peer` would be accepted now: its `Connected` event has been polled and
    /// it has not left.
    pub fn is_connected(&self, peer: PeerId) -> bool {
        let state = self.network.state.borrow();
        state
            .endpoint(self.endpoint)
            .and_then(|e| e.link(peer))
            .is_some_and(|l| l.state == LinkState::Connected)
    }

    /// How many packets `send` has queued that the next [`flush`](Transport::flush) will deliver.
    pub fn queued_packets(&self) -> usize {
        self.outbox.len()
    }
}

impl fmt::Debug for LoopbackTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackTransport")
            .field("endpoint", &self.endpoint)
            .field("is_server", &self.is_server)
            .field("queued_packets", &self.outbox.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Transport for LoopbackTransport {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        let mut state = self.network.state.borrow_mut();
        let link_state = state
            .endpoint(self.endpoint)
            .and_then(|e| e.link(peer))
            .map(|l| l.state);
        match link_state {
            None => return Err(SendError::UnknownPeer),
            Some(LinkState::Connecting | LinkState::Closing) => {
                return Err(SendError::NotConnected)
            }
            Some(LinkState::Connected) => {}
        }
        if data.len() > state.max_packet_size {
            return Err(SendError::TooLarge);
        }
        let buf = state.pool.take(data);
        drop(state);
        self.outbox.push_back(Outgoing { peer, channel, buf });
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += data.len() as u64;
        Ok(())
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        let mut state = self.network.state.borrow_mut();
        let state = &mut *state;
        if let Some(buf) = self.lent.take() {
            state.pool.give(buf);
        }
        loop {
            let endpoint = state.endpoint_mut(self.endpoint)?;
            match endpoint.inbox.pop_front()? {
                Incoming::Connected { peer, connect_data } => {
                    // Skipped when this side has already disconnected the peer itself.
                    if let Some(link) = endpoint.link_mut(peer) {
                        if link.state == LinkState::Connecting {
                            link.state = LinkState::Connected;
                        }
                        return Some(TransportEvent::Connected { peer, connect_data });
                    }
                }
                Incoming::Disconnected { peer, reason } => {
                    if endpoint.remove_link(peer).is_some() {
                        tracing::debug!(%peer, %reason, "loopback peer disconnected");
                        return Some(TransportEvent::Disconnected { peer, reason });
                    }
                }
                Incoming::Packet { peer, channel, buf } => {
                    if endpoint.link(peer).is_some() {
                        self.stats.packets_received += 1;
                        self.stats.bytes_received += buf.len() as u64;
                        let data = self.lent.insert(buf);
                        return Some(TransportEvent::Received {
                            peer,
                            channel,
                            data,
                        });
                    }
                    // From a peer this side has disconnected: nothing more is reported.
                    state.pool.give(buf);
                }
            }
        }
    }

    fn advance(&mut self, _dt: Duration) {}

    fn flush(&mut self) {
        let mut state = self.network.state.borrow_mut();
        while let Some(out) = self.outbox.pop_front() {
            state.route(self.endpoint, out);
        }
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        let mut state = self.network.state.borrow_mut();
        let Some(link) = state
            .endpoint(self.endpoint)
            .and_then(|e| e.link(peer))
            .copied()
        else {
            return;
        };
        // Deliver what is queued for this peer first; keep the rest in order.
        for _ in 0..self.outbox.len() {
            if let Some(out) = self.outbox.pop_front() {
                if out.peer == peer {
                    state.route(self.endpoint, out);
                } else {
                    self.outbox.push_back(out);
                }
            }
        }
        if let Some(endpoint) = state.endpoint_mut(self.endpoint) {
            endpoint.remove_link(peer);
        }
        state.notify_remote(link, reason);
        drop(state);
        tracing::debug!(%peer, %reason, "loopback disconnect");
    }

    fn stats(&self) -> TransportStats {
        self.stats
    }

    /// A listening server's `max_clients`.
    fn capacity(&self) -> Option<usize> {
        let state = self.network.state.borrow();
        let server = state.endpoint(self.endpoint)?.server.as_ref()?;
        Some(server.max_clients)
    }
}

impl Drop for LoopbackTransport {
    fn drop(&mut self) {
        let Ok(mut state) = self.network.state.try_borrow_mut() else {
            return; // never happens: no borrow outlives a call
        };
        let state = &mut *state;
        while let Some(out) = self.outbox.pop_front() {
            state.route(self.endpoint, out);
        }
        if let Some(buf) = self.lent.take() {
            state.pool.give(buf);
        }
        let Some(endpoint) = state
            .endpoints
            .get_mut(self.endpoint)
            .and_then(Option::take)
        else {
            return;
        };
        let reason = if self.is_server {
            DisconnectReason::Shutdown
        } else {
            DisconnectReason::Closed
        };
        for link in &endpoint.links {
            state.notify_remote(*link, reason);
        }
        if let Some(name) = endpoint.server.as_ref().and_then(|s| s.name.as_ref()) {
            if state.listeners.get(name) == Some(&self.endpoint) {
                state.listeners.remove(name);
            }
            tracing::debug!(name, "loopback server shut down");
        }
        for event in endpoint.inbox {
            if let Incoming::Packet { buf, .. } = event {
                state.pool.give(buf);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn connected_pair(network: &LoopbackNetwork) -> (LoopbackTransport, LoopbackTransport) {
        let (mut server, mut client) = network.pair(7);
        assert_eq!(
            server.poll_event(),
            Some(TransportEvent::Connected {
                peer: PeerId(2),
                connect_data: 7
            })
        );
        assert_eq!(
            client.poll_event(),
            Some(TransportEvent::Connected {
                peer: PeerId::SERVER,
                connect_data: 0
            })
        );
        (server, client)
    }

    #[test]
    fn delivers_at_flush_in_order() {
        let network = LoopbackNetwork::new();
        let (mut server, mut client) = connected_pair(&network);
        for i in 0..3u8 {
            client
                .send(PeerId::SERVER, Channel::Reliable, &[i])
                .unwrap();
        }
        assert_eq!(server.poll_event(), None, "nothing before flush");
        client.flush();
        for i in 0..3u8 {
            assert_eq!(
                server.poll_event(),
                Some(TransportEvent::Received {
                    peer: PeerId(2),
                    channel: Channel::Reliable,
                    data: &[i]
                })
            );
        }
        assert_eq!(server.poll_event(), None);
    }

    #[test]
    fn buffers_return_to_the_pool() {
        let network = LoopbackNetwork::new();
        let (mut server, mut client) = connected_pair(&network);
        client
            .send(PeerId::SERVER, Channel::Unreliable, b"abc")
            .unwrap();
        client.flush();
        assert!(server.poll_event().is_some());
        assert_eq!(network.pooled_buffers(), 0, "lent until the next poll");
        assert!(server.poll_event().is_none());
        assert_eq!(network.pooled_buffers(), 1);
    }

    #[test]
    fn too_large_is_refused() {
        let network = LoopbackNetwork::new();
        network.set_max_packet_size(4);
        let (_server, mut client) = connected_pair(&network);
        assert_eq!(
            client.send(PeerId::SERVER, Channel::Reliable, &[0; 5]),
            Err(SendError::TooLarge)
        );
        assert_eq!(
            client.send(PeerId::SERVER, Channel::Reliable, &[0; 4]),
            Ok(())
        );
    }

    #[test]
    fn not_connected_until_polled() {
        let network = LoopbackNetwork::new();
        let (mut server, mut client) = network.pair(0);
        assert_eq!(
            client.send(PeerId::SERVER, Channel::Reliable, b"x"),
            Err(SendError::NotConnected)
        );
        assert!(!client.is_connected(PeerId::SERVER));
        assert!(client.poll_event().is_some());
        assert!(client.is_connected(PeerId::SERVER));
        assert_eq!(client.send(PeerId::SERVER, Channel::Reliable, b"x"), Ok(()));
        assert_eq!(
            server.send(PeerId(2), Channel::Reliable, b"x"),
            Err(SendError::NotConnected)
        );
        assert_eq!(server.peer_count(), 1);
    }
}
