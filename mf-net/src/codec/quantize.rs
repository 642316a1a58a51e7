//! Quantized floats: the `#[replicated(quantize(min = .., max = .., bits = ..))]` member option.
//!
//! A value is clamped to `[min, max]` and mapped to the nearest of the `2^bits` evenly spaced
//! buckets `min + k · (max − min) / (2^bits − 1)`, `k` in `0..2^bits`; both ends are exact and
//! every value in range comes back within half a step. NaN maps to `min` (bucket 0); `±∞` to
//! the nearer end.
//!
//! On the wire the bucket index `k` is written little-endian in the **smallest whole number of
//! bytes** that holds `bits` bits (1–8 bits: 1 byte, 9–16: 2, 17–24: 3, 25–32: 4), so a
//! member's size does not depend on its value. Vectors (`glam` feature) write each component
//! that way, in order: a `Vec3` with 16 bits is 6 bytes. Reading refuses an index above
//! `2^bits − 1` ([`DecodeError::Invalid`]).
//!
//! The derive compares members on their bucket indexes ([`Quantize::quantized_eq`]), so a
//! change smaller than a step (one that does not move the value to another bucket) is not
//! sent; the shadow keeps the value last captured, which always lies in the bucket that was
//! last sent.
//!
//! ```
//! use mf_net::codec::quantize::{Quantization, Quantize};
//! use mf_net::wire::{NetReader, NetWriter};
//!
//! const Q: Quantization = Quantization::new(-100.0, 100.0, 16);
//! let mut w = NetWriter::new();
//! 12.345f32.encode_quantized(&Q, &mut w);
//! assert_eq!(w.len(), 2);
//! let back = f32::decode_quantized(&Q, &mut NetReader::new(w.as_slice())).unwrap();
//! assert!((back - 12.345).abs() <= Q.step() as f32 / 2.0);
//! assert!(12.345f32.quantized_eq(&12.3451, &Q)); // same bucket
//! ```

use crate::wire::{DecodeError, NetReader, NetWriter};

/// The range and resolution of a quantized value: `bits` bits over `[min, max]`.
///
/// The derive builds one per `quantize(..)` member, after checking `min < max` (both finite)
/// and `bits` in `1..=32`. [`Quantization::new`] checks `bits` only (a `const fn` cannot
/// compare floats on this crate's minimum Rust version); with `min ≥ max` every value maps to
/// bucket 0 or to the last one, which decode as `min` and `max`. Equality compares the bit
/// patterns of `min` and `max`.
#[derive(Debug, Clone, Copy)]
pub struct Quantization {
    min: f64,
    max: f64,
    bits: u32,
}

impl PartialEq for Quantization {
    fn eq(&self, other: &Self) -> bool {
        self.min.to_bits() == other.min.to_bits()
            && self.max.to_bits() == other.max.to_bits()
            && self.bits == other.bits
    }
}

impl Eq for Quantization {}

impl Quantization {
    /// `bits` bits over `[min, max]`.
    ///
    /// # Panics
    ///
    /// If `bits` is not in `1..=32` (at compile time when used in a `const`).
    pub const fn new(min: f64, max: f64, bits: u32) -> Self {
        assert!(bits >= 1 && bits <= 32, "quantize: bits must be in 1..=32");
        Self { min, max, bits }
    }

    /// The low end of the range (bucket 0).
    pub const fn min(&self) -> f64 {
        self.min
    }

    /// The high end of the range (the last bucket).
    pub const fn max(&self) -> f64 {
        self.max
    }

    /// Bits per value.
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// Bytes per value on the wire: `bits` rounded up to whole bytes.
    pub const fn bytes(&self) -> usize {
        self.bits.div_ceil(8) as usize
    }

    /// The largest bucket index, `2^bits − 1`.
    pub const fn max_index(&self) -> u32 {
        if self.bits >= 32 {
            u32::MAX
        } else {
            (1u32 << self.bits) - 1
        }
    }

