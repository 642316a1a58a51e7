//! Why the addresses of a connect string were not used.

use std::fmt;

use super::OpenError;
use crate::transport::address::AddressError;
use crate::transport::DisconnectReason;

/// Why one address of a connect string was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptError {
    /// The entry does not parse.
    Invalid(AddressError),
    /// No factory handles its kind of address.
    Unsupported,
    /// A factory handles it, but could not open a transport (see [`OpenError`]).
    Open(OpenError),
    /// The transport reported this before the attempt was established
    /// ([`ConnectFailed`](DisconnectReason::ConnectFailed) or
    /// [`Timeout`](DisconnectReason::Timeout)).
    Disconnected(DisconnectReason),
    /// Not established within the handshake timeout.
    HandshakeTimeout,
    /// The caller gave up on it with
    /// [`SelectingTransport::abandon_attempt`](super::SelectingTransport::abandon_attempt).
    Abandoned,
}

impl fmt::Display for AttemptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttemptError::Invalid(e) => write!(f, "{e}"),
            AttemptError::Unsupported => f.write_str("no transport for this kind of address"),
            AttemptError::Open(e) => write!(f, "{e}"),
            AttemptError::Disconnected(r) => write!(f, "{r}"),
            AttemptError::HandshakeTimeout => f.write_str("no handshake within the timeout"),
            AttemptError::Abandoned => f.write_str("abandoned"),
        }
    }
}

/// One address that did not work, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptFailure {
    /// The entry of the connect string, as written.
    pub entry: String,
    /// What went wrong.
    pub error: AttemptError,
}

impl fmt::Display for AttemptFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.entry, self.error)
    }
}

/// No address of a connect string could even be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectError {
    /// Every entry and why it was not used (empty for an empty connect string).
    pub failures: Vec<AttemptFailure>,
}

impl fmt::Display for SelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.failures.is_empty() {
            return f.write_str("the connect string has no address");
        }
        f.write_str("no address could be used: ")?;
        for (i, failure) in self.failures.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{failure}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SelectError {}
