//! The client's interpolation: the [`InterpolationTimeline`], the boxed interpolation state of
//! every node whose type has `#[replicated(interpolate)]` members, and the tick up to which
//! each such node is known.
//!
//! - **Spawn** ([`sync`](ClientInterpolation::sync), after every spawn and despawn): the spawn
//!   state was applied already; the node's buffers start with it as their first sample, at the
//!   spawn message's tick, which is also its known tick.
//! - **Snapshot**: [`begin_snapshot`](ClientInterpolation::begin_snapshot) moves the clock
//!   (when it snaps, every member snaps to its newest sample and every buffer is cleared);
//!   [`read`](ClientInterpolation::read) reads each entry, buffering interpolated members with a
//!   hold sample at the node's known tick from before this snapshot;
//!   [`end_snapshot`](ClientInterpolation::end_snapshot) records an untruncated snapshot.
//! - **Frame** (`begin_frame`): [`advance`](ClientInterpolation::advance) the clock before
//!   receiving, then [`blend`](ClientInterpolation::blend) after: every buffer's sample at the
//!   render tick is written into its node.
//!
//! A node is known up to the newer of the last snapshot that carried it and the last
//! untruncated snapshot (which proves every absent node was still). Nothing here allocates
//! after a node's state is boxed at spawn.

use std::time::Duration;

use super::client::ClientNode;
use crate::interpolation::{InterpolationConfig, InterpolationTimeline};
use crate::replication::{ErasedInterp, RegisteredType};
use crate::scene::{NodeId, Scene};
use crate::wire::{DecodeError, NetReader};

/// A networked node with interpolated members, on a client.
struct InterpNode {
    net_id: u32,
    node: NodeId,
    /// The tick of the newest snapshot (or the spawn) that carried it.
    carried: u32,
    interp: Box<dyn ErasedInterp>,
}

/// The client side of interpolation (see the [module documentation](self)).
pub(crate) struct ClientInterpolation {
    /// Set when welcomed with interpolation enabled (boxed: the adaptive delay's statistics
    /// would make every client state large).
    timeline: Option<Box<InterpolationTimeline>>,
    /// Sorted by net id.
    nodes: Vec<InterpNode>,
    /// The newest untruncated snapshot applied.
    last_untruncated: u32,
}

impl ClientInterpolation {
    pub(crate) fn new() -> Self {
        Self {
            timeline: None,
            nodes: Vec::new(),
            last_untruncated: 0,
        }
    }

    /// Welcomed by a server running at `tick_rate`: interpolate if `config` enables it.
    pub(crate) fn start(&mut self, config: InterpolationConfig, tick_rate: u8) {
        self.timeline = config.enabled.then(|| {
            Box::new(InterpolationTimeline::new(
                config,
                u32::from(tick_rate.max(1)),
            ))
        });
    }

    /// The timeline, when interpolating.
    pub(crate) fn timeline(&self) -> Option<&InterpolationTimeline> {
        self.timeline.as_deref()
    }

    /// Follows the client's networked nodes (`nodes`, sorted by net id) after a spawn or a
    /// despawn: forgets nodes that are gone, and gives every new node whose type has
    /// interpolated members its state, starting from its current (spawn) value at `tick`.
    pub(crate) fn sync(&mut self, nodes: &[ClientNode], scene: &Scene, tick: u32) {
        if self.timeline.is_none() {
            return;
        }
        self.nodes.retain(|n| {
            scene.contains(n.node)
                && nodes
                    .binary_search_by_key(&n.net_id, |c| c.net_id)
                    .is_ok_and(|i| nodes[i].node == n.node)
        });
        for c in nodes {
            let Err(at) = self.nodes.binary_search_by_key(&c.net_id, |n| n.net_id) else {
                continue;
            };
            let interp = scene
                .value_info(c.node)
                .zip(scene.value_any(c.node))
                .and_then(|(ty, value)| ty.new_interp(value, tick));
            if let Some(interp) = interp {
                self.nodes.insert(
                    at,
                    InterpNode {
                        net_id: c.net_id,
                        node: c.node,
                        carried: tick,
                        interp,
                    },
                );
            }
        }
    }

    /// A snapshot of `tick` (not stale) is about to be applied: moves the clock. Returns
    /// whether it snapped, in which case every interpolated member was snapped to its newest
    /// sample and every buffer cleared.
    pub(crate) fn begin_snapshot(&mut self, scene: &mut Scene, tick: u32) -> bool {
        let Some(timeline) = &mut self.timeline else {
            return false;
        };
        if !timeline.on_snapshot(tick).must_clear_buffers() {
            return false;
        }
        for n in &mut self.nodes {
            if let Some(value) = scene.value_any_mut(n.node) {
                n.interp.snap(value);
            }
        }
        true
    }

    /// Reads the snapshot entry of `net_id` into `value` (of type `ty`): through its
    /// interpolation state when it has one, else [`RegisteredType::read`] (or
    /// [`RegisteredType::read_tracked`] when the type has `on_change` hooks), recording changed
    /// `on_change` members in `changed`.
    #[inline]
    pub(crate) fn read(
        &mut self,
        ty: &RegisteredType,
        net_id: u32,
        value: &mut dyn std::any::Any,
        r: &mut NetReader<'_>,
        tick: u32,
        changed: &mut [u64],
    ) -> Result<(), DecodeError> {
        let found = match self.nodes.is_empty() {
            true => Err(0),
            false => self.nodes.binary_search_by_key(&net_id, |n| n.net_id),
        };
        let Ok(i) = found else {
            return if ty.has_on_change() {
                ty.read_tracked(value, r, changed)
            } else {
                ty.read(value, r)
            };
        };
        let n = &mut self.nodes[i];
        let known = n.carried.max(self.last_untruncated);
        n.interp.read_buffered(value, r, known, tick, changed)?;
        n.carried = n.carried.max(tick);
        Ok(())
    }

    /// The snapshot of `tick` was applied; an untruncated one proves every node it did not
    /// carry was still up to `tick`.
    pub(crate) fn end_snapshot(&mut self, tick: u32, truncated: bool) {
        if !truncated {
            self.last_untruncated = self.last_untruncated.max(tick);
        }
    }

    /// A frame of `dt` began: advances the clock to now, before this frame's snapshots pull it
    /// (so that in steady state the estimate is the newest snapshot's tick, and arrivals are
    /// timed at the frame that received them).
    pub(crate) fn advance(&mut self, dt: Duration) {
        if let Some(timeline) = &mut self.timeline {
            timeline.advance(dt);
        }
    }

    /// After this frame's snapshots: writes every interpolated member's sample at the render
    /// tick into its node. Nothing before the first snapshot.
    pub(crate) fn blend(&mut self, scene: &mut Scene) {
        let Some(timeline) = &self.timeline else {
            return;
        };
        let Some(render_tick) = timeline.render_tick() else {
            return;
        };
        let max_extrapolation = timeline.max_extrapolation_ticks();
        for n in &self.nodes {
            if let Some(value) = scene.value_any_mut(n.node) {
                let known = n.carried.max(self.last_untruncated);
                n.interp.blend(value, render_tick, known, max_extrapolation);
            }
        }
    }
}
