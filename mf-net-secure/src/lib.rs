//! Connect tokens and an authenticated, encrypted [`Transport`](mf_net::transport::Transport)
//! decorator for mf-net, after netcode.io's model.
//!
//! - A backend (matchmaker, web service) that knows who the player is creates a short-lived
//!   [`ConnectToken`] with a [`TokenIssuer`]: the protocol id, the client's id, optional user
//!   data, the servers it is valid for, an expiry and fresh per-connection keys. The private
//!   part is sealed with XChaCha20-Poly1305 under a [`SharedKey`] the backend shares with its
//!   servers.
//! - The game server wraps its transport in a [`SecureServer`]; the client wraps its transport
//!   in a [`SecureClient`] holding the token. The client presents the token with a fresh salt;
//!   a server that can open it answers with a challenge (sealed under a key it draws at every
//!   start) and admits the client only once it returns the challenge sealed with the
//!   connection's key. Garbage and tokens that do not open get no answer; a token that opens
//!   but cannot be admitted is refused with a named
//!   [`DisconnectReason`](mf_net::transport::DisconnectReason) sealed for its holder.
//! - Every payload then travels sealed with ChaCha20-Poly1305 under keys derived for this
//!   connection alone (HKDF-SHA256 over the token's keys and both sides' salts), with a
//!   sequence-number nonce and a 256-packet replay window per channel. Admitted peers that go
//!   silent time out; idle ones are kept in by keep-alives. Keys are wiped when dropped.
//!
//! The layer works over any transport (ENet, loopback, the simulator). It protects the payload
//! bytes: the inner transport's own headers (ENet's protocol header, peer ids, acknowledgements)
//! stay visible and unauthenticated. See the book's "Authentication and encryption" chapter.
//!
//! ```
//! use std::time::Duration;
//! use mf_net::transport::loopback::LoopbackNetwork;
//! use mf_net::transport::{Channel, PeerId, Transport, TransportEvent};
//! use mf_net_secure::{SecureClient, SecureServer, ServerConfig, SharedKey, TokenIssuer};
//!
//! let key = SharedKey::from_bytes([9; 32]); // SharedKey::generate() in production
//! let now = Duration::from_secs(1_800_000_000); // the wall clock, read by the game
//! let address = "loopback:arena".parse().unwrap();
//!
//! // The backend issues a token for client 42.
//! let token = TokenIssuer::new(7, key.clone())
//!     .issue(42, b"ann", std::slice::from_ref(&address), now)
//!     .unwrap();
//!
//! let net = LoopbackNetwork::new();
//! let config = ServerConfig::new(7, key, vec![address]);
//! let mut server = SecureServer::new(net.listen("arena", 8).unwrap(), config, now).unwrap();
//! let mut client = SecureClient::new(net.connect("arena", 0), token);
//! let mut admitted = None;
//! for _ in 0..8 {
//!     while let Some(event) = server.poll_event() {
//!         if let TransportEvent::Connected { peer, .. } = event {
//!             admitted = Some(peer);
//!         }
//!     }
//!     while client.poll_event().is_some() {}
//!     server.flush();
//!     client.flush();
//! }
//! let peer = admitted.expect("the token was accepted");
//! assert_eq!(server.identity(peer).unwrap().client_id(), 42);
//! assert_eq!(server.identity(peer).unwrap().user_data(), b"ann");
//! client.send(PeerId::SERVER, Channel::Reliable, b"hello").unwrap();
//! client.flush();
//! assert!(matches!(
//!     server.poll_event(),
//!     Some(TransportEvent::Received { data: b"hello", .. })
//! ));
//! ```

mod admission;
mod challenge;
mod client;
mod config;
mod error;
mod handshake;
mod hex;
mod identity;
mod issuer;
mod key;
mod keys;
mod pending;
mod private;
mod replay;
mod room;
mod server;
mod session;
mod stats;
mod token;
mod used;
mod wire;

pub use client::SecureClient;
pub use config::{ConfigError, DuplicatePolicy, ServerConfig};
pub use error::TokenError;
pub use identity::ClientIdentity;
pub use issuer::TokenIssuer;
pub use key::SharedKey;
pub use server::SecureServer;
pub use stats::SecureStats;
pub use token::ConnectToken;

/// The most user data a token carries, in bytes.
pub const MAX_USER_DATA: usize = 256;
/// The most server addresses a token lists.
pub const MAX_SERVERS: usize = 8;
/// The longest server address text a token carries, in bytes.
pub const MAX_ADDRESS_LEN: usize = 255;
/// Bytes a sealed packet adds to its payload: kind (1), sequence number (8), tag (16).
pub const PACKET_OVERHEAD: usize = session::OVERHEAD;
