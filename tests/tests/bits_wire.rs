//! `BitWriter` / `BitReader`: round trips of random write sequences, canonical gamma codes
//! (`encode(decode(b)) == b`), arbitrary bytes and reads against a naive reference model (no
//! panic, never past the end), appends and patches against bit-by-bit writes, and zero
//! allocations once the writer has grown.

#![allow(clippy::unwrap_used)]

use mf_net::wire::{gamma_bits, BitReader, BitWriter, DecodeError};
use mf_net_tests::alloc_counter::assert_no_alloc;
use proptest::prelude::*;

/// One write, and what reading it back must give.
#[derive(Debug, Clone)]
enum Write {
    Bits(u64, u32),
    Bit(bool),
    Gamma(u32),
    Zigzag(i32),
}

fn write_strategy() -> impl Strategy<Value = Write> {
    prop_oneof![
        (any::<u64>(), 0..=64u32).prop_map(|(v, bits)| Write::Bits(v & mask(bits), bits)),
        any::<bool>().prop_map(Write::Bit),
        prop_oneof![0..20u32, any::<u32>(), Just(u32::MAX)].prop_map(Write::Gamma),
        prop_oneof![-10..10i32, any::<i32>(), Just(i32::MIN)].prop_map(Write::Zigzag),
    ]
}

/// One read on arbitrary input.
#[derive(Debug, Clone)]
enum Read {
    Bits(u32),
    Bit,
    Gamma,
    Zigzag,
    Count(u32),
}

fn read_strategy() -> impl Strategy<Value = Read> {
    prop_oneof![
        (0..=70u32).prop_map(Read::Bits),
        Just(Read::Bit),
        Just(Read::Gamma),
        Just(Read::Zigzag),
        prop_oneof![0..16u32, any::<u32>()].prop_map(Read::Count),
    ]
}

/// Bytes rich in zeros, so that long gamma prefixes and zero padding come up often.
fn byte_strategy() -> impl Strategy<Value = u8> {
    prop_oneof![any::<u8>(), Just(0), Just(1), Just(0x80)]
}

fn mask(bits: u32) -> u64 {
    u64::MAX.checked_shr(64 - bits).unwrap_or(0)
}

fn apply(w: &mut BitWriter, write: &Write) {
    match *write {
        Write::Bits(v, bits) => w.write_bits(v, bits),
        Write::Bit(b) => w.write_bit(b),
        Write::Gamma(v) => w.write_gamma(v),
        Write::Zigzag(v) => w.write_zigzag_gamma(v),
    }
}

fn read_back(r: &mut BitReader<'_>, write: &Write) -> Result<bool, DecodeError> {
    Ok(match *write {
        Write::Bits(v, bits) => r.read_bits(bits)? == v,
        Write::Bit(b) => r.read_bit()? == b,
        Write::Gamma(v) => r.read_gamma()? == v,
        Write::Zigzag(v) => r.read_zigzag_gamma()? == v,
    })
}

/// Bit `i` of the stream `bytes` (reference model: the documented bit order).
fn bit(bytes: &[u8], i: usize) -> bool {
    bytes[i / 8] >> (i % 8) & 1 == 1
}

/// `bits` written one bit at a time, finished.
fn bytes_of(bits: &[bool]) -> Vec<u8> {
    let mut w = BitWriter::new();
    bits.iter().for_each(|&b| w.write_bit(b));
    w.finish().to_vec()
}

