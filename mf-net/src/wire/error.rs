use std::fmt;

/// Why a [`NetReader`](super::NetReader) refused its input.
///
/// Both cases mean the packet is malformed; the message bus drops such packets and counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// A read needed more bytes than were left.
    EndOfStream,
    /// The bytes were present but do not form a valid value; the text says what was wrong.
    Invalid(&'static str),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::EndOfStream => f.write_str("unexpected end of stream"),
            DecodeError::Invalid(reason) => write!(f, "invalid data: {reason}"),
        }
    }
}

impl std::error::Error for DecodeError {}
