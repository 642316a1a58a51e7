//! [`ClientSlot`]: everything the server keeps for one connected client.

use crate::replication::server::input_buffer::InputBuffer;
use std::time::Duration;

use crate::replication::interest::Cell;
use crate::replication::multiplayer::rpc::limits::PeerRpcState;
use crate::replication::server::control_queue::ControlQueue;
use crate::replication::server::flood::FloodWindow;
use crate::replication::server::group_vis::{GroupVis, Vis};
use crate::replication::server::node_table::{GroupKey, GroupTable, NodeKey};
use crate::replication::server::send_state::SendState;
use crate::replication::server::vis_table::VisTable;
use crate::scene::NodeId;
use crate::transport::PeerId;

/// One connected client.
pub(crate) struct ClientSlot {
    pub(crate) peer: PeerId,
    pub(crate) ready: bool,
    pub(crate) connected_at: Duration,
    pub(crate) last_heard: Duration,
    pub(crate) last_progress: Duration,
    /// What was sent to it and what it acknowledged, per node it has (once ready).
    pub(crate) send: SendState,
    /// The spawns and despawns decided for it and not sent yet (see [`ControlQueue`]).
    pub(crate) queue: ControlQueue,
    pub(crate) stats: crate::replication::shared::stats::PeerNetworkStats,
    /// Whether the last snapshots that left the ring were acknowledged (feeds `stats`).
    pub(crate) ack_window: crate::replication::shared::stats::AckWindow,
    /// RPC flood and rate-limit windows.
    pub(crate) rpc: PeerRpcState,
    /// Input flood window.
    pub(crate) input_flood: FloodWindow,
    /// Visibility of every group, per group slot (once ready).
    pub(crate) vis: VisTable,
    /// The focus node interest policies measure from.
    pub(crate) focus: Option<NodeId>,
    /// Whether a visible group may have an update period above 1 (snapshots then check each
    /// node's group; false skips that).
    pub(crate) tiered: bool,
    /// Whether its snapshots are bit-packed (told in its welcome).
    pub(crate) bits: bool,
    /// With `tiered`: every group that was visible with a period above 1 when visibility was
    /// last decided (a superset of those that are now), so that advancing the update slots of
    /// the groups due does not look at every group.
    pub(crate) tiered_groups: Vec<GroupKey>,
    /// When it was last evaluated for interest (`None`: not yet); see
    /// [`update_interest`](crate::replication::server::state::ServerState::update_interest).
    pub(crate) turn_at: Option<u32>,
    /// Its next evaluation is to ask about every group that may be relevant (it joined, or its
    /// focus was set).
    pub(crate) whole_due: bool,
    /// Its focus's cell at its last evaluation (with a spatial index).
    pub(crate) focus_cell: Option<Cell>,
    /// The number of the first group move in the spatial index it has not been evaluated for.
    pub(crate) seen_moves: u64,
    /// Visible groups in their grace period (out of range, not yet despawned); may hold groups
    /// that left it since.
    pub(crate) grace: Vec<GroupKey>,
    /// A visible group's update period changed: its tiers are to be recounted.
    pub(crate) tiers_due: bool,
    /// Its view signature: the visible groups' ids, mixed and combined (clients that see the
    /// same groups have the same one; see
    /// [`set_vis`](crate::replication::server::state::ServerState::set_vis)).
    pub(crate) view: u64,
    /// This tick's changed nodes in the groups it sees, in net id order (scratch, capacity kept;
    /// filled while an interest setting restricts what clients see).
    pub(crate) visible_changed: Vec<NodeKey>,
    /// Its inputs (once it sent one; see [`Simulation`](crate::prediction::Simulation)).
    pub(crate) inputs: Option<Box<InputBuffer>>,
}

impl ClientSlot {
    /// A client that just connected at `now` and has not said hello yet; the server remembers
    /// the last `ring` snapshots it sends it.
    pub(crate) fn new(peer: PeerId, now: Duration, ring: usize) -> Self {
        Self {
            peer,
            ready: false,
            connected_at: now,
            last_heard: now,
            last_progress: now,
            send: SendState::new(ring),
            stats: crate::replication::shared::stats::PeerNetworkStats::default(),
            ack_window: crate::replication::shared::stats::AckWindow::default(),
            rpc: PeerRpcState::default(),
            input_flood: FloodWindow::default(),
            vis: VisTable::default(),
            focus: None,
            tiered: false,
            bits: false,
            tiered_groups: Vec::new(),
            turn_at: None,
            whole_due: true,
            focus_cell: None,
            seen_moves: 0,
            grace: Vec::new(),
            tiers_due: false,
            view: 0,
            visible_changed: Vec::new(),
            queue: ControlQueue::default(),
            inputs: None,
        }
    }

    /// Recounts which visible groups of `groups` have an update period above 1.
    pub(crate) fn recount_tiers(&mut self, groups: &GroupTable) {
        self.tiered = false;
        self.tiered_groups.clear();
        self.tiered_groups.reserve(groups.len());
        for &g in groups.keys() {
            if let Some(vis) = self.vis.get(g) {
                self.note_tier(g, vis);
            }
        }
    }

    /// Records that group `key`, not counted yet, became visible to it with `vis`: one more
    /// tiered group if its period is above 1.
    pub(crate) fn note_tier(&mut self, key: GroupKey, vis: GroupVis) {
        if vis.state == Vis::Visible && vis.period > 1 {
            self.tiered = true;
            self.tiered_groups.push(key);
        }
    }
}
