//! [`LagHistory`]: one value of every node holding a type, at each recent tick, kept by the
//! server for hit checks as a client saw the world (lag compensation).
//!
//! Storage is a ring of tick slots indexed by the tick modulo the capacity (a power of two):
//! slot `tick & mask` holds `(tick, values)`, the values sorted by [`NodeId`] so that a lookup
//! is a binary search. A slot is overwritten when the ring wraps; a slot whose stored tick is
//! not the one asked for (it was skipped, or is a whole ring older) holds nothing for it.
//! Ticks are compared only by serial-number arithmetic ([`crate::tick`]).

use std::fmt;

use crate::interpolation::Interpolate;
use crate::replicated::Replicated;
use crate::scene::{NodeId, Scene};
use crate::tick::{tick_diff, unwrap_near};

/// A bounded per-tick history of one chosen value of every node holding a `T` (e.g. a player's
/// position), recorded by the server after each simulated tick, for hit checks as a client saw
/// the world.
///
/// Clients show remote nodes interpolated at a fractional render tick
/// ([`InterpolationTimeline::render_tick`](crate::interpolation::InterpolationTimeline::render_tick)),
/// behind the server. Each client input carries the render tick the client was at when it
/// sampled it ([`Step::view_tick`](super::Step::view_tick)); the server's step asks
/// [`at`](Self::at) where a node was then, without touching the live scene.
///
/// ```
/// use mf_net::prediction::LagHistory;
/// use mf_net::prelude::*;
///
/// #[derive(Replicated, Default)]
/// struct Player {
///     #[replicated(interpolate)]
///     x: f32,
/// }
///
/// let mut scene = Scene::new();
/// let root = scene.root();
/// let player = scene.insert(root, "player", Player::default()).unwrap();
/// // One second at 30 ticks per second (rounded up to 32 ticks).
/// let mut history = LagHistory::<Player, f32>::new(30, |p| p.x);
/// for tick in 100..110u32 {
///     scene.get_mut(player).unwrap().x = (tick - 100) as f32; // the simulation moves it
///     history.record(&scene, tick);
/// }
/// assert_eq!(history.span(), Some((100, 109)));
/// // A client's render tick of 103.5: halfway between the values of ticks 103 and 104.
/// assert_eq!(history.at(player.node(), 103.5), Some(3.5));
/// assert_eq!(history.at(player.node(), 99.5), None); // older than the history
/// ```
pub struct LagHistory<T: Replicated, V: Interpolate> {
    ring: Ring<V>,
    pick: fn(&T) -> V,
}

impl<T: Replicated, V: Interpolate> LagHistory<T, V> {
    /// The most ticks a history keeps: 2¹⁶ (over four minutes at 255 Hz). A larger request in
    /// [`new`](Self::new) keeps this many.
    pub const MAX_TICKS: u32 = 1 << 16;

    /// Keeps `ticks` ticks (rounded up to a power of two; e.g. one second: `tick_rate`), each
    /// the value `pick` chooses of every node holding a `T`.
    ///
    /// `ticks` is at least 1 and at most [`MAX_TICKS`](Self::MAX_TICKS). Allocates the tick
    /// slots (empty: each grows on its first [`record`](Self::record)s).
    pub fn new(ticks: u32, pick: fn(&T) -> V) -> Self {
        Self {
            ring: Ring::new(ticks.clamp(1, Self::MAX_TICKS).next_power_of_two()),
            pick,
        }
    }

