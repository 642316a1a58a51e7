//! [`SharedBody`]: the bit-packed snapshot bodies written this tick, one per default
//! baseline, each copied whole into the snapshot of a later client that is owed the same
//! entries against the same baselines.
//!
//! A bit-packed body is a function of the snapshot's tick, its default baseline and the list of
//! entries it carries, each a node, the client's `since` for it and the audience: clients that
//! acknowledged the same snapshots, as clients at the same distance from the server mostly
//! do, are owed the same body. Clients at different distances acknowledged different
//! snapshots, and their bodies differ (each value is coded against another baseline): a body
//! is kept for each default baseline, so that clients in no particular order (a client a
//! frame away, then one three frames away, then one a frame away again) each find theirs.
//! Only bodies under no byte budget, with no entry refused, are kept.
//!
//! A client is owed a kept body without walking its nodes when it stands exactly as the
//! client the body was written for: the same pending nodes, and the same standing with every
//! node it has, where no pending node's entry depends on who receives it (owner conditions on
//! a node a client has authority over). The standings are compared as two arrays once; a
//! client's list then remembers that it equals the kept copy until either changes, so that
//! clients whose lists only take acknowledgements of whole snapshots (every node moving)
//! compare them once, not every tick.

use crate::replication::server::kept_stand::{ClientStand, KeptStand};
use crate::replication::server::node_table::NodeKey;
use crate::replication::Audience;

/// The most bodies kept at once: one per default baseline, for clients up to this many
/// different distances (in ticks) from the server; past that, the body kept longest ago
/// makes room.
const KEPT_BODIES: usize = 16;

/// One entry of a bit-packed body: the node, the client's `since` for it (the baseline it
/// selects) and the audience.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyEntry {
    pub(crate) key: NodeKey,
    pub(crate) acked: Option<u32>,
    pub(crate) audience: Audience,
}

/// One kept body.
#[derive(Default)]
struct Kept {
    /// The tick and default baseline it was written for (`None`: nothing kept).
    at: Option<(u32, u32)>,
    entries: Vec<BodyEntry>,
    /// The body's bytes (after the flags byte).
    bytes: Vec<u8>,
    /// Where the client the body was written for stood, if a client standing alike is owed
    /// it whoever it is: its pending nodes and its standing with each node it has.
    stand: KeptStand,
    /// How many snapshots were copies of it.
    copies: u64,
    /// When it was kept: the number of bodies kept before it.
    order: u64,
}

/// The bodies kept (see the [module documentation](self)). Allocates nothing once its buffers
/// have grown.
#[derive(Default)]
pub(crate) struct SharedBody {
    /// At most [`KEPT_BODIES`], each of another tick or default baseline.
    kept: Vec<Kept>,
    /// The one kept last.
    last: usize,
    /// How many bodies were kept.
    keeps: u64,
    /// Scratch for the next snapshot's entries.
    next: Vec<BodyEntry>,
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

    /// Where the body kept for a snapshot of `tick` with default baseline `default_back` is.
    fn position(&self, tick: u32, default_back: u32) -> Option<usize> {
        let at = Some((tick, default_back));
        self.kept.iter().position(|k| k.at == at)
    }

    /// The body kept for a snapshot of `tick` with default baseline `default_back`.
    fn find(&mut self, tick: u32, default_back: u32) -> Option<&mut Kept> {
        let at = self.position(tick, default_back)?;
        self.kept.get_mut(at)
    }

    /// Whether a body is kept for a snapshot of `tick` with default baseline `default_back`
    /// (whatever entries it carries).
    pub(crate) fn holds(&self, tick: u32, default_back: u32) -> bool {
        self.position(tick, default_back).is_some()
    }

    /// The body kept for a snapshot of `tick` with default baseline `default_back` carrying
    /// exactly `entries`, if there is one; counted as copied.
    pub(crate) fn copy(
        &mut self,
        tick: u32,
        default_back: u32,
        entries: &[BodyEntry],
    ) -> Option<&[u8]> {
        let kept = self.find(tick, default_back)?;
        if kept.entries != entries {
            return None;
        }
        kept.copies += 1;
        Some(&kept.bytes)
    }

    /// The body and its entries kept for a snapshot of `tick` with default baseline
    /// `default_back` to a client standing at `stand`, if that body was written for a client
    /// that stood alike (see the [module documentation](self)); counted as copied.
    pub(crate) fn copy_standing(
        &mut self,
        (tick, default_back): (u32, u32),
        stand: Option<ClientStand<'_>>,
    ) -> Option<(&[u8], &[BodyEntry])> {
        let kept = self.find(tick, default_back)?;
        if !kept.stand.matches(stand) {
            return None;
        }
        kept.copies += 1;
        Some((&kept.bytes, &kept.entries))
    }

