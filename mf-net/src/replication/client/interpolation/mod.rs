//! The client's interpolation, in one place: the [`InterpolationTimeline`] and the tick up to
//! which every node is known (here), and each node's buffers in its runtime row, with what an
//! entry, a blend and a snap do to them ([`row`]).
//!
//! - **Spawn** ([`spawned`](ClientInterpolation::spawned), for each node a spawn networks): the
//!   spawn state was applied already; the node's buffers start with it as their first sample,
//!   at the spawn message's tick, which is also its known tick.
//! - **Snapshot**: [`begin_snapshot`](ClientInterpolation::begin_snapshot) moves the clock,
//!   judged against the newest snapshot of the frame (when it snaps, every member snaps to its
//!   newest sample, which its buffer keeps at its tick while the older samples go);
//!   each entry is read at [`entry_at`](ClientInterpolation::entry_at)'s ticks, buffering
//!   interpolated members with a hold sample at the node's known tick from before this
//!   snapshot; [`end_snapshot`](ClientInterpolation::end_snapshot) records an untruncated
//!   snapshot.
//! - **Frame** (`begin_frame`): [`advance_to`](ClientInterpolation::advance_to) the clock before
//!   receiving, then, after receiving, every buffer's sample at the render tick
//!   ([`blend_at`](ClientInterpolation::blend_at)) is written into its node, one pass per type
//!   that also confirms predicted rows.
//!
//! A node is known up to the newer of the last snapshot that carried it and the last
//! untruncated snapshot (which proves every absent node was still). Nothing here allocates
//! after a node's state is made at spawn (except to restart the buffers of a node carried by
//! no snapshot for over 2³⁰ ticks, see [`RowInterp::blend`](row::RowInterp::blend)).
//!
//! Ticks wrap after 2³²: they compare by serial-number arithmetic ([`crate::tick`]), and the
//! render tick is on a continuous timeline that counts on past `u32::MAX` (see
//! [`ServerClock::estimate`](crate::interpolation::ServerClock::estimate)).

pub(crate) mod row;

use std::time::Duration;

use self::row::BlendAt;
use crate::interpolation::{InterpolationConfig, InterpolationTimeline};
use crate::replication::client::entry::EntryAt;
use crate::replication::client::replicas::Replicas;
use crate::store::{NodeId, Store};
use crate::tick::{tick_diff, tick_max, HORIZON};

/// The client side of interpolation (see the [module documentation](self)).
pub(crate) struct ClientInterpolation {
    /// Set when welcomed with interpolation enabled (boxed: the adaptive delay's statistics
    /// would make every client state large).
    timeline: Option<Box<InterpolationTimeline>>,
    /// The newest untruncated snapshot applied.
    last_untruncated: u32,
}

impl ClientInterpolation {
    pub(crate) fn new() -> Self {
        Self {
            timeline: None,
            last_untruncated: 0,
        }
    }

    /// Welcomed at `tick` by a server running at `tick_rate`, in the frame at `now` (the
    /// runtime's frame time): interpolate if `config` enables it.
    pub(crate) fn start(
        &mut self,
        config: InterpolationConfig,
        tick_rate: u8,
        tick: u32,
        now: Duration,
    ) {
        self.last_untruncated = tick;
        self.timeline = config.enabled.then(|| {
            Box::new(InterpolationTimeline::starting_at(
                config,
                u32::from(tick_rate.max(1)),
                now,
            ))
        });
    }

    /// The tick up to which every node is known still (the newest untruncated snapshot).
    pub(crate) fn known_floor(&self) -> u32 {
        self.last_untruncated
    }

    /// The timeline, when interpolating.
    pub(crate) fn timeline(&self) -> Option<&InterpolationTimeline> {
        self.timeline.as_deref()
    }