    /// Records `tick`: `pick` of every `T` in `scene` (call after each simulated tick, the same
    /// tick number the server's capture uses). Reuses its storage: no allocation once every tick
    /// slot has held as many nodes as now.
    ///
    /// Call it once per tick the server captured
    /// ([`Multiplayer::tick`](crate::replication::Multiplayer::tick) after
    /// [`end_frame`](crate::replication::Multiplayer::end_frame), when it changed), not on
    /// frames without a tick: the values recorded must be the ones the capture sent. With a
    /// [`Simulation`](super::Simulation), recording at the end of the step with
    /// [`Step::tick`](super::Step::tick) is the same while no frame spans several ticks (one
    /// that does records ticks no snapshot carried, which clients blended across instead).
    ///
    /// - A tick newer than the newest becomes the newest; ticks skipped on the way (a frame
    ///   that spanned several ticks captures once) are not recorded, and [`at`](Self::at)
    ///   blends across them.
    /// - A tick older than the newest but within the history (a late one) is recorded in its
    ///   place; a tick recorded again replaces what it held.
    /// - A tick older than the history (the newest minus the capacity, or earlier; in serial
    ///   order, so also one 2³¹ ticks or more ahead) is ignored. After the server restarts its
    ///   ticks, [`clear`](Self::clear) first.
    pub fn record(&mut self, scene: &Scene, tick: u32) {
        self.record_from(tick, scene.iter::<T>().map(|(h, value)| (h.node(), value)));
    }

    /// [`record`](Self::record) from any storage: `values` are every node holding a `T` and
    /// its value at `tick` (a game that keeps its own storage,
    /// [`Multiplayer::with_store`](crate::replication::Multiplayer::with_store), walks its
    /// own).
    pub fn record_from<'a>(&mut self, tick: u32, values: impl IntoIterator<Item = (NodeId, &'a T)>)
    where
        T: 'a,
    {
        let pick = self.pick;
        if let Some(recorded) = self.ring.begin(tick) {
            recorded.extend(values.into_iter().map(|(node, value)| (node, pick(value))));
            recorded.sort_unstable_by_key(|&(node, _)| node);
        }
    }

    /// The value of `node` at the fractional `tick` (a client's render tick): the two recorded
    /// ticks around it blended with [`Interpolate`] (exact at whole ticks); `None` if the node
    /// was not recorded at both, or the tick is older than the history. A tick newer than the
    /// newest recorded tick gives the node's value at the newest.
    ///
    /// In detail:
    ///
    /// - `tick` is on the continuous timeline of a render tick, which counts on past
    ///   `u32::MAX` when the server's tick wraps; it is placed next to the newest recorded tick
    ///   by serial arithmetic, so either form works across the wrap.
    /// - At a recorded whole tick: that tick's value, exactly.
    /// - Between recorded ticks (adjacent, or with skipped ticks between them): the older
    ///   one's value blended towards the newer one's by the fraction of the way `tick` is
    ///   between them; `None` if the node is missing from either.
    /// - **Newer than the newest recorded tick: the node's value at the newest**, never
    ///   extrapolated. A client's render tick is behind the server's; one ahead of what was
    ///   recorded (a clock estimate running ahead, or a tick not recorded yet) gets the most
    ///   recent state the server has, and a client cannot ask for more than that.
    /// - Older than the oldest recorded tick, or not finite: `None`.
    pub fn at(&self, node: NodeId, tick: f64) -> Option<V> {
        self.ring.at(node, tick)
    }

    /// Every node recorded at the whole `tick`, with its value (for a sweep / raycast over all).
    ///
    /// In [`NodeId`] order; empty if `tick` is not recorded (skipped, older than the history
    /// or newer than the newest).
    pub fn nodes_at(&self, tick: u32) -> impl Iterator<Item = (NodeId, &V)> + '_ {
        self.ring
            .slot(tick)
            .into_iter()
            .flat_map(|slot| slot.values.iter().map(|(node, value)| (*node, value)))
    }

    /// The oldest and newest recorded ticks.
    ///
    /// `None` before the first [`record`](Self::record) and after [`clear`](Self::clear).
    /// Ticks between them may be missing (skipped).
    pub fn span(&self) -> Option<(u32, u32)> {
        self.ring.span()
    }

    /// How many ticks are recorded (at most [`capacity`](Self::capacity); fewer while it
    /// fills, or when ticks were skipped).
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.ring.newest.is_none()
    }

    /// How many ticks the history keeps: the `ticks` given to [`new`](Self::new), rounded up
    /// to a power of two. The newest recorded tick and the `capacity - 1` before it.
    pub fn capacity(&self) -> u32 {
        self.ring.mask + 1
    }

    /// Forgets everything (the server stopped).
    ///
    /// Keeps the storage, for the next run.
    pub fn clear(&mut self) {
        self.ring.clear();
    }
}

