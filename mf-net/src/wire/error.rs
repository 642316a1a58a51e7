use std::fmt;

/// Why a [`NetReader`](super::NetReader), a [`NetCodec`](crate::codec::NetCodec) decoder or the
/// replication protocol refused its input.
///
/// Every case means the packet is malformed; the message bus drops such packets and counts
/// them. The cases carry numbers, never text, so a decoder can return one without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// A read needed more bytes than were left.
    EndOfStream,
    /// A message's fields were read and bytes were left over.
    TrailingBytes,
    /// A bit-packed message's fields were read and the padding bits after them, up to the
    /// next byte, are not all zero ([`BitReader::finish`](super::BitReader::finish)).
    NonZeroPadding,
    /// A varint longer than its type's encoding (5 bytes for 32 bits, 10 for 64), with a
    /// redundant last byte, or whose value does not fit the type.
    BadVarint,
    /// A length or count that claims more elements than the bytes left could hold.
    CountPastEnd,
    /// A string longer than the limit its reader accepts.
    StringTooLong {
        /// The length the bytes claim.
        len: usize,
        /// The reader's limit.
        limit: usize,
    },
    /// A string that is not valid UTF-8.
    InvalidUtf8,
    /// A `bool` byte other than 0 or 1.
    InvalidBool(u8),
    /// A number outside the range of the type it decodes to (a `usize` or `isize` on this
    /// target, a `char` that is not a Unicode scalar value, an id wider than its type).
    OutOfRange,
    /// An enum tag that no variant has.
    UnknownVariant(u32),
    /// A quantized value past its last bucket, or a smallest-three rotation with padding bits
    /// set or a component past its last bucket.
    BadQuantized,
    /// A bit-packed value in another form than the one its encoder writes for it (a wider
    /// delta class than needed, an absolute value where a delta fits): refused so that every
    /// accepted input re-encodes to the same bits.
    NonCanonical,
    /// A replicated state's change mask with bits past the type's last member.
    BadMask,
    /// A value its type refuses: what hand-written [`NetCodec`](crate::codec::NetCodec)
    /// decoders return for bytes they cannot accept (the derives return it only from the
    /// placeholder code they emit after a compile error).
    InvalidValue,
    /// A node reference ([`NetRef`](crate::scene::NetRef)) to a node whose value is of another
    /// type than the reference's, or, on the server, to a node the sending client may not
    /// name (one that does not exist, or that is not relevant to it).
    BadReference,
    /// A well-formed replication message that breaks the protocol.
    Protocol(ProtocolViolation),
}

/// How a replication message broke the protocol (see [`DecodeError::Protocol`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// It names a node this end does not have, or one that holds no value.
    UnknownNode,
    /// A spawn whose first net id is 0 (net ids start at 1).
    ZeroNetId,
    /// A spawn whose net ids run past `u32::MAX`.
    NetIdOverflow,
    /// A spawn lists a node as absent that is not one of its nodes.
    AbsentOutsideSpawn,
    /// An RPC id no RPC of the node's type has.
    UnknownRpc,
    /// A client received a replication message from a peer other than the server.
    NotFromServer,
    /// A message that only the other side may send (an ack sent to a client, a spawn sent to
    /// the server).
    WrongDirection,
    /// A snapshot entry names a replicated type this end does not have, or another type than
    /// its node's.
    WrongType,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::EndOfStream => f.write_str("unexpected end of stream"),
            DecodeError::TrailingBytes => f.write_str("trailing bytes after the message"),
            DecodeError::NonZeroPadding => f.write_str("non-zero padding bits after the message"),
            DecodeError::BadVarint => f.write_str("overlong or overflowing varint"),
            DecodeError::CountPastEnd => f.write_str("length or count larger than the bytes left"),
            DecodeError::StringTooLong { len, limit } => {
                write!(f, "string of {len} bytes longer than its limit of {limit}")
            }
            DecodeError::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            DecodeError::InvalidBool(byte) => write!(f, "bool byte {byte} is neither 0 nor 1"),
            DecodeError::OutOfRange => f.write_str("number out of range for its type"),
            DecodeError::UnknownVariant(tag) => write!(f, "unknown enum variant {tag}"),
            DecodeError::BadQuantized => f.write_str("quantized value past its last bucket"),
            DecodeError::NonCanonical => f.write_str("bit-packed value in a non-canonical form"),
            DecodeError::BadMask => f.write_str("change mask has bits past the last member"),
            DecodeError::InvalidValue => f.write_str("bytes do not form a valid value"),
            DecodeError::BadReference => {
                f.write_str("node reference to a node of another type, or one not to be named")
            }
            DecodeError::Protocol(violation) => write!(f, "protocol violation: {violation}"),
        }
    }
}

impl fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProtocolViolation::UnknownNode => "no such node, or it holds no value",
            ProtocolViolation::ZeroNetId => "spawn with net id 0",
            ProtocolViolation::NetIdOverflow => "spawn net ids overflow",
            ProtocolViolation::AbsentOutsideSpawn => "absent id outside the spawn",
            ProtocolViolation::UnknownRpc => "unknown RPC id",
            ProtocolViolation::NotFromServer => "replication message not from the server",
            ProtocolViolation::WrongDirection => "message not accepted in this direction",
            ProtocolViolation::WrongType => "snapshot entry of another type than its node's",
        })
    }
}

impl std::error::Error for DecodeError {}
