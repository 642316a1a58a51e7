//! The wire: a reusable [`NetWriter`] and a strict [`NetReader`] for bytes, and their bit-level
//! counterparts [`BitWriter`] and [`BitReader`].
//!
//! Everything is little-endian. Variable-length integers are LEB128 (7 bits per byte, low
//! groups first); signed varints are zig-zag encoded first so small negative numbers stay short.
//! Strings are a varint UTF-8 byte count followed by the bytes.
//!
//! The reader never panics: every read returns `Result<_, DecodeError>`.
//!
//! # Bit-level I/O
//!
//! [`BitWriter`] and [`BitReader`] pack values of 0 to 64 bits for bit-packed formats, as
//! [`NetWriter`] and [`NetReader`] do bytes. Bits are packed least significant first into a
//! little-endian byte stream: bit `i` of the stream is bit `i % 8` of byte `i / 8`, and a value
//! of `k` bits takes the next `k` stream bits, its least significant bit first. A finished
//! stream is padded with zero bits to a whole byte; the reader refuses non-zero padding.
//!
//! [`BitWriter::write_gamma`] codes any `u32` `v` (0 included) as the Elias gamma code of
//! `x = v + 1`: with `n = ⌊log2 x⌋` (0 to 32), `n` zero bits, a one bit (the leading one of
//! `x`), then the `n` bits of `x` below its leading one, least significant first. That is
//! `2n + 1` bits ([`gamma_bits`]): 1 bit for 0, 3 for 1 and 2, 5 for 3 to 6, at most 65 (for
//! `u32::MAX`). For example `v = 5`: `x = 6 = 0b110`, `n = 2`, stream bits `0 0 1 0 1`, the
//! byte `0x14`. Each value has exactly one code, so every code a [`BitReader`] accepts
//! re-encodes to the same bits.

mod bits;
mod error;
mod reader;
mod writer;

pub use bits::{gamma_bits, BitReader, BitWindow, BitWriter};
pub use error::{DecodeError, ProtocolViolation};
pub use reader::NetReader;
pub use writer::NetWriter;

/// Longest string, in UTF-8 bytes, that [`NetReader::read_str`] accepts (64 KiB).
///
/// Use [`NetReader::read_str_max`] for a different limit.
pub const MAX_STRING_BYTES: usize = 64 * 1024;

/// The little-endian integer of `bytes` (at most 8; more are ignored), gathered byte by byte: a
/// copy of a length known only at run time would be a call to `memcpy`.
#[inline]
fn le_u64(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= 8, "{} bytes for a u64", bytes.len());
    bytes
        .iter()
        .take(8)
        .enumerate()
        .fold(0, |word, (i, &b)| word | u64::from(b) << (8 * i))
}

/// Maps a signed 32-bit integer onto an unsigned one so small magnitudes stay small (zig-zag).
#[inline]
pub const fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// Inverse of [`zigzag32`].
#[inline]
pub const fn unzigzag32(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// Maps a signed 64-bit integer onto an unsigned one so small magnitudes stay small (zig-zag).
#[inline]
pub const fn zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag64`].
#[inline]
pub const fn unzigzag64(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Number of bytes the LEB128 encoding of `v` takes (1 to 10).
#[inline]
pub const fn varint_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}
