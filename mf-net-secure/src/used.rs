//! [`UsedTokens`]: the tokens a server admitted, in a fixed-size history, so none is used
//! twice.

use crate::wire::TAG_LEN;

/// A token's identity in the history: the tag of its sealed part (unique, as its nonce is
/// random).
pub(crate) type TokenTag = [u8; TAG_LEN];

/// The tags of the last `capacity` admitted tokens. A new one overwrites the oldest, so the
/// history never fills: a player holding many tokens can push old entries out but never lock
/// anyone else out. A token pushed out before it expires could be presented again, but only by
/// whoever holds its keys (every admission passes the challenge), so the history protects
/// against a token holder reconnecting on one token, not against strangers.
#[derive(Debug)]
pub(crate) struct UsedTokens {
    tags: Vec<TokenTag>,
    /// Where the next tag goes once the history is full.
    next: usize,
    capacity: usize,
}

impl UsedTokens {
    /// An empty history of `capacity` tags (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            tags: Vec::with_capacity(capacity.min(4096)),
            next: 0,
            capacity: capacity.max(1),
        }
    }

    /// Whether `tag` is in the history.
    pub(crate) fn contains(&self, tag: &TokenTag) -> bool {
        self.tags.iter().any(|t| t == tag)
    }

    /// Records `tag`, overwriting the oldest once the history is full.
    pub(crate) fn record(&mut self, tag: TokenTag) {
        if self.tags.len() < self.capacity {
            self.tags.push(tag);
        } else if let Some(slot) = self.tags.get_mut(self.next) {
            *slot = tag;
            self.next = (self.next + 1) % self.capacity;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_is_overwritten_and_nothing_fills() {
        let mut used = UsedTokens::new(3);
        for i in 0..3 {
            used.record([i; 16]);
        }
        assert!((0..3).all(|i| used.contains(&[i; 16])));
        used.record([3; 16]);
        assert!(!used.contains(&[0; 16]));
        assert!((1..4).all(|i| used.contains(&[i; 16])));
        used.record([4; 16]);
        assert!(!used.contains(&[1; 16]));
        assert!(used.contains(&[4; 16]));
    }
}
