//! [`TokenIssuer`]: the backend's side, creating connect tokens. Needs no game server.

use std::time::Duration;

use mf_net::transport::address::NetworkAddress;

use crate::key::random_bytes;
use crate::private::{self, PrivateFields};
use crate::{ConnectToken, SharedKey, TokenError, MAX_ADDRESS_LEN, MAX_SERVERS, MAX_USER_DATA};

/// Creates [`ConnectToken`]s for one game (protocol id) under the key shared with its servers.
///
/// It runs in the matchmaker or web backend, which knows who the player is. It reads no clock:
/// [`issue`](Self::issue) takes the current time. Keys and nonces come from the operating
/// system's random number generator.
///
/// ```
/// use std::time::Duration;
/// use mf_net_secure::{SharedKey, TokenIssuer};
///
/// let key = SharedKey::from_bytes([7; 32]); // in production: SharedKey::generate()
/// let issuer = TokenIssuer::new(0x6d66_6e65_7400_0001, key);
/// let now = Duration::from_secs(1_800_000_000); // SystemTime::now() since UNIX_EPOCH
/// let servers = ["enet:203.0.113.7:27615".parse().unwrap()];
/// let token = issuer.issue(42, b"ann", &servers, now).unwrap();
/// assert_eq!(token.servers(), &servers);
/// assert_eq!(token.expires_at(), now + TokenIssuer::DEFAULT_LIFETIME);
/// ```
#[derive(Debug, Clone)]
pub struct TokenIssuer {
    protocol_id: u64,
    key: SharedKey,
    lifetime: Duration,
}

impl TokenIssuer {
    /// How long a token stays valid unless [`with_lifetime`](Self::with_lifetime) says
    /// otherwise: long enough to reach a server, short enough that a leaked token is soon
    /// worthless.
    pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(30);
    /// The longest lifetime [`with_lifetime`](Self::with_lifetime) accepts: a day.
    pub const MAX_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

    /// An issuer for the game `protocol_id` (the servers must be configured with the same one)
    /// sealing under `key`.
    pub fn new(protocol_id: u64, key: SharedKey) -> Self {
        Self {
            protocol_id,
            key,
            lifetime: Self::DEFAULT_LIFETIME,
        }
    }

    /// This issuer with tokens valid for `lifetime` (rounded down to whole seconds).
    ///
    /// # Errors
    ///
    /// [`TokenError::Lifetime`] for less than a second (tokens that expire as they are made)
    /// or more than [`MAX_LIFETIME`](Self::MAX_LIFETIME).
    pub fn with_lifetime(mut self, lifetime: Duration) -> Result<Self, TokenError> {
        if lifetime.as_secs() == 0 || lifetime > Self::MAX_LIFETIME {
            return Err(TokenError::Lifetime);
        }
        self.lifetime = lifetime;
        Ok(self)
    }

    /// A token letting client `client_id` connect to one of `servers` until `now` plus the
    /// lifetime, with fresh per-connection keys. `user_data` (at most [`MAX_USER_DATA`] bytes,
    /// such as an account id and a display name) reaches the server's game code as the
    /// client's identity. `now` is the time since the UNIX epoch, on the clock the servers use.
    ///
    /// # Errors
    ///
    /// Too much user data, no or too many servers, an address too long, or the random number
    /// generator failing.
    pub fn issue(
        &self,
        client_id: u64,
        user_data: &[u8],
        servers: &[NetworkAddress],
        now: Duration,
    ) -> Result<ConnectToken, TokenError> {
        if user_data.len() > MAX_USER_DATA {
            return Err(TokenError::UserDataTooLong(user_data.len()));
        }
        if servers.is_empty() || servers.len() > MAX_SERVERS {
            return Err(TokenError::ServerCount(servers.len()));
        }
        let texts: Vec<String> = servers.iter().map(ToString::to_string).collect();
        if let Some(long) = texts.iter().find(|t| t.len() > MAX_ADDRESS_LEN) {
            return Err(TokenError::AddressTooLong(long.len()));
        }
        let client_to_server = random_bytes()?;
        let server_to_client = random_bytes()?;
        let nonce = random_bytes()?;
        let created_at = now.as_secs();
        let expires_at = now.saturating_add(self.lifetime).as_secs();
        let mut sealed = Vec::new();
        PrivateFields::encode(
            client_id,
            (&client_to_server, &server_to_client),
            &texts,
            user_data,
            &mut sealed,
        );
        let ad = private::additional_data(self.protocol_id, created_at, expires_at);
        private::seal(&self.key, &nonce, &ad, &mut sealed)?;
        Ok(ConnectToken {
            protocol_id: self.protocol_id,
            created_at,
            expires_at,
            nonce,
            sealed,
            client_to_server,
            server_to_client,
            servers: servers.to_vec(),
        })
    }
}
