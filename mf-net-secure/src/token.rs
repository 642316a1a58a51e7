//! [`ConnectToken`]: what the backend hands a client, and what the client shows the server.

use std::time::Duration;

use mf_net::transport::address::NetworkAddress;

use zeroize::ZeroizeOnDrop;

use crate::wire::{
    Reader, KIND_REQUEST, SALT_LEN, SESSION_KEY_LEN, TAG_LEN, TOKEN_NONCE_LEN, VERSION,
};
use crate::{TokenError, MAX_ADDRESS_LEN, MAX_SERVERS, MAX_USER_DATA};

/// The largest sealed private part: client id, two keys, the addresses, the user data, the tag.
pub(crate) const MAX_SEALED_LEN: usize =
    8 + 2 * SESSION_KEY_LEN + 1 + MAX_SERVERS * (1 + MAX_ADDRESS_LEN) + 2 + MAX_USER_DATA + TAG_LEN;

/// A short-lived permission to connect to one of a few servers, issued by a
/// [`TokenIssuer`](crate::TokenIssuer).
///
/// The client gets it from the backend (as bytes or hex text), wraps its transport in a
/// [`SecureClient`](crate::SecureClient) with it and connects to one of its
/// [`servers`](Self::servers). Whoever holds a token can use it once, until it expires, so hand
/// it over a channel the player trusts (the backend's HTTPS answer, for example).
///
/// Bytes (all integers little-endian): format version `"MFSEC002"` · protocol id `u64` ·
/// creation time `u64` · expiry `u64` (both seconds since the UNIX epoch) · nonce (24) · sealed private part (`u16` length +
/// bytes) · client-to-server key (32) · server-to-client key (32) · server count `u8` · per
/// server its address text (`u8` length + bytes). The keys and addresses in clear are the
/// client's copy; the server trusts only the sealed ones. The connection request a client sends
/// is a kind byte (1), everything up to the sealed part, and the client's fresh connection
/// salt (16 bytes). The keys are wiped from memory when the token is dropped.
#[derive(Clone, PartialEq, Eq, ZeroizeOnDrop)]
pub struct ConnectToken {
    #[zeroize(skip)]
    pub(crate) protocol_id: u64,
    #[zeroize(skip)]
    pub(crate) created_at: u64,
    #[zeroize(skip)]
    pub(crate) expires_at: u64,
    #[zeroize(skip)]
    pub(crate) nonce: [u8; TOKEN_NONCE_LEN],
    #[zeroize(skip)]
    pub(crate) sealed: Vec<u8>,
    pub(crate) client_to_server: [u8; SESSION_KEY_LEN],
    pub(crate) server_to_client: [u8; SESSION_KEY_LEN],
    #[zeroize(skip)]
    pub(crate) servers: Vec<NetworkAddress>,
}

impl ConnectToken {
    /// The game's protocol id the token is for.
    pub fn protocol_id(&self) -> u64 {
        self.protocol_id
    }

    /// When the token was issued, as time since the UNIX epoch (whole seconds).
    pub fn created_at(&self) -> Duration {
        Duration::from_secs(self.created_at)
    }

    /// When the token expires, as time since the UNIX epoch (whole seconds).
    pub fn expires_at(&self) -> Duration {
        Duration::from_secs(self.expires_at)
    }

    /// The servers the token is valid for, best first.
    pub fn servers(&self) -> &[NetworkAddress] {
        &self.servers
    }

