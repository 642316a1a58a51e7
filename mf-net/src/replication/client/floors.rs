//! [`Floors`]: for each node a bit-packed client has, the values of its spawn or of its newest
//! entry that no baseline table holds any longer (see
//! [`Baselines`](crate::replication::client::baselines::Baselines)).
//!
//! One array in net id order, as the tables are, so that a snapshot's lookups (in net id
//! order) and a table's retirement (in net id order) walk it front to back rather than probe a
//! map scattered over memory. A floor set again for the same node (its next retirement, its
//! next spawn after a despawn: relevance coming and going) is written in place; a node new to
//! the array waits in a list, found by id through a map, until the next
//! [`settle`](Floors::settle) merges it in. (A list searched front to back made a burst of
//! spawns quadratic: a late joiner's ten thousand nodes new in one snapshot.)

use std::collections::HashMap;

use crate::codec::quantize::Buckets;
use crate::replication::shared::sorted_ids::first_from;
use crate::tick::tick_after;

/// One node's floor: what its values are as of, when they were made (see
/// [`Floors::set`]), and where they are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Floor {
    /// The tick the values are as of.
    pub(crate) tick: u32,
    /// When they were made, in the order of the client's tables and spawns.
    pub(crate) begun: u64,
    start: u32,
    slots: u32,
    /// In the list of nodes new to the array.
    fresh: bool,
}

/// A floor and its node.
#[derive(Debug, Clone, Copy)]
struct Row {
    id: u32,
    floor: Floor,
    /// Not forgotten (a forgotten row keeps its place until the next merge).
    live: bool,
}

/// The floors of a client's nodes (see the [module documentation](self)). Allocates nothing
/// once its buffers have grown, while its nodes' ids stay the same.
#[derive(Default)]
pub(crate) struct Floors {
    /// By net id, each id once.
    rows: Vec<Row>,
    /// The id of each row, in the same order: what searches read.
    ids: Vec<u32>,
    values: Vec<Buckets>,
    /// Floors of ids not in `rows` (or in them with another width), each id once.
    fresh: Vec<Row>,
    fresh_values: Vec<Buckets>,
    /// Where each id of `fresh` is in it. Net ids are the server's numbers: the map's hasher
    /// is seeded, so that no server can aim collisions at it.
    fresh_at: HashMap<u32, u32>,
    /// Scratch for a merge.
    spare_rows: Vec<Row>,
    spare_ids: Vec<u32>,
    spare_values: Vec<Buckets>,
    /// Where the next lookup in `rows` looks first.
    cursor: usize,
}

impl Floors {
    /// Node `id`'s floor, if it has one.
    pub(crate) fn get(&mut self, id: u32) -> Option<Floor> {
        if let Some(row) = self.fresh_row(id) {
            return Some(self.fresh[row].floor);
        }
        let at = self.row_at(id)?;
        let row = &self.rows[at];
        row.live.then_some(row.floor)
    }

    /// The values of `floor` (from [`get`](Self::get), with nothing set or settled since).
    pub(crate) fn values(&self, floor: Floor) -> &[Buckets] {
        let values = match floor.fresh {
            true => &self.fresh_values,
            false => &self.values,
        };
        let start = floor.start as usize;
        values
            .get(start..start + floor.slots as usize)
            .unwrap_or_default()
    }

    /// Sets node `id`'s floor to `values`, as of `tick`, made at `begun`, unless it has one
    /// made later.
    pub(crate) fn set(&mut self, id: u32, (tick, begun): (u32, u64), values: &[Buckets]) {
        let Ok(slots) = u32::try_from(values.len()) else {
            return;
        };
        if let Some(at) = self.fresh_row(id) {
            let row = &mut self.fresh[at];
            if row.floor.begun > begun {
                return;
            }
            (row.floor.tick, row.floor.begun) = (tick, begun);
            let start = row.floor.start as usize;
            if row.floor.slots == slots {
                self.fresh_values[start..start + values.len()].copy_from_slice(values);
            } else if let Ok(start) = u32::try_from(self.fresh_values.len()) {
                // Another width: its values go after the others, the row stays.
                (row.floor.start, row.floor.slots) = (start, slots);
                self.fresh_values.extend_from_slice(values);
            }
            return;
        }
        if let Some(at) = self.row_at(id) {
            let row = &mut self.rows[at];
            if row.live && row.floor.begun > begun {
                return;
            }
            if row.floor.slots == slots {
                let start = row.floor.start as usize;
                (row.floor.tick, row.floor.begun, row.live) = (tick, begun, true);
                self.values[start..start + values.len()].copy_from_slice(values);
                return;
            }
        }
        let (Ok(start), Ok(at)) = (
            u32::try_from(self.fresh_values.len()),
            u32::try_from(self.fresh.len()),
        ) else {
            return;
        };
        self.fresh_at.insert(id, at);
        self.fresh_values.extend_from_slice(values);
        let floor = Floor {
            tick,
            begun,
            start,
            slots,
            fresh: true,
        };
        self.fresh.push(Row {
            id,
            floor,
            live: true,
        });
    }

