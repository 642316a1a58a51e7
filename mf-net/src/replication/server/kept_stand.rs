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
use crate::replication::server::known::{Known, NodeSend, Standing};
use crate::replication::server::node_table::NodeKey;

/// Where a client stands: its pending nodes and its standing with each node it has, each
/// with its memory of the copy it equals.
#[derive(Clone, Copy)]
pub(crate) struct ClientStand<'a> {
    pub(crate) pending: &'a [NodeKey],
    pub(crate) pending_alike: &'a Alike,
    pub(crate) acks: Standing<'a>,
}

impl<'a> ClientStand<'a> {
    /// A client's stand from its `pending` nodes (`None` while it is behind: its snapshots
    /// walk the node table), their memory and its node list (`None` while nodes arrived since
    /// the last settle).
    pub(crate) fn of(
        pending: Option<&'a [NodeKey]>,
        pending_alike: &'a Alike,
        known: &'a Known,
    ) -> Option<Self> {
        Some(ClientStand {
            pending: pending?,
            pending_alike,
            acks: known.standing()?,
        })
    }
}

/// A copy of one client's stand (see the [module documentation](self)). Allocates nothing
/// once its buffers have grown.
#[derive(Default)]
pub(crate) struct KeptStand {
    /// Whether a stand is kept (the copies stay when none is, so that a list kept again
    /// unchanged is not copied again).
    kept: bool,
    pending: Vec<NodeKey>,
    acks: Vec<(NodeKey, NodeSend)>,
    all_acked: Option<u32>,
    /// The numbers of the copies `pending` and `acks` hold (0: none yet).
    pending_copy: u64,
    acks_copy: u64,
}

impl KeptStand {
    /// Keeps `stand`, or none (a list that remembers equalling the copy kept already is not
    /// copied again; see [`keep_list`]).
    pub(crate) fn keep(&mut self, stand: Option<ClientStand<'_>>) {
        self.kept = stand.is_some();
        let Some(stand) = stand else {
            return;
        };
        let (pending, acks) = (stand.pending, stand.acks.entries);
        keep_list(
            stand.pending_alike,
            pending,
            &mut self.pending_copy,
            &mut self.pending,
        );
        keep_list(stand.acks.alike, acks, &mut self.acks_copy, &mut self.acks);
        self.all_acked = stand.acks.all_acked;
    }

    /// Whether `stand` is the kept one: remembered by its lists, or else compared. None kept:
    /// no.
    pub(crate) fn matches(&self, stand: Option<ClientStand<'_>>) -> bool {
        let Some(stand) = stand.filter(|s| self.kept && s.acks.all_acked == self.all_acked) else {
            return false;
        };
        let (pending, acks) = (stand.pending_alike, stand.acks.alike);
        pending.is_copy(stand.pending, self.pending_copy, &self.pending)
            && acks.is_copy(stand.acks.entries, self.acks_copy, &self.acks)
    }
}

/// Keeps `list` (whose memory is `alike`) in `kept`, copy number `copy`: as it is if the list
/// remembers equalling it; else copied, under the number of the copy the list remembers
/// equalling (its contents are the list's: copies kept for several bodies from lists alike
/// share one number, which a list meeting either remembers), else a new one.
fn keep_list<T: Copy>(alike: &Alike, list: &[T], copy: &mut u64, kept: &mut Vec<T>) {
    if *copy != 0 && alike.remembers(*copy) {
        return;
    }
    *copy = match alike.remembered() {
        Some(remembered) => remembered,
        None => {
            let fresh = new_copy();
            alike.copied_as(fresh);
            fresh
        }
    };
    kept.clear();
    kept.extend_from_slice(list);
}
