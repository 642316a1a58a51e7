//! [`Viewers`]: which clients have each spawn group, a bit per client index, so that a tick's
//! changes go to the clients that see them (each client then walks only its own visible changes,
//! never the whole world's).

use crate::cache_hint::prefetch;
use crate::replication::server::node_table::GroupKey;

/// A bit set of client indices per group slot, checked against the group's id (a slot's next
/// group starts with no viewers). Kept by [`ServerState::set_vis`](crate::replication::server::state::ServerState::set_vis).
#[derive(Default)]
pub(crate) struct Viewers {
    /// Words of 64 clients per group slot.
    words: usize,
    /// By slot: the id of the group the bits are for (0: none).
    ids: Vec<u32>,
    /// By slot, `words` words each.
    bits: Vec<u64>,
}

impl Viewers {
    /// Whether the client at index `client` has group `g`.
    #[cfg(test)]
    pub(crate) fn has(&self, g: GroupKey, client: usize) -> bool {
        let (slot, word, bit) = (g.slot(), client / 64, client % 64);
        self.ids.get(slot) == Some(&g.id())
            && word < self.words
            && self.bits[slot * self.words + word] & (1 << bit) != 0
    }

    /// Whether any client has group `g`.
    pub(crate) fn any(&self, g: GroupKey) -> bool {
        let slot = g.slot();
        self.ids.get(slot) == Some(&g.id())
            && self.bits[slot * self.words..(slot + 1) * self.words]
                .iter()
                .any(|&w| w != 0)
    }

    /// Asks the processor for what [`set`](Self::set) reads of group `g`'s bits (see
    /// [`crate::cache_hint`]).
    #[inline]
    pub(crate) fn prefetch(&self, g: GroupKey) {
        let slot = g.slot();
        prefetch(&self.ids, slot);
        prefetch(&self.bits, slot * self.words);
    }

    /// Records whether the client at index `client` has group `g`.
    pub(crate) fn set(&mut self, g: GroupKey, client: usize, on: bool) {
        let (slot, word, bit) = (g.slot(), client / 64, client % 64);
        if word >= self.words {
            if !on {
                return;
            }
            self.widen(word + 1);
        }
        if slot >= self.ids.len() {
            self.ids.resize(slot + 1, 0);
            self.bits.resize((slot + 1) * self.words, 0);
        }
        let words = &mut self.bits[slot * self.words..(slot + 1) * self.words];
        if self.ids[slot] != g.id() {
            self.ids[slot] = g.id();
            words.fill(0);
        }
        match on {
            true => words[word] |= 1 << bit,
            false => words[word] &= !(1 << bit),
        }
    }

    /// Calls `f` with the index of every client that has group `g`, in increasing order.
    #[inline]
    pub(crate) fn each(&self, g: GroupKey, mut f: impl FnMut(usize)) {
        let slot = g.slot();
        if self.ids.get(slot) != Some(&g.id()) {
            return;
        }
        let words = &self.bits[slot * self.words..(slot + 1) * self.words];
        for (w, &word) in words.iter().enumerate() {
            let mut left = word;
            while left != 0 {
                f(w * 64 + left.trailing_zeros() as usize);
                left &= left - 1;
            }
        }
    }

    /// The client at index `from` now stands at index `to` (a `swap_remove` of the client at
    /// `to`); `from`'s bits are cleared (and `to`'s too if `from == to`: it left).
    pub(crate) fn move_client(&mut self, from: usize, to: usize) {
        let words = self.words;
        if from / 64 >= words {
            return self.clear_client(to);
        }
        for slot in self.bits.chunks_exact_mut(words.max(1)) {
            let was = slot[from / 64] & (1 << (from % 64)) != 0;
            slot[from / 64] &= !(1 << (from % 64));
            if to / 64 < words {
                match was && from != to {
                    true => slot[to / 64] |= 1 << (to % 64),
                    false => slot[to / 64] &= !(1 << (to % 64)),
                }
            }
        }
    }

    /// Clears the bits of the client at index `client` in every group.
    fn clear_client(&mut self, client: usize) {
        if client / 64 >= self.words {
            return;
        }
        for slot in self.bits.chunks_exact_mut(self.words) {
            slot[client / 64] &= !(1 << (client % 64));
        }
    }

    /// Makes room for `words` words per slot.
    fn widen(&mut self, words: usize) {
        let mut bits = vec![0; self.ids.len() * words];
        if self.words > 0 {
            for (new, old) in bits
                .chunks_exact_mut(words)
                .zip(self.bits.chunks_exact(self.words))
            {
                new[..self.words].copy_from_slice(old);
            }
        }
        self.bits = bits;
        self.words = words;
    }
}

#[cfg(test)]
mod tests {
    use super::Viewers;
    use crate::replication::server::node_table::GroupKey;

    #[test]
    fn viewers_follow_sets_slot_reuse_and_a_client_moved_by_swap_remove() {
        let mut v = Viewers::default();
        let (a, b) = (GroupKey::new(0, 1), GroupKey::new(1, 5));
        for c in [0, 3, 70, 130] {
            v.set(a, c, true);
        }
        v.set(b, 70, true);
        v.set(a, 3, false);
        let mut seen = Vec::new();
        v.each(a, |c| seen.push(c));
        assert_eq!(seen, [0, 70, 130]);
        // Client 130 (the last) moves to index 0, whose client left.
        v.move_client(130, 0);
        seen.clear();
        v.each(a, |c| seen.push(c));
        assert_eq!(seen, [0, 70]);
        assert!(v.has(b, 70) && !v.has(b, 0));
        // A later group in slot 0 starts with no viewers but the one set.
        let c = GroupKey::new(0, 9);
        v.set(c, 70, true);
        seen.clear();
        v.each(c, |i| seen.push(i));
        assert_eq!(seen, [70]);
        v.each(a, |_| panic!("the old group answers to nothing"));
    }
}
