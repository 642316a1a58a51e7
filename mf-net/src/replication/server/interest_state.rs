//! [`Interest`]: the server's interest settings (the policy, its spatial index, manual settings)
//! and what waits for an evaluation, kept in its state; the evaluation itself is in
//! [`interest`](crate::replication::server::interest).

use std::collections::HashMap;

use crate::replication::interest::InterestPolicy;
use crate::replication::server::node_table::GroupKey;
use crate::replication::server::spatial_index::SpatialIndex;
use crate::transport::PeerId;

/// The server's interest settings.
#[derive(Default)]
pub(crate) struct Interest {
    pub(crate) policy: Option<Box<dyn InterestPolicy>>,
    /// Each client is evaluated every `every` network ticks, on its own turn.
    pub(crate) every: u32,
    /// The policy's groups by cell, if it has cells.
    pub(crate) index: Option<SpatialIndex>,
    /// The tick whose capture's changes the index last read cells for.
    pub(crate) read_at: Option<u32>,
    /// Where the slow sweep over every group's cell is (catching positions that change without
    /// a captured change).
    pub(crate) sweep: usize,
    /// Every client is to be evaluated whole at the end of the frame (the policy changed).
    pub(crate) all_due: bool,
    /// Groups (by first net id) to decide again for every client at the end of the frame
    /// (their authority changed).
    pub(crate) groups_due: Vec<u32>,
    /// Manual settings by (group's first net id, peer).
    pub(crate) manual: HashMap<(u32, PeerId), bool>,
    /// Manual settings changed this frame, decided at its end.
    pub(crate) manual_due: Vec<(u32, PeerId)>,
    /// The groups nested under a networked node of another group, by that group's first net
    /// id (a group leaving a client takes them along).
    pub(crate) nested: HashMap<u32, Vec<GroupKey>>,
    /// Scratch: the groups one evaluation asks about.
    pub(crate) asked: Vec<GroupKey>,
    /// Scratch: the groups nested under a group whose cell was read again, still to read
    /// again themselves (a stack).
    pub(crate) below: Vec<GroupKey>,
}

impl Interest {
    /// Whether nothing restricts relevance (the default): every group goes to every client.
    pub(crate) fn unrestricted(&self) -> bool {
        self.policy.is_none() && self.manual.is_empty()
    }

    /// Forgets a client that left.
    pub(crate) fn forget_peer(&mut self, peer: PeerId) {
        if !self.manual.is_empty() {
            self.manual.retain(|&(_, p), _| p != peer);
        }
    }

    /// Pushes onto `stack` the groups nested under group `up` (none for a group under which
    /// nothing is nested).
    pub(crate) fn push_nested(&self, up: GroupKey, stack: &mut Vec<GroupKey>) {
        if let Some(list) = self.nested.get(&up.id()) {
            stack.extend_from_slice(list);
        }
    }

    /// Forgets a group that is gone.
    pub(crate) fn forget_group(&mut self, g: GroupKey) {
        let first = g.id();
        if !self.manual.is_empty() {
            self.manual.retain(|&(f, _), _| f != first);
        }
        if let Some(index) = &mut self.index {
            index.remove(g);
        }
        self.nested.remove(&first);
    }
}
