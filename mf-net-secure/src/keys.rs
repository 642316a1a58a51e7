//! [`ConnectionKeys`]: the keys of one connection, derived from the token's keys and both
//! sides' fresh salts, so no two connections share a key.
//!
//! HKDF-SHA256, one derivation per direction: the token's key for that direction is the input
//! key material, the client's salt followed by the server's is the salt, and the format
//! version, the protocol id and the direction are the info. A token presented twice (to two
//! servers it lists, or to one server before and after a restart) meets a fresh server salt
//! each time, so its connections never share a key and nonce pair, and a packet captured on
//! one never authenticates on another.

use hkdf::Hkdf;
use sha2::Sha256;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::wire::{SALT_LEN, SESSION_KEY_LEN, VERSION};

/// The two keys of one connection. Wiped when dropped.
#[derive(Zeroize, ZeroizeOnDrop)]
pub(crate) struct ConnectionKeys {
    pub(crate) client_to_server: [u8; SESSION_KEY_LEN],
    pub(crate) server_to_client: [u8; SESSION_KEY_LEN],
}

/// Both sides' salts, in the order they enter the derivation.
pub(crate) struct Salts<'a> {
    pub(crate) client: &'a [u8; SALT_LEN],
    pub(crate) server: &'a [u8; SALT_LEN],
}

impl ConnectionKeys {
    /// The keys of the connection made with the token keys `client_to_server` and
    /// `server_to_client` under `salts`.
    pub(crate) fn derive(
        protocol_id: u64,
        client_to_server: &[u8; SESSION_KEY_LEN],
        server_to_client: &[u8; SESSION_KEY_LEN],
        salts: &Salts<'_>,
    ) -> Self {
        let mut salt = [0; 2 * SALT_LEN];
        salt[..SALT_LEN].copy_from_slice(salts.client);
        salt[SALT_LEN..].copy_from_slice(salts.server);
        let keys = Self {
            client_to_server: expand(&salt, client_to_server, protocol_id, b"c2s"),
            server_to_client: expand(&salt, server_to_client, protocol_id, b"s2c"),
        };
        salt.zeroize();
        keys
    }
}

fn expand(
    salt: &[u8],
    token_key: &[u8; SESSION_KEY_LEN],
    protocol_id: u64,
    direction: &[u8; 3],
) -> [u8; SESSION_KEY_LEN] {
    let mut info = [0; 8 + 8 + 3];
    info[..8].copy_from_slice(&VERSION);
    info[8..16].copy_from_slice(&protocol_id.to_le_bytes());
    info[16..].copy_from_slice(direction);
    let mut out = [0; SESSION_KEY_LEN];
    // 32 bytes is far below HKDF-SHA256's 8160-byte limit: expand cannot fail.
    let _ = Hkdf::<Sha256>::new(Some(salt), token_key).expand(&info, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derive(client: [u8; SALT_LEN], server: [u8; SALT_LEN]) -> ConnectionKeys {
        let salts = Salts {
            client: &client,
            server: &server,
        };
        ConnectionKeys::derive(7, &[1; 32], &[2; 32], &salts)
    }

    #[test]
    fn every_salt_and_direction_gives_other_keys() {
        let base = derive([0; 16], [0; 16]);
        let other_server = derive([0; 16], [1; 16]);
        let other_client = derive([1; 16], [0; 16]);
        assert_ne!(base.client_to_server, base.server_to_client);
        assert_ne!(base.client_to_server, other_server.client_to_server);
        assert_ne!(base.server_to_client, other_server.server_to_client);
        assert_ne!(base.client_to_server, other_client.client_to_server);
        assert_ne!(base.client_to_server, [1; 32]);
        let again = derive([0; 16], [0; 16]);
        assert_eq!(base.client_to_server, again.client_to_server);
    }
}
