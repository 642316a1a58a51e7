//! [`Session`]: one admitted connection's keys, sequence numbers and replay windows.
//!
//! A sealed packet is `kind u8 · sequence u64 · ciphertext · tag (16)`: [`OVERHEAD`] bytes more
//! than the payload. Each direction has its own key (from the token) and each channel its own
//! sequence numbers (the reliable channel is never overtaken by unreliable packets' numbers).
//! The 12-byte ChaCha20-Poly1305 nonce is the sequence number, the channel and three zero bytes,
//! so no nonce repeats under one key. The additional data binds the format version, the
//! protocol id, the kind and the channel.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};
use mf_net::transport::Channel;

use crate::replay::ReplayWindow;
use crate::wire::{Reader, KIND_ACCEPT, KIND_PAYLOAD, SESSION_KEY_LEN, TAG_LEN, VERSION};

/// Bytes of a sealed packet's header: kind and sequence number.
const HEADER_LEN: usize = 1 + 8;
/// Bytes a sealed packet adds to its payload.
pub(crate) const OVERHEAD: usize = HEADER_LEN + TAG_LEN;

/// Why a sealed packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dropped {
    /// Too short, an unknown kind, or it failed to authenticate.
    Tampered,
    /// Its sequence number was seen already or is too old for the window.
    Replayed,
}

/// Keys and counters of one connection, as one end sees them.
pub(crate) struct Session {
    protocol_id: u64,
    seal_key: ChaCha20Poly1305,
    open_key: ChaCha20Poly1305,
    next_seq: [u64; 2],
    windows: [ReplayWindow; 2],
}

impl Session {
    /// A session sealing with `seal` and opening with `open`.
    pub(crate) fn new(
        protocol_id: u64,
        seal: &[u8; SESSION_KEY_LEN],
        open: &[u8; SESSION_KEY_LEN],
    ) -> Self {
        Self {
            protocol_id,
            seal_key: ChaCha20Poly1305::new(&Key::from(*seal)),
            open_key: ChaCha20Poly1305::new(&Key::from(*open)),
            next_seq: [0; 2],
            windows: Default::default(),
        }
    }

    /// Seals `payload` as a packet of `kind` on `channel` into `out` (cleared first), taking
    /// the channel's next sequence number. False if the cipher refused (never for packets a
    /// transport carries).
    pub(crate) fn seal(
        &mut self,
        kind: u8,
        channel: Channel,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> bool {
        let seq = self.next_seq[channel.index()];
        out.clear();
        out.push(kind);
        out.extend_from_slice(&seq.to_le_bytes());
        out.extend_from_slice(payload);
        let ad = additional_data(self.protocol_id, kind, channel);
        let body = out.get_mut(HEADER_LEN..).unwrap_or_default();
        let Ok(tag) = self
            .seal_key
            .encrypt_inout_detached(&nonce(seq, channel), &ad, body.into())
        else {
            return false;
        };
        out.extend_from_slice(&tag);
        self.next_seq[channel.index()] = seq.wrapping_add(1);
        true
    }

    /// Opens `packet` received on `channel` into `out` (cleared first) and returns its kind.
    /// Nothing changes unless it authenticates and is fresh.
    pub(crate) fn open(
        &mut self,
        channel: Channel,
        packet: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<u8, Dropped> {
        let mut r = Reader::new(packet);
        let (kind, seq) = r.u8().zip(r.u64()).ok_or(Dropped::Tampered)?;
        if kind != KIND_ACCEPT && kind != KIND_PAYLOAD {
            return Err(Dropped::Tampered);
        }
        let body_len = r
            .remaining()
            .checked_sub(TAG_LEN)
            .ok_or(Dropped::Tampered)?;
        let body = r.bytes(body_len).ok_or(Dropped::Tampered)?;
        let tag = Tag::try_from(r.bytes(TAG_LEN).ok_or(Dropped::Tampered)?)
            .map_err(|_| Dropped::Tampered)?;
        let window = &mut self.windows[channel.index()];
        if !window.is_fresh(seq) {
            return Err(Dropped::Replayed);
        }
        out.clear();
        out.extend_from_slice(body);
        let ad = additional_data(self.protocol_id, kind, channel);
        self.open_key
            .decrypt_inout_detached(&nonce(seq, channel), &ad, out.as_mut_slice().into(), &tag)
            .map_err(|_| Dropped::Tampered)?;
        window.mark(seq);
        Ok(kind)
    }
}

fn nonce(seq: u64, channel: Channel) -> Nonce {
    let mut n = [0; 12];
    n[..8].copy_from_slice(&seq.to_le_bytes());
    n[8] = channel.index() as u8;
    Nonce::from(n)
}

fn additional_data(protocol_id: u64, kind: u8, channel: Channel) -> [u8; 18] {
    let mut ad = [0; 18];
    ad[..8].copy_from_slice(&VERSION);
    ad[8..16].copy_from_slice(&protocol_id.to_le_bytes());
    ad[16] = kind;
    ad[17] = channel.index() as u8;
    ad
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pair() -> (Session, Session) {
        let (a, b) = ([1; 32], [2; 32]);
        (Session::new(9, &a, &b), Session::new(9, &b, &a))
    }

    #[test]
    fn seals_and_opens_once() {
        let (mut alice, mut bob) = pair();
        let (mut wire, mut plain) = (Vec::new(), Vec::new());
        assert!(alice.seal(KIND_PAYLOAD, Channel::Unreliable, b"hi", &mut wire));
        assert_eq!(wire.len(), 2 + OVERHEAD);
        assert_eq!(
            bob.open(Channel::Unreliable, &wire, &mut plain),
            Ok(KIND_PAYLOAD)
        );
        assert_eq!(plain, b"hi");
        assert_eq!(
            bob.open(Channel::Unreliable, &wire, &mut plain),
            Err(Dropped::Replayed)
        );
        // The other channel uses other nonces and additional data: it does not authenticate.
        assert!(alice.seal(KIND_PAYLOAD, Channel::Unreliable, b"x", &mut wire));
        assert_eq!(
            bob.open(Channel::Reliable, &wire, &mut plain),
            Err(Dropped::Tampered)
        );
    }

    #[test]
    fn every_flipped_bit_is_caught() {
        let (mut alice, mut bob) = pair();
        let (mut wire, mut plain) = (Vec::new(), Vec::new());
        assert!(alice.seal(KIND_PAYLOAD, Channel::Reliable, b"payload", &mut wire));
        for bit in 0..wire.len() * 8 {
            let mut bad = wire.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(
                bob.open(Channel::Reliable, &bad, &mut plain).is_err(),
                "bit {bit}"
            );
        }
        assert_eq!(
            bob.open(Channel::Reliable, &wire, &mut plain),
            Ok(KIND_PAYLOAD)
        );
    }
}