proptest! {
    #[test]
    fn writes_read_back(writes in prop::collection::vec(write_strategy(), 0..60)) {
        let mut w = BitWriter::new();
        let mut expected_bits = 0;
        for write in &writes {
            apply(&mut w, write);
            expected_bits += match *write {
                Write::Bits(_, bits) => bits as usize,
                Write::Bit(_) => 1,
                Write::Gamma(v) => gamma_bits(v) as usize,
                Write::Zigzag(v) => gamma_bits(mf_net::wire::zigzag32(v)) as usize,
            };
            prop_assert_eq!(w.bit_len(), expected_bits);
        }
        let bytes = w.finish().to_vec();
        prop_assert_eq!(bytes.len(), expected_bits.div_ceil(8));
        let mut r = BitReader::new(&bytes);
        for write in &writes {
            prop_assert_eq!(read_back(&mut r, write), Ok(true), "{:?}", write);
        }
        prop_assert_eq!(r.finish(), Ok(()));
    }

    #[test]
    fn accepted_gammas_reencode_to_the_same_bits(bytes in prop::collection::vec(byte_strategy(), 0..48)) {
        let mut r = BitReader::new(&bytes);
        let mut w = BitWriter::new();
        while let Ok(v) = r.read_gamma() {
            w.write_gamma(v);
            // Every accepted prefix re-encodes to exactly the bits it was read from.
            prop_assert_eq!(w.bit_len(), r.bit_position());
        }
        let accepted = r.bit_position();
        let reencoded = w.finish().to_vec();
        for i in 0..accepted {
            prop_assert_eq!(bit(&reencoded, i), bit(&bytes, i), "bit {}", i);
        }
    }

    #[test]
    fn arbitrary_reads_match_the_model_and_stay_in_bounds(
        bytes in prop::collection::vec(byte_strategy(), 0..40),
        reads in prop::collection::vec(read_strategy(), 0..40),
    ) {
        let total = bytes.len() * 8;
        let mut r = BitReader::new(&bytes);
        for read in &reads {
            let before = r.bit_position();
            match *read {
                Read::Bits(k) => match r.read_bits(k) {
                    Ok(v) => {
                        let model = (0..k as usize)
                            .fold(0u64, |acc, i| acc | u64::from(bit(&bytes, before + i)) << i);
                        prop_assert_eq!(v, model);
                        prop_assert_eq!(r.bit_position(), before + k as usize);
                    }
                    Err(e) if k > 64 => prop_assert_eq!(e, DecodeError::OutOfRange),
                    Err(e) => {
                        prop_assert_eq!(e, DecodeError::EndOfStream);
                        prop_assert!(before + k as usize > total);
                    }
                },
                Read::Bit => {
                    let got = r.read_bit();
                    prop_assert_eq!(got.is_ok(), before < total);
                    if let Ok(b) = got {
                        prop_assert_eq!(b, bit(&bytes, before));
                    }
                }
                Read::Gamma => drop(r.read_gamma()),
                Read::Zigzag => drop(r.read_zigzag_gamma()),
                Read::Count(min) => {
                    if let Ok(count) = r.read_count(min) {
                        prop_assert!(count * (min.max(1) as usize) <= r.remaining_bits());
                    }
                }
            }
            prop_assert!(r.bit_position() <= total);
            prop_assert_eq!(r.bit_position() + r.remaining_bits(), total);
        }
        let left = r.remaining_bits();
        let padding_zero = (total - left..total).all(|i| !bit(&bytes, i));
        match r.finish() {
            Ok(()) => prop_assert!(left < 8 && padding_zero),
            Err(DecodeError::TrailingBytes) => prop_assert!(left >= 8),
            Err(e) => {
                prop_assert_eq!(e, DecodeError::NonZeroPadding);
                prop_assert!(left < 8 && !padding_zero);
            }
        }
    }

    #[test]
    fn append_equals_bit_by_bit_writes(
        prefix in prop::collection::vec(any::<bool>(), 0..80),
        src in prop::collection::vec(any::<bool>(), 0..300),
        range in (0.0..=1.0f64, 0.0..=1.0f64),
        suffix in (any::<u64>(), 0..=64u32),
    ) {
        let start = (range.0 * src.len() as f64) as usize;
        let len = (range.1 * (src.len() - start) as f64) as usize;
        let src_bytes = bytes_of(&src);
        let (suffix_value, suffix_bits) = (suffix.0 & mask(suffix.1), suffix.1);

        let mut w = BitWriter::new();
        prefix.iter().for_each(|&b| w.write_bit(b));
        prop_assert!(w.append_bits(&src_bytes, start, len));
        w.write_bits(suffix_value, suffix_bits);

        let mut expected = prefix.clone();
        expected.extend_from_slice(&src[start..start + len]);
        expected.extend((0..suffix_bits).map(|i| suffix_value >> i & 1 == 1));
        prop_assert_eq!(w.bit_len(), expected.len());
        let expected = bytes_of(&expected);
        prop_assert_eq!(w.finish(), expected.as_slice());

        // The same through `append` of a writer holding the bits.
        let mut other = BitWriter::new();
        src[start..start + len].iter().for_each(|&b| other.write_bit(b));
        let mut w = BitWriter::new();
        prefix.iter().for_each(|&b| w.write_bit(b));
        w.append(&other);
        w.write_bits(suffix_value, suffix_bits);
        prop_assert_eq!(w.finish(), expected.as_slice());
    }

    #[test]
    fn patch_equals_the_model(
        bits in prop::collection::vec(any::<bool>(), 0..200),
        at in 0.0..=1.0f64,
        (value, width) in (any::<u64>(), 0..=64u32),
    ) {
        let mut w = BitWriter::new();
        bits.iter().for_each(|&b| w.write_bit(b));
        let at = (at * bits.len() as f64) as usize;
        let fits = at + width as usize <= bits.len();
        prop_assert_eq!(w.patch_bits(at, value, width), fits);
        let mut expected = bits.clone();
        if fits {
            for i in 0..width as usize {
                expected[at + i] = value >> i & 1 == 1;
            }
        }
        let expected = bytes_of(&expected);
        prop_assert_eq!(w.finish(), expected.as_slice());
    }
}

