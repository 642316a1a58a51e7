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
//! `2^bits − 1` ([`DecodeError::BadQuantized`]).
//!
//! The derive compares members on their bucket indexes ([`Quantize::quantized_eq`]), so a
//! change smaller than a step (one that does not move the value to another bucket) is not
//! sent; the shadow keeps the value last captured, which always lies in the bucket that was
//! last sent.
//!
//! Rotations (`glam::Quat`) use `#[replicated(quantize(smallest_three, bits = ..))]` instead:
//! [`Quantization::smallest_three`] and [`QuantizeRotation`], which documents the encoding (a
//! 2-bit index of the largest component and the other three in `bits` bits each, 4 to 7 bytes).
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
//!
//! ## Deltas at the bit level
//!
//! For bit-packed snapshots, a quantized value can also be coded against a baseline the
//! receiver holds: the difference of bucket indexes, which both ends turn back into the same
//! indexes ([`Quantization::write_delta`], [`Quantization::write_rotation_delta`]). Every
//! encoding is canonical: the writer always picks the shortest form its grammar
//! allows for a value, and the reader refuses any other form
//! ([`DecodeError::NonCanonical`]), so that re-encoding whatever was decoded gives the same
//! bits. Bits are written with [`BitWriter`](crate::wire::BitWriter) (least significant
//! first).
//!
//! **Vectors and scalars** (`n` components of `b` bits, [`Quantization::new`]): a 2-bit class,
//! then one field per component:
//!
//! | class | per component | used when |
//! | --- | --- | --- |
//! | 0 | zig-zag difference in 3 bits | every difference is within −4..=3 |
//! | 1 | zig-zag difference in 5 bits | within −16..=15 |
//! | 2 | zig-zag difference in 8 bits | within −128..=127 |
//! | 3 | the index in `b` bits | otherwise, or a class would be no narrower than `b` |
//!
//! A difference is taken modulo 2³² (`now − base`, read as an `i32`), so every pair of
//! indexes has one. A 16-bit `Vec3` moving up to 3 steps a tick on two axes takes 11 bits.
//!
//! **Rotations** ([`Quantization::smallest_three`] with `n` bits, packed as
//! [`QuantizeRotation`] documents): a `1` when the largest component
//! is the baseline's and each of the three differences fits `n − 2` zig-zag bits, then per
//! component `0` (unchanged), `1 0` and `⌈n/2⌉` bits, or `1 1` and `n − 2` bits (the narrowest
//! that holds it); otherwise a `0` and the whole `2 + 3n`-bit encoding. At `n = 12`, against
//! 38 bits absolute: 25 bits when the three components each move a few steps, 11 when one
//! does.

mod delta;

use std::ops::RangeInclusive;

use crate::wire::{DecodeError, NetReader, NetWriter};

/// The `bits` per component that [`Quantization::smallest_three`] (and
/// `quantize(smallest_three, bits = ..)`) accepts: 9 bits send a rotation in 4 bytes within
/// 0.55°, 16 bits in 7 bytes within 0.005°.
pub const SMALLEST_THREE_BITS: RangeInclusive<u32> = 9..=16;

/// The range and resolution of a quantized value: `bits` bits over `[min, max]`.
///
/// The derive builds one per `quantize(..)` member, after checking `min < max` (both finite)
/// and `bits` in `1..=32`. [`Quantization::new`] checks `bits` only (a `const fn` cannot
/// compare floats on this crate's minimum Rust version); with `min ≥ max` every value maps to
/// bucket 0 or to the last one, which decode as `min` and `max`. Equality compares the bit
/// patterns of `min` and `max`.
///
/// [`Quantization::smallest_three`] builds the other kind: a rotation (`glam::Quat`, trait
/// [`QuantizeRotation`]) in the smallest-three encoding, `bits` per component.
#[derive(Debug, Clone, Copy)]
pub struct Quantization {
    min: f64,
    max: f64,
    bits: u32,
    smallest_three: bool,
}

