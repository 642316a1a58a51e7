//! Bit-level I/O: a reusable [`BitWriter`] and a strict [`BitReader`].
//!
//! Bit order: least significant first within a little-endian byte stream, so bit `i` of the
//! stream is bit `i % 8` of byte `i / 8`; a `k`-bit value takes the next `k` stream bits, its
//! least significant bit first; a finished stream is zero-padded to a byte. Gamma codes are
//! Elias gamma of `v + 1`: `n` zeros, a one, the `n` low bits of `v + 1` (least significant
//! first). The public description, with an example, is in [the `wire` docs](super).

mod bit_reader;
mod bit_writer;

pub use bit_reader::{BitReader, BitWindow};
pub use bit_writer::BitWriter;

/// Longest zero prefix of a gamma code for a `u32` (`u32::MAX + 1 = 2^32`).
const GAMMA_MAX_PREFIX: u32 = 32;

/// Bits [`BitReader::read_bits`] takes from one unaligned load: a load at any bit offset
/// holds at least 57 bits of the stream.
const LOAD_BITS: u32 = 56;

/// Number of bits of the Elias gamma code of `v` (1 to 65), as written by
/// [`BitWriter::write_gamma`].
#[inline]
pub const fn gamma_bits(v: u32) -> u32 {
    let x = v as u64 + 1;
    2 * (63 - x.leading_zeros()) + 1
}

