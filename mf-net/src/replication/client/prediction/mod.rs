//! A client's prediction state that is not generic over the input type: whether a
//! [`Simulation`](crate::prediction::Simulation) runs, its clock, the rollback the last snapshots call
//! for, and the counters. The replication client calls it around receiving: before (the
//! predicted members back to the confirmed state) and after (the confirmed state compared with
//! the history), and when nodes spawn or change authority.

pub(crate) mod predicted;
pub(crate) mod tick_sync;

use std::fmt;

use crate::replication::client::prediction::predicted::{ConfirmAt, Confirmation};
use crate::replication::client::prediction::tick_sync::TickSync;
use crate::replication::client::replicas::Replicas;
use crate::replication::shared::prediction_stats::PredictionStats;
use crate::replication::NetId;
use crate::store::{NodeId, Store};
use crate::tick::tick_after;

/// Where a client's prediction went wrong: the earliest tick whose confirmed server state
/// differed from what it had predicted, the first node and predicted member that differed
/// there ([`Simulation::last_misprediction`](crate::prediction::Simulation::last_misprediction)).
/// A client rolls back to it. `Debug` and `Display` name the node by net id and type.
#[derive(Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Misprediction {
    /// The mispredicted tick.
    pub tick: u32,
    /// The first node that differed (this client's handle of it).
    pub node: NodeId,
    /// Its net id, the same on every peer (`None` if it was despawned since).
    pub net_id: Option<NetId>,
    /// Its replicated type's name.
    pub type_name: &'static str,
    /// Its first predicted member that differed.
    pub member: &'static str,
}

impl fmt::Display for Misprediction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tick {}: member `{}` of ", self.tick, self.member)?;
        write_node(f, self.type_name, self.net_id)?;
        f.write_str(" differs from the server's")
    }
}

impl fmt::Debug for Misprediction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_node(
            f,
            "Misprediction",
            self.tick,
            self.type_name,
            self.net_id,
            self.member,
        )
    }
}

/// `Type net#3` (`Type (despawned)` without a net id).
pub(crate) fn write_node(
    f: &mut fmt::Formatter<'_>,
    type_name: &str,
    net_id: Option<NetId>,
) -> fmt::Result {
    match net_id {
        Some(id) => write!(f, "`{type_name}` {id}"),
        None => write!(f, "`{type_name}` (despawned)"),
    }
}

/// The `Debug` of a report on a predicted node: by net id and type, not the local handle.
pub(crate) fn debug_node(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    tick: u32,
    type_name: &str,
    net_id: Option<NetId>,
    member: &str,
) -> fmt::Result {
    f.debug_struct(name)
        .field("tick", &tick)
        .field("net_id", &net_id.map(NetId::get))
        .field("type_name", &type_name)
        .field("member", &member)
        .finish_non_exhaustive()
}

impl Misprediction {
    /// The mismatch found at `tick`, its node not named yet ([`named`](Self::named)).
    pub(crate) fn found(tick: u32, node: NodeId, member: &'static str) -> Self {
        Self {
            tick,
            node,
            net_id: None,
            type_name: "",
            member,
        }
    }

    /// With its node's net id and type name.
    pub(crate) fn named(self, net_id: Option<NetId>, replicas: &Replicas) -> Self {
        Self {
            net_id,
            type_name: replicas.predicted_type(self.node).unwrap_or(""),
            ..self
        }
    }
}

/// See the [module docs](self).
#[derive(Debug, Default)]
pub(crate) struct ClientPrediction {
    /// Whether a simulation runs (the owned predicted rows have prediction states).
    pub(crate) active: bool,
    /// History ticks per predicted row (a power of two).
    pub(crate) history: usize,
    pub(crate) sync: TickSync,
    /// The earliest mismatch since the last rollback.
    pub(crate) pending: Option<Misprediction>,
    pub(crate) stats: PredictionStats,
}

impl ClientPrediction {
    /// Prediction starts: every node in `owned` (this client's) is predicted from `tick` on.
    pub(crate) fn activate(
        &mut self,
        replicas: &mut Replicas,
        store: &mut dyn Store,
        owned: impl Iterator<Item = NodeId>,
        tick: u32,
        history_ticks: u32,
    ) {
        self.active = true;
        self.history = (history_ticks.max(2) as usize).next_power_of_two();
        for node in owned {
            replicas.start_prediction(store, node, tick, self.history);
        }
    }

    /// `node` was spawned at `tick` with `ours` telling whether this client owns it.
    pub(crate) fn spawned(
        &self,
        replicas: &mut Replicas,
        store: &mut dyn Store,
        node: NodeId,
        ours: bool,
        tick: u32,
    ) {
        if self.active && ours {
            replicas.start_prediction(store, node, tick, self.history);
        }
    }

    /// `node`'s authority changed at `tick`; returns whether it stopped being predicted (the
    /// caller starts its interpolation again).
    pub(crate) fn authority_changed(
        &self,
        replicas: &mut Replicas,
        store: &mut dyn Store,
        node: NodeId,
        ours: bool,
        tick: u32,
    ) -> bool {
        if !self.active {
            return false;
        }
        if ours {
            replicas.start_prediction(store, node, tick, self.history);
            false
        } else {
            replicas.stop_prediction(node)
        }
    }

    /// Before this frame's snapshots are applied; returns the first predicted node whose plain
    /// (not predicted) members were written since the last frame, with its type's name.
    pub(crate) fn before_receive(
        &self,
        replicas: &mut Replicas,
        store: &mut dyn Store,
    ) -> Option<(NodeId, &'static str)> {
        if self.active {
            replicas.restore_confirmed(store)
        } else {
            None
        }
    }

    /// Where this frame's confirmation is, after its snapshots, every node known up to
    /// `known_floor`: the floor and the present tick. `None` when not predicting.
    pub(crate) fn confirm_at(&self, known_floor: u32) -> Option<ConfirmAt> {
        self.active.then(|| ConfirmAt {
            known_floor,
            present: self.sync.present(),
        })
    }

    /// What this frame's confirmation `found`.
    pub(crate) fn confirmed(&mut self, found: Confirmation) {
        self.stats.confirmations += u64::from(found.confirmed);
        if let Some((tick, node, member)) = found.earliest {
            if self.pending.map_or(true, |p| tick_after(p.tick, tick)) {
                self.pending = Some(Misprediction::found(tick, node, member));
            }
        }
    }
}