    /// Notes where the client the body just [kept](Self::keep) was written for stood
    /// (`stand`), when a client standing alike is owed the body whoever it is (`any_client`);
    /// else nothing. A list kept already as it is is not copied again.
    pub(crate) fn keep_stand(&mut self, stand: Option<ClientStand<'_>>, any_client: bool) {
        if let Some(kept) = self.kept.get_mut(self.last) {
            kept.stand.keep(stand.filter(|_| any_client));
        }
    }

    /// How many snapshots shared a body since the last call: each copy, and each body copied
    /// at least once. Call it after a tick's last snapshot.
    pub(crate) fn take_shared(&mut self) -> u64 {
        for at in 0..self.kept.len() {
            self.settle(at);
        }
        std::mem::take(&mut self.shared)
    }

    /// Counts the copies of the body in place `at`.
    fn settle(&mut self, at: usize) {
        let Some(kept) = self.kept.get_mut(at) else {
            return;
        };
        if kept.copies > 0 {
            self.shared += kept.copies + 1;
        }
        kept.copies = 0;
    }

    /// Where a body of `tick` with default baseline `default_back` goes: in place of the
    /// one kept for them, else of one of an earlier tick, else in a new place while there
    /// are fewer than [`KEPT_BODIES`], else in place of the one kept longest ago.
    fn place_for(&mut self, tick: u32, default_back: u32) -> usize {
        if let Some(same) = self.position(tick, default_back) {
            return same;
        }
        if let Some(stale) = self
            .kept
            .iter()
            .position(|k| !matches!(k.at, Some((t, _)) if t == tick))
        {
            return stale;
        }
        if self.kept.len() < KEPT_BODIES {
            self.kept.push(Kept::default());
            return self.kept.len() - 1;
        }
        let oldest = self.kept.iter().enumerate().min_by_key(|(_, k)| k.order);
        oldest.map_or(0, |(at, _)| at)
    }

    /// Keeps `bytes`, the body of a snapshot of `tick` with default baseline `default_back`
    /// carrying `entries` (a list from [`take_list`](Self::take_list)).
    pub(crate) fn keep(
        &mut self,
        (tick, default_back): (u32, u32),
        entries: Vec<BodyEntry>,
        bytes: &[u8],
    ) {
        let at = self.place_for(tick, default_back);
        self.settle(at);
        self.last = at;
        self.keeps += 1;
        let kept = &mut self.kept[at];
        kept.stand.keep(None);
        kept.at = Some((tick, default_back));
        kept.order = self.keeps;
        self.next = std::mem::replace(&mut kept.entries, entries);
        kept.bytes.clear();
        kept.bytes.extend_from_slice(bytes);
    }

    /// Hands back a list from [`take_list`](Self::take_list) that is not kept.
    pub(crate) fn give_back(&mut self, entries: Vec<BodyEntry>) {
        self.next = entries;
    }
}

#[cfg(test)]
mod tests {
    use super::{SharedBody, KEPT_BODIES};
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

    #[test]
    fn a_body_is_kept_for_each_default_baseline_of_a_tick() {
        let mut body = SharedBody::default();
        let keep = |body: &mut SharedBody, at: (u32, u32), byte: u8| {
            let list = body.take_list();
            body.keep(at, list, &[byte]);
        };
        keep(&mut body, (6, 1), 1);
        keep(&mut body, (6, 3), 3);
        assert_eq!(body.copy(6, 1, &[]), Some(&[1][..]));
        assert_eq!(body.copy(6, 3, &[]), Some(&[3][..]));
        assert_eq!(body.copy(6, 2, &[]), None, "none for that baseline");
        // Written again for a baseline: replaced.
        keep(&mut body, (6, 1), 11);
        assert_eq!(body.copy(6, 1, &[]), Some(&[11][..]));
        assert_eq!(body.take_shared(), 3 * 2, "three bodies, each copied once");
        // A new tick's bodies take the places of the last tick's.
        keep(&mut body, (7, 1), 71);
        assert!(body.holds(7, 1));
        assert_eq!(body.kept.len(), 2, "in the place of one of the last tick's");
        // Past the limit, the body kept longest ago goes.
        for back in 2..=KEPT_BODIES as u32 + 1 {
            keep(&mut body, (7, back), 0);
        }
        assert!(!body.holds(7, 1), "the first kept went");
        assert!((2..=KEPT_BODIES as u32 + 1).all(|back| body.holds(7, back)));
        assert_eq!(body.kept.len(), KEPT_BODIES);
    }
}
