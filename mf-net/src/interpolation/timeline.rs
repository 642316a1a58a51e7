//! [`InterpolationTimeline`]: the server clock, the delay and the configuration together.

use std::time::Duration;

use super::frame::FrameSnapshots;
use super::{AdaptiveDelay, ClockUpdate, InterpolationConfig, ServerClock};

/// A client's interpolation timeline: a [`ServerClock`], the delay (fixed, or an
/// [`AdaptiveDelay`] when [`InterpolationConfig::adaptive`] is set) and the limits, behind two
/// calls: [`advance`](Self::advance) once per frame and [`on_snapshot`](Self::on_snapshot) once
/// per arriving snapshot. [`render_tick`](Self::render_tick) and
/// [`max_extrapolation_ticks`](Self::max_extrapolation_ticks) are then what
/// [`InterpolationBuffer::sample`](super::InterpolationBuffer::sample) takes.
///
/// It times snapshot arrivals for the adaptive delay by its local time: the sum of the frame
/// times given to [`advance`](Self::advance) or, inside the runtime, the runtime's one frame
/// time (`now`) it is moved to each frame; it reads no clock and never allocates.
///
/// [`on_snapshot`](Self::on_snapshot) judges each snapshot on its own, as
/// [`ServerClock::on_snapshot`] does. The runtime, which advances the clock at the start of a
/// frame and then receives its snapshots, judges the clock against the newest snapshot of each
/// frame instead, so that the backlog a long frame receives (after a hitch of the client) does
/// not snap a clock that is right.
///
/// ```
/// use std::time::Duration;
/// use mf_net::interpolation::{InterpolationConfig, InterpolationTimeline};
///
/// let mut timeline = InterpolationTimeline::new(InterpolationConfig::default(), 20);
/// assert_eq!(timeline.render_tick(), None);
/// timeline.on_snapshot(100);
/// timeline.advance(Duration::from_millis(50)); // one tick at 20 Hz
/// // 101 − 0.1 s × 20 Hz.
/// assert!((timeline.render_tick().unwrap() - 99.0).abs() < 1e-9);
/// assert!((timeline.max_extrapolation_ticks() - 5.0).abs() < 1e-9);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct InterpolationTimeline {
    config: InterpolationConfig,
    clock: ServerClock,
    adaptive: Option<AdaptiveDelay>,
    /// The snapshots of the current frame, as the runtime takes them.
    frame: FrameSnapshots,
    /// The time this timeline was last moved to (on the runtime's frame clock inside the
    /// runtime; the sum of the `dt`s given when driven by [`advance`](Self::advance)).
    at: Duration,
    /// The value of `at` when the timeline started: [`now`](Self::now) counts from it.
    origin: Duration,
}

impl InterpolationTimeline {
    /// A timeline for a server running at `tick_rate` ticks per second (from its welcome).
    pub fn new(config: InterpolationConfig, tick_rate: u32) -> Self {
        Self::starting_at(config, tick_rate, Duration::ZERO)
    }

