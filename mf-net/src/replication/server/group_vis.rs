//! Where one spawn group stands with one client (interest management): hidden, visible with an
//! update period, or dormant, and the update slots of tiered groups.

use std::time::Duration;

use crate::tick::tick_diff;

/// Where a group stands with one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vis {
    /// The client does not have it.
    Hidden,
    /// The client has it and gets its changes.
    Visible,
    /// A bound group made irrelevant: the client keeps its (bound) node, stale, since a bound
    /// node despawned on a client could not be bound again.
    Dormant,
}

/// One group's visibility for one client (kept per group slot, see
/// [`ClientSlot::vis`](crate::replication::server::client_slot::ClientSlot::vis)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupVis {
    pub(crate) state: Vis,
    /// When the policy first found it irrelevant, while visible (grace).
    pub(crate) out_since: Option<Duration>,
    /// Update period in network ticks while visible (1: every tick; see the policy's
    /// [`update_period`](crate::replication::interest::InterestPolicy::update_period)).
    pub(crate) period: u32,
    /// With a period above 1: the tick from which its nodes go into snapshots again (advanced
    /// past each snapshot that went out whole on or after it).
    pub(crate) next: u32,
}

impl Default for GroupVis {
    fn default() -> Self {
        Self::HIDDEN
    }
}

impl GroupVis {
    /// Not had by the client.
    pub(crate) const HIDDEN: Self = Self {
        state: Vis::Hidden,
        out_since: None,
        period: 1,
        next: 0,
    };

    /// Visible, updated every `period` ticks.
    pub(crate) const fn visible(period: u32) -> Self {
        Self {
            state: Vis::Visible,
            out_since: None,
            period,
            next: 0,
        }
    }

    /// Whether its nodes go into a snapshot of `tick` (a visible group's; others have none):
    /// `tick` is at or after `next` (serial-number order, across the tick's wrap). `next` is
    /// at most a period ahead of the tick; one further ahead is stale (left behind for over
    /// 2³¹ ticks, as by a client whose snapshots were all cut short that long) and is due.
    pub(crate) fn due(&self, tick: u32) -> bool {
        let ahead = tick_diff(self.next, tick);
        self.period <= 1 || ahead <= 0 || ahead.unsigned_abs() > self.period
    }
}

/// The first tick after `after` in the update slots of a group with net id `first` and update
/// period `period` (ticks congruent to `first` modulo `period`, spreading groups by net id).
pub(crate) fn next_slot(after: u32, period: u32, first: u32) -> u32 {
    let period = period.max(1);
    let since = (after % period + period - first % period) % period;
    after.wrapping_add(period - since)
}

#[cfg(test)]
mod tests {
    use super::{next_slot, GroupVis};

    #[test]
    fn update_slots_are_due_across_the_wrap_and_a_stale_slot_is_due() {
        let mut vis = GroupVis::visible(3);
        vis.next = next_slot(u32::MAX - 1, 3, 7);
        let due: Vec<u32> = (0..8u32)
            .map(|k| (u32::MAX - 1).wrapping_add(k))
            .filter(|&t| vis.due(t))
            .collect();
        // Due from the slot on (the runtime then moves `next` past it).
        assert_eq!(due.first(), Some(&vis.next));
        assert!(!vis.due(vis.next.wrapping_sub(1)));
        // A slot left 2³¹ ticks behind looks ahead, further than a period: due.
        vis.next = 10;
        assert!(vis.due(10u32.wrapping_add(1 << 31).wrapping_add(5)));
    }
}
