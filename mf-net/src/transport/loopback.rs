//! In-process transport: a server and any number of clients in one process, with no socket.
//!
//! A [`LoopbackNetwork`] is an in-memory network. A server [`listen`](LoopbackNetwork::listen)s
//! under a name (any string; `"game:7777"` reads like an address), clients
//! [`connect`](LoopbackNetwork::connect) to that name, and each gets a [`LoopbackTransport`]
//! implementing [`Transport`]. The network is perfect: no loss, no delay, every channel in send
//! order. Put a [`SimulatedTransport`](super::simulated::SimulatedTransport) in front of an
//! endpoint to make it bad.
//!
//! # Behaviour
//!
//! - **Delivery happens at [`flush`](Transport::flush)**, as on a real transport: `send` copies
//!   the packet into a queue of the sending endpoint and `flush` moves every queued packet into
//!   the receivers' event queues, in send order. A frame-driven program sends during its frame
//!   and flushes at the end of it; the other side sees the packets the next time it polls.
//! - **Connecting completes at once**, but is reported as events: the server gets
//!   [`Connected`](TransportEvent::Connected) with a fresh [`PeerId`] (counting from 2, never
//!   reused) and the client's connect data; the client gets `Connected` for
//!   [`PeerId::SERVER`] with connect data 0. Connecting to a name nobody listens on, or to a
//!   server that already has `max_clients` clients, fails as a refused connection does: the
//!   client gets [`Disconnected`](TransportEvent::Disconnected) with
//!   [`ConnectFailed`](DisconnectReason::ConnectFailed) or
//!   [`ServerFull`](DisconnectReason::ServerFull), and the server sees nothing.
//! - **A peer can be sent to once its `Connected` event has been polled**, as with ENet. Before
//!   that, and after the remote side has left but before its `Disconnected` event has been
//!   polled, `send` fails with [`SendError::NotConnected`]; for ids that were never connected
//!   or whose `Disconnected` event has been polled, it fails with [`SendError::UnknownPeer`].
//! - **[`disconnect`](Transport::disconnect)** first delivers every packet still queued for the
//!   peer (both channels, in order), then the peer gets `Disconnected` with the reason. The local
//!   side gets no event for its own disconnect and nothing further from that peer: packets from
//!   it still waiting in the local event queue are discarded.
//! - **Dropping a transport** flushes it and disconnects every peer: a dropped server tells its
//!   clients [`Shutdown`](DisconnectReason::Shutdown), a dropped client tells the server
//!   [`Closed`](DisconnectReason::Closed). A server's name is free again once it is dropped.
//! - Packets larger than [`LoopbackNetwork::max_packet_size`] (32 MiB by default, ENet's
//!   default limit) are refused with [`SendError::TooLarge`]; [`advance`](Transport::advance)
//!   does nothing (the loopback has no timers).
//!
//! # Allocation
//!
//! Packets are copied into buffers from a pool shared by the whole network and given back when
//! the receiver polls its next event, and every queue keeps its capacity, so once warmed up,
//! sending, flushing and polling allocate nothing.
//!
//! # Threads
//!
//! The network is single-threaded by design: [`LoopbackNetwork`] and [`LoopbackTransport`] share
//! state through `Rc<RefCell<..>>` and are neither `Send` nor `Sync`. Run every endpoint of one
//! network on the same thread (one test, one game loop).
//!
//! ```
//! use mf_net::transport::loopback::LoopbackNetwork;
//! use mf_net::transport::{Channel, PeerId, Transport, TransportEvent};
//!
//! let network = LoopbackNetwork::new();
//! let mut server = network.listen("game", 8).expect("the name is free");
//! let mut client = network.connect("game", 42);
//!
//! let Some(TransportEvent::Connected { peer, connect_data: 42 }) = server.poll_event() else {
//!     panic!("the server sees the client");
//! };
//! assert_eq!(peer, PeerId(2));
//! assert!(matches!(
//!     client.poll_event(),
//!     Some(TransportEvent::Connected { peer: PeerId::SERVER, connect_data: 0 })
//! ));
//!
//! client.send(PeerId::SERVER, Channel::Reliable, b"hello").unwrap();
//! client.flush();
//! assert!(matches!(
//!     server.poll_event(),
//!     Some(TransportEvent::Received { data: b"hello", .. })
//! ));
//! ```

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use super::pool::PacketPool;
use super::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