    /// A timeline started at `now` on the runtime's frame clock, which then moves it with
    /// [`advance_to`](Self::advance_to).
    pub(crate) fn starting_at(config: InterpolationConfig, tick_rate: u32, now: Duration) -> Self {
        Self {
            config,
            clock: ServerClock::new(tick_rate),
            adaptive: config
                .adaptive
                .map(|adaptive| AdaptiveDelay::new(adaptive, config.delay)),
            frame: FrameSnapshots::new(),
            at: now,
            origin: now,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &InterpolationConfig {
        &self.config
    }

    /// The server clock.
    pub fn clock(&self) -> &ServerClock {
        &self.clock
    }

    /// The adaptive delay, when [`InterpolationConfig::adaptive`] is set.
    pub fn adaptive(&self) -> Option<&AdaptiveDelay> {
        self.adaptive.as_ref()
    }

    /// The local time since the timeline started: the sum of the frame times given to
    /// [`advance`](Self::advance) (inside the runtime: the frame time it was moved to, less the
    /// frame time it started at).
    pub fn now(&self) -> Duration {
        self.at.saturating_sub(self.origin)
    }

    /// A frame passed: advances the local time and the server clock by `dt`.
    pub fn advance(&mut self, dt: Duration) {
        self.at = self.at.saturating_add(dt);
        self.advance_clock(dt);
    }

    /// A frame began at `now` on the runtime's frame clock (never earlier than the last):
    /// advances the server clock by the time since the last frame, before the frame's
    /// snapshots arrive ([`on_frame_snapshot`](Self::on_frame_snapshot)).
    pub(crate) fn advance_to(&mut self, now: Duration) {
        self.advance_clock(now.saturating_sub(self.at));
        self.at = now;
    }

    /// Advances the server clock by a frame of `dt`, which begins.
    fn advance_clock(&mut self, dt: Duration) {
        self.clock.advance(dt);
        self.frame.begin(&self.clock, dt);
    }

    /// A snapshot of `tick` arrived (now): updates the server clock and, for snapshots that
    /// are not stale, the adaptive delay's arrival statistics (forgotten when the clock
    /// snaps).
    ///
    /// When this returns [`ClockUpdate::Snapped`] the caller must snap every interpolated
    /// member to its newest sample and drop the older samples before applying the snapshot
    /// ([`must_clear_buffers`](ClockUpdate::must_clear_buffers),
    /// [`InterpolationBuffer::retain_newest`](super::InterpolationBuffer::retain_newest)).
    pub fn on_snapshot(&mut self, tick: u32) -> ClockUpdate {
        let update = self.clock.on_snapshot(tick);
        self.arrived(update);
        update
    }

    /// [`on_snapshot`](Self::on_snapshot) as the runtime calls it, in the frame that
    /// [`advance_to`](Self::advance_to) began: the clock is judged against the frame's newest
    /// snapshot (see `FrameSnapshots`), so that of the backlog of snapshots a long frame
    /// receives, the old ones do not snap it back or drag it behind. A stall of the server
    /// still snaps it, at the first snapshot after it.
    pub(crate) fn on_frame_snapshot(&mut self, tick: u32) -> ClockUpdate {
        let update = self.frame.on_snapshot(&mut self.clock, tick);
        self.arrived(update);
        update
    }

    /// A snapshot arrived now and did `update` to the clock: unless it was stale, an arrival
    /// for the adaptive delay, whose statistics start over when the clock snapped.
    fn arrived(&mut self, update: ClockUpdate) {
        let now = self.now();
        if let Some(adaptive) = &mut self.adaptive {
            match update {
                ClockUpdate::Stale => {}
                ClockUpdate::Snapped { .. } => {
                    adaptive.reset();
                    adaptive.on_snapshot(now);
                }
                ClockUpdate::Started | ClockUpdate::Pulled { .. } => {
                    adaptive.on_snapshot(now);
                }
            }
        }
    }

    /// The interpolation delay in use: adaptive when configured, else
    /// [`InterpolationConfig::delay`].
    pub fn delay(&self) -> Duration {
        match &self.adaptive {
            Some(adaptive) => adaptive.delay(),
            None => self.config.delay,
        }
    }

    /// The tick at which to sample interpolation buffers this frame (estimated server tick
    /// minus the delay), once a snapshot has arrived. It is on a continuous timeline that
    /// counts on past `u32::MAX` when the server's tick wraps (see [`ServerClock::estimate`]).
    pub fn render_tick(&self) -> Option<f64> {
        self.clock.render_tick(self.delay())
    }

    /// [`InterpolationConfig::max_extrapolation`] in ticks at the server's rate.
    pub fn max_extrapolation_ticks(&self) -> f64 {
        self.clock.ticks(self.config.max_extrapolation)
    }

    /// Forgets the clock, the arrival statistics and the local time, keeping the
    /// configuration and tick rate (after a disconnect).
    pub fn reset(&mut self) {
        *self = Self::new(self.config, self.clock.tick_rate());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::interpolation::AdaptiveDelayConfig;

    #[test]
    fn fixed_delay_render_tick() {
        let mut t = InterpolationTimeline::new(InterpolationConfig::default(), 60);
        assert!(t.adaptive().is_none());
        assert_eq!(t.on_snapshot(600), ClockUpdate::Started);
        t.advance(Duration::from_millis(100));
        assert_eq!(t.now(), Duration::from_millis(100));
        assert!((t.clock().estimate().unwrap() - 606.0).abs() < 1e-9);
        assert!((t.render_tick().unwrap() - 600.0).abs() < 1e-9);
        assert!((t.max_extrapolation_ticks() - 15.0).abs() < 1e-9);
        assert_eq!(t.delay(), InterpolationConfig::DEFAULT_DELAY);
        assert_eq!(t.on_snapshot(600), ClockUpdate::Stale);
    }

    #[test]
    fn adaptive_delay_follows_arrivals_and_forgets_on_snap() {
        let config = InterpolationConfig {
            adaptive: Some(AdaptiveDelayConfig::default()),
            ..InterpolationConfig::default()
        };
        let mut t = InterpolationTimeline::new(config, 20);
        assert_eq!(t.delay(), Duration::from_millis(100));
        // 20 Hz, one snapshot every 50 ms: three intervals are 150 ms.
        let mut tick = 1000;
        for _ in 0..100 {
            t.on_snapshot(tick);
            tick += 1;
            t.advance(Duration::from_millis(50));
        }
        let a = t.adaptive().unwrap();
        assert!(a.target().abs_diff(Duration::from_millis(150)) < Duration::from_micros(1));
        assert_eq!(t.delay(), a.delay());
        assert!((t.render_tick().unwrap() - (f64::from(tick) - 0.15 * 20.0)).abs() < 0.1);
        // Stale snapshots are not arrivals.
        let before = t.adaptive().cloned();
        t.on_snapshot(tick - 5);
        assert_eq!(t.adaptive().cloned(), before);
        // A 2 s stall of the server: the clock snaps and the statistics start over.
        t.advance(Duration::from_secs(2));
        assert!(t.on_snapshot(tick).must_clear_buffers());
        assert_eq!(t.adaptive().unwrap().mean_interval(), None);
        t.reset();
        assert_eq!(t.render_tick(), None);
        assert_eq!(t.now(), Duration::ZERO);
    }

    #[test]
    fn the_runtime_judges_the_backlog_of_a_long_frame_by_its_newest_snapshot() {
        let config = InterpolationConfig::default();
        let mut by_frame = InterpolationTimeline::starting_at(config, 30, Duration::ZERO);
        let mut one_by_one = by_frame.clone();
        let tick_time = Duration::from_secs(1) / 30;
        let mut now = Duration::ZERO;
        for tick in 100..200 {
            now += tick_time;
            by_frame.advance_to(now);
            one_by_one.advance_to(now);
            assert!(!by_frame.on_frame_snapshot(tick).must_clear_buffers());
            assert!(!one_by_one.on_snapshot(tick).must_clear_buffers());
        }
        assert_eq!(by_frame.render_tick(), one_by_one.render_tick());
        // A frame of 2 s receives the 60 snapshots sent meanwhile.
        now += tick_time * 60;
        by_frame.advance_to(now);
        one_by_one.advance_to(now);
        let by_frame_snaps = (200..260)
            .filter(|&tick| by_frame.on_frame_snapshot(tick).must_clear_buffers())
            .count();
        let one_by_one_snaps = (200..260)
            .filter(|&tick| one_by_one.on_snapshot(tick).must_clear_buffers())
            .count();
        // Right where it was: pulled 10 % of the way from there towards the newest.
        assert_eq!(by_frame_snaps, 0);
        assert!((by_frame.clock().estimate().unwrap() - 259.0).abs() < 1.0);
        // One by one, the oldest snaps it back and the others drag it along 9 ticks behind.
        assert_eq!(one_by_one_snaps, 1);
        assert!(one_by_one.clock().estimate().unwrap() < 251.0);
    }

    #[test]
    fn moved_to_frame_times_it_equals_one_advanced_by_their_differences() {
        let config = InterpolationConfig {
            adaptive: Some(AdaptiveDelayConfig::default()),
            ..InterpolationConfig::default()
        };
        let mut by_dt = InterpolationTimeline::new(config, 30);
        let start = Duration::from_millis(12_345);
        let mut by_now = InterpolationTimeline::starting_at(config, 30, start);
        let mut now = start;
        for (i, ms) in [16_u64, 17, 33, 0, 250, 16, 17]
            .into_iter()
            .cycle()
            .take(60)
            .enumerate()
        {
            let dt = Duration::from_millis(ms);
            now += dt;
            by_dt.advance(dt);
            by_now.advance_to(now);
            if i % 2 == 0 {
                let tick = 500 + u32::try_from(i).unwrap();
                assert_eq!(by_dt.on_snapshot(tick), by_now.on_snapshot(tick));
            }
            assert_eq!(by_dt.now(), by_now.now());
            assert_eq!(by_dt.render_tick(), by_now.render_tick());
            assert_eq!(by_dt.adaptive(), by_now.adaptive());
        }
    }
}
