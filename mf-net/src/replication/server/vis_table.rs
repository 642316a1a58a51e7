//! [`VisTable`]: where one client stands with each spawn group, one byte per group slot, so
//! that the looks every relevance question makes (does the client have the group? is it
//! visible?) read a table of a few kilobytes per client instead of one cold line of a table of
//! 40-byte entries as large as the world. The few groups whose standing has more than its
//! state (an update period, a grace period's start, an update slot) keep it beside.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::int_hasher::IntHasher;
use crate::replication::server::group_vis::{GroupVis, Vis};
use crate::replication::server::node_table::GroupKey;

/// A slot's byte: never set (or its group left the table).
const UNSET: u8 = 0;
/// The bit of a slot's byte telling that `details` holds the group's standing.
const DETAILED: u8 = 4;

/// One client's standing with the spawn groups (see the [module documentation](self)).
/// Allocates nothing in steady state: the bytes grow with the group table's slots, the details
/// keep their capacity.
#[derive(Default)]
pub(crate) struct VisTable {
    /// By group slot: [`UNSET`], or the state's code ([`code`]), with [`DETAILED`] when
    /// `details` holds the rest.
    states: Vec<u8>,
    /// By group slot: the group's id and its standing, for the groups whose standing is not
    /// its state's defaults.
    details: HashMap<u32, (u32, GroupVis), BuildHasherDefault<IntHasher>>,
}

impl VisTable {
    /// The client's state with group `g`: `None` if it was never set (the client has not been
    /// sent its world).
    #[inline]
    pub(crate) fn state(&self, g: GroupKey) -> Option<Vis> {
        decode(self.states.get(g.slot()).copied().unwrap_or(UNSET))
    }

    /// Asks the processor for what [`state`](Self::state) reads of group `g` (see
    /// [`crate::cache_hint`]).
    #[inline]
    pub(crate) fn prefetch(&self, g: GroupKey) {
        crate::cache_hint::prefetch(&self.states, g.slot());
    }

    /// The client's standing with group `g` (`None`: see [`state`](Self::state)).
    pub(crate) fn get(&self, g: GroupKey) -> Option<GroupVis> {
        let byte = self.states.get(g.slot()).copied().unwrap_or(UNSET);
        let state = decode(byte)?;
        if byte & DETAILED != 0 {
            if let Some(&(id, vis)) = self.details.get(&slot(g)) {
                if id == g.id() {
                    return Some(vis);
                }
            }
        }
        Some(GroupVis {
            state,
            ..GroupVis::HIDDEN
        })
    }

    /// The standing with group `g`, to change in place, if it has more than its state
    /// (a visible group with an update period above 1 does).
    pub(crate) fn get_mut(&mut self, g: GroupKey) -> Option<&mut GroupVis> {
        let byte = self.states.get(g.slot()).copied().unwrap_or(UNSET);
        if byte & DETAILED == 0 {
            return None;
        }
        match self.details.get_mut(&slot(g)) {
            Some((id, vis)) if *id == g.id() => Some(vis),
            _ => None,
        }
    }

    /// Sets the client's standing with group `g`.
    pub(crate) fn set(&mut self, g: GroupKey, vis: GroupVis) {
        let at = g.slot();
        if at >= self.states.len() {
            self.states.resize(at + 1, UNSET);
        }
        let plain = GroupVis {
            state: vis.state,
            ..GroupVis::HIDDEN
        };
        let detailed = !same(&vis, &plain);
        let was = std::mem::replace(
            &mut self.states[at],
            code(vis.state) | if detailed { DETAILED } else { 0 },
        );
        if detailed {
            self.details.insert(slot(g), (g.id(), vis));
        } else if was & DETAILED != 0 {
            self.details.remove(&slot(g));
        }
    }

    /// Group `g` left the table: its slot reads as never set again, so that the next group in
    /// it starts from nothing.
    pub(crate) fn forget(&mut self, g: GroupKey) {
        if let Some(byte) = self.states.get_mut(g.slot()) {
            if *byte & DETAILED != 0 {
                self.details.remove(&slot(g));
            }
            *byte = UNSET;
        }
    }
}

/// Whether two standings are the same in every field.
fn same(a: &GroupVis, b: &GroupVis) -> bool {
    a.state == b.state && a.out_since == b.out_since && a.period == b.period && a.next == b.next
}

/// A state's code in a slot's byte.
fn code(state: Vis) -> u8 {
    match state {
        Vis::Hidden => 1,
        Vis::Visible => 2,
        Vis::Dormant => 3,
    }
}

/// The state of a slot's byte (`None` for [`UNSET`]).
#[inline]
fn decode(byte: u8) -> Option<Vis> {
    match byte & !DETAILED {
        1 => Some(Vis::Hidden),
        2 => Some(Vis::Visible),
        3 => Some(Vis::Dormant),
        _ => None,
    }
}

/// The map key of group `g`: its slot (a table has fewer than 2³² slots).
#[inline]
fn slot(g: GroupKey) -> u32 {
    u32::try_from(g.slot()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::VisTable;
    use crate::replication::server::group_vis::{GroupVis, Vis};
    use crate::replication::server::node_table::GroupKey;

    #[test]
    fn a_standing_reads_back_whole_and_a_forgotten_slot_starts_from_nothing() {
        let mut table = VisTable::default();
        let (a, b) = (GroupKey::new(3, 10), GroupKey::new(4, 11));
        assert_eq!(table.state(a), None);
        table.set(b, GroupVis::HIDDEN);
        assert_eq!(table.state(b), Some(Vis::Hidden));
        assert_eq!(table.state(a), None, "never set");
        // Plain: the state alone; nothing to change in place.
        table.set(a, GroupVis::visible(1));
        assert_eq!(
            table.get(a).map(|v| (v.state, v.period)),
            Some((Vis::Visible, 1))
        );
        assert!(table.get_mut(a).is_none());
        // With details: read back whole, changed in place.
        let mut tiered = GroupVis::visible(3);
        tiered.out_since = Some(Duration::from_secs(2));
        table.set(a, tiered);
        table.get_mut(a).unwrap().next = 9;
        let v = table.get(a).unwrap();
        assert_eq!((v.period, v.next, v.out_since), (3, 9, tiered.out_since));
        // Back to plain: the details go.
        table.set(a, GroupVis::HIDDEN);
        assert_eq!(table.get(a).map(|v| v.period), Some(1));
        assert!(table.details.is_empty());
        // A group leaving the table frees its slot for the next one.
        table.set(a, tiered);
        table.forget(a);
        let later = GroupKey::new(3, 12);
        assert_eq!(table.state(later), None);
        assert!(table.details.is_empty());
    }
}