impl<T: Replicated, V: Interpolate> fmt::Debug for LagHistory<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LagHistory")
            .field("type", &std::any::type_name::<T>())
            .field("capacity", &self.capacity())
            .field("span", &self.span())
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

/// One tick's values.
struct Slot<V> {
    /// The tick recorded here last.
    tick: u32,
    /// Whether `tick` is recorded (false: never, skipped, or cleared).
    recorded: bool,
    /// Every node's value at `tick`, sorted by node.
    values: Vec<(NodeId, V)>,
}

impl<V> Slot<V> {
    fn get(&self, node: NodeId) -> Option<&V> {
        let i = self
            .values
            .binary_search_by_key(&node, |&(node, _)| node)
            .ok()?;
        self.values.get(i).map(|(_, value)| value)
    }
}

/// The tick slots: what [`LagHistory`] stores, whatever the node type.
struct Ring<V> {
    slots: Vec<Slot<V>>,
    /// The slot count minus one (a power of two minus one).
    mask: u32,
    /// The newest recorded tick.
    newest: Option<u32>,
}

impl<V: Interpolate> Ring<V> {
    /// `capacity` slots (a power of two).
    fn new(capacity: u32) -> Self {
        debug_assert!(capacity.is_power_of_two());
        Self {
            slots: (0..capacity)
                .map(|_| Slot {
                    tick: 0,
                    recorded: false,
                    values: Vec::new(),
                })
                .collect(),
            mask: capacity - 1,
            newest: None,
        }
    }

    fn slot_index(&self, tick: u32) -> usize {
        (tick & self.mask) as usize
    }

    /// Starts recording `tick`: its slot's values, emptied, to fill and sort; `None` if it is
    /// older than the history.
    fn begin(&mut self, tick: u32) -> Option<&mut Vec<(NodeId, V)>> {
        match self.newest {
            None => self.newest = Some(tick),
            Some(newest) => {
                let ahead = tick_diff(tick, newest);
                if ahead > 0 {
                    // The skipped ticks' slots hold older ticks: forget them (they are outside
                    // the history already, unless a whole 2³² ticks went by; this keeps even
                    // that case right).
                    #[allow(clippy::cast_sign_loss)]
                    let skipped = (ahead as u32 - 1).min(self.mask + 1);
                    for i in 1..=skipped {
                        let index = self.slot_index(newest.wrapping_add(i));
                        self.slots[index].recorded = false;
                    }
                    self.newest = Some(tick);
                } else if newest.wrapping_sub(tick) > self.mask {
                    return None;
                }
            }
        }
        let index = self.slot_index(tick);
        let slot = &mut self.slots[index];
        slot.tick = tick;
        slot.recorded = true;
        slot.values.clear();
        Some(&mut slot.values)
    }

    /// The slot of `tick` if `tick` is recorded.
    fn slot(&self, tick: u32) -> Option<&Slot<V>> {
        let newest = self.newest?;
        if tick_diff(newest, tick) < 0 || newest.wrapping_sub(tick) > self.mask {
            return None;
        }
        let slot = &self.slots[self.slot_index(tick)];
        (slot.recorded && slot.tick == tick).then_some(slot)
    }

    /// The slot `back` ticks before the newest, with `back`, if that tick is recorded.
    fn back(&self, newest: u32, back: u32) -> Option<(u32, &Slot<V>)> {
        self.slot(newest.wrapping_sub(back))
            .map(|slot| (back, slot))
    }

