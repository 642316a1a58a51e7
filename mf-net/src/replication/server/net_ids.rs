//! Handing out net ids on the server: fresh ones upwards from the first, and once those run
//! out, ids freed by despawns, but only once no client can still refer to the old node.
//!
//! A spawn takes a run of consecutive ids (its nodes, depth-first). An id comes back when its
//! node is gone and the spawn group it belonged to is gone too (a group's spawn, resent to late
//! joiners, names every id of its run). It may be handed out again once every ready client has
//! acknowledged a snapshot after the tick it was freed (the client has applied the despawn,
//! which travels reliably and in order before any later spawn) and the ring of sent snapshots
//! no longer holds a snapshot from before that tick (a late ack cannot advance the new node).
//!
//! Freed runs wait in free order until they are safe, then join the set of free runs, where
//! adjacent runs merge: what is kept is bounded by the ids freed within the safety window and
//! the gaps live nodes leave, not by the number of despawns (while fresh ids last, every freed
//! id merges into the runs below the fresh ones).

use std::collections::VecDeque;

use crate::tick::{tick_after, tick_diff};

/// A run of freed ids, `first..end`, freed at tick `at`, not yet safe to hand out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Freed {
    first: u32,
    end: u32,
    at: u32,
}

/// A run of ids, `first..end`, free to hand out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    first: u32,
    end: u32,
}

/// The server's net ids (see the [module documentation](self)).
#[derive(Debug)]
pub(crate) struct NetIds {
    /// The next fresh id (`u32::MAX` once every id was handed out once: the last id is
    /// `u32::MAX - 1`, so that one past a run's end fits a `u32`).
    next: u64,
    /// Freed runs not yet safe to hand out again, in the order they were freed (so by tick).
    waiting: VecDeque<Freed>,
    /// Free runs, safe to hand out again: sorted, disjoint, adjacent runs merged.
    free: Vec<Run>,
    /// Instance names number spawns; past the fresh ids, they go on counting from here.
    names: u64,
    /// Ticks a freed id waits at least: the snapshots the server remembers per client
    /// ([`snapshot_memory`](crate::replication::shared::protocol::snapshot_memory)), any of which may
    /// still be acknowledged.
    hold: u32,
}

impl NetIds {
    /// Ids handed out upwards from `first` (0 counts as 1), each freed one held for at least
    /// `hold` ticks.
    pub(crate) fn new(first: u32, hold: usize) -> Self {
        let first = u64::from(first.max(1));
        Self {
            next: first,
            waiting: VecDeque::new(),
            free: Vec::new(),
            names: first,
            hold: u32::try_from(hold).unwrap_or(u32::MAX),
        }
    }

    /// Each freed id is held for at least `hold` ticks from now on.
    pub(crate) fn set_hold(&mut self, hold: usize) {
        self.hold = u32::try_from(hold).unwrap_or(u32::MAX);
    }

    /// The number the next spawned instance is named with (`scene#N`): the next fresh id while
    /// there are fresh ids, then a count past `u32::MAX`, so names never repeat.
    pub(crate) fn name_number(&self) -> u64 {
        self.names
    }

    /// A run of `count` consecutive ids, fresh if any are left, else freed ones that no client
    /// can still refer to at `tick`: freed before `acked_by_all` (the oldest tick every ready
    /// client has acknowledged, or `tick` without clients) and more than the held ticks ago.
    /// `None` if no run of that length is free.
    pub(crate) fn allocate(&mut self, count: u32, tick: u32, acked_by_all: u32) -> Option<u32> {
        let count = count.max(1);
        self.names += 1;
        self.release(tick, acked_by_all);
        // A run's end (one past its last id) is a `u32` on the wire: `u32::MAX` is never an id.
        if self.next + u64::from(count) <= u64::from(u32::MAX) {
            let first = self.next as u32;
            self.next += u64::from(count);
            self.names = self.names.max(self.next);
            return Some(first);
        }
        let i = self.free.iter().position(|r| r.end - r.first >= count)?;
        let run = &mut self.free[i];
        let first = run.first;
        run.first += count;
        if run.first == run.end {
            self.free.remove(i);
        }
        Some(first)
    }

    /// `first..first + count` are free from `tick` on (their nodes and their group are gone).
    pub(crate) fn free(&mut self, first: u32, count: u32, tick: u32) {
        if count > 0 {
            self.waiting.push_back(Freed {
                first,
                end: first + count,
                at: tick,
            });
        }
    }

    /// Whether `id` was freed lately: a client may still name its node, having not yet
    /// applied the despawn.
    pub(crate) fn freed_lately(&self, id: u32) -> bool {
        self.waiting.iter().any(|f| id >= f.first && id < f.end)
    }