    /// Forgets node `id`'s floor.
    pub(crate) fn forget(&mut self, id: u32) {
        if let Some(at) = self.fresh_row(id) {
            self.fresh_at.remove(&id);
            self.fresh.swap_remove(at);
            if let Some(moved) = self.fresh.get(at) {
                // Below `u32::MAX`: it was the last of a list whose places fit a `u32`.
                #[allow(clippy::cast_possible_truncation)]
                self.fresh_at.insert(moved.id, at as u32);
            }
        }
        if let Some(at) = self.row_at(id) {
            self.rows[at].live = false;
        }
    }

    /// Where node `id`'s row is in `fresh`, if it has one there (no lookup while it is empty,
    /// as it is between a snapshot's new nodes and the next merge).
    fn fresh_row(&self, id: u32) -> Option<usize> {
        if self.fresh.is_empty() {
            return None;
        }
        self.fresh_at.get(&id).map(|&at| at as usize)
    }

    /// Where node `id`'s row is in the array, if it has one (forgotten or not).
    fn row_at(&mut self, id: u32) -> Option<usize> {
        let at = self.position(id);
        self.cursor = at;
        self.ids.get(at).is_some_and(|&i| i == id).then_some(at)
    }

    /// Merges the floors of nodes new to the array into it, and drops the forgotten ones:
    /// one pass, nothing when no node is new.
    pub(crate) fn settle(&mut self) {
        self.cursor = 0;
        if self.fresh.is_empty() {
            return;
        }
        // (Each id once.)
        self.fresh.sort_unstable_by_key(|r| r.id);
        let (mut old, mut new) = (0, 0);
        self.spare_rows.clear();
        self.spare_ids.clear();
        self.spare_values.clear();
        loop {
            let take_new = match (self.rows.get(old), self.fresh.get(new)) {
                (Some(o), Some(n)) => n.id <= o.id,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (None, None) => break,
            };
            let (row, values) = match take_new {
                true => {
                    let row = self.fresh[new];
                    new += 1;
                    // A fresh floor of an id the array has is newer (else it was written in
                    // place).
                    if self.rows.get(old).is_some_and(|o| o.id == row.id) {
                        old += 1;
                    }
                    (row, &self.fresh_values)
                }
                false => {
                    old += 1;
                    (self.rows[old - 1], &self.values)
                }
            };
            let from = row.floor.start as usize;
            let kept = values.get(from..from + row.floor.slots as usize);
            let (Some(slice), Ok(start)) = (
                kept.filter(|_| row.live),
                u32::try_from(self.spare_values.len()),
            ) else {
                continue;
            };
            self.spare_values.extend_from_slice(slice);
            let floor = Floor {
                start,
                fresh: false,
                ..row.floor
            };
            self.spare_rows.push(Row { floor, ..row });
            self.spare_ids.push(row.id);
        }
        std::mem::swap(&mut self.rows, &mut self.spare_rows);
        std::mem::swap(&mut self.ids, &mut self.spare_ids);
        std::mem::swap(&mut self.values, &mut self.spare_values);
        self.fresh.clear();
        self.fresh_values.clear();
        self.fresh_at.clear();
    }

    /// Moves every floor's tick before `horizon` up to it.
    pub(crate) fn age(&mut self, horizon: u32) {
        for row in self.rows.iter_mut().chain(&mut self.fresh) {
            if tick_after(horizon, row.floor.tick) {
                row.floor.tick = horizon;
            }
        }
    }

    /// Forgets every floor.
    pub(crate) fn clear(&mut self) {
        self.rows.clear();
        self.ids.clear();
        self.values.clear();
        self.fresh.clear();
        self.fresh_values.clear();
        self.fresh_at.clear();
        self.cursor = 0;
    }

    /// Where node `id` is or would be among the rows: searched from the cursor when it is
    /// ahead of it (the usual case: a snapshot's lookups skip a few nodes each, the ones it
    /// does not carry), else from the first.
    fn position(&self, id: u32) -> usize {
        let from = self.cursor.min(self.ids.len());
        let from = match from > 0 && self.ids[from - 1] >= id {
            true => 0,
            false => from,
        };
        from + first_from(&self.ids[from..], id)
    }
}