    /// See [`LagHistory::at`].
    fn at(&self, node: NodeId, tick: f64) -> Option<V> {
        if !tick.is_finite() {
            return None;
        }
        let newest = self.newest?;
        // How many ticks before the newest `tick` is (negative: after it).
        let age = unwrap_near(newest, tick) - tick;
        if age <= 0.0 {
            return self.slot(newest)?.get(node).cloned();
        }
        if age > f64::from(self.mask) {
            return None;
        }
        // The whole tick at or before `tick`, as a count back from the newest (1 ..= mask).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let floor = age.ceil() as u32;
        // The newest recorded tick at or before `tick`, and the oldest after it (there is one:
        // the newest is recorded, and `tick` is before it).
        let (back0, older) = (floor..=self.mask).find_map(|k| self.back(newest, k))?;
        let from = older.get(node)?;
        if back0 == floor && age == f64::from(floor) {
            return Some(from.clone());
        }
        let (back1, newer) = (0..floor).rev().find_map(|k| self.back(newest, k))?;
        let to = newer.get(node)?;
        let t = (f64::from(back0) - age) / f64::from(back0 - back1);
        #[allow(clippy::cast_possible_truncation)]
        Some(from.interpolate(to, t as f32))
    }

    /// See [`LagHistory::span`].
    fn span(&self) -> Option<(u32, u32)> {
        let newest = self.newest?;
        let oldest = (0..=self.mask)
            .rev()
            .find_map(|k| self.back(newest, k))
            .map_or(newest, |(_, slot)| slot.tick);
        Some((oldest, newest))
    }

    /// See [`LagHistory::len`].
    fn len(&self) -> usize {
        match self.newest {
            None => 0,
            Some(newest) => (0..=self.mask)
                .filter(|&k| self.back(newest, k).is_some())
                .count(),
        }
    }

