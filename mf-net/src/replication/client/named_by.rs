//! [`NamedBy`]: which networked nodes' states named which net ids in node references, as the
//! client read them, so that when a node it lacked arrives (spawned after the state that names
//! it, or relevant again after leaving the client's interest) the client asks the server to
//! send those states again, and their members take the node.

use std::collections::HashMap;

/// For every net id named by a reference in a state this client read, the net ids of the
/// nodes whose states named it (see the [module documentation](self)). A pair stays until the
/// node named arrives; one left by a member that now names another node costs one needless
/// resend at most.
#[derive(Debug, Default)]
pub(crate) struct NamedBy {
    by_target: HashMap<u32, Vec<u32>>,
}

impl NamedBy {
    /// The state of `referrer` named `target`.
    pub(crate) fn note(&mut self, referrer: u32, target: u32) {
        let referrers = self.by_target.entry(target).or_default();
        if !referrers.contains(&referrer) {
            referrers.push(referrer);
        }
    }

    /// `target` arrived: the nodes whose states named it are appended to `resend` (and
    /// forgotten here; reading their states again notes them again).
    pub(crate) fn arrived(&mut self, target: u32, resend: &mut Vec<u32>) {
        if let Some(referrers) = self.by_target.remove(&target) {
            resend.extend(referrers);
        }
    }

    /// Forgets everything (the connection ended).
    pub(crate) fn clear(&mut self) {
        self.by_target.clear();
    }
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
}