#[cfg(test)]
mod tests {
    use super::Floors;
    use crate::codec::quantize::Buckets;

    fn value(v: u64) -> [Buckets; 2] {
        [Buckets::from_low_u64(v), Buckets::from_low_u64(v + 1)]
    }

    fn get(f: &mut Floors, id: u32) -> Option<(u32, Vec<Buckets>)> {
        let floor = f.get(id)?;
        Some((floor.tick, f.values(floor).to_vec()))
    }

    #[test]
    fn a_floor_is_the_newest_set_and_is_written_in_place_once_merged() {
        let mut f = Floors::default();
        f.set(7, (10, 4), &value(70));
        f.set(3, (11, 5), &value(30));
        assert_eq!(get(&mut f, 7), Some((10, value(70).to_vec())), "fresh");
        f.settle();
        assert_eq!(f.rows.len(), 2);
        assert_eq!(get(&mut f, 3), Some((11, value(30).to_vec())), "merged");
        // An older one does not take a newer one's place; a newer one does, in place.
        f.set(3, (9, 2), &value(1));
        assert_eq!(get(&mut f, 3), Some((11, value(30).to_vec())));
        f.set(3, (12, 6), &value(31));
        assert!(f.fresh.is_empty(), "written in place");
        assert_eq!(get(&mut f, 3), Some((12, value(31).to_vec())));
        // Another width waits for the merge.
        f.set(3, (13, 7), &[Buckets::from_low_u64(5)]);
        assert_eq!(f.fresh.len(), 1);
        f.settle();
        assert_eq!(get(&mut f, 3).map(|g| g.1.len()), Some(1));
        assert_eq!(get(&mut f, 7), Some((10, value(70).to_vec())));
    }

    #[test]
    fn a_burst_of_new_nodes_is_found_by_id_before_its_merge_and_forgetting_one_keeps_the_rest() {
        let mut f = Floors::default();
        // Out of order, as a late joiner's spawns may come.
        let ids: Vec<u32> = (0..2000).map(|i| (i * 7919) % 2003).collect();
        for &id in &ids {
            f.set(id, (1, 1), &value(u64::from(id)));
        }
        // Set again, newer, and in another width: still one row each.
        f.set(ids[5], (2, 2), &value(5));
        f.set(ids[6], (2, 2), &[Buckets::from_low_u64(6)]);
        assert_eq!(f.fresh.len(), ids.len());
        f.forget(ids[0]);
        f.forget(ids[1999]);
        assert_eq!(get(&mut f, ids[0]), None);
        assert_eq!(get(&mut f, ids[5]), Some((2, value(5).to_vec())));
        assert_eq!(get(&mut f, ids[6]).map(|g| g.1.len()), Some(1));
        for &id in &ids[7..1999] {
            assert_eq!(get(&mut f, id), Some((1, value(u64::from(id)).to_vec())));
        }
        f.settle();
        assert_eq!(f.rows.len(), ids.len() - 2);
        assert!(f.rows.windows(2).all(|w| w[0].id < w[1].id));
        assert_eq!(get(&mut f, ids[1999]), None);
        assert_eq!(get(&mut f, ids[5]), Some((2, value(5).to_vec())));
        assert_eq!(get(&mut f, ids[6]).map(|g| g.1.len()), Some(1));
        assert_eq!(
            get(&mut f, ids[7]),
            Some((1, value(u64::from(ids[7])).to_vec()))
        );
    }

    #[test]
    fn a_forgotten_floor_is_gone_and_comes_back_in_place() {
        let mut f = Floors::default();
        for id in [5, 9, 2] {
            f.set(id, (1, 1), &value(u64::from(id)));
        }
        f.settle();
        f.forget(9);
        assert_eq!(get(&mut f, 9), None);
        // Set again (spawned again): in its old place, whatever was made before.
        f.set(9, (3, 2), &value(90));
        assert!(f.fresh.is_empty());
        assert_eq!(get(&mut f, 9), Some((3, value(90).to_vec())));
        f.forget(2);
        f.forget(4);
        f.set(4, (3, 3), &value(40));
        f.forget(4);
        // Nothing new: the forgotten row keeps its place; a new node's merge drops it.
        f.settle();
        assert_eq!(f.rows.len(), 3);
        assert_eq!(get(&mut f, 2), None);
        f.set(1, (3, 3), &value(10));
        f.settle();
        assert_eq!(f.rows.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 5, 9]);
        assert_eq!(get(&mut f, 4), None);
        f.age(100);
        assert_eq!(get(&mut f, 5).map(|g| g.0), Some(100));
        f.clear();
        assert_eq!(get(&mut f, 5), None);
    }
}
