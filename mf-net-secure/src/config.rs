//! [`ServerConfig`] and [`DuplicatePolicy`]: how a secure server admits clients.

use std::time::Duration;

use mf_net::transport::address::NetworkAddress;

use crate::SharedKey;

/// What a server does when a token's client id is already connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicatePolicy {
    /// The newer connection is admitted and the older one is disconnected with
    /// [`Replaced`](mf_net::transport::DisconnectReason::Replaced) (a player whose game
    /// crashed gets back in before the old connection times out). The default.
    #[default]
    ReplaceOlder,
    /// The newer connection is refused with
    /// [`ClientIdInUse`](mf_net::transport::DisconnectReason::ClientIdInUse).
    RefuseNewer,
}

/// How a [`SecureServer`](crate::SecureServer) admits clients.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The game's protocol id; tokens for another are refused.
    pub protocol_id: u64,
    /// The key shared with the token issuer.
    pub key: SharedKey,
    /// This server's public addresses, as the issuer writes them in tokens (compared as text:
    /// `enet:203.0.113.7:27615` and `enet:game.example.com:27615` differ). A token must list
    /// one of them.
    pub addresses: Vec<NetworkAddress>,
    /// Admitted clients at most; more are refused with
    /// [`ServerFull`](mf_net::transport::DisconnectReason::ServerFull).
    pub max_clients: usize,
    /// How long a connected peer may take to send its connection request.
    pub handshake_timeout: Duration,
    /// What to do with a second connection for the same client id.
    pub duplicates: DuplicatePolicy,
    /// How many unexpired admitted tokens are remembered (to refuse replays); when that many
    /// are live, further requests are refused as the server being full.
    pub used_token_capacity: usize,
}

impl ServerConfig {
    /// A configuration with the defaults: 64 clients, a 5 s handshake timeout, the newer
    /// connection replacing the older, 4096 remembered tokens.
    pub fn new(protocol_id: u64, key: SharedKey, addresses: Vec<NetworkAddress>) -> Self {
        Self {
            protocol_id,
            key,
            addresses,
            max_clients: 64,
            handshake_timeout: Duration::from_secs(5),
            duplicates: DuplicatePolicy::default(),
            used_token_capacity: 4096,
        }
    }

    /// This configuration admitting at most `max_clients`.
    #[must_use]
    pub fn with_max_clients(mut self, max_clients: usize) -> Self {
        self.max_clients = max_clients;
        self
    }

    /// This configuration with `policy` for duplicate client ids.
    #[must_use]
    pub fn with_duplicates(mut self, policy: DuplicatePolicy) -> Self {
        self.duplicates = policy;
        self
    }

    /// This configuration with `timeout` for the connection request.
    #[must_use]
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }
}
