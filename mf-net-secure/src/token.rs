//! [`ConnectToken`]: what the backend hands a client, and what the client shows the server.

use std::fmt::Write as _;
use std::time::Duration;

use mf_net::transport::address::NetworkAddress;

use crate::wire::{Reader, KIND_REQUEST, SESSION_KEY_LEN, TAG_LEN, TOKEN_NONCE_LEN, VERSION};
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
/// Bytes (all integers little-endian): format version `"MFSEC001"` · protocol id `u64` · expiry
/// `u64` (seconds since the UNIX epoch) · nonce (24) · sealed private part (`u16` length +
/// bytes) · client-to-server key (32) · server-to-client key (32) · server count `u8` · per
/// server its address text (`u8` length + bytes). The keys and addresses in clear are the
/// client's copy; the server trusts only the sealed ones. The connection request a client sends
/// is a kind byte (1) followed by everything up to the sealed part.
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectToken {
    pub(crate) protocol_id: u64,
    pub(crate) expires_at: u64,
    pub(crate) nonce: [u8; TOKEN_NONCE_LEN],
    pub(crate) sealed: Vec<u8>,
    pub(crate) client_to_server: [u8; SESSION_KEY_LEN],
    pub(crate) server_to_client: [u8; SESSION_KEY_LEN],
    pub(crate) servers: Vec<NetworkAddress>,
}

impl ConnectToken {
    /// The game's protocol id the token is for.
    pub fn protocol_id(&self) -> u64 {
        self.protocol_id
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
        let bytes = self.to_bytes();
        let mut text = String::with_capacity(bytes.len() * 2);
        for b in bytes {
            let _ = write!(text, "{b:02x}");
        }
        text
    }

    /// Reads a token from [`to_hex`](Self::to_hex) output (surrounding whitespace is ignored).
    ///
    /// # Errors
    ///
    /// [`TokenError::Malformed`] if the text is not hex or not a token.
    pub fn from_hex(text: &str) -> Result<Self, TokenError> {
        let text = text.trim().as_bytes();
        if text.len() % 2 != 0 {
            return Err(TokenError::Malformed);
        }
        let bytes = text
            .chunks(2)
            .map(|pair| {
                let digits = std::str::from_utf8(pair).ok()?;
                u8::from_str_radix(digits, 16).ok()
            })
            .collect::<Option<Vec<u8>>>()
            .ok_or(TokenError::Malformed)?;
        Self::from_bytes(&bytes)
    }

    /// Writes the connection request the client sends first: the request kind, the version and
    /// the public part.
    pub(crate) fn write_request(&self, out: &mut Vec<u8>) {
        out.clear();
        out.push(KIND_REQUEST);
        out.extend_from_slice(&VERSION);
        self.write_public(out);
    }

    /// Protocol id, expiry, nonce and the sealed part.
    fn write_public(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.protocol_id.to_le_bytes());
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
        let expires_at = r.u64()?;
        let nonce = r.array()?;
        let len = usize::from(r.u16()?);
        if !(TAG_LEN..=MAX_SEALED_LEN).contains(&len) {
            return None;
        }
        Some(Self {
            protocol_id,
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
        expires_at: public.expires_at,
        nonce: public.nonce,
        sealed: public.sealed.to_vec(),
        client_to_server,
        server_to_client,
        servers,
    })
}