    /// The token as bytes (see the [type documentation](Self) for the layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.sealed.len() + 2 * SESSION_KEY_LEN);
        out.extend_from_slice(&VERSION);
        self.write_public(&mut out);
        out.extend_from_slice(&self.client_to_server);
        out.extend_from_slice(&self.server_to_client);
        out.push(self.servers.len() as u8);
        for server in &self.servers {
            let text = server.to_string();
            out.push(text.len() as u8);
            out.extend_from_slice(text.as_bytes());
        }
        out
    }

    /// Reads a token from [`to_bytes`](Self::to_bytes) output.
    ///
    /// # Errors
    ///
    /// [`TokenError::Malformed`] if the bytes are not a whole token of this version.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TokenError> {
        decode(bytes).ok_or(TokenError::Malformed)
    }

    /// The token as lowercase hex text, for a command line or a text protocol.
    pub fn to_hex(&self) -> String {
        crate::hex::encode(&self.to_bytes())
    }

    /// Reads a token from [`to_hex`](Self::to_hex) output (surrounding whitespace is ignored).
    ///
    /// # Errors
    ///
    /// [`TokenError::Malformed`] if the text is not hex or not a token.
    pub fn from_hex(text: &str) -> Result<Self, TokenError> {
        let bytes = zeroize::Zeroizing::new(crate::hex::decode(text).ok_or(TokenError::Malformed)?);
        Self::from_bytes(&bytes)
    }

    /// Writes the connection request the client sends first: the request kind, the version,
    /// the public part and the client's connection salt.
    pub(crate) fn write_request(&self, salt: &[u8; SALT_LEN], out: &mut Vec<u8>) {
        out.clear();
        out.push(KIND_REQUEST);
        out.extend_from_slice(&VERSION);
        self.write_public(out);
        out.extend_from_slice(salt);
    }

    /// Protocol id, creation time, expiry, nonce and the sealed part.
    fn write_public(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.protocol_id.to_le_bytes());
        out.extend_from_slice(&self.created_at.to_le_bytes());
        out.extend_from_slice(&self.expires_at.to_le_bytes());
        out.extend_from_slice(&self.nonce);
        out.extend_from_slice(&(self.sealed.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.sealed);
    }
}

impl std::fmt::Debug for ConnectToken {
    /// Shows the public fields only, never the keys.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectToken")
            .field("protocol_id", &self.protocol_id)
            .field("expires_at", &self.expires_at)
            .field("servers", &self.servers)
            .finish_non_exhaustive()
    }
}

/// The public part of a connection request or token, read from untrusted bytes.
pub(crate) struct PublicPart<'a> {
    pub(crate) protocol_id: u64,
    pub(crate) created_at: u64,
    pub(crate) expires_at: u64,
    pub(crate) nonce: [u8; TOKEN_NONCE_LEN],
    pub(crate) sealed: &'a [u8],
}

impl<'a> PublicPart<'a> {
    /// Reads the version and the public part; `None` if they are not there.
    pub(crate) fn read(r: &mut Reader<'a>) -> Option<Self> {
        if r.array::<8>()? != VERSION {
            return None;
        }
        let protocol_id = r.u64()?;
        let created_at = r.u64()?;
        let expires_at = r.u64()?;
        let nonce = r.array()?;
        let len = usize::from(r.u16()?);
        if !(TAG_LEN..=MAX_SEALED_LEN).contains(&len) {
            return None;
        }
        Some(Self {
            protocol_id,
            created_at,
            expires_at,
            nonce,
            sealed: r.bytes(len)?,
        })
    }
}

fn decode(bytes: &[u8]) -> Option<ConnectToken> {
    let mut r = Reader::new(bytes);
    let public = PublicPart::read(&mut r)?;
    let client_to_server = r.array()?;
    let server_to_client = r.array()?;
    let count = usize::from(r.u8()?);
    if count == 0 || count > MAX_SERVERS {
        return None;
    }
    let mut servers = Vec::with_capacity(count);
    for _ in 0..count {
        let text = std::str::from_utf8(r.short_bytes()?).ok()?;
        servers.push(text.parse().ok()?);
    }
    if !r.is_empty() {
        return None;
    }
    Some(ConnectToken {
        protocol_id: public.protocol_id,
        created_at: public.created_at,
        expires_at: public.expires_at,
        nonce: public.nonce,
        sealed: public.sealed.to_vec(),
        client_to_server,
        server_to_client,
        servers,
    })
}
