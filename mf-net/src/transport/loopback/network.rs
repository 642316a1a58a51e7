//! [`LoopbackNetwork`]: the handle servers listen on and clients connect through.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use super::net_state::{Endpoint, NetState, ServerInfo};
use super::LoopbackTransport;
use crate::transport::PeerId;
#[cfg(doc)]
use crate::transport::{DisconnectReason, TransportEvent};

/// An in-memory network that [`LoopbackTransport`]s connect through.
///
/// A cheap handle: clones share the same network. Single-threaded (`!Send`, `!Sync`).
#[derive(Clone, Default)]
pub struct LoopbackNetwork {
    pub(super) state: Rc<RefCell<NetState>>,
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
        Ok(LoopbackTransport::new(self.clone(), endpoint, true))
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
        let client = LoopbackTransport::new(self.clone(), endpoint, false);
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
        (
            LoopbackTransport::new(self.clone(), server, true),
            LoopbackTransport::new(self.clone(), client, false),
        )
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
}
