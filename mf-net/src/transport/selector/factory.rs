//! Opening transports: the [`TransportFactory`] trait, why opening fails ([`OpenError`]), and
//! the factories that ship with mf-net (loopback, and the Steam sockets stub).

use std::fmt;

use crate::transport::address::NetworkAddress;
use crate::transport::loopback::LoopbackNetwork;
use crate::transport::Transport;

/// Why a factory did not open a transport.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenError {
    /// This factory does not handle this kind of address; the selector asks the next factory.
    Unsupported,
    /// The factory handles the address but its transport cannot work in this build or on this
    /// machine (Steam sockets while stubbed).
    Unavailable(String),
    /// Opening failed (a socket could not be bound, a name did not resolve…).
    Failed(String),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Unsupported => f.write_str("no transport for this kind of address"),
            OpenError::Unavailable(why) => write!(f, "transport not available: {why}"),
            OpenError::Failed(why) => write!(f, "could not open the transport: {why}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// Opens client transports for the addresses it understands.
pub trait TransportFactory {
    /// A short name for logs (`"enet"`, `"loopback"`, `"steam"`).
    fn name(&self) -> &str;

    /// Opens a client transport connecting to `address` with `connect_data` (mf-net sends its
    /// registry fingerprint). The connection completes later, through the transport's events.
    ///
    /// # Errors
    ///
    /// [`OpenError::Unsupported`] for an address this factory does not handle; otherwise why it
    /// could not open one.
    fn open_client(
        &mut self,
        address: &NetworkAddress,
        connect_data: u32,
    ) -> Result<Box<dyn Transport>, OpenError>;
}

/// Steam Networking Sockets, stubbed until Steam natives ship: every `steam:` address is
/// [`OpenError::Unavailable`], so a connect string falls through to its next address.
#[derive(Debug, Clone, Copy, Default)]
pub struct SteamSocketsFactory;

impl TransportFactory for SteamSocketsFactory {
    fn name(&self) -> &str {
        "steam"
    }

    fn open_client(
        &mut self,
        address: &NetworkAddress,
        _connect_data: u32,
    ) -> Result<Box<dyn Transport>, OpenError> {
        match address {
            NetworkAddress::Steam { .. } => Err(OpenError::Unavailable(
                "Steam Networking Sockets are not available on this build".to_owned(),
            )),
            _ => Err(OpenError::Unsupported),
        }
    }
}

/// Opens `loopback:name` addresses on one in-process [`LoopbackNetwork`].
#[derive(Clone)]
pub struct LoopbackTransportFactory {
    network: LoopbackNetwork,
}

impl LoopbackTransportFactory {
    /// A factory connecting clients on `network` (a handle to the same network the server
    /// listens on).
    pub fn new(network: LoopbackNetwork) -> Self {
        LoopbackTransportFactory { network }
    }
}

impl fmt::Debug for LoopbackTransportFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackTransportFactory")
            .finish_non_exhaustive()
    }
}

impl TransportFactory for LoopbackTransportFactory {
    fn name(&self) -> &str {
        "loopback"
    }

    fn open_client(
        &mut self,
        address: &NetworkAddress,
        connect_data: u32,
    ) -> Result<Box<dyn Transport>, OpenError> {
        match address {
            NetworkAddress::Loopback { name } => {
                Ok(Box::new(self.network.connect(name, connect_data)))
            }
            _ => Err(OpenError::Unsupported),
        }
    }
}
