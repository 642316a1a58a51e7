use super::{load_bits, low_mask, GAMMA_MAX_PREFIX, LOAD_BITS};
use crate::wire::{unzigzag32, DecodeError};

/// The next stream bits of a [`BitReader`] in one word (at least 57 of them, fewer near the
/// end): a decoder takes its fields from it without a check or a load per field, checks once
/// that it took no more than the window held ([`fits`](Self::fits)), and
/// [commits](BitReader::commit) it. Bits taken past the window read as zero.
#[derive(Debug, Clone, Copy)]
pub struct BitWindow {
    word: u64,
    /// Stream bits in `word`.
    len: u32,
    /// Bits taken so far.
    used: u32,
}

impl BitWindow {
    /// The least number of stream bits a window holds when that many are left.
    pub const MIN_BITS: u32 = 57;

    /// Takes the next `bits` bits (0 to 64) into the low bits of a `u64`.
    #[inline]
    pub fn take(&mut self, bits: u32) -> u64 {
        let value = self.peek() & low_mask(bits);
        self.used = self.used.saturating_add(bits);
        value
    }

    /// The bits not taken yet, from the lowest, without taking them (zeros past the window).
    #[inline]
    pub(crate) fn peek(&self) -> u64 {
        self.word.checked_shr(self.used).unwrap_or(0)
    }

    /// Takes one bit.
    #[inline]
    pub fn take_bit(&mut self) -> bool {
        self.take(1) == 1
    }

    /// Takes one bit, if the window holds one more.
    #[inline]
    pub fn take_bit_within(&mut self) -> Option<bool> {
        self.fits(1).then(|| self.take_bit())
    }

    /// Takes a gamma-coded value (see [`BitReader::read_gamma`]) if its whole code lies within
    /// the window and its prefix is under 32 zeros (its value fits a `u32` whatever its bits);
    /// else takes nothing and gives `None`, leaving the code to the checked reads.
    #[inline]
    pub fn take_gamma_within(&mut self) -> Option<u32> {
        let rest = self.word.checked_shr(self.used).unwrap_or(0);
        let zeros = rest.trailing_zeros();
        if zeros >= 32 || !self.fits(2 * zeros + 1) {
            return None;
        }
        let low = (rest >> (zeros + 1)) & low_mask(zeros);
        self.used += 2 * zeros + 1;
        // Under 2^32 - 1 with a prefix under 32.
        #[allow(clippy::cast_possible_truncation)]
        Some(((1 << zeros | low) - 1) as u32)
    }

    /// Whether `bits` more bits are within the window.
    #[inline]
    pub fn fits(&self, bits: u32) -> bool {
        self.used.saturating_add(bits) <= self.len
    }

    /// Bits taken so far.
    #[inline]
    pub fn used(&self) -> u32 {
        self.used
    }
}

/// A strict reader of bits packed by a [`BitWriter`](super::BitWriter) (see
/// [the bit order](crate::wire#bit-level-io)).
///
/// Every read is checked: running past the end is [`DecodeError::EndOfStream`], a gamma code
/// whose value does not fit a `u32` is [`DecodeError::OutOfRange`], a count larger than the
/// bits left could hold is [`DecodeError::CountPastEnd`], and [`finish`](Self::finish) refuses
/// leftover bytes and non-zero padding. No input makes it panic or allocate. A read that fails
/// leaves the position where it was.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    /// Bits read so far.
    pos: usize,
    /// Bits in `bytes`.
    end: usize,
}

