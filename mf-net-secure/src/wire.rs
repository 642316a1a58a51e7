//! Byte layouts shared by tokens, requests and sealed packets, and a bounds-checked reader.

/// Starts every connect token's bytes and every connection request (format version 2).
pub(crate) const VERSION: [u8; 8] = *b"MFSEC002";
/// First byte of a connection request (client to server, in clear).
pub(crate) const KIND_REQUEST: u8 = 1;
/// First byte of the server's challenge (sealed, handshake nonces).
pub(crate) const KIND_CHALLENGE: u8 = 2;
/// First byte of the client's answer to a challenge (sealed, handshake nonces).
pub(crate) const KIND_RESPONSE: u8 = 3;
/// First byte of the server's refusal of a request whose token opened (sealed, handshake
/// nonces): one byte, the reason's code.
pub(crate) const KIND_DENIED: u8 = 4;
/// First byte of the server's sealed "admitted" packet.
pub(crate) const KIND_ACCEPT: u8 = 5;
/// First byte of a sealed payload packet.
pub(crate) const KIND_PAYLOAD: u8 = 6;
/// First byte of a sealed empty packet that keeps an idle connection alive.
pub(crate) const KIND_KEEPALIVE: u8 = 7;
/// Length of each side's connection salt (fresh randomness mixed into the connection keys).
pub(crate) const SALT_LEN: usize = 16;
// The request's kind and the version's first five bytes are what a plain server recognises.
const _: () = assert!(
    KIND_REQUEST == mf_net::transport::SECURE_REQUEST_PREFIX[0]
        && VERSION[0] == mf_net::transport::SECURE_REQUEST_PREFIX[1]
        && VERSION[4] == mf_net::transport::SECURE_REQUEST_PREFIX[5]
);
/// Length of the token nonce (XChaCha20-Poly1305).
pub(crate) const TOKEN_NONCE_LEN: usize = 24;
/// Length of a Poly1305 tag.
pub(crate) const TAG_LEN: usize = 16;
/// Length of a per-connection key.
pub(crate) const SESSION_KEY_LEN: usize = 32;

/// Reads little-endian values from untrusted bytes; every read is checked.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// The next `n` bytes, or `None` if fewer are left.
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Some(head)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.bytes(N).and_then(|b| b.try_into().ok())
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// A `u8`-length-prefixed string of bytes.
    pub(crate) fn short_bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.u8()?;
        self.bytes(usize::from(len))
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// Whether every byte was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}
