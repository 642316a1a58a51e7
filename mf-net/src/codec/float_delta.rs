//! Unquantized `f32` components coded at the bit level against a baseline the receiver holds:
//! the difference of their IEEE 754 bits, read as integers.
//!
//! Between two floats of the same sign the difference of their bits counts the representable
//! values between them, so a component that moved a little takes few bits and one that did
//! not move takes one. The grammar, for a baseline `b` and a value `v` (their bits as `u32`):
//! `zz` is the zig-zag mapping of `v − b` (wrapping, read as an `i32`), then
//!
//! - `0` when `zz` is 0 (the same bits);
//! - else `1`, `n − 1` in 5 bits where `n` (1 to 32) is the bit length of `zz`, and the low
//!   `n − 1` bits of `zz` (its top bit is implied).
//!
//! Every bit string of that shape reads as one `zz` and the writer writes no other, so what
//! the reader accepts re-encodes to the same bits; both ends compute the same wrapping
//! differences, so the receiver rebuilds the sender's bits exactly (NaNs and `-0.0` included).

use crate::wire::{unzigzag32, zigzag32, BitReader, BitWriter, DecodeError};

/// Appends the bits `now` of a float coded against the bits `base` (see the
/// [module documentation](self)).
#[inline]
pub(crate) fn write_float_delta(base: u32, now: u32, w: &mut BitWriter) {
    #[allow(clippy::cast_possible_wrap)]
    let zz = zigzag32(now.wrapping_sub(base) as i32);
    if zz == 0 {
        w.write_bit(false);
        return;
    }
    let n = u32::BITS - zz.leading_zeros();
    // The flag, the length and the bits below the implied top one, in one write (at most 37
    // bits; the writer emits the least significant bit first).
    let low = u64::from(zz) & ((1u64 << (n - 1)) - 1);
    w.write_bits(1 | u64::from(n - 1) << 1 | low << 6, 6 + n - 1);
}

/// Reads what [`write_float_delta`] wrote against the same `base`. A cut value leaves the
/// reader where it was.
#[inline]
pub(crate) fn read_float_delta(base: u32, r: &mut BitReader<'_>) -> Result<u32, DecodeError> {
    let mut ahead = r.clone();
    if !ahead.read_bit()? {
        *r = ahead;
        return Ok(base);
    }
    #[allow(clippy::cast_possible_truncation)]
    let below = ahead.read_bits(5)? as u32;
    #[allow(clippy::cast_possible_truncation)]
    let zz = (1u32 << below) | ahead.read_bits(below)? as u32;
    *r = ahead;
    #[allow(clippy::cast_sign_loss)]
    Ok(base.wrapping_add(unzigzag32(zz) as u32))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{read_float_delta, write_float_delta};
    use crate::wire::{BitReader, BitWriter, DecodeError};

    fn coded(base: f32, now: f32) -> (usize, Vec<u8>) {
        let mut w = BitWriter::new();
        write_float_delta(base.to_bits(), now.to_bits(), &mut w);
        (w.bit_len(), w.finish().to_vec())
    }

    #[test]
    fn bits_are_pinned() {
        // Unchanged: one 0.
        assert_eq!(coded(1.5, 1.5), (1, vec![0b0000_0000]));
        // One representable value up: zz = 2, n = 2: 1, 00001, 0.
        let up = f32::from_bits(1.5f32.to_bits() + 1);
        assert_eq!(coded(1.5, up).0, 7);
        let (_, bytes) = coded(1.5, up);
        let mut r = BitReader::new(&bytes);
        // First to last: the flag, the length 00001 (least significant first), the bit 0.
        assert_eq!(r.read_bits(1).unwrap(), 1);
        assert_eq!(r.read_bits(5).unwrap(), 1);
        assert_eq!(r.read_bits(1).unwrap(), 0);
        // A box bobbing at 150 by 0.05: about 3300 values, 18 bits instead of 32.
        assert_eq!(coded(150.0, 150.05).0, 18);
        // From zero to a positive float: the whole bits doubled, 32 significant bits.
        assert_eq!(coded(0.0, 150.0).0, 37);
    }

    #[test]
    fn a_cut_value_leaves_the_reader_where_it_was() {
        let (bits, bytes) = coded(0.0, 150.0);
        assert_eq!(bits, 37);
        let mut r = BitReader::new(&bytes[..4]);
        assert_eq!(read_float_delta(0, &mut r), Err(DecodeError::EndOfStream));
        assert_eq!(r.bit_position(), 0);
    }

    proptest! {
        #[test]
        fn every_pair_of_bits_reads_back_exactly(base in any::<u32>(), now in any::<u32>()) {
            let mut w = BitWriter::new();
            write_float_delta(base, now, &mut w);
            let bits = w.bit_len();
            let bytes = w.finish().to_vec();
            let mut r = BitReader::new(&bytes);
            prop_assert_eq!(read_float_delta(base, &mut r), Ok(now));
            prop_assert_eq!(r.bit_position(), bits);
        }

        #[test]
        fn whatever_is_read_writes_back_the_same_bits(base in any::<u32>(), bytes in proptest::collection::vec(any::<u8>(), 0..6)) {
            let mut r = BitReader::new(&bytes);
            if let Ok(now) = read_float_delta(base, &mut r) {
                let mut w = BitWriter::new();
                write_float_delta(base, now, &mut w);
                let len = w.bit_len();
                prop_assert_eq!(len, r.bit_position());
                let mut again = BitReader::new(&bytes);
                let mut mine = BitReader::new(w.finish());
                for _ in 0..len {
                    prop_assert_eq!(again.read_bit().unwrap(), mine.read_bit().unwrap());
                }
            }
        }
    }
}