impl<'a> BitReader<'a> {
    /// A reader positioned at the first bit of `bytes`.
    #[inline]
    pub const fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            end: bytes.len().saturating_mul(8),
        }
    }

    /// Bits not read yet.
    #[inline]
    pub fn remaining_bits(&self) -> usize {
        self.end - self.pos
    }

    /// Bits read so far.
    #[inline]
    pub fn bit_position(&self) -> usize {
        self.pos
    }

    /// Moves past `bits` bits without reading them (an entry a reader cannot use). More than
    /// are left is [`DecodeError::EndOfStream`], and the position stays.
    pub fn skip_bits(&mut self, bits: usize) -> Result<(), DecodeError> {
        if bits > self.remaining_bits() {
            return Err(DecodeError::EndOfStream);
        }
        self.pos += bits;
        Ok(())
    }

    /// Reads `bits` bits (0 to 64) into the low bits of a `u64`.
    ///
    /// More than 64 bits is [`DecodeError::OutOfRange`]; more than are left is
    /// [`DecodeError::EndOfStream`].
    #[inline]
    pub fn read_bits(&mut self, bits: u32) -> Result<u64, DecodeError> {
        if bits > 64 {
            return Err(DecodeError::OutOfRange);
        }
        if bits as usize > self.remaining_bits() {
            return Err(DecodeError::EndOfStream);
        }
        if bits <= LOAD_BITS {
            return Ok(self.take(bits));
        }
        let low = self.take(32);
        Ok(low | (self.take(bits - 32) << 32))
    }

    /// Reads one bit.
    #[inline]
    pub fn read_bit(&mut self) -> Result<bool, DecodeError> {
        self.read_bits(1).map(|bit| bit == 1)
    }

    /// Reads a gamma-coded `u32` (see [the encoding](crate::wire#bit-level-io)).
    ///
    /// A zero prefix of 33 bits or more, or a 32-bit prefix whose value is over `u32::MAX`, is
    /// [`DecodeError::OutOfRange`]; it decides after at most 33 prefix bits. A code cut by
    /// the end is [`DecodeError::EndOfStream`]. Every code is canonical: an accepted one
    /// re-encodes to the same bits.
    #[inline]
    pub fn read_gamma(&mut self) -> Result<u32, DecodeError> {
        // One load holds at least 57 stream bits: enough to find a prefix of up to 33 zeros.
        let window_bits = self.remaining_bits().min(LOAD_BITS as usize + 1) as u32;
        let zeros = load_bits(self.bytes, self.pos)
            .trailing_zeros()
            .min(window_bits);
        if zeros > GAMMA_MAX_PREFIX {
            return Err(DecodeError::OutOfRange);
        }
        if zeros == window_bits || (2 * zeros + 1) as usize > self.remaining_bits() {
            return Err(DecodeError::EndOfStream);
        }
        let start = self.pos;
        self.pos += zeros as usize + 1;
        let x = (1 << zeros) | self.read_bits(zeros)?;
        u32::try_from(x - 1).map_err(|_| {
            // A failed read leaves the position where it was.
            self.pos = start;
            DecodeError::OutOfRange
        })
    }

    /// Reads a gamma-coded, zig-zag mapped `i32` (see
    /// [`BitWriter::write_zigzag_gamma`](super::BitWriter::write_zigzag_gamma)).
    #[inline]
    pub fn read_zigzag_gamma(&mut self) -> Result<i32, DecodeError> {
        self.read_gamma().map(unzigzag32)
    }

    /// Reads a gamma-coded element count and checks that `count * min_bits_per_element` bits
    /// are left ([`DecodeError::CountPastEnd`] otherwise), so a hostile count cannot make the
    /// caller allocate more than the packet could fill.
    ///
    /// A `min_bits_per_element` of 0 is treated as 1: a count never exceeds the bits left.
    #[inline]
    pub fn read_count(&mut self, min_bits_per_element: u32) -> Result<usize, DecodeError> {
        let start = self.pos;
        let count = self.read_gamma()? as usize;
        match count.checked_mul(min_bits_per_element.max(1) as usize) {
            Some(needed) if needed <= self.remaining_bits() => Ok(count),
            _ => {
                self.pos = start;
                Err(DecodeError::CountPastEnd)
            }
        }
    }

    /// The next stream bits as one word, to take several short fields from with one load
    /// (see [`BitWindow`]); [`commit`](Self::commit) then moves past what was taken.
    #[inline]
    pub fn window(&self) -> BitWindow {
        let loaded = 64 - (self.pos % 8) as u32;
        BitWindow {
            word: load_bits(self.bytes, self.pos),
            len: loaded.min(u32::try_from(self.remaining_bits()).unwrap_or(u32::MAX)),
            used: 0,
        }
    }

    /// Moves past the bits taken from `window` (from [`window`](Self::window), with nothing
    /// read since): [`DecodeError::EndOfStream`], and no move, if it took more than it held.
    #[inline]
    pub fn commit(&mut self, window: BitWindow) -> Result<(), DecodeError> {
        match window.used <= window.len {
            true => {
                self.pos += window.used as usize;
                Ok(())
            }
            false => Err(DecodeError::EndOfStream),
        }
    }

    /// Succeeds only if what is left is the writer's padding: fewer than 8 bits, all zero.
    ///
    /// A whole byte or more left is [`DecodeError::TrailingBytes`]; a padding bit set is
    /// [`DecodeError::NonZeroPadding`].
    pub fn finish(mut self) -> Result<(), DecodeError> {
        let left = self.remaining_bits();
        if left >= 8 {
            return Err(DecodeError::TrailingBytes);
        }
        match self.take(left as u32) {
            0 => Ok(()),
            _ => Err(DecodeError::NonZeroPadding),
        }
    }

    /// Reads `bits` bits (at most [`LOAD_BITS`], at most the bits left) with one load.
    #[inline]
    fn take(&mut self, bits: u32) -> u64 {
        let value = load_bits(self.bytes, self.pos) & low_mask(bits);
        self.pos += bits as usize;
        value
    }
}
