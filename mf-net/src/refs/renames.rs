//! [`Renames`]: a server's record of the nodes references were encoded to before they had a net
//! id, and of the nodes whose references now encode otherwise: the states that name them are
//! sent again, so that clients' members come to name their copies.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::mem;

use crate::int_hasher::IntHasher;
use crate::store::NodeId;

/// How many missed nodes [`Renames`] keeps apart; past it, every node networked counts as
/// renamed until the states naming nodes are looked at again.
pub(crate) const MAX_MISSED: usize = 4096;

/// See the [module docs](self).
#[derive(Debug, Default)]
pub(crate) struct Renames {
    /// Nodes a reference was encoded to while they had no net id (it went as none).
    missed: HashSet<NodeId, BuildHasherDefault<IntHasher>>,
    /// More nodes were missed than `missed` holds.
    overflowed: bool,
    /// Nodes whose references encode otherwise than when a state last named them.
    renamed: Vec<NodeId>,
}

impl Renames {
    /// A reference to `node` was encoded while it had no net id.
    pub(crate) fn missed(&mut self, node: NodeId) {
        if self.missed.len() < MAX_MISSED {
            self.missed.insert(node);
        } else if !self.missed.contains(&node) {
            self.overflowed = true;
        }
    }

    /// `node` was networked: if a reference to it was encoded as none before, it is renamed.
    pub(crate) fn networked(&mut self, node: NodeId) {
        if self.missed.remove(&node) || self.overflowed {
            self.renamed.push(node);
        }
    }

    /// References to `node` encode otherwise than before.
    pub(crate) fn renamed(&mut self, node: NodeId) {
        self.renamed.push(node);
    }

    /// Moves the renamed nodes into `out` (replacing what it held). When some are, after an
    /// overflow, the misses are forgotten: the caller encodes every state that can name a node
    /// again, which notes them anew.
    pub(crate) fn take(&mut self, out: &mut Vec<NodeId>) {
        out.clear();
        mem::swap(out, &mut self.renamed);
        if self.overflowed && !out.is_empty() {
            self.missed.clear();
            self.overflowed = false;
        }
    }

    /// Forgets everything.
    pub(crate) fn clear(&mut self) {
        self.missed.clear();
        self.overflowed = false;
        self.renamed.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(i: u32) -> NodeId {
        NodeId::new(i, 1)
    }

    #[test]
    fn a_node_missed_then_networked_is_renamed_once() {
        let mut r = Renames::default();
        r.missed(node(1));
        r.missed(node(1));
        r.networked(node(2));
        r.networked(node(1));
        let mut out = Vec::new();
        r.take(&mut out);
        assert_eq!(out, [node(1)]);
        r.networked(node(1));
        r.take(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn past_the_bound_every_node_networked_is_renamed_until_taken() {
        let mut r = Renames::default();
        for i in 0..=MAX_MISSED as u32 {
            r.missed(node(i));
        }
        assert_eq!(r.missed.len(), MAX_MISSED);
        r.networked(node(u32::MAX));
        let mut out = Vec::new();
        r.take(&mut out);
        assert_eq!(out, [node(u32::MAX)]);
        assert!(r.missed.is_empty() && !r.overflowed);
        r.networked(node(3));
        r.take(&mut out);
        assert!(out.is_empty());
    }
}
