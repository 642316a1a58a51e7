//! [`UsedTokens`]: the tokens a server admitted, kept until they expire, so none is used twice.

use crate::wire::TAG_LEN;

/// A token's identity in the set: the tag of its sealed part (unique, as its nonce is random).
pub(crate) type TokenTag = [u8; TAG_LEN];

/// Why a token cannot be recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotRecorded {
    /// It is in the set: the request is a replay.
    Replayed,
    /// The set holds `capacity` live tokens.
    Full,
}

/// Tags of admitted tokens with their expiry (seconds since the UNIX epoch). An expired token is
/// refused as expired before it is looked up here, so entries are dropped once they expire.
#[derive(Debug)]
pub(crate) struct UsedTokens {
    entries: Vec<(TokenTag, u64)>,
    capacity: usize,
}

impl UsedTokens {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity.min(1024)),
            capacity,
        }
    }

    /// Whether `tag` is recorded (expired entries go at the next [`record`](Self::record)).
    pub(crate) fn contains(&self, tag: &TokenTag) -> bool {
        self.entries.iter().any(|(t, _)| t == tag)
    }

    /// Records `tag` (expiring at `expires_at`), first forgetting what has expired at `now`.
    pub(crate) fn record(
        &mut self,
        tag: TokenTag,
        expires_at: u64,
        now: u64,
    ) -> Result<(), NotRecorded> {
        self.entries.retain(|&(_, expiry)| expiry > now);
        if self.contains(&tag) {
            return Err(NotRecorded::Replayed);
        }
        if self.entries.len() >= self.capacity {
            return Err(NotRecorded::Full);
        }
        self.entries.push((tag, expires_at));
        Ok(())
    }
}
