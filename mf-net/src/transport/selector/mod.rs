//! Opening a client connection from a `;`-separated connect string, best address first, with
//! fallback when an attempt fails (the spec's lobby handoff).
//!
//! A [`TransportSelector`] holds [`TransportFactory`]s (ENet comes from `mf-net-enet`;
//! [`LoopbackTransportFactory`] and the [`SteamSocketsFactory`] stub are here).
//! [`connect`](TransportSelector::connect) returns a [`SelectingTransport`]: a [`Transport`] that
//! tries the addresses in turn. Connections complete asynchronously, so an attempt that fails
//! later (its transport reports [`ConnectFailed`](DisconnectReason::ConnectFailed) or
//! [`Timeout`](DisconnectReason::Timeout), or no handshake within
//! [`handshake_timeout`](TransportSelector::handshake_timeout) of [`advance`](Transport::advance)d
//! time) is dropped and the next address is opened. The caller sees one
//! [`Disconnected`](TransportEvent::Disconnected)`{ ConnectFailed }` only when none is left.
//!
//! ```
//! use mf_net::transport::selector::{SteamSocketsFactory, TransportSelector};
//!
//! // Steam sockets are stubbed, so this would fall through to ENet (given an ENet factory).
//! let err = TransportSelector::new()
//!     .with_factory(SteamSocketsFactory)
//!     .connect("steam:76561198000000001", 0)
//!     .unwrap_err();
//! assert_eq!(err.failures.len(), 1);
//! ```
//!
//! # When an attempt counts as established
//!
//! By default an attempt is established by its transport's
//! [`Connected`](TransportEvent::Connected) event. A layer with a handshake of its own (the
//! replication layer's Hello/Welcome) can use
//! [`TransportSelector::establish_manually`] and call
//! [`SelectingTransport::mark_established`] once the handshake completes, or give up on the
//! current address with [`SelectingTransport::abandon_attempt`]. Until it is established, an
//! attempt may fall through to the next address; afterwards every event passes through
//! unchanged.
//!
//! # Peer ids
//!
//! The first attempt's peer ids pass through unchanged (a client sees the server as
//! [`PeerId::SERVER`]). Attempt *n* adds *n* × 2⁴⁸ to its ids, so an id handed out by an
//! abandoned attempt is never reused by the next one. An attempt abandoned after its
//! [`Connected`](TransportEvent::Connected) was passed on ends with a
//! [`Disconnected`](TransportEvent::Disconnected) for that id (reason
//! [`Timeout`](DisconnectReason::Timeout) or the transport's own), so the layer above never
//! holds a stale peer.

mod error;
mod factory;
mod selecting;

pub use error::{AttemptError, AttemptFailure, SelectError};
pub use factory::{LoopbackTransportFactory, OpenError, SteamSocketsFactory, TransportFactory};
pub use selecting::SelectingTransport;

use std::fmt;
use std::time::Duration;

#[cfg(doc)]
use super::{DisconnectReason, PeerId, Transport, TransportEvent};

/// The default time an attempt may take to be established (the spec's `HandshakeTimeout`).
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Factories plus the rules for walking a connect string. See the [module docs](self).
pub struct TransportSelector {
    factories: Vec<Box<dyn TransportFactory>>,
    handshake_timeout: Duration,
    establish_on_connect: bool,
}

impl Default for TransportSelector {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for TransportSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.factories.iter().map(|x| x.name()).collect();
        f.debug_struct("TransportSelector")
            .field("factories", &names)
            .field("handshake_timeout", &self.handshake_timeout)
            .field("establish_on_connect", &self.establish_on_connect)
            .finish()
    }
}

impl TransportSelector {
    /// A selector with no factories (add them with [`with_factory`](Self::with_factory); the
    /// spec's default set, ENet + Steam sockets, is `mf_net_enet::default_selector()`).
    pub fn new() -> Self {
        TransportSelector {
            factories: Vec::new(),
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            establish_on_connect: true,
        }
    }

    /// Adds a factory; factories are asked in the order they were added.
    pub fn with_factory(mut self, factory: impl TransportFactory + 'static) -> Self {
        self.add_factory(factory);
        self
    }

    /// Adds a factory; factories are asked in the order they were added.
    pub fn add_factory(&mut self, factory: impl TransportFactory + 'static) {
        self.factories.push(Box::new(factory));
    }

    /// How long (in [`advance`](Transport::advance)d time) an attempt may take to be
    /// established before the next address is tried. Default 5 s.
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Attempts are established only by [`SelectingTransport::mark_established`], not by the
    /// transport's [`Connected`](TransportEvent::Connected) event.
    pub fn establish_manually(mut self) -> Self {
        self.establish_on_connect = false;
        self
    }

    /// The names of the factories, in order.
    pub fn factory_names(&self) -> impl Iterator<Item = &str> {
        self.factories.iter().map(|f| f.name())
    }

    /// Starts connecting through the first address of `connect_string` (`;`-separated, best
    /// first) that a factory opens. Entries that do not parse are skipped (and listed in
    /// [`SelectingTransport::failures`]), so a lobby written by a newer build still works.
    ///
    /// # Errors
    ///
    /// No entry could be opened at all.
    pub fn connect(
        self,
        connect_string: &str,
        connect_data: u32,
    ) -> Result<SelectingTransport, SelectError> {
        SelectingTransport::start(self, connect_string, connect_data)
    }
}