/// An in-memory network that [`LoopbackTransport`]s connect through.
///
/// A cheap handle: clones share the same network. Single-threaded (`!Send`, `!Sync`).
#[derive(Clone, Default)]
pub struct LoopbackNetwork {
    state: Rc<RefCell<NetState>>,
}

/// Why [`LoopbackNetwork::listen`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListenError {
    /// Another server already listens under this name.
    NameTaken,
}

impl fmt::Display for ListenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenError::NameTaken => f.write_str("a loopback server already listens on this name"),
        }
    }
}

impl std::error::Error for ListenError {}

/// One endpoint (a server or a client) of a [`LoopbackNetwork`].
///
/// See the [module documentation](self) for how it behaves. Dropping it disconnects its peers.
pub struct LoopbackTransport {
    network: LoopbackNetwork,
    endpoint: usize,
    is_server: bool,
    outbox: VecDeque<Outgoing>,
    /// The buffer of the last [`TransportEvent::Received`], lent until the next poll.
    lent: Option<Vec<u8>>,
    stats: TransportStats,
}

struct NetState {
    pool: PacketPool,
    endpoints: Vec<Option<Endpoint>>,
    listeners: HashMap<String, usize>,
    max_packet_size: usize,
}

impl Default for NetState {
    fn default() -> Self {
        Self {
            pool: PacketPool::new(),
            endpoints: Vec::new(),
            listeners: HashMap::new(),
            max_packet_size: LoopbackNetwork::DEFAULT_MAX_PACKET_SIZE,
        }
    }
}

/// What the network knows of one transport: its incoming events and its connections.
struct Endpoint {
    inbox: VecDeque<Incoming>,
    /// Sorted by `local` (server ids are handed out in increasing order).
    links: Vec<Link>,
    server: Option<ServerInfo>,
}

struct ServerInfo {
    /// `None` for the server half of a [`LoopbackNetwork::pair`].
    name: Option<String>,
    max_clients: usize,
    next_peer: u64,
}

/// One side of a connection.
#[derive(Debug, Clone, Copy)]
struct Link {
    /// How this endpoint names the peer.
    local: PeerId,
    /// The peer's endpoint index (meaningless once `state` is `Closing`).
    remote_endpoint: usize,
    /// How the peer names this endpoint.
    remote_id: PeerId,
    state: LinkState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkState {
    /// Established, but this side has not polled its `Connected` event yet.
    Connecting,
    /// Established and announced: packets may be sent.
    Connected,
    /// The remote side has gone; this side's `Disconnected` event is waiting in its queue.
    Closing,
}

enum Incoming {
    Connected {
        peer: PeerId,
        connect_data: u32,
    },
    Disconnected {
        peer: PeerId,
        reason: DisconnectReason,
    },
    Packet {
        peer: PeerId,
        channel: Channel,
        buf: Vec<u8>,
    },
}

struct Outgoing {
    peer: PeerId,
    channel: Channel,
    buf: Vec<u8>,
}

impl Endpoint {
    fn new(server: Option<ServerInfo>) -> Self {
        Self {
            inbox: VecDeque::new(),
            links: Vec::new(),
            server,
        }
    }

    fn link(&self, peer: PeerId) -> Option<&Link> {
        let i = self.links.binary_search_by_key(&peer, |l| l.local).ok()?;
        self.links.get(i)
    }

    fn link_mut(&mut self, peer: PeerId) -> Option<&mut Link> {
        let i = self.links.binary_search_by_key(&peer, |l| l.local).ok()?;
        self.links.get_mut(i)
    }

    fn remove_link(&mut self, peer: PeerId) -> Option<Link> {
        let i = self.links.binary_search_by_key(&peer, |l| l.local).ok()?;
        Some(self.links.remove(i))
    }

    fn active_links(&self) -> usize {
        self.links
            .iter()
            .filter(|l| l.state != LinkState::Closing)
            .count()
    }
}

impl NetState {
    fn endpoint(&self, index: usize) -> Option<&Endpoint> {
        self.endpoints.get(index)?.as_ref()
    }

    fn endpoint_mut(&mut self, index: usize) -> Option<&mut Endpoint> {
        self.endpoints.get_mut(index)?.as_mut()
    }