impl PartialEq for Quantization {
    fn eq(&self, other: &Self) -> bool {
        self.min.to_bits() == other.min.to_bits()
            && self.max.to_bits() == other.max.to_bits()
            && self.bits == other.bits
            && self.smallest_three == other.smallest_three
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
        Self {
            min,
            max,
            bits,
            smallest_three: false,
        }
    }

    /// A rotation in the smallest-three encoding with `bits` bits per component
    /// (`#[replicated(quantize(smallest_three, bits = ..))]`, see [`QuantizeRotation`]). The
    /// three components sent lie in `[min, max]` = `[−1/√2, 1/√2]`.
    ///
    /// # Panics
    ///
    /// If `bits` is not in [`SMALLEST_THREE_BITS`] (at compile time when used in a `const`).
    pub const fn smallest_three(bits: u32) -> Self {
        assert!(
            bits >= *SMALLEST_THREE_BITS.start() && bits <= *SMALLEST_THREE_BITS.end(),
            "quantize(smallest_three): bits must be in 9..=16"
        );
        Self {
            min: -std::f64::consts::FRAC_1_SQRT_2,
            max: std::f64::consts::FRAC_1_SQRT_2,
            bits,
            smallest_three: true,
        }
    }

    /// Whether this is a rotation's smallest-three encoding ([`smallest_three`](Self::smallest_three)).
    pub const fn is_smallest_three(&self) -> bool {
        self.smallest_three
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

    /// Bytes per value on the wire: `bits` rounded up to whole bytes; for
    /// [`smallest_three`](Self::smallest_three), the whole rotation's `2 + 3 · bits` bits
    /// rounded up.
    pub const fn bytes(&self) -> usize {
        if self.smallest_three {
            (2 + 3 * self.bits).div_ceil(8) as usize
        } else {
            self.bits.div_ceil(8) as usize
        }
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
            (round_half_away(t) as u32).min(top)
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
        w.write_le(u64::from(index), self.bytes().min(4));
    }

    /// Reads a bucket index written by [`write_index`](Self::write_index), refusing one past
    /// the last bucket.
    #[inline]
    pub fn read_index(&self, r: &mut NetReader<'_>) -> Result<u32, DecodeError> {
        // At most 4 bytes: the value fits.
        #[allow(clippy::cast_possible_truncation)]
        let index = r.read_le(self.bytes().min(4))? as u32;
        if index > self.max_index() {
            return Err(DecodeError::BadQuantized);
        }
        Ok(index)
    }
}

/// A quantized member's wire form, as the server's shadow state keeps it: one bucket index
/// per component (up to four), or a packed smallest-three rotation. Change detection compares
/// these, and writes copy them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Buckets([u32; 4]);

impl Buckets {
    /// A packed 64-bit encoding (a smallest-three rotation), in the first two slots.
    fn packed(value: u64) -> Self {
        #[allow(clippy::cast_possible_truncation)]
        Self([value as u32, (value >> 32) as u32, 0, 0])
    }

    /// The packed encoding [`packed`](Self::packed) stored.
    fn packed_value(self) -> u64 {
        u64::from(self.0[0]) | u64::from(self.0[1]) << 32
    }

    /// Reads `components` (1 to 4) bucket indexes as [`Quantize::encode_wire`] writes them,
    /// refusing one past the last bucket.
    pub(crate) fn read_indexes(
        q: &Quantization,
        components: usize,
        r: &mut NetReader<'_>,
    ) -> Result<Self, DecodeError> {
        let mut wire = Self::default();
        for slot in wire.0.iter_mut().take(components) {
            *slot = q.read_index(r)?;
        }
        Ok(wire)
    }

    /// Appends the first `components` (1 to 4) bucket indexes as [`Quantize::encode_wire`] does.
    pub(crate) fn write_indexes(&self, q: &Quantization, components: usize, w: &mut NetWriter) {
        for &index in self.0.iter().take(components) {
            q.write_index(index, w);
        }
    }

