//! [`ChangedMarks`]: which nodes changed at this tick's capture, by node slot, so that a walk
//! over one client's nodes ([`Known`](crate::replication::server::known::Known)) tells its
//! changed ones with one look each into a small array, in cache, instead of the changes being
//! handed to every client that sees them.

use crate::replication::server::node_table::NodeKey;

/// The changed nodes of one capture, marked by slot (see the [module documentation](self)).
#[derive(Default)]
pub(crate) struct ChangedMarks {
    /// By slot: the id of the node marked there and the marking it belongs to.
    marks: Vec<(u32, u32)>,
    /// The current marking (0: none yet), so that marking anew clears nothing.
    current: u32,
}

impl ChangedMarks {
    /// Marks exactly the nodes `changed` (forgetting the last marking), in a table of `slots`
    /// slots.
    pub(crate) fn mark(&mut self, changed: &[NodeKey], slots: usize) {
        if self.marks.len() < slots {
            self.marks.resize(slots, (0, 0));
        }
        self.current = self.current.wrapping_add(1);
        if self.current == 0 {
            // Every stamp was used once: old marks could pass for new ones.
            self.marks.fill((0, 0));
            self.current = 1;
        }
        for &key in changed {
            if let Some(mark) = self.marks.get_mut(key.slot()) {
                *mark = (key.id(), self.current);
            }
        }
    }

    /// Whether the node `key` is marked (its slot holds its id, from the current marking).
    #[inline]
    pub(crate) fn has(&self, key: NodeKey) -> bool {
        self.marks
            .get(key.slot())
            .is_some_and(|&mark| mark == (key.id(), self.current))
    }
}

#[cfg(test)]
mod tests {
    use super::ChangedMarks;
    use crate::replication::server::node_table::NodeKey;

    #[test]
    fn only_the_nodes_of_the_latest_marking_are_marked() {
        let (a, b, c) = (NodeKey::new(0, 1), NodeKey::new(1, 2), NodeKey::new(2, 3));
        let mut marks = ChangedMarks::default();
        assert!(!marks.has(a), "nothing marked yet");
        marks.mark(&[a, c], 3);
        assert!(marks.has(a) && !marks.has(b) && marks.has(c));
        marks.mark(&[b], 3);
        assert!(!marks.has(a) && marks.has(b) && !marks.has(c));
        // A later node in a marked slot is not marked; nor is a slot past the table.
        assert!(!marks.has(NodeKey::new(1, 9)));
        assert!(!marks.has(NodeKey::new(7, 2)));
        // The stamps wrap: everything is cleared, nothing old passes for new.
        marks.current = u32::MAX;
        marks.mark(&[c], 3);
        assert!(!marks.has(b) && marks.has(c));
    }
}
