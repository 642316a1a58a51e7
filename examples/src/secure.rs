//! The demos' `--secure` mode: the host is its own matchmaker. It generates the fleet key,
//! serves through [`SecureServer`] and issues a [`ConnectToken`] per joining client (printed for
//! clients in other processes, handed over directly in-process). A real game keeps the key in
//! its backend and hands tokens out over HTTPS; see the book's "Authentication and encryption".

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mf_net::transport::address::NetworkAddress;
use mf_net::transport::{DisconnectReason, PeerId, Transport};
use mf_net_enet::EnetTransport;
use mf_net_secure::{
    ConnectToken, SecureClient, SecureServer, ServerConfig, SharedKey, TokenError, TokenIssuer,
};

/// The demos' protocol id.
pub const PROTOCOL: u64 = 0x6d66_2d64_656d_6f01;
/// How long a printed token stays valid: long enough to copy it into another terminal.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(600);

/// The time since the UNIX epoch (the demos' programs read the clock; the library does not).
pub fn wall_clock() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// The address tokens name for a host bound to `bind`: an unspecified IP (every interface)
/// becomes 127.0.0.1, so the demo works on one machine out of the box.
pub fn token_address(bind: SocketAddr) -> NetworkAddress {
    let ip = if bind.ip().is_unspecified() {
        "127.0.0.1".to_owned()
    } else {
        bind.ip().to_string()
    };
    NetworkAddress::Enet {
        host: ip,
        port: bind.port(),
    }
}

/// Issues tokens for one server, numbering clients from 1.
#[derive(Debug)]
pub struct Matchmaker {
    issuer: TokenIssuer,
    servers: Vec<NetworkAddress>,
    next_client: u64,
}

impl Matchmaker {
    /// A fresh key, a matchmaker issuing tokens for `address`, and the server's configuration
    /// for up to `max_clients`.
    ///
    /// # Errors
    ///
    /// The system's random generator failing.
    pub fn new(
        address: NetworkAddress,
        max_clients: usize,
    ) -> Result<(Self, ServerConfig), TokenError> {
        let key = SharedKey::generate()?;
        let config = ServerConfig::new(PROTOCOL, key.clone(), vec![address.clone()])
            .with_max_clients(max_clients);
        let issuer = TokenIssuer::new(PROTOCOL, key).with_lifetime(TOKEN_LIFETIME)?;
        let matchmaker = Self {
            issuer,
            servers: vec![address],
            next_client: 1,
        };
        Ok((matchmaker, config))
    }

    /// A token for the next client, with `name` as its user data (cut to the size limit).
    ///
    /// # Errors
    ///
    /// The system's random generator failing.
    pub fn issue(&mut self, name: &str) -> Result<ConnectToken, TokenError> {
        let id = self.next_client;
        self.next_client += 1;
        let name = &name.as_bytes()[..name.len().min(mf_net_secure::MAX_USER_DATA)];
        self.issuer.issue(id, name, &self.servers, wall_clock())
    }
}

/// The name a transport vouches for, for a peer: the user data of its token on a secure
/// server, nothing on a plain one.
pub trait VerifiedName {
    /// The verified name of `peer`, if the transport knows one.
    fn verified_name(&self, peer: PeerId) -> Option<String>;
}

impl VerifiedName for mf_net::transport::loopback::LoopbackTransport {
    fn verified_name(&self, _peer: PeerId) -> Option<String> {
        None
    }
}

impl VerifiedName for EnetTransport {
    fn verified_name(&self, _peer: PeerId) -> Option<String> {
        None
    }
}

impl<T: Transport> VerifiedName for SecureServer<T> {
    fn verified_name(&self, peer: PeerId) -> Option<String> {
        let who = self.identity(peer)?;
        Some(String::from_utf8_lossy(who.user_data()).into_owned())
    }
}

/// A graceful close over ENet, plain or under the secure layer.
pub trait GracefulClose {
    /// Begins closing every connection with `reason`, after what was queued.
    fn begin_close(&mut self, reason: DisconnectReason);
    /// One step of the close; true once every peer acknowledged.
    fn service_close(&mut self) -> bool;
}

impl GracefulClose for EnetTransport {
    fn begin_close(&mut self, reason: DisconnectReason) {
        EnetTransport::begin_close(self, reason);
    }
    fn service_close(&mut self) -> bool {
        EnetTransport::service_close(self)
    }
}

impl GracefulClose for SecureServer<EnetTransport> {
    fn begin_close(&mut self, reason: DisconnectReason) {
        self.inner_mut().begin_close(reason);
    }
    fn service_close(&mut self) -> bool {
        self.inner_mut().service_close()
    }
}

impl GracefulClose for SecureClient<EnetTransport> {
    fn begin_close(&mut self, reason: DisconnectReason) {
        self.inner_mut().begin_close(reason);
    }
    fn service_close(&mut self) -> bool {
        self.inner_mut().service_close()
    }
}
