//! The byte-level wire: a reusable [`NetWriter`] and a strict [`NetReader`].
//!
//! Everything is little-endian. Variable-length integers are LEB128 (7 bits per byte, low
//! groups first); signed varints are zig-zag encoded first so small negative numbers stay short.
//! Strings are a varint UTF-8 byte count followed by the bytes.
//!
//! The reader never panics: every read returns `Result<_, DecodeError>`.

mod error;
mod reader;
mod writer;

pub use error::{DecodeError, ProtocolViolation};
pub use reader::NetReader;
pub use writer::NetWriter;

/// Longest string, in UTF-8 bytes, that [`NetReader::read_str`] accepts (64 KiB).
///
/// Use [`NetReader::read_str_max`] for a different limit.
pub const MAX_STRING_BYTES: usize = 64 * 1024;

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
