//! [`SharedBody`]: the last bit-packed snapshot body written this tick, copied whole into the
//! next client's snapshot when that client is owed the same entries against the same
//! baselines.
//!
//! A bit-packed body is a function of the snapshot's tick, its default baseline and the list of
//! entries it carries, each a node, the client's `since` for it and the audience: clients that
//! acknowledged the same snapshots, as clients at the same distance from the server mostly
//! do, are owed the same body. Only bodies under no byte budget, with no entry refused, are
//! kept.
//!
//! A client is owed the kept body without walking its nodes when it stands exactly as the
//! client the body was written for: the same pending nodes, and the same standing with every
//! node it has, where no pending node's entry depends on who receives it (owner conditions on
//! a node a client has authority over). The standings are compared as two arrays once; a
//! client's list then remembers that it equals the kept copy until either changes, so that
//! clients whose lists only take acknowledgements of whole snapshots (every node moving)
//! compare them once, not every tick.

use crate::replication::server::kept_stand::{ClientStand, KeptStand};
use crate::replication::server::node_table::NodeKey;
use crate::replication::Audience;

/// One entry of a bit-packed body: the node, the client's `since` for it (the baseline it
/// selects) and the audience.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyEntry {
    pub(crate) key: NodeKey,
    pub(crate) acked: Option<u32>,
    pub(crate) audience: Audience,
}

/// The last body kept this tick (see the [module documentation](self)). Allocates nothing
/// once its buffers have grown.
#[derive(Default)]
pub(crate) struct SharedBody {
    /// The tick and default baseline it was written for (`None`: nothing kept).
    kept: Option<(u32, u32)>,
    entries: Vec<BodyEntry>,
    /// The body's bytes (after the flags byte).
    bytes: Vec<u8>,
    /// Scratch for the next snapshot's entries.
    next: Vec<BodyEntry>,
    /// Where the client the body was written for stood, if a client standing alike is owed
    /// it whoever it is: its pending nodes and its standing with each node it has.
    stand: KeptStand,
    /// How many snapshots were copies of the kept body.
    copies: u64,
    /// Snapshots that shared a body (each copy, and each body copied), not yet taken.
    shared: u64,
}

impl SharedBody {
    /// A list to collect a snapshot's entries in (empty; hand it back with
    /// [`keep`](Self::keep) or [`give_back`](Self::give_back)).
    pub(crate) fn take_list(&mut self) -> Vec<BodyEntry> {
        let mut list = std::mem::take(&mut self.next);
        list.clear();
        list
    }

    /// Whether a body is kept for a snapshot of `tick` with default baseline `default_back`
    /// (whatever entries it carries).
    pub(crate) fn holds(&self, tick: u32, default_back: u32) -> bool {
        self.kept == Some((tick, default_back))
    }

    /// The body kept for a snapshot of `tick` with default baseline `default_back` carrying
    /// exactly `entries`, if there is one; counted as copied.
    pub(crate) fn copy(
        &mut self,
        tick: u32,
        default_back: u32,
        entries: &[BodyEntry],
    ) -> Option<&[u8]> {
        if self.kept != Some((tick, default_back)) || self.entries != entries {
            return None;
        }
        self.copies += 1;
        Some(&self.bytes)
    }

    /// The kept body and its entries, for a snapshot of `tick` with default baseline
    /// `default_back` to a client standing at `stand`, if the body was written for a client
    /// that stood alike (see the [module documentation](self)); counted as copied.
    pub(crate) fn copy_standing(
        &mut self,
        (tick, default_back): (u32, u32),
        stand: Option<ClientStand<'_>>,
    ) -> Option<(&[u8], &[BodyEntry])> {
        let alike = self.kept == Some((tick, default_back)) && self.stand.matches(stand);
        if !alike {
            return None;
        }
        self.copies += 1;
        Some((&self.bytes, &self.entries))
    }