    /// Reads a packed smallest-three encoding as [`QuantizeRotation::encode_wire`] writes it,
    /// refusing set bits past the encoding's `2 + 3 × bits`.
    pub(crate) fn read_rotation(
        q: &Quantization,
        r: &mut NetReader<'_>,
    ) -> Result<Self, DecodeError> {
        let packed = r.read_le(q.bytes())?;
        // At most 16 bits a component (`SMALLEST_THREE_BITS`); the bound keeps the shift in
        // range for any `q`.
        if packed >> (2 + 3 * q.bits().min(20)) != 0 {
            return Err(DecodeError::BadQuantized);
        }
        Ok(Self::packed(packed))
    }

    /// Appends the packed smallest-three encoding as [`QuantizeRotation::encode_wire`] does.
    pub(crate) fn write_rotation(&self, q: &Quantization, w: &mut NetWriter) {
        w.write_le(self.packed_value(), q.bytes());
    }

    /// An integer member's value kept as a baseline (in the first two slots).
    pub(crate) fn from_low_u64(value: u64) -> Self {
        Self::packed(value)
    }

    /// The integer [`from_low_u64`](Self::from_low_u64) stored.
    pub(crate) fn low_u64(self) -> u64 {
        self.packed_value()
    }

    /// Reads `components` (1 to 4) little-endian 32-bit words (an unquantized `f32` vector's
    /// bits), kept as a baseline one per slot.
    pub(crate) fn read_words(
        components: usize,
        r: &mut NetReader<'_>,
    ) -> Result<Self, DecodeError> {
        let mut words = Self::default();
        for slot in words.0.iter_mut().take(components) {
            *slot = r.read_u32()?;
        }
        Ok(words)
    }

    /// Appends the first `components` (1 to 4) words as [`read_words`](Self::read_words) reads
    /// them.
    pub(crate) fn write_words(&self, components: usize, w: &mut NetWriter) {
        for &word in self.0.iter().take(components) {
            w.write_u32(word);
        }
    }

    /// Its four slots.
    pub(crate) fn words(self) -> [u32; 4] {
        self.0
    }

    /// A value of these four slots.
    pub(crate) fn from_words(words: [u32; 4]) -> Self {
        Self(words)
    }
}

/// A type that `#[replicated(quantize(..))]` can quantize: `f32`, `f64` and, with the `glam`
/// feature, `Vec2`, `Vec3` and `Vec4` (each component with the same [`Quantization`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated(quantize(..))]` member: it does not implement \
               `Quantize`",
    label = "not a quantizable type",
    note = "`quantize(..)` applies to `f32`, `f64` and (feature `glam`) `Vec2`, `Vec3`, `Vec4`; \
            for a `glam::Quat` write `quantize(smallest_three, bits = 12)`; remove `quantize(..)` \
            to send the value in its `NetCodec` encoding"
)]
pub trait Quantize: Sized {
    /// How many bucket indexes its wire form has (1 for a float, 2 to 4 for a vector).
    const COMPONENTS: u8;
    /// The value's bucket indexes, its wire form ([`encode_wire`](Self::encode_wire) of them is
    /// [`encode_quantized`](Self::encode_quantized) of the value). The server's shadow state
    /// keeps a quantized member in this form, so quantizing happens once per capture and
    /// writing it for any number of clients only copies indexes.
    fn to_wire(&self, q: &Quantization) -> Buckets;
    /// Appends bucket indexes made by [`to_wire`](Self::to_wire) with the same `q`.
    fn encode_wire(wire: &Buckets, q: &Quantization, w: &mut NetWriter);
    /// Appends the value's bucket index (per component).
    fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter);
    /// Reads bucket indexes and returns the buckets' values.
    fn decode_quantized(q: &Quantization, r: &mut NetReader<'_>) -> Result<Self, DecodeError>;
    /// Whether `self` and `other` fall in the same bucket (every component): what the derive's
    /// change detection compares.
    fn quantized_eq(&self, other: &Self, q: &Quantization) -> bool;
}

impl Quantize for f64 {
    const COMPONENTS: u8 = 1;

    #[inline]
    fn to_wire(&self, q: &Quantization) -> Buckets {
        Buckets([q.index(*self), 0, 0, 0])
    }

    #[inline]
    fn encode_wire(wire: &Buckets, q: &Quantization, w: &mut NetWriter) {
        q.write_index(wire.0[0], w);
    }

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
    const COMPONENTS: u8 = 1;

