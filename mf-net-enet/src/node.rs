//! [`NetworkNode`]: a server or client [`MessageBus`] over ENet in one line, pumped by the caller
//! each frame (the spec's `NetworkNode`).

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::{Deref, DerefMut};
use std::time::Duration;

use mf_net::bus::{MessageBus, MessageRegistry};
use mf_net::transport::selector::{SelectError, SelectingTransport, TransportSelector};
use mf_net::transport::{DisconnectReason, Transport};

use crate::{default_selector, EnetConfig, EnetError, EnetTransport};

/// A [`MessageBus`] with its transport, started in one call and pumped once a frame.
///
/// It dereferences to the bus, so `subscribe`, `send`, `broadcast`, `peers`, `next_event` and
/// `stats` are called on it directly.
///
/// ```no_run
/// use mf_net::bus::MessageRegistry;
/// use mf_net::prelude::*;
/// use mf_net_enet::NetworkNode;
///
/// #[derive(NetCodec, Debug)]
/// struct Chat { text: String }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut registry = MessageRegistry::new(1);
/// registry.register::<Chat>()?;
///
/// let mut server: NetworkNode<Vec<String>> = NetworkNode::listen(27615, 16, registry.clone())?;
/// server.subscribe(|_, _, chat: &Chat, log: &mut Vec<String>| log.push(chat.text.clone()))?;
///
/// let mut client: NetworkNode = NetworkNode::connect("127.0.0.1:27615", registry)?;
/// let mut log = Vec::new();
/// loop {
///     // once a frame:
///     server.pump(&mut log);
///     client.pump(&mut ());
///     # break;
/// }
/// # Ok(())
/// # }
/// ```
pub struct NetworkNode<S = (), T = EnetTransport> {
    bus: MessageBus<T, S>,
}

impl<S, T: Transport> fmt::Debug for NetworkNode<S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetworkNode")
            .field("role", &self.bus.role())
            .field("peers", &self.bus.peers())
            .finish_non_exhaustive()
    }
}

impl<S: 'static> NetworkNode<S, EnetTransport> {
    /// A server on `port` of every interface (see [`EnetTransport::listen_any`]) for up to
    /// `max_clients` clients; clients with another registry fingerprint are refused with
    /// [`ProtocolMismatch`](DisconnectReason::ProtocolMismatch).
    ///
    /// # Errors
    ///
    /// The port cannot be bound, or `max_clients` is out of range.
    pub fn listen(
        port: u16,
        max_clients: usize,
        registry: MessageRegistry,
    ) -> Result<Self, EnetError> {
        let transport = EnetTransport::listen_any(port, max_clients)?;
        Ok(Self::server(transport, registry))
    }

    /// A server bound to `addr` (port 0 picks a free one: see [`local_addr`](Self::local_addr)).
    ///
    /// # Errors
    ///
    /// As [`listen`](Self::listen).
    pub fn listen_on(
        addr: SocketAddr,
        max_clients: usize,
        registry: MessageRegistry,
        config: EnetConfig,
    ) -> Result<Self, EnetError> {
        let transport = EnetTransport::listen_with(addr, max_clients, config)?;
        Ok(Self::server(transport, registry))
    }

    /// A client connecting to `addr`, sending the registry's fingerprint as connect data.
    ///
    /// # Errors
    ///
    /// The address does not resolve or no socket can be bound.
    pub fn connect<A: ToSocketAddrs + fmt::Debug>(
        addr: A,
        registry: MessageRegistry,
    ) -> Result<Self, EnetError> {
        Self::connect_with(addr, registry, EnetConfig::default())
    }

    /// [`connect`](Self::connect) with explicit settings (such as a connect timeout).
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub fn connect_with<A: ToSocketAddrs + fmt::Debug>(
        addr: A,
        registry: MessageRegistry,
        config: EnetConfig,
    ) -> Result<Self, EnetError> {
        let transport = EnetTransport::connect_with(addr, registry.fingerprint(), config)?;
        Ok(Self::client(transport, registry))
    }

    /// The local socket address (the port clients need when listening on port 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.bus.transport().local_addr()
    }

    /// Begins a graceful close: every peer is disconnected with `reason` after what was queued
    /// for it. Then call [`service_close`](Self::service_close) once a frame until it returns
    /// `true` (or your frame budget runs out) before dropping the node.
    pub fn begin_close(&mut self, reason: DisconnectReason) {
        self.bus.transport_mut().begin_close(reason);
    }

    /// One non-blocking step of a close; true once every peer acknowledged.
    pub fn service_close(&mut self) -> bool {
        self.bus.transport_mut().service_close()
    }

    /// Closes with `reason`, waiting up to `max_wait` for the peers to acknowledge (for the end
    /// of a program). Returns whether the close completed.
    pub fn close_blocking(self, reason: DisconnectReason, max_wait: Duration) -> bool {
        self.bus.into_transport().close_blocking(reason, max_wait)
    }
}

impl<S: 'static> NetworkNode<S, SelectingTransport> {
    /// A client connecting through a `;`-separated connect string (best address first) with
    /// [`default_selector`] (ENet, and the Steam sockets stub).
    ///
    /// # Errors
    ///
    /// No address of the string could be opened.
    pub fn join(connect_string: &str, registry: MessageRegistry) -> Result<Self, SelectError> {
        Self::join_with(default_selector(), connect_string, registry)
    }

    /// [`join`](Self::join) with a selector of your own (more factories, another handshake
    /// timeout).
    ///
    /// # Errors
    ///
    /// No address of the string could be opened.
    pub fn join_with(
        selector: TransportSelector,
        connect_string: &str,
        registry: MessageRegistry,
    ) -> Result<Self, SelectError> {
        let transport = selector.connect(connect_string, registry.fingerprint())?;
        Ok(Self::client(transport, registry))
    }
}

impl<S: 'static, T: Transport + 'static> NetworkNode<S, T> {
    /// A server node over any transport.
    pub fn server(transport: T, registry: MessageRegistry) -> Self {
        NetworkNode {
            bus: MessageBus::server(transport, registry),
        }
    }

    /// A client node over any transport (made with `registry.fingerprint()` as connect data).
    pub fn client(transport: T, registry: MessageRegistry) -> Self {
        NetworkNode {
            bus: MessageBus::client(transport, registry),
        }
    }

    /// Once a frame: receives and dispatches everything that arrived (handlers get `state`),
    /// then pushes what was sent onto the wire. Events are then read with `next_event`.
    pub fn pump(&mut self, state: &mut S) {
        self.bus.poll(state);
        self.bus.flush();
    }

    /// The bus.
    pub fn bus(&self) -> &MessageBus<T, S> {
        &self.bus
    }

    /// The bus, mutably.
    pub fn bus_mut(&mut self) -> &mut MessageBus<T, S> {
        &mut self.bus
    }

    /// Consumes the node, returning its bus.
    pub fn into_bus(self) -> MessageBus<T, S> {
        self.bus
    }
}

impl<S, T> Deref for NetworkNode<S, T> {
    type Target = MessageBus<T, S>;

    fn deref(&self) -> &MessageBus<T, S> {
        &self.bus
    }
}

impl<S, T> DerefMut for NetworkNode<S, T> {
    fn deref_mut(&mut self) -> &mut MessageBus<T, S> {
        &mut self.bus
    }
}
