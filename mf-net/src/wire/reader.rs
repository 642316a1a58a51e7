use super::{unzigzag32, unzigzag64, DecodeError, MAX_STRING_BYTES};

/// A strict reader over a byte slice.
///
/// Every read is checked: running past the end is [`DecodeError::EndOfStream`]; an overlong or
/// overflowing varint, invalid UTF-8, a bool byte other than 0 or 1, a length or count larger
/// than the bytes left, or a string over its limit is an error ([`DecodeError`]). No input makes it
/// panic.
#[derive(Debug, Clone)]
pub struct NetReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> NetReader<'a> {
    /// A reader positioned at the start of `data`.
    #[inline]
    pub const fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// Bytes not read yet.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Bytes read so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not read yet, without consuming them.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// Succeeds only if every byte was read: trailing bytes are [`DecodeError::TrailingBytes`].
    #[inline]
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes)
        }
    }

    /// Every byte it reads from, read or not (offsets into it are stable while it lives).
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Consumes exactly `n` bytes.
    #[inline]
    pub fn read_bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::EndOfStream);
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    /// Consumes `n` bytes (at most 8) as the low bytes of a little-endian integer, without a
    /// `memcpy` call for their run-time length.
    #[inline]
    pub(crate) fn read_le(&mut self, n: usize) -> Result<u64, DecodeError> {
        debug_assert!(n <= 8, "read_le of {n} bytes (at most 8)");
        self.read_bytes(n.min(8)).map(super::le_u64)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<(), DecodeError> {
        self.read_bytes(n).map(|_| ())
    }

    /// Reads `N` bytes into an array (one bounds check).
    #[inline]
    pub(crate) fn read_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let bytes = self.read_bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// Reads one byte.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, DecodeError> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(DecodeError::EndOfStream),
        }
    }

    /// Reads a signed byte.
    #[inline]
    pub fn read_i8(&mut self) -> Result<i8, DecodeError> {
        self.read_u8().map(|b| b as i8)
    }

    /// Reads a bool: 0 or 1, anything else is invalid.
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.read_u8()? {
            0 => Ok(false),
            1 => Ok(true),
            byte => Err(DecodeError::InvalidBool(byte)),
        }
    }

    /// Reads 2 bytes, little-endian.
    #[inline]
    pub fn read_u16(&mut self) -> Result<u16, DecodeError> {
        self.read_array().map(u16::from_le_bytes)
    }

    /// Reads 2 bytes, little-endian.
    #[inline]
    pub fn read_i16(&mut self) -> Result<i16, DecodeError> {
        self.read_array().map(i16::from_le_bytes)
    }

    /// Reads 4 bytes, little-endian.
    #[inline]
    pub fn read_u32(&mut self) -> Result<u32, DecodeError> {
        self.read_array().map(u32::from_le_bytes)
    }

    /// Reads 4 bytes, little-endian.
    #[inline]
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        self.read_array().map(i32::from_le_bytes)
    }

    /// Reads 8 bytes, little-endian.
    #[inline]
    pub fn read_u64(&mut self) -> Result<u64, DecodeError> {
        self.read_array().map(u64::from_le_bytes)
    }

    /// Reads 8 bytes, little-endian.
    #[inline]
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        self.read_array().map(i64::from_le_bytes)
    }

    /// Reads 16 bytes, little-endian.
    #[inline]
    pub fn read_u128(&mut self) -> Result<u128, DecodeError> {
        self.read_array().map(u128::from_le_bytes)
    }

    /// Reads 16 bytes, little-endian.
    #[inline]
    pub fn read_i128(&mut self) -> Result<i128, DecodeError> {
        self.read_array().map(i128::from_le_bytes)
    }

    /// Reads an IEEE 754 single (4 bytes).
    #[inline]
    pub fn read_f32(&mut self) -> Result<f32, DecodeError> {
        self.read_u32().map(f32::from_bits)
    }

    /// Reads an IEEE 754 double (8 bytes).
    #[inline]
    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        self.read_u64().map(f64::from_bits)
    }

    /// Reads a LEB128 varint of at most 5 bytes whose value fits in a `u32`.
    #[inline]
    pub fn read_var_u32(&mut self) -> Result<u32, DecodeError> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let byte = self.read_u8()?;
            let group = u32::from(byte & 0x7f);
            if i == 4 && group > 0x0f {
                return Err(DecodeError::BadVarint);
            }
            value |= group << (7 * i);
            if byte & 0x80 == 0 {
                if i > 0 && byte == 0 {
                    return Err(DecodeError::BadVarint);
                }
                return Ok(value);
            }
        }
        Err(DecodeError::BadVarint)
    }

    /// Reads a LEB128 varint of at most 10 bytes whose value fits in a `u64`.
    #[inline]
    pub fn read_var_u64(&mut self) -> Result<u64, DecodeError> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let byte = self.read_u8()?;
            let group = u64::from(byte & 0x7f);
            if i == 9 && group > 0x01 {
                return Err(DecodeError::BadVarint);
            }
            value |= group << (7 * i);
            if byte & 0x80 == 0 {
                if i > 0 && byte == 0 {
                    return Err(DecodeError::BadVarint);
                }
                return Ok(value);
            }
        }
        Err(DecodeError::BadVarint)
    }

    /// Reads a zig-zag varint into an `i32`.
    #[inline]
    pub fn read_var_i32(&mut self) -> Result<i32, DecodeError> {
        self.read_var_u32().map(unzigzag32)
    }

    /// Reads a zig-zag varint into an `i64`.
    #[inline]
    pub fn read_var_i64(&mut self) -> Result<i64, DecodeError> {
        self.read_var_u64().map(unzigzag64)
    }

    /// Reads a varint length of a byte run and checks that many bytes are left.
    #[inline]
    pub fn read_len(&mut self) -> Result<usize, DecodeError> {
        self.read_count(1)
    }

    /// Reads a varint element count and checks that `count * min_element_size` bytes are left,
    /// so a hostile count cannot make the caller allocate more than the packet could fill.
    ///
    /// A `min_element_size` of 0 is treated as 1: a count can never exceed the bytes left.
    #[inline]
    pub fn read_count(&mut self, min_element_size: usize) -> Result<usize, DecodeError> {
        let count = self.read_var_u32()? as usize;
        let needed = count.checked_mul(min_element_size.max(1));
        match needed {
            Some(needed) if needed <= self.remaining() => Ok(count),
            _ => Err(DecodeError::CountPastEnd),
        }
    }

    /// Reads a length-prefixed UTF-8 string of at most [`MAX_STRING_BYTES`], borrowing it.
    #[inline]
    pub fn read_str(&mut self) -> Result<&'a str, DecodeError> {
        self.read_str_max(MAX_STRING_BYTES)
    }

    /// Reads a length-prefixed UTF-8 string of at most `max_bytes`, borrowing it.
    pub fn read_str_max(&mut self, max_bytes: usize) -> Result<&'a str, DecodeError> {
        let len = self.read_len()?;
        if len > max_bytes {
            return Err(DecodeError::StringTooLong {
                len,
                limit: max_bytes,
            });
        }
        let bytes = self.read_bytes(len)?;
        std::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidUtf8)
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::{DecodeError, NetReader, NetWriter};

    #[test]
    fn little_endian_runs_of_0_to_8_bytes_read_back_and_a_short_one_is_refused() {
        let v = 0x0807_0605_0403_0201_u64;
        for n in 0..=8 {
            let mut w = NetWriter::new();
            w.write_u8(0xAA);
            w.write_le(v, n);
            w.write_u8(0xBB);
            let bytes = w.into_vec();
            assert_eq!(bytes.len(), n + 2, "{n}");
            assert_eq!(&bytes[1..=n], &v.to_le_bytes()[..n], "{n}");
            let mut r = NetReader::new(&bytes[1..]);
            let low = v & u64::MAX.checked_shr(64 - 8 * n as u32).unwrap_or(0);
            assert_eq!(r.read_le(n), Ok(low), "{n}");
            assert_eq!(r.read_u8(), Ok(0xBB));
        }
        let mut r = NetReader::new(&[1, 2]);
        assert_eq!(r.read_le(3), Err(DecodeError::EndOfStream));
    }
}
