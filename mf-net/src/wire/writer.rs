use super::{zigzag32, zigzag64, MAX_STRING_BYTES};

/// A growable, reusable byte buffer that encodes values in mf-net's wire format.
///
/// [`clear`](Self::clear) keeps the capacity, so a writer reused every frame stops allocating
/// once it has grown to the largest message it carries.
///
/// Writing never fails, but a string longer than [`MAX_STRING_BYTES`] is one that every
/// [`NetReader`](super::NetReader) refuses: the writer remembers it
/// ([`over_limit`](Self::over_limit)), and the message bus refuses to send such a message
/// ([`SendError::OverLimit`](crate::transport::SendError::OverLimit)), so what one side writes
/// the other side can read.
#[derive(Debug, Default, Clone)]
pub struct NetWriter {
    buf: Vec<u8>,
    /// A string over [`MAX_STRING_BYTES`] was written since the last clear.
    over_limit: bool,
}

impl NetWriter {
    /// An empty writer; it allocates on the first write.
    pub const fn new() -> Self {
        Self {
            buf: Vec::new(),
            over_limit: false,
        }
    }

    /// An empty writer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            buf: Vec::with_capacity(capacity),
            over_limit: false,
        }
    }

    /// Forgets the contents (and [`over_limit`](Self::over_limit)) but keeps the allocation.
    #[inline]
    pub fn clear(&mut self) {
        self.buf.clear();
        self.over_limit = false;
    }

    /// Whether a string longer than [`MAX_STRING_BYTES`] was written since the writer was
    /// made or [cleared](Self::clear) (or since [`take_over_limit`](Self::take_over_limit)):
    /// no reader accepts these bytes.
    #[inline]
    pub fn over_limit(&self) -> bool {
        self.over_limit
    }

    /// [`over_limit`](Self::over_limit), then forgets it: for a caller that checks each value
    /// it appends and rolls back the one over the limit.
    #[inline]
    pub fn take_over_limit(&mut self) -> bool {
        std::mem::take(&mut self.over_limit)
    }

    /// The bytes written so far.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// Number of bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written since the last [`clear`](Self::clear).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Bytes the writer can hold without growing.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Drops everything after the first `len` bytes (used to roll back a partial entry).
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    /// Overwrites already written bytes at `pos` (used to patch lengths and counts).
    ///
    /// # Panics
    /// If `pos + bytes.len()` is past what was written: that is a bug in the caller, never a
    /// consequence of network input.
    #[inline]
    pub fn patch(&mut self, pos: usize, bytes: &[u8]) {
        self.buf[pos..pos + bytes.len()].copy_from_slice(bytes);
    }

    /// Consumes the writer and returns the bytes written.
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// Appends raw bytes (no length prefix).
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes the low `n` bytes (at most 8) of `v`, little-endian: all eight stored at once,
    /// then the length cut back (a copy of a length known only at run time would be a call to
    /// `memcpy`).
    #[inline]
    pub(crate) fn write_le(&mut self, v: u64, n: usize) {
        debug_assert!(n <= 8, "write_le of {n} bytes (at most 8)");
        let len = self.buf.len();
        self.buf.extend_from_slice(&v.to_le_bytes());
        self.buf.truncate(len + n.min(8));
    }

    /// Writes one byte.
    #[inline]
    pub fn write_u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// Writes a signed byte.
    #[inline]
    pub fn write_i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }

    /// Writes `false` as 0 and `true` as 1.
    #[inline]
    pub fn write_bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// Writes 2 bytes, little-endian.
    #[inline]
    pub fn write_u16(&mut self, v: u16) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes 2 bytes, little-endian.
    #[inline]
    pub fn write_i16(&mut self, v: i16) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes 4 bytes, little-endian.
    #[inline]
    pub fn write_u32(&mut self, v: u32) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes 4 bytes, little-endian.
    #[inline]
    pub fn write_i32(&mut self, v: i32) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes 8 bytes, little-endian.
    #[inline]
    pub fn write_u64(&mut self, v: u64) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes 8 bytes, little-endian.
    #[inline]
    pub fn write_i64(&mut self, v: i64) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes 16 bytes, little-endian.
    #[inline]
    pub fn write_u128(&mut self, v: u128) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes 16 bytes, little-endian.
    #[inline]
    pub fn write_i128(&mut self, v: i128) {
        self.write_bytes(&v.to_le_bytes());
    }

    /// Writes the IEEE 754 bits, 4 bytes little-endian.
    #[inline]
    pub fn write_f32(&mut self, v: f32) {
        self.write_u32(v.to_bits());
    }

    /// Writes the IEEE 754 bits, 8 bytes little-endian.
    #[inline]
    pub fn write_f64(&mut self, v: f64) {
        self.write_u64(v.to_bits());
    }

    /// Writes a LEB128 varint: 1 to 5 bytes.
    #[inline]
    pub fn write_var_u32(&mut self, v: u32) {
        self.write_var_u64(u64::from(v));
    }

    /// Writes a LEB128 varint: 1 to 10 bytes.
    ///
    /// Bytes go out two at a time (one capacity check and one length update per pair rather
    /// than per byte): net ids 128–16 383 and lengths up to 16 KiB take a single 2-byte append.
    #[inline]
    pub fn write_var_u64(&mut self, mut v: u64) {
        loop {
            if v < 0x80 {
                self.buf.push(v as u8);
                return;
            }
            if v < 0x4000 {
                self.buf
                    .extend_from_slice(&[(v as u8) | 0x80, (v >> 7) as u8]);
                return;
            }
            self.buf
                .extend_from_slice(&[(v as u8) | 0x80, ((v >> 7) as u8) | 0x80]);
            v >>= 14;
        }
    }

    /// Writes a zig-zag varint: 1 to 5 bytes, small magnitudes short.
    #[inline]
    pub fn write_var_i32(&mut self, v: i32) {
        self.write_var_u32(zigzag32(v));
    }

    /// Writes a zig-zag varint: 1 to 10 bytes, small magnitudes short.
    #[inline]
    pub fn write_var_i64(&mut self, v: i64) {
        self.write_var_u64(zigzag64(v));
    }

    /// Writes a length (or element count) as a varint.
    ///
    /// # Panics
    /// If `len` does not fit in a `u32`: no message may carry 4 GiB.
    #[inline]
    pub fn write_len(&mut self, len: usize) {
        let len = u32::try_from(len).expect("mf-net lengths and counts must fit in a u32");
        self.write_var_u32(len);
    }

    /// Writes `tag` (varint), then what `body` writes, prefixed by its byte length (varint), as
    /// [`write_prefixed`](Self::write_prefixed) does.
    #[inline(always)]
    pub(crate) fn write_tagged(
        &mut self,
        tag: u32,
        scratch: &mut NetWriter,
        body: impl FnOnce(&mut NetWriter),
    ) {
        self.write_var_u32(tag);
        self.write_prefixed(scratch, body);
    }

    /// Writes what `body` writes, prefixed by its byte length (varint). The length is written
    /// as a 1-byte placeholder and patched, so a body under 128 bytes (the common case) costs
    /// no copy; a longer body is moved through `scratch` to make room for its longer length.
    #[inline(always)]
    pub(crate) fn write_prefixed(
        &mut self,
        scratch: &mut NetWriter,
        body: impl FnOnce(&mut NetWriter),
    ) {
        let len_at = self.len();
        self.write_u8(0);
        body(self);
        let len = self.len() - len_at - 1;
        if len < 0x80 {
            // `len < 0x80`: the cast keeps it whole.
            #[allow(clippy::cast_possible_truncation)]
            self.patch(len_at, &[len as u8]);
        } else {
            scratch.clear();
            scratch.write_bytes(&self.as_slice()[len_at + 1..]);
            self.truncate(len_at);
            self.write_len(len);
            self.write_bytes(scratch.as_slice());
        }
    }

    /// Writes a string as its varint UTF-8 byte count followed by the bytes.
    #[inline]
    pub fn write_str(&mut self, s: &str) {
        if s.len() > MAX_STRING_BYTES {
            self.over_limit = true;
        }
        self.write_len(s.len());
        self.write_bytes(s.as_bytes());
    }
}