/// A packet-like workload: a patched count, mixed fields, cached entries appended at odd
/// offsets.
fn encode(w: &mut BitWriter, cached: &[u8], entry: &BitWriter) {
    w.write_bits(0, 10);
    let mut field = 0;
    for i in 0..200u32 {
        w.write_gamma(i * 7919);
        w.write_zigzag_gamma(-(i as i32) * 31);
        if i == 100 {
            field = w.bit_len();
        }
        w.write_bits(u64::from(i) * 0x0123_4567, 40);
        w.write_bit(i % 3 == 0);
        assert!(w.append_bits(cached, (i % 8) as usize, 77));
        w.append(entry);
    }
    assert!(w.patch_bits(0, 200, 10));
    assert!(w.patch_bits(field + 3, 0x2A, 6));
    w.align();
}

/// Reads back what [`encode`] wrote; returns a checksum of the values.
fn decode(bytes: &[u8], entry_bits: usize) -> u64 {
    let mut r = BitReader::new(bytes);
    let mut sum = r.read_bits(10).unwrap();
    let mut add = |v: u64| sum = sum.rotate_left(5) ^ v;
    for _ in 0..200 {
        add(u64::from(r.read_gamma().unwrap()));
        add(u64::from(r.read_zigzag_gamma().unwrap().unsigned_abs()));
        add(r.read_bits(40).unwrap());
        add(u64::from(r.read_bit().unwrap()));
        add(r.read_bits(64).unwrap());
        add(r.read_bits(13).unwrap());
        add(r.read_bits(entry_bits as u32).unwrap());
    }
    r.finish().unwrap();
    sum
}

#[test]
fn steady_state_writes_and_reads_allocate_nothing() {
    let cached = bytes_of(&(0..100).map(|i| i % 5 < 2).collect::<Vec<_>>());
    let mut entry = BitWriter::new();
    entry.write_gamma(12345);
    entry.write_bits(0x5, 3);
    let entry_bits = entry.bit_len();

    let mut w = BitWriter::new();
    encode(&mut w, &cached, &entry);
    let first = w.finish().to_vec();
    let expected_sum = decode(&first, entry_bits);

    let capacity = w.capacity();
    let len = assert_no_alloc("clear and rewrite", || {
        w.clear();
        encode(&mut w, &cached, &entry);
        w.finish().len()
    });
    assert_eq!((len, w.capacity()), (first.len(), capacity));
    let bytes = w.finish();
    assert_eq!(bytes, first.as_slice());
    let sum = assert_no_alloc("read back", || decode(bytes, entry_bits));
    assert_eq!(sum, expected_sum);
}