    fn add_endpoint(&mut self, endpoint: Endpoint) -> usize {
        match self.endpoints.iter().position(Option::is_none) {
            Some(free) => {
                self.endpoints[free] = Some(endpoint);
                free
            }
            None => {
                self.endpoints.push(Some(endpoint));
                self.endpoints.len() - 1
            }
        }
    }

    /// Moves one queued packet of endpoint `from` into its receiver's event queue, or recycles
    /// it when the connection is gone.
    fn route(&mut self, from: usize, out: Outgoing) {
        let link = self.endpoint(from).and_then(|e| e.link(out.peer)).copied();
        let target = match link {
            Some(link) if link.state == LinkState::Connected => link,
            _ => return self.pool.give(out.buf),
        };
        match self.endpoint_mut(target.remote_endpoint) {
            Some(remote) => remote.inbox.push_back(Incoming::Packet {
                peer: target.remote_id,
                channel: out.channel,
                buf: out.buf,
            }),
            None => self.pool.give(out.buf),
        }
    }

    /// Tells the other side of `link` that the connection ended with `reason`.
    fn notify_remote(&mut self, link: Link, reason: DisconnectReason) {
        if link.state == LinkState::Closing {
            return; // the remote side already left
        }
        if let Some(remote) = self.endpoint_mut(link.remote_endpoint) {
            if let Some(back) = remote.link_mut(link.remote_id) {
                back.state = LinkState::Closing;
            }
            remote.inbox.push_back(Incoming::Disconnected {
                peer: link.remote_id,
                reason,
            });
        }
    }

    /// Accepts a new client of `server` (an endpoint index), or says why not.
    fn accept(
        &mut self,
        server: usize,
        client: usize,
        connect_data: u32,
    ) -> Result<PeerId, DisconnectReason> {
        let Some(endpoint) = self.endpoint_mut(server) else {
            return Err(DisconnectReason::ConnectFailed);
        };
        let active = endpoint.active_links();
        let Some(info) = endpoint.server.as_mut() else {
            return Err(DisconnectReason::ConnectFailed);
        };
        if active >= info.max_clients {
            return Err(DisconnectReason::ServerFull);
        }
        let peer = PeerId(info.next_peer);
        info.next_peer += 1;
        endpoint.links.push(Link {
            local: peer,
            remote_endpoint: client,
            remote_id: PeerId::SERVER,
            state: LinkState::Connecting,
        });
        endpoint
            .inbox
            .push_back(Incoming::Connected { peer, connect_data });
        Ok(peer)
    }

    /// Creates a client endpoint and connects it to `server` (or records why it could not).
    fn connect_to(&mut self, server: Option<usize>, connect_data: u32) -> usize {
        let client = self.add_endpoint(Endpoint::new(None));
        let outcome = match server {
            Some(server) => self
                .accept(server, client, connect_data)
                .map(|peer| (server, peer)),
            None => Err(DisconnectReason::ConnectFailed),
        };
        if let Some(endpoint) = self.endpoint_mut(client) {
            match outcome {
                Ok((server, peer)) => {
                    endpoint.links.push(Link {
                        local: PeerId::SERVER,
                        remote_endpoint: server,
                        remote_id: peer,
                        state: LinkState::Connecting,
                    });
                    endpoint.inbox.push_back(Incoming::Connected {
                        peer: PeerId::SERVER,
                        connect_data: 0,
                    });
                }
                Err(reason) => {
                    // A link that is already closing, so that `send` says `NotConnected` until
                    // the client has polled the failure.
                    endpoint.links.push(Link {
                        local: PeerId::SERVER,
                        remote_endpoint: usize::MAX,
                        remote_id: PeerId(0),
                        state: LinkState::Closing,
                    });
                    endpoint.inbox.push_back(Incoming::Disconnected {
                        peer: PeerId::SERVER,
                        reason,
                    });
                }
            }
        }
        client
    }
}

impl LoopbackNetwork {
    /// The largest packet a new network accepts by default: 32 MiB, as ENet.
    pub const DEFAULT_MAX_PACKET_SIZE: usize = 32 * 1024 * 1024;

