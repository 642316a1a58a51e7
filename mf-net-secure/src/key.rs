//! [`SharedKey`]: the secret a backend shares with its game servers.

use std::fmt;
use std::str::FromStr;

use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::TokenError;

/// The 256-bit key a token issuer and its game servers share: the issuer seals the private part
/// of every [`ConnectToken`](crate::ConnectToken) with it, servers open it. Clients never see
/// it. Its `Debug` output does not show the key, and its bytes are wiped from memory when it is
/// dropped.
///
/// Keep it in the fleet's secret store as text: [`to_hex`](Self::to_hex) writes it,
/// [`from_hex`](Self::from_hex) (or [`str::parse`]) reads it.
///
/// ```
/// use mf_net_secure::SharedKey;
///
/// let key = SharedKey::generate().unwrap();
/// let text = key.to_hex(); // 64 hex digits
/// assert_eq!(text.parse::<SharedKey>().unwrap(), key);
/// ```
#[derive(Clone, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
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

    /// The key as 64 lowercase hex digits (a secret: store it as one).
    pub fn to_hex(&self) -> String {
        crate::hex::encode(&self.0)
    }

    /// Reads a key from 64 hex digits (either case, surrounding whitespace ignored).
    ///
    /// # Errors
    ///
    /// [`TokenError::MalformedKey`] if the text is not 64 hex digits.
    pub fn from_hex(text: &str) -> Result<Self, TokenError> {
        let bytes = Zeroizing::new(crate::hex::decode(text).ok_or(TokenError::MalformedKey)?);
        let bytes: [u8; Self::LEN] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| TokenError::MalformedKey)?;
        Ok(Self(bytes))
    }
}

impl FromStr for SharedKey {
    type Err = TokenError;

    /// As [`SharedKey::from_hex`].
    fn from_str(text: &str) -> Result<Self, TokenError> {
        Self::from_hex(text)
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
