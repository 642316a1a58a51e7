//! [`KeptStand`]: where the client a shared snapshot or body was written for stood (its
//! pending nodes, its standing with each node it has), kept so that another client can be
//! found to stand alike, and [`ClientStand`], a client's side of that comparison.
//!
//! Two clients with the same pending nodes and the same per-node states (as stored, and the
//! tick both acknowledged whole) are owed the same entries. Each side's lists remember the
//! kept copies they were found equal to ([`Alike`]), so that clients whose lists do not change
//! from tick to tick (every node moving, every snapshot acknowledged whole) compare them once,
//! and the kept copy is not taken again from a list that has not changed.

use crate::replication::server::alike::{new_copy, Alike};
use crate::replication::server::known::{NodeSend, Standing};
use crate::replication::server::node_table::NodeKey;

/// Where a client stands: its pending nodes and its standing with each node it has, each
/// with its memory of the copy it equals.
#[derive(Clone, Copy)]
pub(crate) struct ClientStand<'a> {
    pub(crate) pending: &'a [NodeKey],
    pub(crate) pending_alike: &'a Alike,
    pub(crate) acks: Standing<'a>,
}

/// A copy of one client's stand (see the [module documentation](self)). Allocates nothing
/// once its buffers have grown.
#[derive(Default)]
pub(crate) struct KeptStand {
    pending: Vec<NodeKey>,
    acks: Vec<(NodeKey, NodeSend)>,
    all_acked: Option<u32>,
    /// The numbers of the copies `pending` and `acks` hold (0: none yet).
    pending_copy: u64,
    acks_copy: u64,
}

impl KeptStand {
    /// Keeps `stand` (a list kept already as it is is not copied again).
    pub(crate) fn keep(&mut self, stand: ClientStand<'_>) {
        let fresh = |list_alike: &Alike, copy: &mut u64| {
            let fresh = *copy == 0 || !list_alike.remembers(*copy);
            if fresh {
                *copy = new_copy();
                list_alike.copied_as(*copy);
            }
            fresh
        };
        if fresh(stand.pending_alike, &mut self.pending_copy) {
            self.pending.clear();
            self.pending.extend_from_slice(stand.pending);
        }
        if fresh(stand.acks.alike, &mut self.acks_copy) {
            self.acks.clear();
            self.acks.extend_from_slice(stand.acks.entries);
        }
        self.all_acked = stand.acks.all_acked;
    }

    /// Whether `stand` is the kept one: remembered by its lists, or else compared (`compare`;
    /// without it, only remembered). Nothing kept yet: no.
    pub(crate) fn matches(&self, stand: ClientStand<'_>, compare: bool) -> bool {
        if self.acks_copy == 0 || stand.acks.all_acked != self.all_acked {
            return false;
        }
        let (pending, acks) = (stand.pending_alike, stand.acks.alike);
        match compare {
            false => pending.remembers(self.pending_copy) && acks.remembers(self.acks_copy),
            true => {
                pending.is_copy(stand.pending, self.pending_copy, &self.pending)
                    && acks.is_copy(stand.acks.entries, self.acks_copy, &self.acks)
            }
        }
    }
}