    /// A new, empty network.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a server listening under `name` that accepts at most `max_clients` clients at a
    /// time.
    ///
    /// # Errors
    ///
    /// [`ListenError::NameTaken`] if another server of this network already listens under
    /// `name` (a name is freed when its server transport is dropped).
    pub fn listen(&self, name: &str, max_clients: usize) -> Result<LoopbackTransport, ListenError> {
        let endpoint = {
            let mut state = self.state.borrow_mut();
            if state.listeners.contains_key(name) {
                return Err(ListenError::NameTaken);
            }
            let endpoint = state.add_endpoint(Endpoint::new(Some(ServerInfo {
                name: Some(name.to_owned()),
                max_clients,
                next_peer: PeerId::SERVER.0 + 1,
            })));
            state.listeners.insert(name.to_owned(), endpoint);
            endpoint
        };
        tracing::debug!(name, max_clients, "loopback server listening");
        Ok(self.transport(endpoint, true))
    }

    /// Connects a new client to the server listening under `name`, passing it `connect_data`.
    ///
    /// Always returns a transport; the outcome arrives as its first event:
    /// [`Connected`](TransportEvent::Connected) for [`PeerId::SERVER`], or
    /// [`Disconnected`](TransportEvent::Disconnected) with
    /// [`ConnectFailed`](DisconnectReason::ConnectFailed) when nobody listens under `name` or
    /// [`ServerFull`](DisconnectReason::ServerFull) when the server has no free slot.
    pub fn connect(&self, name: &str, connect_data: u32) -> LoopbackTransport {
        let endpoint = {
            let mut state = self.state.borrow_mut();
            let server = state.listeners.get(name).copied();
            state.connect_to(server, connect_data)
        };
        let client = self.transport(endpoint, false);
        tracing::debug!(name, connect_data, "loopback client connecting");
        client
    }

    /// A server with one client already connected to it (`connect_data` is what the client
    /// passes), listening under no name: `(server, client)`. Both still get their
    /// [`Connected`](TransportEvent::Connected) events.
    pub fn pair(&self, connect_data: u32) -> (LoopbackTransport, LoopbackTransport) {
        let (server, client) = {
            let mut state = self.state.borrow_mut();
            let server = state.add_endpoint(Endpoint::new(Some(ServerInfo {
                name: None,
                max_clients: 1,
                next_peer: PeerId::SERVER.0 + 1,
            })));
            let client = state.connect_to(Some(server), connect_data);
            (server, client)
        };
        (self.transport(server, true), self.transport(client, false))
    }

    /// Whether a server listens under `name`.
    pub fn is_listening(&self, name: &str) -> bool {
        self.state.borrow().listeners.contains_key(name)
    }

    /// The largest packet `send` accepts on this network.
    pub fn max_packet_size(&self) -> usize {
        self.state.borrow().max_packet_size
    }

    /// Changes the largest packet `send` accepts on this network (every endpoint, at once).
    pub fn set_max_packet_size(&self, bytes: usize) {
        self.state.borrow_mut().max_packet_size = bytes;
    }

    /// Fills the network's packet pool with at least `buffers` free buffers of at least `bytes`
    /// each, so that a later burst of that many packets in flight allocates nothing.
    pub fn reserve_buffers(&self, buffers: usize, bytes: usize) {
        self.state.borrow_mut().pool.reserve(buffers, bytes);
    }

    /// How many free packet buffers the network's pool holds.
    pub fn pooled_buffers(&self) -> usize {
        self.state.borrow().pool.len()
    }

    fn transport(&self, endpoint: usize, is_server: bool) -> LoopbackTransport {
        LoopbackTransport {
            network: self.clone(),
            endpoint,
            is_server,
            outbox: VecDeque::new(),
            lent: None,
            stats: TransportStats::default(),
        }
    }
}

impl fmt::Debug for LoopbackNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("LoopbackNetwork");
        match self.state.try_borrow() {
            Ok(state) => s
                .field(
                    "endpoints",
                    &state.endpoints.iter().filter(|e| e.is_some()).count(),
                )
                .field("listeners", &state.listeners.len())
                .field("pooled_buffers", &state.pool.len())
                .finish(),
            Err(_) => s.finish_non_exhaustive(),
        }
    }
}

impl LoopbackTransport {
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
    fn drop_frees_name_and_endpoint_slot() {
        let network = LoopbackNetwork::new();
        let server = network.listen("a", 1).unwrap();
        assert!(network.is_listening("a"));
        assert_eq!(network.listen("a", 1).err(), Some(ListenError::NameTaken));
        drop(server);
        assert!(!network.is_listening("a"));
        let _again = network.listen("a", 1).unwrap();
        assert_eq!(network.state.borrow().endpoints.len(), 1);
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