    /// The distance between two neighbouring buckets, `(max − min) / (2^bits − 1)`.
    pub fn step(&self) -> f64 {
        (self.max - self.min) / f64::from(self.max_index())
    }

    /// The bucket of `v`: clamped to the range, rounded to the nearest bucket; NaN is bucket 0.
    #[inline]
    pub fn index(&self, v: f64) -> u32 {
        let top = self.max_index();
        // With `min >= max` one of the ends always matches.
        if v.is_nan() || v <= self.min {
            0
        } else if v >= self.max {
            top
        } else {
            let t = (v - self.min) / (self.max - self.min) * f64::from(top);
            // `as` saturates; `t` is in [0, top] already, up to rounding.
            (t.round() as u32).min(top)
        }
    }

    /// The value of bucket `index` (`min` for 0, `max` for the last one, exactly).
    #[inline]
    pub fn value(&self, index: u32) -> f64 {
        let top = self.max_index();
        if index == 0 {
            self.min
        } else if index >= top {
            self.max
        } else {
            self.min + (self.max - self.min) * (f64::from(index) / f64::from(top))
        }
    }

    /// Appends bucket `index` in [`bytes`](Self::bytes) little-endian bytes.
    #[inline]
    pub fn write_index(&self, index: u32, w: &mut NetWriter) {
        let bytes = index.to_le_bytes();
        w.write_bytes(&bytes[..self.bytes()]);
    }

    /// Reads a bucket index written by [`write_index`](Self::write_index), refusing one past
    /// the last bucket.
    #[inline]
    pub fn read_index(&self, r: &mut NetReader<'_>) -> Result<u32, DecodeError> {
        let src = r.read_bytes(self.bytes())?;
        let mut bytes = [0u8; 4];
        bytes[..src.len()].copy_from_slice(src);
        let index = u32::from_le_bytes(bytes);
        if index > self.max_index() {
            return Err(DecodeError::Invalid("quantized value past its last bucket"));
        }
        Ok(index)
    }
}

/// A type that `#[replicated(quantize(..))]` can quantize: `f32`, `f64` and, with the `glam`
/// feature, `Vec2`, `Vec3` and `Vec4` (each component with the same [`Quantization`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated(quantize(..))]` member: it does not implement \
               `Quantize`",
    label = "not a quantizable type",
    note = "`quantize(..)` applies to `f32`, `f64` and (feature `glam`) `Vec2`, `Vec3`, `Vec4`; \
            remove `quantize(..)` to send the value in its `NetCodec` encoding"
)]
pub trait Quantize: Sized {
    /// Appends the value's bucket index (per component).
    fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter);
    /// Reads bucket indexes and returns the buckets' values.
    fn decode_quantized(q: &Quantization, r: &mut NetReader<'_>) -> Result<Self, DecodeError>;
    /// Whether `self` and `other` fall in the same bucket (every component): what the derive's
    /// change detection compares.
    fn quantized_eq(&self, other: &Self, q: &Quantization) -> bool;
}

impl Quantize for f64 {
    #[inline]
    fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter) {
        q.write_index(q.index(*self), w);
    }

    #[inline]
    fn decode_quantized(q: &Quantization, r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        Ok(q.value(q.read_index(r)?))
    }

    #[inline]
    fn quantized_eq(&self, other: &Self, q: &Quantization) -> bool {
        q.index(*self) == q.index(*other)
    }
}

impl Quantize for f32 {
    #[inline]
    fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter) {
        q.write_index(q.index(f64::from(*self)), w);
    }

    #[inline]
    fn decode_quantized(q: &Quantization, r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        #[allow(clippy::cast_possible_truncation)]
        Ok(q.value(q.read_index(r)?) as f32)
    }

    #[inline]
    fn quantized_eq(&self, other: &Self, q: &Quantization) -> bool {
        q.index(f64::from(*self)) == q.index(f64::from(*other))
    }
}

