//! [`ReplayWindow`]: which sequence numbers were already accepted, over a sliding window.

/// Bits in the window: a packet more than this far behind the newest one is too old.
pub(crate) const WINDOW: u64 = 256;
const WORDS: usize = (WINDOW / 64) as usize;

/// The newest sequence number accepted and a bitmap of the [`WINDOW`] numbers before it.
/// Bit `i` (word `i / 64`, bit `i % 64`) is set when `newest - i` was accepted.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReplayWindow {
    newest: Option<u64>,
    bits: [u64; WORDS],
}

impl ReplayWindow {
    /// Whether `seq` would be new: ahead of the newest, or within the window and not seen.
    pub(crate) fn is_fresh(&self, seq: u64) -> bool {
        let Some(newest) = self.newest else {
            return true;
        };
        if seq > newest {
            return true;
        }
        let behind = newest - seq;
        behind < WINDOW && !self.bit(behind)
    }

    /// Records `seq` as accepted (after it authenticated). Call only if [`is_fresh`].
    ///
    /// [`is_fresh`]: Self::is_fresh
    pub(crate) fn mark(&mut self, seq: u64) {
        match self.newest {
            Some(newest) if seq <= newest => self.set(newest - seq),
            Some(newest) => {
                self.shift(seq - newest);
                self.newest = Some(seq);
                self.set(0);
            }
            None => {
                self.newest = Some(seq);
                self.set(0);
            }
        }
    }

    fn bit(&self, behind: u64) -> bool {
        let (word, bit) = ((behind / 64) as usize, behind % 64);
        self.bits.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }

    fn set(&mut self, behind: u64) {
        let (word, bit) = ((behind / 64) as usize, behind % 64);
        if let Some(w) = self.bits.get_mut(word) {
            *w |= 1 << bit;
        }
    }

    /// Moves every bit `by` places further behind (towards higher indices).
    fn shift(&mut self, by: u64) {
        if by >= WINDOW {
            self.bits = [0; WORDS];
            return;
        }
        let (words, bits) = ((by / 64) as usize, (by % 64) as u32);
        for i in (0..WORDS).rev() {
            let from = |j: usize| if j < WORDS { self.bits[j] } else { 0 };
            let high = i.checked_sub(words).map_or(0, from);
            let low = i
                .checked_sub(words + 1)
                .filter(|_| bits > 0)
                .map_or(0, |j| from(j) >> (64 - bits));
            self.bits[i] = if bits == 0 {
                high
            } else {
                (high << bits) | low
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_each_number_once() {
        let mut w = ReplayWindow::default();
        for seq in [5, 3, 9, 4, 300, 100] {
            assert!(w.is_fresh(seq), "{seq}");
            w.mark(seq);
            assert!(!w.is_fresh(seq), "{seq} again");
        }
        // 300 is the newest: 44 and below are too old, 45..300 not seen are fresh.
        assert!(!w.is_fresh(44));
        assert!(w.is_fresh(45));
        assert!(!w.is_fresh(100));
        assert!(w.is_fresh(101));
    }

    #[test]
    fn shifting_keeps_every_bit_across_words() {
        let mut w = ReplayWindow::default();
        for seq in 0..200 {
            w.mark(seq);
        }
        w.mark(250); // shift by 51: bits cross word boundaries
        for seq in 0..200 {
            assert!(!w.is_fresh(seq), "{seq}");
        }
        for seq in 200..250 {
            assert!(w.is_fresh(seq), "{seq}");
        }
        w.mark(250 + 64); // a whole-word shift
        assert!(!w.is_fresh(100));
        assert!(w.is_fresh(249));
        assert!(!w.is_fresh(250));
    }
}
