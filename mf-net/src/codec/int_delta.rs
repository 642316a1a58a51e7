//! Integers coded at the bit level against a baseline the receiver holds ([`IntDelta`]).

use crate::wire::{unzigzag32, zigzag32, BitReader, BitWriter, DecodeError};

/// Integers coded at the bit level against a baseline the receiver holds: the difference, so
/// that a counter that moved by one takes three bits and one that did not move takes one.
///
/// The grammar, for a baseline `b` and a value `v` of an integer type `T`:
///
/// - 8, 16 and 32-bit types: the Elias gamma code ([`BitWriter::write_gamma`]) of the
///   zig-zag mapping of `v − b`, the difference wrapping in `T`'s width and read as signed.
///   Unchanged is `1`, ±1 is three bits, ±2 to ±3 five bits. A code whose value is past the
///   largest zig-zag difference of the width is refused ([`DecodeError::OutOfRange`]).
/// - 64-bit types: `0` and the same code when the wrapping difference fits an `i32`, else `1`
///   and the 64 bits of `v`. The long form where the short one fits is refused
///   ([`DecodeError::NonCanonical`]).
///
/// Both ends compute the same wrapping differences, so the receiver rebuilds exactly the
/// sender's value; whatever the reader accepts re-encodes to the same bits.
pub trait IntDelta: Copy + private::Sealed {
    /// Appends `now` coded against `base`.
    fn write_delta(base: Self, now: Self, w: &mut BitWriter);

    /// Reads what [`write_delta`](Self::write_delta) wrote against the same `base`. A refused
    /// or cut value leaves the reader where it was.
    fn read_delta(base: Self, r: &mut BitReader<'_>) -> Result<Self, DecodeError>;
}

mod private {
    /// Only the integer types of this module code deltas.
    pub trait Sealed {}
}

/// Reads a gamma code of at most `max` (a zig-zag difference of a narrower width), leaving
/// the reader where it was if the code is cut or too large.
fn read_bounded_gamma(r: &mut BitReader<'_>, max: u32) -> Result<u32, DecodeError> {
    let mut ahead = r.clone();
    let zz = ahead.read_gamma()?;
    if zz > max {
        return Err(DecodeError::OutOfRange);
    }
    *r = ahead;
    Ok(zz)
}

macro_rules! narrow_int_delta {
    ($($t:ty => $signed:ty),* $(,)?) => {$(
        impl private::Sealed for $t {}

        impl IntDelta for $t {
            #[inline]
            fn write_delta(base: Self, now: Self, w: &mut BitWriter) {
                #[allow(clippy::cast_possible_wrap, clippy::cast_lossless)]
                let d = now.wrapping_sub(base) as $signed as i32;
                w.write_gamma(zigzag32(d));
            }

            #[inline]
            fn read_delta(base: Self, r: &mut BitReader<'_>) -> Result<Self, DecodeError> {
                // The largest zig-zag difference of the width: every bit of the width set.
                let max = u32::MAX >> (32 - <$t>::BITS);
                let zz = read_bounded_gamma(r, max)?;
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let d = unzigzag32(zz) as $t;
                Ok(base.wrapping_add(d))
            }
        }
    )*};
}

narrow_int_delta!(u8 => i8, i8 => i8, u16 => i16, i16 => i16, u32 => i32, i32 => i32);

macro_rules! wide_int_delta {
    ($($t:ty),* $(,)?) => {$(
        impl private::Sealed for $t {}

        impl IntDelta for $t {
            #[inline]
            fn write_delta(base: Self, now: Self, w: &mut BitWriter) {
                #[allow(clippy::cast_possible_wrap)]
                let d = now.wrapping_sub(base) as i64;
                match i32::try_from(d) {
                    Ok(d) => {
                        w.write_bit(false);
                        w.write_gamma(zigzag32(d));
                    }
                    Err(_) => {
                        w.write_bit(true);
                        #[allow(clippy::cast_sign_loss)]
                        w.write_bits(now as u64, 64);
                    }
                }
            }

            #[inline]
            fn read_delta(base: Self, r: &mut BitReader<'_>) -> Result<Self, DecodeError> {
                let mut ahead = r.clone();
                let value = match ahead.read_bit()? {
                    false => {
                        let d = i64::from(unzigzag32(ahead.read_gamma()?));
                        #[allow(clippy::cast_sign_loss)]
                        base.wrapping_add(d as $t)
                    }
                    true => {
                        #[allow(clippy::cast_possible_wrap)]
                        let now = ahead.read_bits(64)? as $t;
                        #[allow(clippy::cast_possible_wrap)]
                        let d = now.wrapping_sub(base) as i64;
                        if i32::try_from(d).is_ok() {
                            return Err(DecodeError::NonCanonical);
                        }
                        now
                    }
                };
                *r = ahead;
                Ok(value)
            }
        }
    )*};
}

wide_int_delta!(u64, i64);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::IntDelta;
    use crate::wire::{BitReader, BitWriter, DecodeError};

