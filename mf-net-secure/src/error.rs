//! [`TokenError`]: why a token could not be issued or read.

use std::fmt;

use crate::{MAX_ADDRESS_LEN, MAX_SERVERS, MAX_USER_DATA};

/// Why a [`ConnectToken`](crate::ConnectToken) could not be issued or decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// More user data than [`MAX_USER_DATA`] bytes.
    UserDataTooLong(usize),
    /// No server address, or more than [`MAX_SERVERS`].
    ServerCount(usize),
    /// A server address whose text is longer than [`MAX_ADDRESS_LEN`] bytes.
    AddressTooLong(usize),
    /// The operating system's random number generator failed.
    Randomness,
    /// The bytes (or text) are not a connect token of this version.
    Malformed,
    /// The text is not a [`SharedKey`](crate::SharedKey): 64 hex digits.
    MalformedKey,
    /// A token lifetime of zero, or longer than
    /// [`TokenIssuer::MAX_LIFETIME`](crate::TokenIssuer::MAX_LIFETIME).
    Lifetime,
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::UserDataTooLong(n) => {
                write!(f, "{n} bytes of user data (at most {MAX_USER_DATA})")
            }
            TokenError::ServerCount(n) => {
                write!(f, "{n} server addresses (1 to {MAX_SERVERS})")
            }
            TokenError::AddressTooLong(n) => {
                write!(
                    f,
                    "a server address of {n} bytes (at most {MAX_ADDRESS_LEN})"
                )
            }
            TokenError::Randomness => f.write_str("the system random number generator failed"),
            TokenError::Malformed => f.write_str("not a connect token"),
            TokenError::MalformedKey => f.write_str("a shared key is 64 hex digits"),
            TokenError::Lifetime => f.write_str(
                "TokenIssuer lifetime: must be at least 1 s and at most TokenIssuer::MAX_LIFETIME",
            ),
        }
    }
}

impl std::error::Error for TokenError {}
