//! A client's prediction state that is not generic over the input type: whether a
//! [`Simulation`](crate::prediction::Simulation) runs, its clock, the rollback the last snapshots call
//! for, and the counters. The replication client calls it around receiving: before (the
//! predicted members back to the confirmed state) and after (the confirmed state compared with
//! the history), and when nodes spawn or change authority.

use super::tick_sync::TickSync;
use super::PredictionStats;
use crate::scene::{NodeId, Scene};
use crate::tick::tick_after;

/// Where a client's prediction went wrong: the earliest tick whose confirmed server state
/// differed from what it had predicted, the first node and predicted member that differed
/// there ([`Simulation::last_misprediction`](crate::prediction::Simulation::last_misprediction)).
/// A client rolls back to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Misprediction {
    /// The mispredicted tick.
    pub tick: u32,
    /// The first node that differed.
    pub node: NodeId,
    /// Its first predicted member that differed.
    pub member: &'static str,
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
        scene: &mut Scene,
        owned: impl Iterator<Item = NodeId>,
        tick: u32,
        history_ticks: u32,
    ) {
        self.active = true;
        self.history = (history_ticks.max(2) as usize).next_power_of_two();
        for node in owned {
            scene.start_prediction(node, tick, self.history);
        }
    }

    /// `node` was spawned at `tick` with `ours` telling whether this client owns it.
    pub(crate) fn spawned(&self, scene: &mut Scene, node: NodeId, ours: bool, tick: u32) {
        if self.active && ours {
            scene.start_prediction(node, tick, self.history);
        }
    }

    /// `node`'s authority changed at `tick`; returns whether it stopped being predicted (the
    /// caller starts its interpolation again).
    pub(crate) fn authority_changed(
        &self,
        scene: &mut Scene,
        node: NodeId,
        ours: bool,
        tick: u32,
    ) -> bool {
        if !self.active {
            return false;
        }
        if ours {
            scene.start_prediction(node, tick, self.history);
            false
        } else {
            scene.stop_prediction(node)
        }
    }

    /// Before this frame's snapshots are applied; returns the first predicted node whose plain
    /// (not predicted) members were written since the last frame, with its type's name.
    pub(crate) fn before_receive(&self, scene: &mut Scene) -> Option<(NodeId, &'static str)> {
        if self.active {
            scene.restore_confirmed()
        } else {
            None
        }
    }

    /// After this frame's snapshots were applied, every node known up to `known_floor`.
    pub(crate) fn after_receive(&mut self, scene: &mut Scene, known_floor: u32) {
        if !self.active {
            return;
        }
        let found = scene.confirm_predicted(known_floor, self.sync.present());
        self.stats.confirmations += u64::from(found.confirmed);
        if let Some((tick, node, member)) = found.earliest {
            if self.pending.map_or(true, |p| tick_after(p.tick, tick)) {
                self.pending = Some(Misprediction { tick, node, member });
            }
        }
    }
}