    /// Notes where the client the body just [kept](Self::keep) was written for stood
    /// (`stand`), when a client standing alike is owed the body whoever it is (`any_client`);
    /// else nothing. A list kept already as it is is not copied again.
    pub(crate) fn keep_stand(&mut self, stand: Option<ClientStand<'_>>, any_client: bool) {
        self.stand.keep(stand.filter(|_| any_client));
    }

    /// How many snapshots shared a body since the last call: each copy, and each body copied
    /// at least once. Call it after a tick's last snapshot.
    pub(crate) fn take_shared(&mut self) -> u64 {
        self.settle();
        std::mem::take(&mut self.shared)
    }

    /// Counts the kept body's copies.
    fn settle(&mut self) {
        if self.copies > 0 {
            self.shared += self.copies + 1;
        }
        self.copies = 0;
    }

    /// Keeps `bytes`, the body of a snapshot of `tick` with default baseline `default_back`
    /// carrying `entries` (a list from [`take_list`](Self::take_list)).
    pub(crate) fn keep(
        &mut self,
        (tick, default_back): (u32, u32),
        entries: Vec<BodyEntry>,
        bytes: &[u8],
    ) {
        self.settle();
        self.stand.keep(None);
        self.kept = Some((tick, default_back));
        self.next = std::mem::replace(&mut self.entries, entries);
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
    }

    /// Hands back a list from [`take_list`](Self::take_list) that is not kept.
    pub(crate) fn give_back(&mut self, entries: Vec<BodyEntry>) {
        self.next = entries;
    }
}

#[cfg(test)]
mod tests {
    use super::SharedBody;
    use crate::replication::server::alike::Alike;
    use crate::replication::server::kept_stand::ClientStand;
    use crate::replication::server::known::{Known, NodeSend};
    use crate::replication::server::node_table::NodeKey;

    /// A client's list of nodes 1 to 50, each acknowledged at 5.
    fn list() -> Known {
        let mut known = Known::default();
        let keys = (1..=50).map(|id| NodeKey::new(id, id));
        let at_5 = NodeSend::new(5, None);
        known.fill(keys, at_5, |_| false);
        known
    }

    fn stand<'a>(pending: &'a [NodeKey], alike: &'a Alike, known: &'a Known) -> ClientStand<'a> {
        ClientStand {
            pending,
            pending_alike: alike,
            acks: known.standing().unwrap(),
        }
    }

    #[test]
    fn a_client_is_owed_the_kept_body_only_while_it_stands_as_the_one_it_was_written_for() {
        let (mut a, mut b) = (list(), list());
        let pending: Vec<NodeKey> = a.keys().collect();
        let (a_pending, mut b_pending) = (Alike::default(), Alike::default());
        let mut body = SharedBody::default();
        let at = (6, 1);
        body.keep(at, Vec::new(), &[1, 2, 3]);
        body.keep_stand(Some(stand(&pending, &a_pending, &a)), true);
        let copied = |body: &mut SharedBody, pending: &[NodeKey], alike: &Alike, b: &Known| {
            body.copy_standing(at, Some(stand(pending, alike, b)))
                .is_some()
        };
        assert!(copied(&mut body, &pending, &b_pending, &b));
        // Found alike, then changed: compared again, and not alike.
        let key = NodeKey::new(7, 7);
        b.update(key, |n| n.acked = 6);
        assert!(!copied(&mut body, &pending, &b_pending, &b));
        // Alike again (the same change where the body was written from, kept again).
        a.update(key, |n| n.acked = 6);
        body.keep(at, Vec::new(), &[1, 2, 3]);
        body.keep_stand(Some(stand(&pending, &a_pending, &a)), true);
        assert!(copied(&mut body, &pending, &b_pending, &b));
        assert!(copied(&mut body, &pending, &b_pending, &b));
        // Other pending nodes (the list changed, and says so): not alike.
        let fewer = &pending[1..];
        b_pending.changed();
        assert!(!copied(&mut body, fewer, &b_pending, &b));
        assert!(copied(&mut body, &pending, &b_pending, &b));
        // The tick every node was acknowledged at counts too.
        b.acknowledge_all(6);
        assert!(!copied(&mut body, &pending, &b_pending, &b));
    }
}
