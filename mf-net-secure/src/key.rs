//! [`SharedKey`]: the secret a backend shares with its game servers.

use std::fmt;

use crate::TokenError;

/// The 256-bit key a token issuer and its game servers share: the issuer seals the private part
/// of every [`ConnectToken`](crate::ConnectToken) with it, servers open it. Clients never see
/// it. Its `Debug` output does not show the key.
#[derive(Clone, PartialEq, Eq)]
pub struct SharedKey([u8; SharedKey::LEN]);

impl SharedKey {
    /// The key's length in bytes.
    pub const LEN: usize = 32;

    /// A fresh key from the operating system's random number generator.
    ///
    /// # Errors
    ///
    /// [`TokenError::Randomness`] if the generator fails.
    pub fn generate() -> Result<Self, TokenError> {
        random_bytes().map(Self)
    }

    /// A key from its bytes (for example read from the fleet's secret store).
    pub const fn from_bytes(bytes: [u8; Self::LEN]) -> Self {
        Self(bytes)
    }

    /// The key's bytes.
    pub const fn as_bytes(&self) -> &[u8; Self::LEN] {
        &self.0
    }
}

impl fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedKey(..)")
    }
}

/// `N` bytes from the operating system's random number generator.
pub(crate) fn random_bytes<const N: usize>() -> Result<[u8; N], TokenError> {
    let mut bytes = [0; N];
    getrandom::fill(&mut bytes).map_err(|_| TokenError::Randomness)?;
    Ok(bytes)
}