    /// See [`LagHistory::clear`].
    fn clear(&mut self) {
        for slot in &mut self.slots {
            slot.recorded = false;
            slot.values.clear();
        }
        self.newest = None;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::Ring;
    use crate::scene::{NodeId, Scene};

    /// `count` distinct nodes, in creation order.
    fn nodes(count: usize) -> Vec<NodeId> {
        let mut scene = Scene::new();
        let root = scene.root();
        (0..count)
            .map(|i| scene.add(root, &format!("n{i}")).unwrap())
            .collect()
    }

    /// Records `tick` with `values` (given in any order), as `LagHistory::record` does.
    fn put(ring: &mut Ring<f32>, tick: u32, values: &[(NodeId, f32)]) {
        if let Some(slot) = ring.begin(tick) {
            slot.extend(values.iter().rev().copied());
            slot.sort_unstable_by_key(|&(node, _)| node);
        }
    }

    /// A ring of 8 ticks with node `a` at `x = tick` for ticks `from..=to` (wrapping).
    fn linear(a: NodeId, from: u32, count: u32) -> Ring<f32> {
        let mut ring = Ring::new(8);
        for i in 0..count {
            put(&mut ring, from.wrapping_add(i), &[(a, i as f32)]);
        }
        ring
    }

    #[test]
    fn blends_at_half_ticks_and_is_exact_at_whole_ticks() {
        let n = nodes(2);
        let (a, b) = (n[0], n[1]);
        let mut ring = Ring::new(8);
        put(&mut ring, 10, &[(a, 0.0), (b, 100.0)]);
        put(&mut ring, 11, &[(a, 2.0), (b, 50.0)]);
        put(&mut ring, 12, &[(a, 3.0), (b, 0.0)]);
        assert_eq!(ring.at(a, 10.5), Some(1.0));
        assert_eq!(ring.at(b, 10.5), Some(75.0));
        assert_eq!(ring.at(a, 11.25), Some(2.25));
        assert_eq!(ring.at(b, 11.75), Some(12.5));
        assert_eq!(ring.at(a, 10.0), Some(0.0));
        assert_eq!(ring.at(a, 11.0), Some(2.0));
        assert_eq!(ring.at(b, 12.0), Some(0.0));
        // Newer than the newest: the newest, not extrapolated.
        assert_eq!(ring.at(a, 12.5), Some(3.0));
        assert_eq!(ring.at(a, 40.0), Some(3.0));
        // Older than the oldest recorded tick, or not a number.
        assert_eq!(ring.at(a, 9.999), None);
        assert_eq!(ring.at(a, f64::NAN), None);
        assert_eq!(ring.at(a, f64::INFINITY), None);
        assert_eq!(ring.span(), Some((10, 12)));
        assert_eq!(ring.len(), 3);
        let slot = ring.slot(11).unwrap();
        assert_eq!(slot.values, vec![(a, 2.0), (b, 50.0)], "sorted by node");
    }

    #[test]
    fn the_ring_wrap_overwrites_the_oldest_ticks() {
        let n = nodes(1);
        let a = n[0];
        let ring = linear(a, 100, 20); // ticks 100..=119; the ring keeps 112..=119
        assert_eq!(ring.span(), Some((112, 119)));
        assert_eq!(ring.len(), 8);
        assert!(ring.slot(111).is_none(), "overwritten by 119");
        assert_eq!(ring.slot(112).unwrap().values, vec![(a, 12.0)]);
        assert_eq!(ring.at(a, 112.0), Some(12.0));
        assert_eq!(ring.at(a, 112.5), Some(12.5));
        assert_eq!(ring.at(a, 111.5), None, "too old");
        assert_eq!(ring.at(a, 111.0), None, "too old");
        assert_eq!(ring.at(a, 104.0), None, "too old");
        assert_eq!(ring.at(a, 118.75), Some(18.75));
    }

    #[test]
    fn fractional_ticks_across_the_u32_wrap() {
        let n = nodes(1);
        let a = n[0];
        // Ticks MAX - 3 ..= 2: x = 0 at MAX - 3, 3 at MAX, 4 at 0, 6 at 2.
        let ring = linear(a, u32::MAX - 3, 7);
        assert_eq!(ring.span(), Some((u32::MAX - 3, 2)));
        let wrap = 4_294_967_296.0_f64;
        // A render tick on the continuous timeline, past `u32::MAX`.
        assert_eq!(ring.at(a, wrap + 1.5), Some(5.5));
        assert_eq!(ring.at(a, wrap), Some(4.0));
        assert_eq!(ring.at(a, wrap - 0.5), Some(3.5));
        assert_eq!(ring.at(a, wrap - 2.25), Some(1.75));
        // The same ticks taken modulo 2³².
        assert_eq!(ring.at(a, 1.5), Some(5.5));
        assert_eq!(ring.at(a, 0.0), Some(4.0));
        assert_eq!(ring.at(a, f64::from(u32::MAX) + 0.5), Some(3.5));
        // Older than the history, and newer than the newest, across the wrap.
        assert_eq!(ring.at(a, wrap - 4.5), None);
        assert_eq!(ring.at(a, wrap + 2.5), Some(6.0));
        assert_eq!(ring.slot(u32::MAX).unwrap().values, vec![(a, 3.0)]);
    }

    #[test]
    fn a_node_that_appears_later_is_known_only_from_its_first_tick() {
        let n = nodes(3);
        let (a, b, c) = (n[0], n[1], n[2]);
        let mut ring = Ring::new(8);
        put(&mut ring, 10, &[(a, 0.0), (c, 0.0)]);
        put(&mut ring, 11, &[(a, 1.0), (b, 10.0), (c, 1.0)]);
        put(&mut ring, 12, &[(a, 2.0), (b, 12.0)]); // c removed
        assert_eq!(ring.at(b, 10.5), None, "not recorded at 10");
        assert_eq!(ring.at(b, 10.0), None);
        assert_eq!(ring.at(b, 11.0), Some(10.0));
        assert_eq!(ring.at(b, 11.5), Some(11.0));
        assert_eq!(ring.at(c, 10.5), Some(0.5));
        assert_eq!(ring.at(c, 11.5), None, "not recorded at 12");
        assert_eq!(ring.at(c, 12.5), None, "gone at the newest");
        assert_eq!(ring.at(a, 11.5), Some(1.5));
    }

    #[test]
    fn a_gap_blends_between_the_recorded_ticks_around_it() {
        let n = nodes(1);
        let a = n[0];
        let mut ring = Ring::new(8);
        put(&mut ring, 10, &[(a, 0.0)]);
        put(&mut ring, 14, &[(a, 8.0)]); // a frame spanned ticks 11..=14
        put(&mut ring, 15, &[(a, 10.0)]);
        assert_eq!(ring.span(), Some((10, 15)));
        assert_eq!(ring.len(), 3);
        assert_eq!(ring.at(a, 11.0), Some(2.0));
        assert_eq!(ring.at(a, 12.0), Some(4.0));
        assert_eq!(ring.at(a, 13.5), Some(7.0));
        assert_eq!(ring.at(a, 14.0), Some(8.0));
        assert_eq!(ring.at(a, 14.5), Some(9.0));
        assert!(ring.slot(12).is_none(), "skipped");
        // A recorded tick older than the newest fills its place in the gap.
        put(&mut ring, 12, &[(a, 5.0)]);
        assert_eq!(ring.at(a, 11.0), Some(2.5));
        assert_eq!(ring.at(a, 12.0), Some(5.0));
        assert_eq!(ring.at(a, 13.0), Some(6.5));
        assert_eq!(ring.span(), Some((10, 15)), "the newest stays");
        assert_eq!(ring.len(), 4);
        // One older than the history is ignored.
        put(&mut ring, 7, &[(a, -100.0)]);
        assert!(ring.slot(7).is_none());
        assert_eq!(ring.at(a, 15.0), Some(10.0), "slot 7 & 7 = 15's slot kept");
    }

    #[test]
    fn a_gap_longer_than_the_history_forgets_everything_before_it() {
        let n = nodes(1);
        let a = n[0];
        let mut ring = linear(a, 0, 8); // 0..=7
        put(&mut ring, 100, &[(a, 100.0)]);
        assert_eq!(ring.span(), Some((100, 100)));
        assert_eq!(ring.len(), 1);
        assert_eq!(ring.at(a, 99.5), None);
        assert_eq!(ring.at(a, 100.0), Some(100.0));
        // Four jumps of 2³⁰ ticks come back to the same ticks modulo 2³²: slot 5 still held
        // tick 5 from before, which must not count as recorded again.
        let mut ring = linear(a, 0, 8);
        for jump in 1..=3u32 {
            put(&mut ring, jump << 30, &[(a, -1.0)]);
        }
        put(&mut ring, 8, &[(a, 8.0)]);
        assert_eq!(ring.span(), Some((8, 8)));
        assert_eq!(ring.len(), 1);
        assert!(ring.slot(5).is_none());
        assert_eq!(ring.at(a, 5.5), None);
    }

    #[test]
    fn clear_forgets_and_keeps_the_storage() {
        let n = nodes(1);
        let a = n[0];
        let mut ring = linear(a, 0, 8);
        ring.clear();
        assert_eq!(ring.span(), None);
        assert_eq!(ring.len(), 0);
        assert_eq!(ring.at(a, 3.0), None);
        assert!(ring.slots.iter().all(|s| s.values.capacity() >= 1));
        // A restart at any tick records from there.
        put(&mut ring, 3, &[(a, 30.0)]);
        assert_eq!(ring.span(), Some((3, 3)));
        assert_eq!(ring.at(a, 3.0), Some(30.0));
    }
}
