use crate::wire::{DecodeError, NetReader, NetWriter};

/// The 7 bytes in front of every message: protocol version, message id, sender tick.
///
/// ```
/// use mf_net::bus::MessageHeader;
/// use mf_net::wire::NetWriter;
///
/// let mut w = NetWriter::new();
/// MessageHeader { version: 1, id: 0x0102, tick: 7 }.write(&mut w);
/// assert_eq!(w.as_slice(), &[1, 0x02, 0x01, 7, 0, 0, 0]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHeader {
    /// The sender's protocol version.
    pub version: u8,
    /// The message id from the registry.
    pub id: u16,
    /// The sender's tick when it sent the message.
    pub tick: u32,
}

impl MessageHeader {
    /// Encoded size in bytes.
    pub const SIZE: usize = 7;

    /// Appends the header (little-endian).
    #[inline]
    pub fn write(&self, w: &mut NetWriter) {
        w.write_u8(self.version);
        w.write_u16(self.id);
        w.write_u32(self.tick);
    }

    /// Reads a header.
    #[inline]
    pub fn read(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            version: r.read_u8()?,
            id: r.read_u16()?,
            tick: r.read_u32()?,
        })
    }
}
