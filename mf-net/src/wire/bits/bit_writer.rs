use super::{load_bits, low_mask, GAMMA_MAX_PREFIX, LOAD_BITS};
use crate::wire::zigzag32;

/// A growable, reusable bit buffer: values of any width from 0 to 64 bits, packed least
/// significant bit first (see [the bit order](crate::wire#bit-level-io)).
///
/// Bits collect in a 64-bit accumulator that is flushed to the byte buffer a word at a time.
/// [`clear`](Self::clear) keeps the capacity, so a writer reused every frame stops allocating
/// once it has grown to the largest message it carries. No input makes it panic; budgets are
/// the caller's: check [`bit_len`](Self::bit_len).
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    /// Whole bytes flushed from the accumulator.
    buf: Vec<u8>,
    /// The next `n` bits, least significant first; the bits above them are zero.
    acc: u64,
    /// Bits in `acc`, below 64.
    n: u32,
}

impl BitWriter {
    /// An empty writer; it allocates on the first flush.
    pub const fn new() -> Self {
        Self {
            buf: Vec::new(),
            acc: 0,
            n: 0,
        }
    }

    /// An empty writer with room for `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
            acc: 0,
            n: 0,
        }
    }

    /// Forgets the contents but keeps the allocation.
    #[inline]
    pub fn clear(&mut self) {
        self.buf.clear();
        self.acc = 0;
        self.n = 0;
    }

    /// Number of bits written so far (padding from [`align`](Self::align) included).
    #[inline]
    pub fn bit_len(&self) -> usize {
        self.buf.len() * 8 + self.n as usize
    }

    /// The whole bytes flushed so far: every bit written, right after
    /// [`finish`](Self::finish) (until the next write).
    #[inline]
    pub(crate) fn flushed(&self) -> &[u8] {
        &self.buf
    }

    /// Whether nothing has been written since the last [`clear`](Self::clear).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bit_len() == 0
    }

    /// Bytes the writer can hold without growing.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Writes the low `bits` bits of `value` (`bits` from 0 to 64), least significant first.
    ///
    /// The bits of `value` above `bits` must be zero, and `bits` at most 64: debug builds
    /// assert both; release builds ignore the extra bits of `value` and write at most 64 bits,
    /// so the stream stays well-formed.
    #[inline]
    pub fn write_bits(&mut self, value: u64, bits: u32) {
        debug_assert!(bits <= 64, "write_bits of {bits} bits (at most 64)");
        debug_assert!(
            value & !low_mask(bits.min(64)) == 0,
            "write_bits: value {value:#x} has bits set above its {bits} bits"
        );
        let bits = bits.min(64);
        self.write_clean_bits(value & low_mask(bits), bits);
    }

    /// [`write_bits`](Self::write_bits) of a value whose bits above `bits` are zero (and
    /// `bits` at most 64), as the writers that build one from masked fields have it: no mask.
    /// Debug builds assert both; a release build given more bits writes them over the bits
    /// after (the stream is the caller's to keep well formed).
    #[inline]
    pub(crate) fn write_clean_bits(&mut self, value: u64, bits: u32) {
        debug_assert!(bits <= 64, "write_clean_bits of {bits} bits (at most 64)");
        debug_assert!(
            value & !low_mask(bits.min(64)) == 0,
            "write_clean_bits: value {value:#x} has bits set above its {bits} bits"
        );
        self.acc |= value << self.n;
        let total = self.n + bits;
        if total < 64 {
            self.n = total;
            return;
        }
        self.buf.extend_from_slice(&self.acc.to_le_bytes());
        // The bits of `value` that did not fit (none if the accumulator was empty).
        self.acc = value.checked_shr(64 - self.n).unwrap_or(0);
        self.n = total - 64;
    }

    /// Writes one bit.
    #[inline]
    pub fn write_bit(&mut self, bit: bool) {
        self.write_bits(u64::from(bit), 1);
    }

    /// Writes `v` as the Elias gamma code of `v + 1` (see
    /// [the encoding](crate::wire#bit-level-io)): 1 bit for 0, 65 bits for `u32::MAX`.
    #[inline]
    pub fn write_gamma(&mut self, v: u32) {
        if let Some((code, len)) = Self::gamma_code(v, 2 * GAMMA_MAX_PREFIX - 1) {
            return self.write_bits(code, len);
        }
        // The code of `u32::MAX`: 65 bits, its zero prefix first.
        let x = u64::from(v) + 1;
        let n = 63 - x.leading_zeros();
        self.write_bits(0, n);
        self.write_bits(((x ^ (1 << n)) << 1) | 1, n + 1);
    }

    /// The gamma code [`write_gamma`](Self::write_gamma) writes for `v` (as one value to write
    /// least significant bit first) and its length, if that is at most `max_len` bits (at most
    /// 63): for writers that join it with other fields in one write.
    #[inline(always)]
    pub(crate) fn gamma_code(v: u32, max_len: u32) -> Option<(u64, u32)> {
        let x = u64::from(v) + 1;
        let n = 63 - x.leading_zeros();
        let len = 2 * n + 1;
        // n zero bits, a one bit, then the n bits of x below its leading one.
        (len <= max_len.min(63)).then(|| ((((x ^ (1 << n)) << 1) | 1) << n, len))
    }

    /// Writes a `1` bit, then `v` as [`write_gamma`](Self::write_gamma) does: a flag and a
    /// count in one write, for any `v` below 2³¹ − 1 (a code of at most 62 bits).
    #[inline(always)]
    pub(crate) fn write_one_then_gamma(&mut self, v: u32) {
        if let Some((code, len)) = Self::gamma_code(v, 61) {
            return self.write_bits(code << 1 | 1, len + 1);
        }
        self.write_bit(true);
        self.write_gamma(v);
    }

    /// Writes a signed integer as the gamma code of its zig-zag mapping
    /// ([`zigzag32`]): 0, -1, 1, -2 … take 1, 3, 3, 5 … bits.
    #[inline]
    pub fn write_zigzag_gamma(&mut self, v: i32) {
        self.write_gamma(zigzag32(v));
    }

    /// Pads with zero bits to the next byte boundary (nothing if already there).
    #[inline]
    pub fn align(&mut self) {
        let pad = self.n.wrapping_neg() % 8;
        self.write_bits(0, pad);
    }

    /// Drops every bit from bit `bits` on, as if only the first `bits` had been written (a
    /// snapshot cut by its budget drops a half-written entry so). Returns `false`, changing
    /// nothing, if fewer than `bits` bits were written.
    pub fn truncate_bits(&mut self, bits: usize) -> bool {
        let flushed = self.buf.len() * 8;
        if bits > self.bit_len() {
            return false;
        }
        if let Some(kept) = bits.checked_sub(flushed) {
            #[allow(clippy::cast_possible_truncation)]
            let kept = kept as u32;
            self.acc &= low_mask(kept);
            self.n = kept;
        } else {
            #[allow(clippy::cast_possible_truncation)]
            let partial = bits % 8;
            self.acc = u64::from(self.buf[bits / 8]) & low_mask(partial as u32);
            self.n = partial as u32;
            self.buf.truncate(bits / 8);
        }
        true
    }

    /// [Aligns](Self::align) and returns every byte written so far.
    ///
    /// The writer stays usable: later writes continue after the padding.
    #[inline]
    pub fn finish(&mut self) -> &[u8] {
        // The bits above the accumulator's `n` are zero: its bytes up to the last one it
        // started are the bits and the padding. All eight go on in one copy of a known
        // length, and the ones past them come off.
        let len = self.buf.len() + self.n.div_ceil(8) as usize;
        self.buf.extend_from_slice(&self.acc.to_le_bytes());
        self.buf.truncate(len);
        self.acc = 0;
        self.n = 0;
        &self.buf
    }

    /// Appends every bit `other` has written (not necessarily a whole number of bytes), a word
    /// at a time.
    pub fn append(&mut self, other: &BitWriter) {
        self.append_whole_bytes(&other.buf);
        self.write_bits(other.acc, other.n);
    }

    /// Appends `bits` bits of `src` starting at its bit `start_bit` (bit order as in
    /// [the module](crate::wire#bit-level-io)), a word at a time: how a bit string encoded once
    /// is copied into many packets. Neither end needs to be byte aligned, here or in `src`.
    ///
    /// Returns `false`, and writes nothing, if the range runs past the end of `src`.
    #[must_use = "false means nothing was appended"]
    #[inline]
    pub fn append_bits(&mut self, src: &[u8], start_bit: usize, bits: usize) -> bool {
        // At most one load's worth with 8 bytes to load: in range, and one write.
        let word = src.get(start_bit / 8..).and_then(<[u8]>::first_chunk::<8>);
        if let (Some(word), true) = (word, bits <= LOAD_BITS as usize) {
            let word = u64::from_le_bytes(*word) >> (start_bit % 8);
            // `bits` ≤ 56 here.
            #[allow(clippy::cast_possible_truncation)]
            let bits = bits as u32;
            self.write_bits(word & low_mask(bits), bits);
            return true;
        }
        self.append_long(src, start_bit, bits)
    }

    /// [`append_bits`](Self::append_bits) past one load: out of line, so that where it is
    /// inlined, the short copy (most appends) stays small.
    #[inline(never)]
    fn append_long(&mut self, src: &[u8], start_bit: usize, bits: usize) -> bool {
        let in_range = start_bit
            .checked_add(bits)
            .is_some_and(|end| end <= src.len().saturating_mul(8));
        if !in_range {
            return false;
        }
        if start_bit % 8 == 0 && self.n % 8 == 0 {
            let first = start_bit / 8;
            self.append_whole_bytes(&src[first..first + bits / 8]);
            let rest = bits % 8;
            self.write_bits(
                load_bits(src, start_bit + bits - rest) & low_mask(rest as u32),
                rest as u32,
            );
        } else {
            self.append_unaligned(src, start_bit, bits);
        }
        true
    }

    /// Overwrites `bits` bits (0 to 64) already written, starting at bit `at_bit`, with the
    /// low `bits` bits of `value` (the bits above are ignored): for counts written before the
    /// entries they count. The patched bits may be in the buffer or still in the accumulator.
    ///
    /// Returns `false`, and changes nothing, if `bits` is over 64 or the range runs past
    /// [`bit_len`](Self::bit_len).
    #[must_use = "false means nothing was patched"]
    pub fn patch_bits(&mut self, at_bit: usize, value: u64, bits: u32) -> bool {
        let in_range = bits <= 64
            && at_bit
                .checked_add(bits as usize)
                .is_some_and(|end| end <= self.bit_len());
        if !in_range {
            return false;
        }
        let value = value & low_mask(bits);
        let flushed = self.buf.len() * 8;
        let in_buf = flushed.saturating_sub(at_bit).min(bits as usize) as u32;
        self.patch_buf(at_bit, value, in_buf);
        let in_acc = bits - in_buf;
        if in_acc > 0 {
            let shift = (at_bit + in_buf as usize - flushed) as u32;
            let high = value.checked_shr(in_buf).unwrap_or(0);
            self.acc = (self.acc & !(low_mask(in_acc) << shift)) | (high << shift);
        }
        true
    }

    /// Appends whole bytes: a copy when the writer is byte aligned, a word at a time
    /// otherwise.
    fn append_whole_bytes(&mut self, bytes: &[u8]) {
        if self.n % 8 != 0 {
            self.append_unaligned(bytes, 0, bytes.len() * 8);
            return;
        }
        let pending = self.acc.to_le_bytes();
        self.buf
            .extend_from_slice(&pending[..(self.n / 8) as usize]);
        self.acc = 0;
        self.n = 0;
        self.buf.extend_from_slice(bytes);
    }

    /// Appends `bits` bits of `src` from bit `start`, 56 bits per load (range checked).
    fn append_unaligned(&mut self, src: &[u8], start: usize, bits: usize) {
        let mut at = start;
        let end = start + bits;
        while at < end {
            let take = (end - at).min(LOAD_BITS as usize) as u32;
            self.write_bits(load_bits(src, at) & low_mask(take), take);
            at += take as usize;
        }
    }

    /// Overwrites `bits` flushed bits from bit `at`, at most 8 per step (range checked).
    fn patch_buf(&mut self, mut at: usize, mut value: u64, mut bits: u32) {
        while bits > 0 {
            let shift = (at % 8) as u32;
            let take = (8 - shift).min(bits);
            let mask = (low_mask(take) as u8) << shift;
            if let Some(byte) = self.buf.get_mut(at / 8) {
                *byte = (*byte & !mask) | (((value as u8) << shift) & mask);
            }
            value >>= take;
            at += take as usize;
            bits -= take;
        }
    }
}
