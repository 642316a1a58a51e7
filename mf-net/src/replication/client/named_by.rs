//! [`NamedBy`]: which networked nodes' states named which net ids in node references, as the
//! client read them, so that when a node it lacked arrives (spawned after the state that names
//! it, or relevant again after leaving the client's interest) the client asks the server to
//! send those states again, and their members take the node.

use std::collections::BTreeSet;

/// For every net id named by a reference in a state this client read, the net ids of the
/// nodes whose states named it (see the [module documentation](self)). A pair stays until the
/// node named arrives or the node that named it is forgotten here; one left by a member that
/// now names another node costs one needless resend at most. So it holds at most the pairs of
/// the nodes the client has, however many came and went.
#[derive(Debug, Default)]
pub(crate) struct NamedBy {
    /// `(target, referrer)`: a node's referrers in a row.
    by_target: BTreeSet<(u32, u32)>,
    /// The same pairs as `(referrer, target)`: a node's targets in a row.
    by_referrer: BTreeSet<(u32, u32)>,
}

impl NamedBy {
    /// The state of `referrer` named `target`.
    pub(crate) fn note(&mut self, referrer: u32, target: u32) {
        if self.by_target.insert((target, referrer)) {
            self.by_referrer.insert((referrer, target));
        }
    }

    /// `target` arrived: the nodes whose states named it are appended to `resend` (and
    /// forgotten here; reading their states again notes them again).
    pub(crate) fn arrived(&mut self, target: u32, resend: &mut Vec<u32>) {
        while let Some((_, referrer)) = first_of(&self.by_target, target) {
            self.by_target.remove(&(target, referrer));
            self.by_referrer.remove(&(referrer, target));
            resend.push(referrer);
        }
    }

    /// The node `referrer` is forgotten here (despawned, or gone from the client's interest):
    /// what its states named no longer matters (a new copy's state notes it again).
    pub(crate) fn forget(&mut self, referrer: u32) {
        while let Some((_, target)) = first_of(&self.by_referrer, referrer) {
            self.by_referrer.remove(&(referrer, target));
            self.by_target.remove(&(target, referrer));
        }
    }

    /// Forgets everything (the connection ended).
    pub(crate) fn clear(&mut self) {
        self.by_target.clear();
        self.by_referrer.clear();
    }
}

/// The first pair of `pairs` whose first id is `id`.
fn first_of(pairs: &BTreeSet<(u32, u32)>, id: u32) -> Option<(u32, u32)> {
    pairs.range((id, 0)..=(id, u32::MAX)).next().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_that_arrives_asks_for_every_state_that_named_it_once() {
        let mut named = NamedBy::default();
        named.note(5, 9);
        named.note(5, 9);
        named.note(6, 9);
        named.note(5, 10);
        let mut resend = Vec::new();
        named.arrived(9, &mut resend);
        assert_eq!(resend, [5, 6]);
        named.arrived(9, &mut resend);
        assert_eq!(resend, [5, 6], "asked once");
        named.arrived(10, &mut resend);
        assert_eq!(resend, [5, 6, 5]);
    }

    #[test]
    fn a_forgotten_referrer_is_asked_for_no_more() {
        let mut named = NamedBy::default();
        for shot in 100..1100 {
            named.note(shot, 1);
            named.note(shot, 2);
            named.forget(shot);
        }
        named.note(7, 1);
        assert_eq!((named.by_target.len(), named.by_referrer.len()), (1, 1));
        let mut resend = Vec::new();
        named.arrived(1, &mut resend);
        named.arrived(2, &mut resend);
        assert_eq!(resend, [7]);
    }
}