    #[inline]
    fn to_wire(&self, q: &Quantization) -> Buckets {
        Buckets([q.index(f64::from(*self)), 0, 0, 0])
    }

    #[inline]
    fn encode_wire(wire: &Buckets, q: &Quantization, w: &mut NetWriter) {
        q.write_index(wire.0[0], w);
    }

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
            const COMPONENTS: u8 = $n;

            #[inline]
            fn to_wire(&self, q: &Quantization) -> Buckets {
                let mut wire = Buckets::default();
                for (slot, c) in wire.0.iter_mut().zip(self.to_array()) {
                    *slot = q.index(f64::from(c));
                }
                wire
            }

            #[inline]
            fn encode_wire(wire: &Buckets, q: &Quantization, w: &mut NetWriter) {
                for &index in &wire.0[..$n] {
                    q.write_index(index, w);
                }
            }

            #[inline]
            fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter) {
                Self::encode_wire(&self.to_wire(q), q, w);
            }

            // In line: a call returns the vector through memory, written a component at a
            // time and read back by the caller wider, which stalls the read on the writes.
            #[inline(always)]
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

/// A rotation that `#[replicated(quantize(smallest_three, bits = ..))]` can quantize:
/// `glam::Quat` (feature `glam`). The [`Quantization`] is always a
/// [`smallest_three`](Quantization::smallest_three) one.
///
/// The encoding, `bits` = N per component: the quaternion is normalized (NaN, infinite or
/// zero quaternions are sent as the identity); its largest-magnitude component (the first of
/// equal ones) is named by a 2-bit index (x, y, z, w = 0..=3) and made positive by negating
/// the whole quaternion (`q` and `−q` are the same rotation, and encode alike); the other three,
/// in x, y, z, w order, each lie in `[−1/√2, 1/√2]` and are sent as
/// `round(v · √2 · M) + M`, `M = 2^(N−1) − 1`, in N bits (so 0 and ±1/√2 are exact; index
/// `2^N − 1` is unused and refused). The index goes in the low 2 bits, then each component,
/// least significant bit first, in the fewest whole bytes that hold `2 + 3N` bits, little-endian
/// (N = 9 or 10: 4 bytes, 11–12: 5, 13–15: 6, 16: 7); padding bits must be 0.
///
/// Decoding takes the largest component as `√(1 − a² − b² − c²)`, which makes the rotation
/// unit length up to rounding; when that is negative (bytes no encoder writes) it takes 0 and
/// scales the three down to unit length. It never panics, and refuses only set padding bits
/// and unused indexes. The rotation comes back within `√6 / M` radians (N = 12: 0.069°;
/// N = 16: 0.0043°).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated(quantize(smallest_three, ..))]` member: it \
               does not implement `QuantizeRotation`",
    label = "not a quantizable rotation",
    note = "`quantize(smallest_three, bits = ..)` applies to `glam::Quat` (feature `glam`); \
            for floats and vectors write `quantize(min = .., max = .., bits = ..)`"
)]
pub trait QuantizeRotation: Sized {
    /// The rotation's packed smallest-three encoding, its wire form (see
    /// [`Quantize::to_wire`]).
    fn to_wire(&self, q: &Quantization) -> Buckets;
    /// Appends a packed encoding made by [`to_wire`](Self::to_wire) with the same `q`.
    fn encode_wire(wire: &Buckets, q: &Quantization, w: &mut NetWriter);
    /// Appends the value's smallest-three encoding.
    fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter);
    /// Reads a smallest-three encoding and returns its (unit) rotation.
    fn decode_quantized(q: &Quantization, r: &mut NetReader<'_>) -> Result<Self, DecodeError>;
    /// Whether `self` and `other` encode alike: what the derive's change detection compares.
    fn quantized_eq(&self, other: &Self, q: &Quantization) -> bool;
}

/// `M = 2^(bits−1) − 1`: the index of a 0 component (indexes run `0..=2M`).
#[cfg(feature = "glam")]
#[inline]
fn smallest_three_center(bits: u32) -> u64 {
    (1u64 << (bits.clamp(1, 31) - 1)) - 1
}

