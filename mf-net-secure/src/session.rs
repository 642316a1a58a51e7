//! [`Session`]: one connection's keys, sequence numbers and replay windows.
//!
//! A sealed packet is `kind u8 · sequence u64 · ciphertext · tag (16)`: [`OVERHEAD`] bytes more
//! than the payload. The handshake packets the server sends (challenge, denial) carry the
//! server's connection salt in clear after the sequence number, so the client can derive the
//! keys they are sealed with. Each direction has its own key ([`ConnectionKeys`], bound to this
//! connection) and each lane its own sequence numbers: the reliable channel, the unreliable
//! channel, and the handshake, which seals before the peer is admitted. The 12-byte
//! ChaCha20-Poly1305 nonce is the sequence number, the lane and three zero bytes, so no nonce
//! repeats under one key and a handshake packet's nonce never meets a connection packet's. The
//! additional data binds the format version, the protocol id, the kind and the lane.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce, Tag};
use mf_net::transport::Channel;

use crate::keys::ConnectionKeys;
use crate::replay::ReplayWindow;
use crate::wire::{
    Reader, KIND_ACCEPT, KIND_CHALLENGE, KIND_DENIED, KIND_KEEPALIVE, KIND_PAYLOAD, KIND_RESPONSE,
    SALT_LEN, TAG_LEN, VERSION,
};

/// Bytes of a sealed packet's header: kind and sequence number.
const HEADER_LEN: usize = 1 + 8;
/// Bytes a sealed packet adds to its payload.
pub(crate) const OVERHEAD: usize = HEADER_LEN + TAG_LEN;
/// The lane of handshake packets (after the two channels').
const HANDSHAKE: usize = 2;

/// Why a sealed packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dropped {
    /// Too short, an unknown kind, or it failed to authenticate.
    Tampered,
    /// Its sequence number was seen already or is too old for the window.
    Replayed,
}

/// Which end of the connection a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Client,
    Server,
}

/// Keys and counters of one connection, as one end sees them. The ciphers wipe their keys when
/// dropped.
pub(crate) struct Session {
    protocol_id: u64,
    seal_key: ChaCha20Poly1305,
    open_key: ChaCha20Poly1305,
    next_seq: [u64; 3],
    windows: [ReplayWindow; 3],
}