    /// Moves the waiting runs that became safe at `tick` into the free runs, merging adjacent
    /// ones. (Ticks in serial order: they wrap.)
    fn release(&mut self, tick: u32, acked_by_all: u32) {
        let hold = i32::try_from(self.hold).unwrap_or(i32::MAX);
        let safe = |f: &Freed| tick_after(acked_by_all, f.at) && tick_diff(tick, f.at) > hold;
        let before = self.free.len();
        while let Some(f) = self.waiting.front().filter(|f| safe(f)) {
            self.free.push(Run {
                first: f.first,
                end: f.end,
            });
            self.waiting.pop_front();
        }
        if self.free.len() == before {
            return;
        }
        self.free.sort_unstable_by_key(|r| r.first);
        self.free.dedup_by(|next, run| {
            let joins = run.end == next.first;
            if joins {
                run.end = next.end;
            }
            joins
        });
    }

    /// How many freed ids wait to be handed out again.
    #[cfg(test)]
    pub(crate) fn freed_count(&self) -> u64 {
        let waiting = self.waiting.iter().map(|f| f.end - f.first);
        let free = self.free.iter().map(|r| r.end - r.first);
        waiting.chain(free).map(u64::from).sum()
    }

    /// How many runs are kept (waiting and free).
    #[cfg(test)]
    fn runs_kept(&self) -> usize {
        self.waiting.len() + self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::NetIds;
    use crate::replication::shared::protocol::MIN_SNAPSHOT_MEMORY;

    const LATER: u32 = 1000;

    #[test]
    fn fresh_ids_go_upwards_then_freed_ones_are_reused_once_safe() {
        let mut ids = NetIds::new(u32::MAX - 6, MIN_SNAPSHOT_MEMORY);
        assert_eq!(ids.allocate(3, 1, 1), Some(u32::MAX - 6));
        assert_eq!(ids.allocate(3, 1, 1), Some(u32::MAX - 3));
        // No fresh id is left, and nothing was freed: refused, never a repeated id.
        assert_eq!(ids.allocate(1, 2, 2), None);
        ids.free(u32::MAX - 6, 3, 10);
        // Not while a client may not have acknowledged the despawn, or a snapshot from before
        // it may still be acknowledged.
        assert_eq!(ids.allocate(3, LATER, 10), None);
        assert_eq!(ids.allocate(3, 10 + MIN_SNAPSHOT_MEMORY as u32, 11), None);
        assert_eq!(ids.allocate(2, LATER, 11), Some(u32::MAX - 6));
        assert_eq!(ids.allocate(1, LATER, 11), Some(u32::MAX - 4));
        assert_eq!(ids.freed_count(), 0);
    }

    #[test]
    fn adjacent_freed_runs_join_and_the_rest_of_a_run_stays_free() {
        let mut ids = NetIds::new(u32::MAX - 10, MIN_SNAPSHOT_MEMORY);
        for _ in 0..5 {
            ids.allocate(2, 1, 1).unwrap();
        }
        ids.free(u32::MAX - 6, 2, 20);
        ids.free(u32::MAX - 8, 2, 10);
        ids.free(u32::MAX - 2, 2, 30);
        // Too long for any safe run.
        assert_eq!(ids.allocate(5, LATER, LATER), None);
        assert_eq!(ids.allocate(4, LATER, LATER), Some(u32::MAX - 8));
        assert_eq!(ids.freed_count(), 2);
        assert_eq!(ids.allocate(1, LATER, LATER), Some(u32::MAX - 2));
        assert_eq!(ids.allocate(1, LATER, LATER), Some(u32::MAX - 1));
        assert_eq!(ids.allocate(1, LATER, LATER), None);
    }

    #[test]
    fn names_never_repeat() {
        let mut ids = NetIds::new(u32::MAX - 2, MIN_SNAPSHOT_MEMORY);
        let mut names = Vec::new();
        for _ in 0..4 {
            names.push(ids.name_number());
            if ids.allocate(1, 1, 1).is_none() {
                ids.free(u32::MAX - 1, 1, 0);
            }
        }
        names.dedup();
        assert_eq!(names.len(), 4, "{names:?}");
    }

    #[test]
    fn freed_ids_merge_while_fresh_ids_last() {
        let mut ids = NetIds::new(1, MIN_SNAPSHOT_MEMORY);
        let mut live = std::collections::VecDeque::new();
        for tick in 0..10_000u32 {
            // Ten spawns and ten despawns a tick, each node living a hundred ticks.
            for _ in 0..10 {
                live.push_back(ids.allocate(1, tick, tick).unwrap());
            }
            if live.len() >= 1000 {
                for _ in 0..10 {
                    ids.free(live.pop_front().unwrap(), 1, tick);
                }
            }
        }
        // What waits is freed within the safety window; the rest merged into one run.
        assert!(
            ids.runs_kept() <= 10 * (MIN_SNAPSHOT_MEMORY + 2) + 1,
            "{}",
            ids.runs_kept()
        );
        assert_eq!(ids.freed_count(), 10_000 * 10 - 1000 + 10);
    }
}
