//! The private part of a connect token: what only the issuer and the servers can read.
//!
//! Plain layout: client id `u64` · client-to-server key (32) · server-to-client key (32) ·
//! server count `u8` · per server its address text (`u8` length + bytes) · user data (`u16`
//! length + bytes). It is sealed with XChaCha20-Poly1305 under the [`SharedKey`], with the
//! token's random 24-byte nonce and, as additional data, the format version, protocol id,
//! creation time and expiry, so none of those can be changed without the server noticing.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{Key, Tag, XChaCha20Poly1305, XNonce};

use crate::wire::{Reader, SESSION_KEY_LEN, TAG_LEN, TOKEN_NONCE_LEN, VERSION};
use crate::SharedKey;

/// The additional data binding the public fields to the sealed part.
pub(crate) fn additional_data(protocol_id: u64, created_at: u64, expires_at: u64) -> [u8; 32] {
    let mut ad = [0; 32];
    ad[..8].copy_from_slice(&VERSION);
    ad[8..16].copy_from_slice(&protocol_id.to_le_bytes());
    ad[16..24].copy_from_slice(&created_at.to_le_bytes());
    ad[24..].copy_from_slice(&expires_at.to_le_bytes());
    ad
}

/// What the private part holds, read from opened bytes without copying.
pub(crate) struct PrivateFields<'a> {
    pub(crate) client_id: u64,
    pub(crate) client_to_server: [u8; SESSION_KEY_LEN],
    pub(crate) server_to_client: [u8; SESSION_KEY_LEN],
    /// The server list as encoded: count, then each address.
    servers: &'a [u8],
    pub(crate) user_data: &'a [u8],
}

impl<'a> PrivateFields<'a> {
    /// Appends the plain encoding of a private part to `out`. The caller checked the limits.
    pub(crate) fn encode(
        client_id: u64,
        keys: (&[u8; SESSION_KEY_LEN], &[u8; SESSION_KEY_LEN]),
        servers: &[String],
        user_data: &[u8],
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(&client_id.to_le_bytes());
        out.extend_from_slice(keys.0);
        out.extend_from_slice(keys.1);
        out.push(servers.len() as u8);
        for server in servers {
            out.push(server.len() as u8);
            out.extend_from_slice(server.as_bytes());
        }
        out.extend_from_slice(&(user_data.len() as u16).to_le_bytes());
        out.extend_from_slice(user_data);
    }

    /// Reads opened bytes; `None` if they are not a whole private part.
    pub(crate) fn decode(plain: &'a [u8]) -> Option<Self> {
        let mut r = Reader::new(plain);
        let client_id = r.u64()?;
        let client_to_server = r.array()?;
        let server_to_client = r.array()?;
        let servers_start = plain.len() - r.remaining();
        let count = r.u8()?;
        for _ in 0..count {
            r.short_bytes()?;
        }
        let servers_end = plain.len() - r.remaining();
        let len = r.u16()?;
        let user_data = r.bytes(usize::from(len))?;
        if !r.is_empty() || usize::from(len) > crate::MAX_USER_DATA {
            return None;
        }
        Some(Self {
            client_id,
            client_to_server,
            server_to_client,
            servers: plain.get(servers_start..servers_end)?,
            user_data,
        })
    }

    /// Whether the token lists `address` (an address's text, compared byte for byte).
    pub(crate) fn lists(&self, address: &[u8]) -> bool {
        let mut r = Reader::new(self.servers);
        let count = r.u8().unwrap_or(0);
        (0..count).any(|_| r.short_bytes() == Some(address))
    }
}

/// Seals `plain` in place (appending the tag) under `key`. The cipher refuses only messages
/// longer than 256 GiB, which a bounded private part never is; that case reads as
/// [`TokenError::Malformed`](crate::TokenError::Malformed).
pub(crate) fn seal(
    key: &SharedKey,
    nonce: &[u8; TOKEN_NONCE_LEN],
    ad: &[u8],
    plain: &mut Vec<u8>,
) -> Result<(), crate::TokenError> {
    let aead = XChaCha20Poly1305::new(&Key::from(*key.as_bytes()));
    let tag = aead
        .encrypt_inout_detached(&XNonce::from(*nonce), ad, plain.as_mut_slice().into())
        .map_err(|_| crate::TokenError::Malformed)?;
    plain.extend_from_slice(&tag);
    Ok(())
}

/// Opens `sealed` (ciphertext then tag) into `out` (cleared first). `None` if it fails to
/// authenticate: tampered with, or sealed under another key.
pub(crate) fn open<'o>(
    key: &SharedKey,
    nonce: &[u8; TOKEN_NONCE_LEN],
    ad: &[u8],
    sealed: &[u8],
    out: &'o mut Vec<u8>,
) -> Option<&'o [u8]> {
    let body_len = sealed.len().checked_sub(TAG_LEN)?;
    let (body, tag) = sealed.split_at(body_len);
    let tag = Tag::try_from(tag).ok()?;
    out.clear();
    out.extend_from_slice(body);
    let aead = XChaCha20Poly1305::new(&Key::from(*key.as_bytes()));
    aead.decrypt_inout_detached(&XNonce::from(*nonce), ad, out.as_mut_slice().into(), &tag)
        .ok()?;
    Some(out.as_slice())
}