/// The smallest-three encoding of `c` (x, y, z, w) with `bits` per component, packed as on the
/// wire (index in the low 2 bits).
#[cfg(feature = "glam")]
#[inline]
pub(crate) fn pack_smallest_three(bits: u32, c: [f32; 4]) -> u64 {
    let mut c = c.map(f64::from);
    let mut len2: f64 = c.iter().map(|v| v * v).sum();
    // f64 holds the square of any finite f32: only NaN, ±∞ and zero land here.
    if !(len2.is_finite() && len2 > 0.0) {
        c = [0.0, 0.0, 0.0, 1.0];
        len2 = 1.0;
    }
    let len = len2.sqrt();
    // The largest component (the first of equals), and the three others in order, chosen
    // without a branch on the values: which one is largest is as random as the rotations a
    // capture meets, and a branch on it is mispredicted as often.
    let (mut largest, mut value) = (0, c[0]);
    for (i, &v) in c.iter().enumerate().skip(1) {
        let bigger = v.abs() > value.abs();
        largest = if bigger { i } else { largest };
        value = if bigger { v } else { value };
    }
    let scale = if value < 0.0 { -1.0 } else { 1.0 } * std::f64::consts::SQRT_2 / len;
    let m = smallest_three_center(bits) as f64;
    let mut packed = largest as u64;
    for j in 0..3 {
        let v = c[j + usize::from(j >= largest)];
        // In [-m, m] up to rounding; `as` would saturate anyway.
        let t = round_half_away(v * scale * m).clamp(-m, m) + m;
        // In [0, 2m], below 2^31: through `i64`, one conversion instruction (to `u64`, x86-64
        // takes several).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let k = t as i64 as u64;
        // `j` is below 3.
        #[allow(clippy::cast_possible_truncation)]
        let shift = 2 + j as u32 * bits;
        packed |= k << shift;
    }
    packed
}

/// Decodes [`pack_smallest_three`]'s output (any `u64`: errors, never panics).
#[cfg(feature = "glam")]
#[inline]
pub(crate) fn unpack_smallest_three(bits: u32, packed: u64) -> Result<[f32; 4], DecodeError> {
    let bits = bits.clamp(1, 20);
    if packed >> (2 + 3 * bits) != 0 {
        return Err(DecodeError::BadQuantized);
    }
    let m = smallest_three_center(bits);
    let mask = (1u64 << bits) - 1;
    #[allow(clippy::cast_precision_loss)]
    let (center, step) = (m as f64, std::f64::consts::FRAC_1_SQRT_2 / m as f64);
    let mut small = [0.0f64; 3];
    let mut sum = 0.0;
    for (i, v) in small.iter_mut().enumerate() {
        let k = (packed >> (2 + i as u32 * bits)) & mask;
        if k > 2 * m {
            return Err(DecodeError::BadQuantized);
        }
        #[allow(clippy::cast_precision_loss)]
        let value = (k as f64 - center) * step;
        *v = value;
        sum += value * value;
    }
    let large = (1.0 - sum).max(0.0).sqrt();
    // Unit length up to rounding (sum ≤ 1), else √sum (sum > 1, from bytes no encoder
    // writes): never 0.
    let scale = match sum > 1.0 {
        true => 1.0 / sum.sqrt(),
        false => 1.0,
    };
    // Put together in registers: an element stored at a varying index and read back with the
    // others stalls the load on the store.
    let [a, b, c] = small;
    let all = match packed & 3 {
        0 => [large, a, b, c],
        1 => [a, large, b, c],
        2 => [a, b, large, c],
        _ => [a, b, c, large],
    };
    #[allow(clippy::cast_possible_truncation)]
    Ok(all.map(|v| (v * scale) as f32))
}

#[cfg(feature = "glam")]
impl QuantizeRotation for glam::Quat {
    #[inline]
    fn to_wire(&self, q: &Quantization) -> Buckets {
        Buckets::packed(pack_smallest_three(q.bits(), self.to_array()))
    }

