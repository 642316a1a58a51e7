//! [`ServerConfig`] and [`DuplicatePolicy`]: how a secure server admits clients.

use std::fmt;
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

/// How a [`SecureServer`](crate::SecureServer) admits clients. Checked when the server is
/// made ([`ConfigError`] names a field that is out of range).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The game's protocol id; tokens for another are refused with
    /// [`ProtocolMismatch`](mf_net::transport::DisconnectReason::ProtocolMismatch).
    pub protocol_id: u64,
    /// The key shared with the token issuer.
    pub key: SharedKey,
    /// This server's public addresses, as the issuer writes them in tokens (compared as text:
    /// `enet:203.0.113.7:27615` and `enet:game.example.com:27615` differ). A token must list
    /// one of them. At least one.
    pub addresses: Vec<NetworkAddress>,
    /// Admitted clients at most; more are refused with
    /// [`ServerFull`](mf_net::transport::DisconnectReason::ServerFull).
    pub max_clients: usize,
    /// How long a connected peer has to complete the handshake (its request, then its answer
    /// to the challenge) before it is dropped. Default 3 s; at most a minute.
    pub handshake_timeout: Duration,
    /// Peers connected on the inner transport that have not completed the handshake, at most.
    /// A peer connecting beyond this, or taking the inner transport's last free slot
    /// ([`Transport::capacity`](mf_net::transport::Transport::capacity)), pushes out the one
    /// that has waited longest without sending its request, else the challenged one that has
    /// waited longest whose token another pending peer presented too (or, beyond this, is
    /// dropped itself), without an answer: strangers never take an admitted client's place,
    /// and cannot keep a genuine client, which sends its request at once, out. Default 64.
    pub max_pending: usize,
    /// How long an admitted client may send nothing that authenticates before it is
    /// disconnected with [`Timeout`](mf_net::transport::DisconnectReason::Timeout). Default
    /// 15 s (mf-net's own peer timeout: a client that stalls up to 10 s stays in); at most an
    /// hour. Both ends send a keep-alive after
    /// [`keepalive_interval`](Self::keepalive_interval) without sending anything else.
    pub timeout: Duration,
    /// How long either end stays silent before it sends a keep-alive. Default 1 s; less than
    /// [`timeout`](Self::timeout).
    pub keepalive_interval: Duration,
    /// What to do with a second connection for the same client id.
    pub duplicates: DuplicatePolicy,
    /// How many admitted tokens are remembered to refuse their reuse (default 4096). The
    /// history overwrites its oldest entry: it never fills.
    pub used_token_capacity: usize,
    /// Whether tokens issued before the server started are refused (as
    /// [`TokenExpired`](mf_net::transport::DisconnectReason::TokenExpired)). Off by default.
    /// The used-token history is in memory only; turning this on means no token can be used
    /// twice across a restart either, at the cost of players who hold a token from just before
    /// the restart having to fetch a new one.
    pub refuse_tokens_before_start: bool,
}

impl ServerConfig {
    /// A configuration with the defaults: 64 clients, 64 pending peers, a 3 s handshake
    /// timeout, a 15 s timeout with a keep-alive every second, the newer connection replacing
    /// the older, 4096 remembered tokens.
    pub fn new(protocol_id: u64, key: SharedKey, addresses: Vec<NetworkAddress>) -> Self {
        Self {
            protocol_id,
            key,
            addresses,
            max_clients: 64,
            handshake_timeout: Duration::from_secs(3),
            max_pending: 64,
            timeout: Duration::from_secs(15),
            keepalive_interval: Duration::from_secs(1),
            duplicates: DuplicatePolicy::default(),
            used_token_capacity: 4096,
            refuse_tokens_before_start: false,
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

    /// This configuration with `timeout` for the handshake.
    #[must_use]
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// This configuration timing admitted clients out after `timeout` without an
    /// authenticated packet.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Checks every field's range.
    ///
    /// # Errors
    ///
    /// The first field out of range, named.
    pub fn check(&self) -> Result<(), ConfigError> {
        let invalid = |field, expected| Err(ConfigError::Invalid { field, expected });
        if self.addresses.is_empty() {
            return invalid("addresses", "at least one address");
        }
        if self.max_clients == 0 {
            return invalid("max_clients", "at least 1");
        }
        if self.max_pending == 0 {
            return invalid("max_pending", "at least 1");
        }
        if self.handshake_timeout.is_zero() || self.handshake_timeout > MAX_HANDSHAKE_TIMEOUT {
            return invalid("handshake_timeout", "more than zero and at most 60 s");
        }
        if self.timeout.is_zero() || self.timeout > MAX_TIMEOUT {
            return invalid("timeout", "more than zero and at most an hour");
        }
        if self.keepalive_interval.is_zero() || self.keepalive_interval >= self.timeout {
            return invalid("keepalive_interval", "more than zero and less than timeout");
        }
        if self.used_token_capacity == 0 || self.used_token_capacity > MAX_USED_TOKENS {
            return invalid("used_token_capacity", "1 to 1 048 576");
        }
        Ok(())
    }
}

const MAX_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
const MAX_USED_TOKENS: usize = 1 << 20;

/// Why a [`SecureServer`](crate::SecureServer) could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A [`ServerConfig`] field is out of range.
    Invalid {
        /// The field's name.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// The time given to [`SecureServer::new`](crate::SecureServer::new) is not a plausible
    /// wall-clock time (before 2020 or after 2500): tokens would be judged against the wrong
    /// clock, and expire never or at once.
    Clock(Duration),
    /// The operating system's random number generator failed (drawing the challenge key).
    Randomness,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Invalid { field, expected } => {
                write!(f, "ServerConfig::{field} must be {expected}")
            }
            ConfigError::Clock(now) => write!(
                f,
                "SecureServer::new was given {} s since the UNIX epoch: pass the wall clock \
                 (SystemTime::now().duration_since(UNIX_EPOCH))",
                now.as_secs()
            ),
            ConfigError::Randomness => f.write_str("the system random number generator failed"),
        }
    }
}

impl std::error::Error for ConfigError {}
