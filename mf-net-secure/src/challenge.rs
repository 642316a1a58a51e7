//! [`Challenger`]: challenges sealed under a key the server draws at every start.
//!
//! A request whose token opens gets a challenge; only a client that received it at its own
//! address and holds the connection's client-to-server key can return it sealed, so a peer
//! replaying a captured request, or spoofing its source, is never admitted. The challenge binds
//! the inner transport's peer and the token: `sequence u64 · sealed(peer u64 · token tag (16))
//! · tag (16)`, sealed with ChaCha20-Poly1305 under the start key, the sequence as the nonce.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};
use mf_net::transport::PeerId;

use crate::used::TokenTag;
use crate::wire::{Reader, TAG_LEN};

/// Bytes of a challenge.
pub(crate) const CHALLENGE_LEN: usize = 8 + BODY_LEN + TAG_LEN;
const BODY_LEN: usize = 8 + TAG_LEN;

/// The server's challenge key (wiped when dropped) and the sequence of the next challenge.
pub(crate) struct Challenger {
    cipher: ChaCha20Poly1305,
    next: u64,
}

impl Challenger {
    /// A challenger under `key` (drawn at random when the server starts).
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        Self {
            cipher: ChaCha20Poly1305::new(&Key::from(*key)),
            next: 0,
        }
    }

    /// A challenge for `peer` presenting the token `tag`.
    pub(crate) fn issue(&mut self, peer: PeerId, tag: &TokenTag) -> [u8; CHALLENGE_LEN] {
        let seq = self.next;
        self.next = self.next.wrapping_add(1);
        let mut out = [0; CHALLENGE_LEN];
        out[..8].copy_from_slice(&seq.to_le_bytes());
        out[8..16].copy_from_slice(&peer.0.to_le_bytes());
        out[16..8 + BODY_LEN].copy_from_slice(tag);
        let body = &mut out[8..8 + BODY_LEN];
        // A 24-byte message is far below the cipher's limit: sealing cannot fail.
        if let Ok(seal) = self
            .cipher
            .encrypt_inout_detached(&nonce(seq), &[], body.into())
        {
            out[8 + BODY_LEN..].copy_from_slice(&seal);
        }
        out
    }

    /// Whether `challenge` is one this challenger issued for `peer` and the token `tag`.
    pub(crate) fn verify(&self, challenge: &[u8], peer: PeerId, tag: &TokenTag) -> bool {
        let mut r = Reader::new(challenge);
        let (Some(seq), Some(body), Some(seal)) =
            (r.u64(), r.array::<BODY_LEN>(), r.array::<TAG_LEN>())
        else {
            return false;
        };
        let mut body = body;
        let opened = self
            .cipher
            .decrypt_inout_detached(&nonce(seq), &[], (&mut body[..]).into(), &Tag::from(seal))
            .is_ok();
        opened && body[..8] == peer.0.to_le_bytes() && body[8..] == tag[..] && r.is_empty()
    }
}

fn nonce(seq: u64) -> Nonce {
    let mut n = [0; 12];
    n[4..].copy_from_slice(&seq.to_le_bytes());
    Nonce::from(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_holds_only_for_its_peer_token_and_server_start() {
        let mut challenger = Challenger::new(&[3; 32]);
        let challenge = challenger.issue(PeerId(5), &[9; 16]);
        assert!(challenger.verify(&challenge, PeerId(5), &[9; 16]));
        assert!(!challenger.verify(&challenge, PeerId(6), &[9; 16]));
        assert!(!challenger.verify(&challenge, PeerId(5), &[8; 16]));
        assert!(!challenger.verify(&challenge[1..], PeerId(5), &[9; 16]));
        // A restarted server draws another key.
        assert!(!Challenger::new(&[4; 32]).verify(&challenge, PeerId(5), &[9; 16]));
        for bit in 0..CHALLENGE_LEN * 8 {
            let mut bad = challenge;
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(!challenger.verify(&bad, PeerId(5), &[9; 16]), "bit {bit}");
        }
        // Every challenge is sealed under its own nonce.
        assert_ne!(challenger.issue(PeerId(5), &[9; 16]), challenge);
    }
}