    /// A spawn of `tick` networked `node`: when interpolating, its buffers start from its
    /// current (spawn) value.
    pub(crate) fn spawned(
        &self,
        replicas: &mut Replicas,
        store: &mut dyn Store,
        node: NodeId,
        tick: u32,
    ) {
        if self.timeline.is_some() {
            replicas.start_interp(store, node, tick);
        }
    }

    /// A snapshot of `tick` (not stale) is about to be applied: moves the clock, judged
    /// against the newest snapshot of this frame
    /// ([`on_frame_snapshot`](InterpolationTimeline::on_frame_snapshot)). Returns whether it
    /// snapped, in which case every interpolated member was snapped to its newest sample, the
    /// only one its buffer keeps.
    pub(crate) fn begin_snapshot(
        &mut self,
        replicas: &mut Replicas,
        store: &mut dyn Store,
        tick: u32,
    ) -> bool {
        let Some(timeline) = &mut self.timeline else {
            return false;
        };
        if !timeline.on_frame_snapshot(tick).must_clear_buffers() {
            return false;
        }
        replicas.snap_interps(store);
        true
    }

    /// When an entry of the snapshot of `tick` is applied: its tick, and the tick up to which
    /// every node is known still.
    #[inline]
    pub(crate) fn entry_at(&self, tick: u32) -> EntryAt {
        EntryAt {
            tick,
            known_floor: self.last_untruncated,
        }
    }

    /// The snapshot of `tick` was applied; an untruncated one proves every node it did not
    /// carry was still up to `tick`. While only truncated ones arrive, the newest untruncated
    /// tick is kept within [`HORIZON`] of the newest tick (moved up to that age), so that it
    /// never gets 2³¹ ticks old, where it would look newer than every tick.
    pub(crate) fn end_snapshot(&mut self, tick: u32, truncated: bool) {
        if !truncated {
            self.last_untruncated = tick_max(self.last_untruncated, tick);
        } else if tick_diff(tick, self.last_untruncated) > HORIZON as i32 {
            self.last_untruncated = tick.wrapping_sub(HORIZON);
        }
    }

    /// A frame began at `now` (the runtime's frame time): advances the clock to now, before
    /// this frame's snapshots pull it (so that in steady state the estimate is the newest
    /// snapshot's tick, and arrivals are timed at the frame that received them). The frame's
    /// snapshots are judged against where this leaves the clock.
    pub(crate) fn advance_to(&mut self, now: Duration) {
        if let Some(timeline) = &mut self.timeline {
            timeline.advance_to(now);
        }
    }

    /// Where this frame's blend is, after its snapshots: every interpolated member's sample at
    /// the render tick is written into its node. `None` before the first snapshot or when not
    /// interpolating.
    pub(crate) fn blend_at(&self) -> Option<BlendAt> {
        let timeline = self.timeline.as_deref()?;
        Some(BlendAt {
            render_tick: timeline.render_tick()?,
            known_floor: self.last_untruncated,
            max_extrapolation_ticks: timeline.max_extrapolation_ticks(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::ClientInterpolation;
    use crate::interpolation::InterpolationConfig;
    use crate::tick::HORIZON;

    #[test]
    fn the_known_floor_orders_across_the_wrap_and_never_ages_past_the_horizon() {
        let mut interp = ClientInterpolation::new();
        interp.start(
            InterpolationConfig::default(),
            30,
            u32::MAX - 1,
            Duration::ZERO,
        );
        assert_eq!(interp.entry_at(0).known_floor, u32::MAX - 1);
        interp.end_snapshot(3, false);
        interp.end_snapshot(u32::MAX, false);
        assert_eq!(interp.entry_at(4).known_floor, 3);
        // Only truncated snapshots for longer than the horizon: the floor follows at that age.
        interp.end_snapshot(3 + HORIZON, true);
        assert_eq!(interp.entry_at(0).known_floor, 3);
        let later = 10 + HORIZON;
        interp.end_snapshot(later, true);
        assert_eq!(interp.entry_at(later).known_floor, 10);
    }
}