    #[inline]
    fn encode_wire(wire: &Buckets, q: &Quantization, w: &mut NetWriter) {
        w.write_le(wire.packed_value(), q.bytes());
    }

    #[inline]
    fn encode_quantized(&self, q: &Quantization, w: &mut NetWriter) {
        Self::encode_wire(&self.to_wire(q), q, w);
    }

    // In line, as the vectors' decode (see there).
    #[inline(always)]
    fn decode_quantized(q: &Quantization, r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        let c = unpack_smallest_three(q.bits(), r.read_le(q.bytes())?)?;
        Ok(Self::from_array(c))
    }

    #[inline]
    fn quantized_eq(&self, other: &Self, q: &Quantization) -> bool {
        pack_smallest_three(q.bits(), self.to_array())
            == pack_smallest_three(q.bits(), other.to_array())
    }
}

/// `x.round()` (the nearest integer, halves away from zero), computed in line: on x86-64's base
/// instruction set `f64::round` is a library call, and quantizing a moving body's rotation and
/// position makes six of them a capture. Equal to `x.round()` for every `f64`, the sign of zero
/// included.
#[inline]
fn round_half_away(x: f64) -> f64 {
    // From 2^52 on every `f64` is an integer; infinities and NaN round to themselves.
    const INTEGRAL: f64 = 4_503_599_627_370_496.0;
    // The largest `f64` below one half.
    const BELOW_HALF: f64 = 0.499_999_999_999_999_94;
    if x.is_nan() || x.abs() >= INTEGRAL {
        return x;
    }
    // Moved away from zero by just under a half, then truncated: a fraction of a half or more
    // carries the sum into the next integer, one below a half leaves it short of it (the sum
    // is rounded to the nearest `f64`, which below 2^52 never rounds it up to that integer).
    // No branch on the fraction: the values a capture rounds have random fractions, and a
    // branch on them is mispredicted half the time.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let rounded = (x + BELOW_HALF.copysign(x)) as i64 as f64;
    rounded.copysign(x)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn rounding_in_line_matches_the_library_for_every_kind_of_value() {
        let below_half = 0.5f64.next_down();
        let edges = [
            0.0,
            0.3,
            below_half,
            0.5,
            0.5f64.next_up(),
            1.5,
            2.5,
            2.5f64.next_down(),
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            1e300,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::MAX,
        ];
        for x in edges.into_iter().flat_map(|x| [x, -x]) {
            assert_eq!(round_half_away(x).to_bits(), x.round().to_bits(), "{x:e}");
        }
        assert!(round_half_away(f64::NAN).is_nan());
        // Around every power of two up to 2^53, and the halves next to them, a few steps
        // either way: where a sum carries into the next binade.
        for e in -60..=53 {
            let p = 2f64.powi(e);
            for centre in [p, p - 0.5, p + 0.5, p - 1.5, p + 1.5] {
                let mut x = centre;
                for _ in 0..4 {
                    x = x.next_down();
                }
                for _ in 0..9 {
                    for x in [x, -x] {
                        assert_eq!(round_half_away(x).to_bits(), x.round().to_bits(), "{x:e}");
                    }
                    x = x.next_up();
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn rounding_in_line_matches_the_library(bits: u64, small in -1e7f64..1e7) {
            for x in [f64::from_bits(bits), small] {
                if !x.is_nan() {
                    proptest::prop_assert_eq!(round_half_away(x).to_bits(), x.round().to_bits());
                }
            }
        }
    }

    fn round_trip(q: &Quantization, v: f64) -> (Vec<u8>, f64) {
        let mut w = NetWriter::new();
        v.encode_quantized(q, &mut w);
        let mut r = NetReader::new(w.as_slice());
        let back = f64::decode_quantized(q, &mut r).unwrap();
        r.finish().unwrap();
        (w.into_vec(), back)
    }

    /// What the server's shadow keeps writes the same bytes as quantizing the value.
    fn wire_bytes<T: Quantize>(v: &T, q: &Quantization) -> (Vec<u8>, Vec<u8>) {
        let (mut direct, mut via) = (NetWriter::new(), NetWriter::new());
        v.encode_quantized(q, &mut direct);
        T::encode_wire(&v.to_wire(q), q, &mut via);
        (direct.into_vec(), via.into_vec())
    }

    #[test]
    fn wire_form_writes_the_same_bytes() {
        let q = Quantization::new(-10.0, 10.0, 12);
        for v in [-11.0, -3.25, 0.0, 7.5, 10.0, f64::NAN] {
            let (a, b) = wire_bytes(&v, &q);
            assert_eq!(a, b);
            #[allow(clippy::cast_possible_truncation)]
            let (a, b) = wire_bytes(&(v as f32), &q);
            assert_eq!(a, b);
        }
        #[cfg(feature = "glam")]
        {
            let (a, b) = wire_bytes(&glam::Vec3::new(-3.0, 0.5, 9.0), &q);
            assert_eq!(a, b);
            let (a, b) = wire_bytes(&glam::Vec4::new(-3.0, 0.5, 9.0, 1.0), &q);
            assert_eq!(a, b);
            let r = Quantization::smallest_three(12);
            let rotation = glam::Quat::from_rotation_y(1.2);
            let (mut direct, mut via) = (NetWriter::new(), NetWriter::new());
            rotation.encode_quantized(&r, &mut direct);
            glam::Quat::encode_wire(&rotation.to_wire(&r), &r, &mut via);
            assert_eq!(direct.as_slice(), via.as_slice());
        }
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

    #[test]
    #[cfg(feature = "glam")]
    fn smallest_three_sizes_and_exact_values() {
        for (bits, bytes) in [(9, 4), (10, 4), (11, 5), (12, 5), (13, 6), (15, 6), (16, 7)] {
            let q = Quantization::smallest_three(bits);
            assert_eq!(q.bytes(), bytes);
            assert!(q.is_smallest_three());
            assert_ne!(q, Quantization::new(q.min(), q.max(), bits));
        }
        let h = std::f32::consts::FRAC_1_SQRT_2;
        for c in [
            [0.0, 0.0, 0.0, 1.0],
            [h, 0.0, 0.0, h],
            [0.0, -h, 0.0, h],
            [1.0, 0.0, 0.0, 0.0],
        ] {
            let back = unpack_smallest_three(12, pack_smallest_three(12, c)).unwrap();
            // The same rotation, up to the sign (the first largest component is positive).
            let dot: f32 = back.iter().zip(c).map(|(a, b)| a * b).sum();
            assert!(
                (dot.abs() - 1.0).abs() < 1e-6,
                "{c:?} came back as {back:?}"
            );
        }
    }

    #[test]
    #[cfg(feature = "glam")]
    fn smallest_three_non_finite_is_identity_and_sign_is_canonical() {
        let identity = pack_smallest_three(12, [0.0, 0.0, 0.0, 1.0]);
        for c in [
            [f32::NAN, 0.0, 0.0, 1.0],
            [f32::INFINITY, 0.0, 0.0, 0.0],
            [0.0; 4],
            [0.0, 0.0, 0.0, -3.0],
        ] {
            assert_eq!(pack_smallest_three(12, c), identity, "{c:?}");
        }
        let c = [0.1, -0.5, 0.3, -0.8];
        assert_eq!(
            pack_smallest_three(10, c),
            pack_smallest_three(10, c.map(|v| -v))
        );
    }

    /// [`unpack_smallest_three`] as it was first written: every component divided by the
    /// bucket count, the result normalized by its length.
    #[cfg(feature = "glam")]
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    fn unpack_normalized(bits: u32, packed: u64) -> [f32; 4] {
        let m = smallest_three_center(bits);
        let largest = (packed & 3) as usize;
        let (mut c, mut sum, mut shift) = ([0.0f64; 4], 0.0, 2);
        for (_, slot) in c.iter_mut().enumerate().filter(|(i, _)| *i != largest) {
            let k = (packed >> shift) & ((1 << bits) - 1);
            shift += bits;
            *slot = (k as f64 - m as f64) / m as f64 * std::f64::consts::FRAC_1_SQRT_2;
            sum += *slot * *slot;
        }
        c[largest] = (1.0 - sum).max(0.0).sqrt();
        let len = (sum + c[largest] * c[largest]).sqrt();
        c.map(|v| (v / len) as f32)
    }

    #[test]
    #[cfg(feature = "glam")]
    fn a_rotation_decodes_within_an_epsilon_of_its_normalized_value() {
        // A spread of index triples at every width (each end and the center among them), each
        // largest component.
        for bits in SMALLEST_THREE_BITS {
            let m = smallest_three_center(bits);
            let ks = || {
                (0..=2 * m)
                    .step_by((m / 13) as usize)
                    .chain([m - 1, m + 1, 2 * m])
            };
            for packed in (0..4u64).flat_map(|largest| {
                ks().flat_map(move |a| {
                    ks().flat_map(move |b| {
                        ks().map(move |c| largest | a << 2 | b << (2 + bits) | c << (2 + 2 * bits))
                    })
                })
            }) {
                let fast = unpack_smallest_three(bits, packed).unwrap();
                let slow = unpack_normalized(bits, packed);
                for (f, s) in fast.into_iter().zip(slow) {
                    let apart = (f - s).abs();
                    assert!(
                        apart <= f32::EPSILON,
                        "{packed:#x} at {bits} bits: {fast:?} against {slow:?}"
                    );
                }
            }
        }
    }

    /// The smallest-three packing as first written, with a branch per choice: what
    /// [`pack_smallest_three`] must give for every input.
    #[cfg(feature = "glam")]
    fn smallest_three_reference(bits: u32, c: [f32; 4]) -> u64 {
        let mut c = c.map(f64::from);
        let len2: f64 = c.iter().map(|v| v * v).sum();
        if !(len2.is_finite() && len2 > 0.0) {
            c = [0.0, 0.0, 0.0, 1.0];
        }
        let len: f64 = c.iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut largest = 0;
        for i in 1..4 {
            if c[i].abs() > c[largest].abs() {
                largest = i;
            }
        }
        let scale = if c[largest] < 0.0 { -1.0 } else { 1.0 } * std::f64::consts::SQRT_2 / len;
        let m = smallest_three_center(bits) as f64;
        let (mut packed, mut shift) = (largest as u64, 2);
        for (i, v) in c.into_iter().enumerate() {
            if i != largest {
                let t = (v * scale * m).round().clamp(-m, m) + m;
                packed |= (t as u64) << shift;
                shift += bits;
            }
        }
        packed
    }

    #[cfg(feature = "glam")]
    proptest::proptest! {
        #[test]
        fn smallest_three_packs_as_the_reference_does(
            c in proptest::array::uniform4(proptest::prop_oneof![
                -1.0f32..1.0,
                proptest::num::f32::ANY,
                proptest::sample::select(vec![0.0f32, -0.0, 0.5, -0.5, 1.0, -1.0]),
            ]),
            bits in SMALLEST_THREE_BITS,
        ) {
            proptest::prop_assert_eq!(pack_smallest_three(bits, c), smallest_three_reference(bits, c));
        }
    }

    #[test]
    #[cfg(feature = "glam")]
    fn smallest_three_decodes_any_bits_without_panicking() {
        for bits in SMALLEST_THREE_BITS {
            let total = 2 + 3 * bits;
            for packed in [
                0,
                u64::MAX,
                (1 << total) - 1,
                1 << total,
                0x5555_5555_5555_5555,
            ] {
                if let Ok(c) = unpack_smallest_three(bits, packed & ((1 << total) - 1)) {
                    let len: f32 = c.iter().map(|v| v * v).sum();
                    assert!((len - 1.0).abs() < 1e-5 && c.iter().all(|v| v.is_finite()));
                }
                if packed >> total != 0 {
                    assert!(unpack_smallest_three(bits, packed).is_err());
                }
            }
        }
        // Index 2^N - 1 is unused.
        assert!(unpack_smallest_three(9, 0x1ff << 2).is_err());
        assert!(unpack_smallest_three(9, 0x1fe << 2).is_ok());
    }
}