    /// `now` against `base`: its bytes and bit length; checks that it reads back whole.
    fn coded<T: IntDelta + PartialEq + std::fmt::Debug>(base: T, now: T) -> (Vec<u8>, usize) {
        let mut w = BitWriter::new();
        T::write_delta(base, now, &mut w);
        let bits = w.bit_len();
        let bytes = w.finish().to_vec();
        let mut r = BitReader::new(&bytes);
        assert_eq!(T::read_delta(base, &mut r), Ok(now));
        assert_eq!(r.bit_position(), bits);
        assert_eq!(r.finish(), Ok(()));
        (bytes, bits)
    }

    #[test]
    fn golden_codes() {
        // Unchanged: gamma(0) = `1`.
        assert_eq!(coded(7i32, 7), (vec![0x01], 1));
        // +1: zig-zag 2, gamma `0 1 1` (v + 1 = 3: a zero, the one, then bit 0 of 3).
        assert_eq!(coded(7i32, 8), (vec![0x06], 3));
        // −1: zig-zag 1, gamma `0 1 0`.
        assert_eq!(coded(7u16, 6), (vec![0x02], 3));
        // 250 → 3 wraps: +9, zig-zag 18, v + 1 = 19 = 0b1_0011: `0 0 0 0 1` then 1, 1, 0, 0.
        assert_eq!(coded(250u8, 3), (vec![0x70, 0x00], 9));
        // 64-bit, near: `0` then the short code.
        assert_eq!(coded(1u64 << 40, (1 << 40) + 1), (vec![0x0C], 4));
        // 64-bit, far: `1` then the 64 bits of the value.
        let (bytes, bits) = coded(0i64, i64::MIN);
        assert_eq!((bits, bytes[0], bytes[8]), (65, 0x01, 0x01));
    }

    #[test]
    fn codes_past_the_width_and_long_forms_that_fit_short_are_refused() {
        // 255 + 1 = 256 for an i8 difference: past the largest zig-zag of 8 bits.
        let mut w = BitWriter::new();
        w.write_gamma(256);
        let bytes = w.finish().to_vec();
        let mut r = BitReader::new(&bytes);
        assert_eq!(i8::read_delta(0, &mut r), Err(DecodeError::OutOfRange));
        assert_eq!(r.bit_position(), 0, "a refused value is not read past");
        assert_eq!(u16::read_delta(0, &mut BitReader::new(&bytes)), Ok(128));
        // The long form of a difference of 5.
        let mut w = BitWriter::new();
        w.write_bit(true);
        w.write_bits(105, 64);
        let bytes = w.finish().to_vec();
        let mut r = BitReader::new(&bytes);
        assert_eq!(u64::read_delta(100, &mut r), Err(DecodeError::NonCanonical));
        assert_eq!(r.bit_position(), 0);
        // Cut short.
        let mut r = BitReader::new(&bytes[..4]);
        assert_eq!(i64::read_delta(0, &mut r), Err(DecodeError::EndOfStream));
        assert_eq!(r.bit_position(), 0);
    }

    /// `T`'s round trip and, for arbitrary bytes, that what is accepted re-encodes to itself.
    fn round_trip_and_reencode<T>(base: T, now: T, bytes: &[u8]) -> Result<(), TestCaseError>
    where
        T: IntDelta + PartialEq + std::fmt::Debug,
    {
        let mut w = BitWriter::new();
        T::write_delta(base, now, &mut w);
        let written = w.finish().to_vec();
        prop_assert_eq!(T::read_delta(base, &mut BitReader::new(&written)), Ok(now));
        let mut r = BitReader::new(bytes);
        if let Ok(value) = T::read_delta(base, &mut r) {
            let used = r.bit_position();
            let mut w = BitWriter::new();
            T::write_delta(base, value, &mut w);
            prop_assert_eq!(w.bit_len(), used);
            let mut again = BitWriter::new();
            prop_assert!(again.append_bits(bytes, 0, used));
            prop_assert_eq!(w.finish(), again.finish());
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn every_width_round_trips_and_reencodes(
            base in any::<u64>(),
            now in any::<u64>(),
            near in any::<i8>(),
            close in any::<bool>(),
            bytes in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            #[allow(clippy::cast_sign_loss)]
            let now = if close { base.wrapping_add(near as u64) } else { now };
            #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
            {
                round_trip_and_reencode(base as u8, now as u8, &bytes)?;
                round_trip_and_reencode(base as i8, now as i8, &bytes)?;
                round_trip_and_reencode(base as u16, now as u16, &bytes)?;
                round_trip_and_reencode(base as i16, now as i16, &bytes)?;
                round_trip_and_reencode(base as u32, now as u32, &bytes)?;
                round_trip_and_reencode(base as i32, now as i32, &bytes)?;
                round_trip_and_reencode(base, now, &bytes)?;
                round_trip_and_reencode(base as i64, now as i64, &bytes)?;
            }
        }
    }
}