impl Session {
    /// The session of `end` of the connection with `keys`.
    pub(crate) fn new(protocol_id: u64, keys: &ConnectionKeys, end: End) -> Self {
        let (seal, open) = match end {
            End::Client => (&keys.client_to_server, &keys.server_to_client),
            End::Server => (&keys.server_to_client, &keys.client_to_server),
        };
        Self {
            protocol_id,
            seal_key: ChaCha20Poly1305::new(&Key::from(*seal)),
            open_key: ChaCha20Poly1305::new(&Key::from(*open)),
            next_seq: [0; 3],
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
        self.seal_in(channel.index(), kind, None, payload, out)
    }

    /// Seals a handshake packet of `kind` (handshake nonces), with the server's `salt` in
    /// clear after the sequence number if given.
    pub(crate) fn seal_handshake(
        &mut self,
        kind: u8,
        salt: Option<&[u8; SALT_LEN]>,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> bool {
        self.seal_in(HANDSHAKE, kind, salt, payload, out)
    }

    fn seal_in(
        &mut self,
        lane: usize,
        kind: u8,
        salt: Option<&[u8; SALT_LEN]>,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> bool {
        let seq = self.next_seq[lane];
        out.clear();
        out.push(kind);
        out.extend_from_slice(&seq.to_le_bytes());
        if let Some(salt) = salt {
            out.extend_from_slice(salt);
        }
        let body_at = out.len();
        out.extend_from_slice(payload);
        let ad = additional_data(self.protocol_id, kind, lane);
        let body = out.get_mut(body_at..).unwrap_or_default();
        let Ok(tag) = self
            .seal_key
            .encrypt_inout_detached(&nonce(seq, lane), &ad, body.into())
        else {
            return false;
        };
        out.extend_from_slice(&tag);
        self.next_seq[lane] = seq.wrapping_add(1);
        true
    }

    /// Opens `packet` received on `channel` into `out` (cleared first) and returns its kind
    /// (accepted, payload or keep-alive). Nothing changes unless it authenticates and is fresh.
    pub(crate) fn open(
        &mut self,
        channel: Channel,
        packet: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<u8, Dropped> {
        let kind = packet.first().copied().ok_or(Dropped::Tampered)?;
        if !matches!(kind, KIND_ACCEPT | KIND_PAYLOAD | KIND_KEEPALIVE) {
            return Err(Dropped::Tampered);
        }
        self.open_in(channel.index(), 0, packet, out)
    }

    /// Opens a handshake packet (challenge or denial, which carry the server's salt; or a
    /// response, which does not) into `out` and returns its kind.
    pub(crate) fn open_handshake(
        &mut self,
        packet: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<u8, Dropped> {
        let salt_len = match packet.first() {
            Some(&KIND_CHALLENGE | &KIND_DENIED) => SALT_LEN,
            Some(&KIND_RESPONSE) => 0,
            _ => return Err(Dropped::Tampered),
        };
        self.open_in(HANDSHAKE, salt_len, packet, out)
    }

    fn open_in(
        &mut self,
        lane: usize,
        salt_len: usize,
        packet: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<u8, Dropped> {
        let mut r = Reader::new(packet);
        let (kind, seq) = r.u8().zip(r.u64()).ok_or(Dropped::Tampered)?;
        r.bytes(salt_len).ok_or(Dropped::Tampered)?;
        let body_len = r
            .remaining()
            .checked_sub(TAG_LEN)
            .ok_or(Dropped::Tampered)?;
        let body = r.bytes(body_len).ok_or(Dropped::Tampered)?;
        let tag = Tag::try_from(r.bytes(TAG_LEN).ok_or(Dropped::Tampered)?)
            .map_err(|_| Dropped::Tampered)?;
        let window = &mut self.windows[lane];
        if !window.is_fresh(seq) {
            return Err(Dropped::Replayed);
        }
        out.clear();
        out.extend_from_slice(body);
        let ad = additional_data(self.protocol_id, kind, lane);
        self.open_key
            .decrypt_inout_detached(&nonce(seq, lane), &ad, out.as_mut_slice().into(), &tag)
            .map_err(|_| Dropped::Tampered)?;
        window.mark(seq);
        Ok(kind)
    }
}

/// The server's salt in a challenge or denial packet, read before the keys are known.
pub(crate) fn server_salt(packet: &[u8]) -> Option<[u8; SALT_LEN]> {
    let mut r = Reader::new(packet);
    matches!(r.u8()?, KIND_CHALLENGE | KIND_DENIED).then_some(())?;
    r.u64()?;
    r.array()
}

fn nonce(seq: u64, lane: usize) -> Nonce {
    let mut n = [0; 12];
    n[..8].copy_from_slice(&seq.to_le_bytes());
    n[8] = lane as u8;
    Nonce::from(n)
}

fn additional_data(protocol_id: u64, kind: u8, lane: usize) -> [u8; 18] {
    let mut ad = [0; 18];
    ad[..8].copy_from_slice(&VERSION);
    ad[8..16].copy_from_slice(&protocol_id.to_le_bytes());
    ad[16] = kind;
    ad[17] = lane as u8;
    ad
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pair() -> (Session, Session) {
        let keys = ConnectionKeys {
            client_to_server: [1; 32],
            server_to_client: [2; 32],
        };
        (
            Session::new(9, &keys, End::Client),
            Session::new(9, &keys, End::Server),
        )
    }

    #[test]
    fn handshake_nonces_never_meet_a_channels() {
        let (mut alice, mut bob) = pair();
        let (mut wire, mut plain) = (Vec::new(), Vec::new());
        assert!(alice.seal_handshake(KIND_RESPONSE, None, b"c", &mut wire));
        assert_eq!(bob.open_handshake(&wire, &mut plain), Ok(KIND_RESPONSE));
        // The same sequence number on a channel is another nonce: it does not authenticate.
        let mut as_payload = wire.clone();
        as_payload[0] = KIND_PAYLOAD;
        assert_eq!(
            bob.open(Channel::Reliable, &as_payload, &mut plain),
            Err(Dropped::Tampered)
        );
        assert!(bob.seal_handshake(KIND_CHALLENGE, Some(&[5; 16]), b"x", &mut wire));
        assert_eq!(server_salt(&wire), Some([5; 16]));
        assert_eq!(alice.open_handshake(&wire, &mut plain), Ok(KIND_CHALLENGE));
        assert_eq!(plain, b"x");
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