/// The low `bits` bits set (`bits` ≤ 64).
#[inline]
const fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// The 64 stream bits of `bytes` starting at bit `bit`, zero past the end. Only the low
/// `64 - bit % 8` (at least 57) bits of the result are stream bits; the rest are zero.
#[inline]
fn load_bits(bytes: &[u8], bit: usize) -> u64 {
    let rest = bytes.get(bit / 8..).unwrap_or_default();
    let word = match rest.first_chunk::<8>() {
        Some(chunk) => u64::from_le_bytes(*chunk),
        // The stream's last bytes (every stream's end takes this path).
        None => super::le_u64(rest),
    };
    word >> (bit % 8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::DecodeError;

    /// The stream bits of `bytes`, first bit first (reference model).
    fn bools(bytes: &[u8], bits: usize) -> Vec<bool> {
        (0..bits)
            .map(|i| bytes[i / 8] >> (i % 8) & 1 == 1)
            .collect()
    }

    /// A writer holding `bits`, written one bit at a time (reference model).
    fn writer_of(bits: &[bool]) -> BitWriter {
        let mut w = BitWriter::new();
        bits.iter().for_each(|&b| w.write_bit(b));
        w
    }

    /// `len` pseudo-random bits.
    fn pattern(len: usize, seed: u64) -> Vec<bool> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x & 1 == 1
            })
            .collect()
    }

    fn finished(mut w: BitWriter) -> Vec<u8> {
        w.finish().to_vec()
    }

    #[test]
    fn truncating_keeps_exactly_the_first_bits_flushed_or_not() {
        let bits = pattern(200, 7);
        for split in [0, 63, 64, 65, 128, 130] {
            let written = split + 70;
            for keep in [0, 1, 7, 8, 9, 63, 64, 65, 100, 129, 130].map(|k| k.min(written)) {
                // Written in two runs (the first finished, so flushed bytes end mid-word).
                let mut w = writer_of(&bits[..split]);
                if split % 8 == 0 {
                    w.finish();
                }
                bits[split..split + 70].iter().for_each(|&b| w.write_bit(b));
                assert!(w.truncate_bits(keep), "split {split}, keep {keep}");
                assert_eq!(w.bit_len(), keep);
                // Later writes continue right after the kept bits.
                w.write_bits(0b101, 3);
                let mut expected = bits[..keep].to_vec();
                expected.extend([true, false, true]);
                assert_eq!(
                    finished(w),
                    finished(writer_of(&expected)),
                    "split {split}, keep {keep}"
                );
            }
        }
        let mut w = writer_of(&bits[..10]);
        assert!(!w.truncate_bits(11));
        assert_eq!(w.bit_len(), 10);
    }

    #[test]
    fn a_window_takes_fields_with_one_load_and_commits_only_what_it_held() {
        let bytes = [0b1011_0110, 0xFF, 0x01];
        let mut r = BitReader::new(&bytes);
        assert_eq!(r.read_bits(1), Ok(0));
        let mut window = r.window();
        assert_eq!(
            (window.take(3), window.take_bit(), window.take(4)),
            (0b011, true, 0b1101)
        );
        assert!(window.fits(15) && !window.fits(16), "23 bits were left");
        assert_eq!(r.commit(window), Ok(()));
        assert_eq!(r.bit_position(), 9);
        // Past the end: zeros, and a commit that refuses and moves nothing.
        let mut window = r.window();
        assert_eq!(window.take(20), 0xFF);
        assert_eq!(window.take(64), 0);
        assert_eq!(window.used(), 84);
        assert_eq!(r.commit(window), Err(DecodeError::EndOfStream));
        assert_eq!(r.bit_position(), 9);
        // A window holds at least its minimum at any alignment.
        let long = [0xAB; 16];
        for start in 0..8 {
            let mut r = BitReader::new(&long);
            r.read_bits(start).unwrap();
            assert!(r.window().fits(BitWindow::MIN_BITS), "at bit {start}");
        }
    }

    #[test]
    fn write_bits_golden_across_byte_and_word_boundaries() {
        let mut w = BitWriter::new();
        w.write_bits(0b101, 3);
        w.write_bits(0x1F, 5);
        w.write_bits(0, 0);
        assert_eq!(w.bit_len(), 8);
        assert_eq!(finished(w), [0xFD]);

        let mut w = BitWriter::new();
        w.write_bit(true);
        w.write_bits(0xABC, 12);
        assert_eq!(finished(w), [0x79, 0x15]);

        let mut w = BitWriter::new();
        w.write_bits(0xA, 4);
        w.write_bits(0xF123_4567_89AB_CDEF, 64);
        assert_eq!(w.bit_len(), 68);
        let bytes = finished(w);
        assert_eq!(
            bytes,
            [0xFA, 0xDE, 0xBC, 0x9A, 0x78, 0x56, 0x34, 0x12, 0x0F]
        );
        let mut r = BitReader::new(&bytes);
        assert_eq!(r.read_bits(4), Ok(0xA));
        assert_eq!(r.read_bits(64), Ok(0xF123_4567_89AB_CDEF));
        assert_eq!(r.finish(), Ok(()));

        let mut w = BitWriter::new();
        w.write_bits(0, 60);
        w.write_bits(0xFF, 8);
        assert_eq!(finished(w), [0, 0, 0, 0, 0, 0, 0, 0xF0, 0x0F]);
    }

    #[test]
    fn gamma_and_zigzag_golden() {
        let cases: [(u32, &[u8]); 7] = [
            (0, &[0x01]),
            (1, &[0x02]),
            (2, &[0x06]),
            (3, &[0x04]),
            (5, &[0x14]),
            (255, &[0x00, 0x01, 0x00]),
            (u32::MAX, &[0, 0, 0, 0, 0x01, 0, 0, 0, 0]),
        ];
        for (v, golden) in cases {
            let mut w = BitWriter::new();
            w.write_gamma(v);
            assert_eq!(w.bit_len(), gamma_bits(v) as usize, "length of {v}");
            assert_eq!(finished(w), golden, "gamma({v})");
            let mut r = BitReader::new(golden);
            assert_eq!(r.read_gamma(), Ok(v));
            assert_eq!(r.finish(), Ok(()));
        }
        assert_eq!(
            [gamma_bits(0), gamma_bits(255), gamma_bits(u32::MAX)],
            [1, 17, 65]
        );
        let zigzag: [(i32, &[u8]); 3] = [
            (-1, &[0x02]),
            (1, &[0x06]),
            (i32::MIN, &[0, 0, 0, 0, 0x01, 0, 0, 0, 0]),
        ];
        for (v, golden) in zigzag {
            let mut w = BitWriter::new();
            w.write_zigzag_gamma(v);
            assert_eq!(finished(w), golden, "zigzag gamma({v})");
            assert_eq!(BitReader::new(golden).read_zigzag_gamma(), Ok(v));
        }
    }

    #[test]
    fn wide_reads_at_every_offset() {
        for offset in 0..8 {
            for bits in [55, 56, 57, 63, 64] {
                let value = 0xDEAD_BEEF_0BAD_F00D & low_mask(bits);
                let mut w = BitWriter::new();
                w.write_bits(low_mask(offset), offset);
                w.write_bits(value, bits);
                let bytes = finished(w);
                let mut r = BitReader::new(&bytes);
                assert_eq!(r.read_bits(offset), Ok(low_mask(offset)));
                assert_eq!(r.read_bits(bits), Ok(value), "{bits} bits at {offset}");
                assert_eq!(r.finish(), Ok(()));
            }
        }
    }

    #[test]
    fn patch_in_accumulator_after_flush_and_across() {
        // (bits written, patch position, width): in the accumulator, in the flushed buffer,
        // straddling both, a whole word at an odd offset, nothing at the very end.
        for (len, at, width) in [(15, 2, 6), (80, 4, 8), (70, 60, 8), (140, 3, 64), (9, 9, 0)] {
            let mut expected = pattern(len, len as u64);
            let mut w = writer_of(&expected);
            let value = 0x5A5A_5A5A_A5A5_A5A5 & low_mask(width);
            assert!(w.patch_bits(at, value, width));
            for i in 0..width as usize {
                expected[at + i] = value >> i & 1 == 1;
            }
            assert_eq!(w.bit_len(), len);
            assert_eq!(
                bools(&finished(w), len),
                expected,
                "{width} bits at {at} of {len}"
            );
        }
    }

    #[test]
    fn patch_out_of_range_changes_nothing() {
        let mut w = writer_of(&pattern(70, 7));
        let before = w.clone();
        assert!(!w.patch_bits(67, 0, 4));
        assert!(!w.patch_bits(0, 0, 65));
        assert!(!w.patch_bits(usize::MAX, 1, 1));
        assert_eq!(finished(w), finished(before));
    }

    #[test]
    fn a_one_then_a_gamma_code_in_one_write_is_the_two_writes() {
        let edges = [
            0,
            1,
            2,
            3,
            1 << 29,
            (1 << 30) - 2,
            (1 << 30) - 1,
            1 << 30,
            (1 << 31) - 2,
            (1 << 31) - 1,
            u32::MAX,
        ];
        for v in edges.into_iter().chain(0..300) {
            for prefix in [0, 5, 63] {
                let mut one = writer_of(&pattern(prefix, 3));
                one.write_one_then_gamma(v);
                let mut two = writer_of(&pattern(prefix, 3));
                two.write_bit(true);
                two.write_gamma(v);
                assert_eq!(one.bit_len(), two.bit_len(), "{v}");
                assert_eq!(finished(one), finished(two), "{v} after {prefix} bits");
            }
        }
    }

    #[test]
    fn append_at_every_misalignment() {
        for dst_offset in 0..8 {
            for src_offset in 0..8 {
                for len in [0, 1, 7, 8, 9, 55, 56, 57, 64, 130, 255, 256, 300] {
                    let src_bits = pattern(src_offset + len + 5, len as u64);
                    let src = finished(writer_of(&src_bits));
                    let prefix = pattern(dst_offset, 99);
                    let mut w = writer_of(&prefix);
                    assert!(w.append_bits(&src, src_offset, len));
                    let mut expected = prefix.clone();
                    expected.extend_from_slice(&src_bits[src_offset..src_offset + len]);
                    assert_eq!(w.bit_len(), expected.len());
                    let got = bools(&finished(w), expected.len());
                    assert_eq!(
                        got, expected,
                        "{len} bits from {src_offset} to {dst_offset}"
                    );

                    let mut w = writer_of(&prefix);
                    w.append(&writer_of(&src_bits[src_offset..]));
                    let mut expected = prefix;
                    expected.extend_from_slice(&src_bits[src_offset..]);
                    assert_eq!(bools(&finished(w), expected.len()), expected);
                }
            }
        }
    }

    #[test]
    fn append_out_of_range_writes_nothing() {
        let mut w = writer_of(&[true; 3]);
        assert!(!w.append_bits(&[0xFF; 2], 9, 8));
        assert!(!w.append_bits(&[0xFF; 2], usize::MAX, 2));
        assert!(w.append_bits(&[0xFF; 2], 16, 0));
        assert_eq!(w.bit_len(), 3);
    }

    #[test]
    fn clear_and_align() {
        let mut w = BitWriter::with_capacity(64);
        assert!(w.is_empty());
        w.write_bits(low_mask(61), 61);
        w.align();
        assert_eq!(w.bit_len(), 64);
        w.write_bit(true);
        assert_eq!(
            w.finish(),
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x01]
        );
        let capacity = w.capacity();
        w.clear();
        assert!(w.is_empty() && w.capacity() == capacity);
        assert_eq!(w.finish(), [] as [u8; 0]);
    }

    #[test]
    fn end_of_stream_and_too_wide() {
        let mut r = BitReader::new(&[0xFF]);
        assert_eq!(r.read_bits(65), Err(DecodeError::OutOfRange));
        assert_eq!(r.read_bits(9), Err(DecodeError::EndOfStream));
        assert_eq!(r.read_bits(8), Ok(0xFF));
        assert_eq!(r.read_bit(), Err(DecodeError::EndOfStream));
        assert_eq!(r.read_bits(0), Ok(0));
        assert_eq!(r.read_gamma(), Err(DecodeError::EndOfStream));
        assert_eq!(r.bit_position(), 8);
        assert_eq!(
            BitReader::new(&[]).read_bit(),
            Err(DecodeError::EndOfStream)
        );
    }

    #[test]
    fn gamma_refusals() {
        let refuse = |bytes: &[u8], error| {
            let mut r = BitReader::new(bytes);
            assert_eq!(r.read_gamma(), Err(error), "{bytes:x?}");
            assert_eq!(r.bit_position(), 0, "a failed read does not move");
        };
        // 33 zeros then a one: longer than any u32 code.
        refuse(&[0, 0, 0, 0, 0x02, 0, 0, 0, 0xFF], DecodeError::OutOfRange);
        refuse(&[0; 16], DecodeError::OutOfRange);
        refuse(&[0; 5], DecodeError::OutOfRange);
        // 32 zeros, a one, then low bits making the value 2^32 + 1.
        refuse(&[0, 0, 0, 0, 0x03, 0, 0, 0, 0], DecodeError::OutOfRange);
        refuse(&[0, 0, 0, 0, 0x01, 0, 0, 0, 0x01], DecodeError::OutOfRange);
        // Cut by the end: inside the prefix, inside the value bits.
        refuse(&[0; 4], DecodeError::EndOfStream);
        refuse(&[0x00, 0x01], DecodeError::EndOfStream);
        refuse(&[0, 0, 0, 0, 0x01, 0, 0, 0], DecodeError::EndOfStream);
    }

    #[test]
    fn finish_refusals() {
        let mut r = BitReader::new(&[0x03]);
        assert_eq!(r.read_bit(), Ok(true));
        assert_eq!(r.finish(), Err(DecodeError::NonZeroPadding));
        let mut r = BitReader::new(&[0x81]);
        assert_eq!(r.read_bit(), Ok(true));
        assert_eq!(r.finish(), Err(DecodeError::NonZeroPadding));
        let mut r = BitReader::new(&[0x01, 0x00]);
        assert_eq!(r.read_bit(), Ok(true));
        assert_eq!(r.finish(), Err(DecodeError::TrailingBytes));
        assert_eq!(
            BitReader::new(&[0]).finish(),
            Err(DecodeError::TrailingBytes)
        );
        assert_eq!(BitReader::new(&[]).finish(), Ok(()));
        let text = DecodeError::NonZeroPadding.to_string();
        assert_eq!(text, "non-zero padding bits after the message");
    }

    #[test]
    fn count_checked_against_bits_left() {
        let mut w = BitWriter::new();
        w.write_gamma(3);
        w.write_bits(0, 24);
        let bytes = finished(w);
        // 29 bits; 24 left after the count (+ 3 padding).
        assert_eq!(BitReader::new(&bytes).read_count(9), Ok(3));
        let mut r = BitReader::new(&bytes);
        assert_eq!(r.read_count(10), Err(DecodeError::CountPastEnd));
        assert_eq!(r.bit_position(), 0, "a failed read does not move");
        let mut w = BitWriter::new();
        w.write_gamma(5);
        let bytes = finished(w);
        assert_eq!(
            BitReader::new(&bytes).read_count(0),
            Err(DecodeError::CountPastEnd)
        );
        let mut w = BitWriter::new();
        w.write_gamma(u32::MAX);
        let bytes = finished(w);
        assert_eq!(
            BitReader::new(&bytes).read_count(u32::MAX),
            Err(DecodeError::CountPastEnd)
        );
        assert_eq!(BitReader::new(&[0x01]).read_count(u32::MAX), Ok(0));
    }
}