#[cfg(feature = "glam")]
macro_rules! quantize_vector {
    ($($ty:ident, $n:literal;)*) => {$(
        impl Quantize for glam::$ty {
            #[inline]
            fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter) {
                // One append for all components (same bytes as one `write_index` each).
                let n = q.bytes();
                let mut bytes = [0u8; 4 * $n];
                for (i, c) in self.to_array().into_iter().enumerate() {
                    let index = q.index(f64::from(c)).to_le_bytes();
                    bytes[i * n..(i + 1) * n].copy_from_slice(&index[..n]);
                }
                w.write_bytes(&bytes[..n * $n]);
            }

            #[inline]
            fn decode_quantized(
                q: &Quantization,
                r: &mut NetReader<'_>,
            ) -> Result<Self, DecodeError> {
                let mut c = [0.0f32; $n];
                for slot in &mut c {
                    *slot = f32::decode_quantized(q, r)?;
                }
                Ok(Self::from_array(c))
            }

            #[inline]
            fn quantized_eq(&self, other: &Self, q: &Quantization) -> bool {
                self.to_array()
                    .into_iter()
                    .zip(other.to_array())
                    .all(|(a, b)| a.quantized_eq(&b, q))
            }
        }
    )*};
}

#[cfg(feature = "glam")]
quantize_vector! {
    Vec2, 2;
    Vec3, 3;
    Vec4, 4;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn round_trip(q: &Quantization, v: f64) -> (Vec<u8>, f64) {
        let mut w = NetWriter::new();
        v.encode_quantized(q, &mut w);
        let mut r = NetReader::new(w.as_slice());
        let back = f64::decode_quantized(q, &mut r).unwrap();
        r.finish().unwrap();
        (w.into_vec(), back)
    }

    #[test]
    fn byte_counts_follow_bits() {
        for (bits, bytes) in [
            (1, 1),
            (8, 1),
            (9, 2),
            (16, 2),
            (17, 3),
            (24, 3),
            (25, 4),
            (32, 4),
        ] {
            let q = Quantization::new(0.0, 1.0, bits);
            assert_eq!(q.bytes(), bytes);
            assert_eq!(round_trip(&q, 0.5).0.len(), bytes);
        }
    }

    #[test]
    fn ends_are_exact_and_out_of_range_clamps() {
        let q = Quantization::new(-100.0, 100.0, 16);
        assert_eq!(round_trip(&q, -100.0), (vec![0, 0], -100.0));
        assert_eq!(round_trip(&q, 100.0), (vec![0xff, 0xff], 100.0));
        assert_eq!(round_trip(&q, 1e9).1, 100.0);
        assert_eq!(round_trip(&q, f64::NEG_INFINITY).1, -100.0);
        assert_eq!(round_trip(&q, f64::NAN).1, -100.0);
        let q32 = Quantization::new(0.0, 1.0, 32);
        assert_eq!(round_trip(&q32, 1.0), (vec![0xff; 4], 1.0));
    }

    #[test]
    fn index_past_the_last_bucket_is_refused() {
        let q = Quantization::new(0.0, 1.0, 12);
        let mut r = NetReader::new(&[0xff, 0x0f]);
        assert_eq!(f64::decode_quantized(&q, &mut r).unwrap(), 1.0);
        let mut r = NetReader::new(&[0x00, 0x10]);
        assert!(f64::decode_quantized(&q, &mut r).is_err());
        let mut r = NetReader::new(&[0x00]);
        assert!(f64::decode_quantized(&q, &mut r).is_err());
    }

    #[test]
    fn degenerate_range_does_not_panic() {
        let q = Quantization::new(1.0, 1.0, 8);
        assert_eq!(q.index(0.0), 0);
        assert_eq!(q.index(5.0), 255);
        let q = Quantization::new(2.0, 1.0, 8);
        assert_eq!(q.index(1.5), 0);
    }
}
