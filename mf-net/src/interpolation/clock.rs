//! [`ServerClock`]: the client's estimate of the server tick.

use std::time::Duration;

use crate::tick::{tick_after, unwrap_near};

/// The client's estimate of the server's current tick, from which render ticks are derived.
///
/// It [advances](Self::advance) with frame time at the server's tick rate and is pulled
/// [`PULL`](Self::PULL) (10 %) of the way towards the tick of every
/// [snapshot](Self::on_snapshot). When a snapshot's tick is more than one second of ticks away
/// from the estimate (a stall on either side), the estimate **snaps** to it and
/// [`ClockUpdate::Snapped`] tells the caller to snap its interpolated members to their newest
/// samples, dropping the older ones ([`InterpolationBuffer::retain_newest`]).
///
/// [`InterpolationBuffer::retain_newest`]: super::InterpolationBuffer::retain_newest
///
/// The estimate follows snapshot ticks as they arrive, so it runs about the one-way latency
/// behind the server; render ticks are a delay further back, where samples exist.
///
/// ```
/// use std::time::Duration;
/// use mf_net::interpolation::{ClockUpdate, ServerClock};
///
/// let mut clock = ServerClock::new(60);
/// assert_eq!(clock.estimate(), None);
/// assert_eq!(clock.on_snapshot(600), ClockUpdate::Started);
/// clock.advance(Duration::from_millis(50)); // 3 ticks
/// assert!((clock.estimate().unwrap() - 603.0).abs() < 1e-9);
/// // 0.1 s of delay is 6 ticks at 60 Hz.
/// assert!((clock.render_tick(Duration::from_millis(100)).unwrap() - 597.0).abs() < 1e-9);
/// // A snapshot 10 ticks ahead pulls the estimate 1 tick forward.
/// assert!(matches!(clock.on_snapshot(613), ClockUpdate::Pulled { .. }));
/// assert!((clock.estimate().unwrap() - 604.0).abs() < 1e-9);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ServerClock {
    tick_rate: u32,
    /// The estimated server tick; `None` until the first snapshot.
    estimate: Option<f64>,
    /// The newest snapshot tick seen.
    newest: Option<u32>,
}

/// What a snapshot did to a [`ServerClock`] ([`ServerClock::on_snapshot`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClockUpdate {
    /// The first snapshot: the estimate starts at its tick.
    Started,
    /// The estimate was pulled [`PULL`](ServerClock::PULL) of the way towards the tick.
    Pulled {
        /// Snapshot tick minus the estimate before the pull, in ticks (positive: the estimate
        /// was behind).
        error: f64,
    },
    /// The estimate was more than one second of ticks off, and was set to the tick. Render
    /// ticks jumped with it: the caller **must snap** each interpolated member to its newest
    /// sample and drop the older samples
    /// ([`InterpolationBuffer::retain_newest`](super::InterpolationBuffer::retain_newest)),
    /// keeping the newest at its tick (a server tick, still right).
    Snapped {
        /// Snapshot tick minus the estimate before the snap, in ticks.
        error: f64,
    },
    /// The tick is not newer than one seen before (a reordered or duplicated snapshot): the
    /// estimate is unchanged.
    Stale,
}

impl ClockUpdate {
    /// Whether the interpolation buffers must be snapped to their newest samples
    /// ([`Snapped`](Self::Snapped)).
    pub fn must_clear_buffers(self) -> bool {
        matches!(self, Self::Snapped { .. })
    }
}

impl ServerClock {
    /// The fraction of the error to a snapshot's tick that each snapshot removes.
    pub const PULL: f64 = 0.1;

    /// A clock for a server running at `tick_rate` ticks per second (at least 1). It has no
    /// estimate until the first [snapshot](Self::on_snapshot).
    pub fn new(tick_rate: u32) -> Self {
        Self {
            tick_rate: tick_rate.max(1),
            estimate: None,
            newest: None,
        }
    }

    /// The server's tick rate, in ticks per second.
    pub fn tick_rate(&self) -> u32 {
        self.tick_rate
    }

    /// The estimated server tick (fractional), once a snapshot has arrived. It is on a
    /// continuous timeline that starts at the first snapshot's tick and counts on past
    /// `u32::MAX` when the server's tick wraps (a snapshot's tick counts as its value nearest
    /// the estimate), so render ticks never jump back;
    /// [`InterpolationBuffer::sample`](super::InterpolationBuffer::sample) takes them so.
    pub fn estimate(&self) -> Option<f64> {
        self.estimate
    }

    /// The newest snapshot tick seen.
    pub fn newest_snapshot(&self) -> Option<u32> {
        self.newest
    }

    /// The tick at which to sample interpolation buffers: `estimate − delay · tick_rate`, on
    /// the estimate's continuous timeline (past `u32::MAX` after the wrap).
    pub fn render_tick(&self, delay: Duration) -> Option<f64> {
        self.estimate.map(|e| e - self.ticks(delay))
    }

    /// `duration` in (fractional) ticks at the server's rate.
    pub fn ticks(&self, duration: Duration) -> f64 {
        duration.as_secs_f64() * f64::from(self.tick_rate)
    }

    /// Moves the estimate forward by `dt` (a frame's time) at the server's tick rate. Does
    /// nothing before the first snapshot.
    pub fn advance(&mut self, dt: Duration) {
        let ticks = self.ticks(dt);
        if let Some(estimate) = &mut self.estimate {
            *estimate += ticks;
        }
    }

    /// Takes a snapshot's tick into account: starts the estimate, pulls it
    /// [`PULL`](Self::PULL) of the way towards `tick`, or snaps to it when the error is over
    /// one second of ticks (then the caller must snap its buffers). Ticks not newer than one
    /// seen before (serial-number order: `0` is newer than `u32::MAX`) are
    /// [`Stale`](ClockUpdate::Stale) and ignored.
    ///
    /// Call it for every snapshot that arrives, before applying it (so that buffers snapped
    /// to their newest samples then receive the snapshot's values after them).
    pub fn on_snapshot(&mut self, tick: u32) -> ClockUpdate {
        if !self.accept(tick) {
            return ClockUpdate::Stale;
        }
        let Some(estimate) = self.estimate else {
            self.start(tick);
            return ClockUpdate::Started;
        };
        self.correct(tick, estimate, self.one_second())
    }

    /// One second in ticks: the error beyond which the estimate snaps.
    pub(crate) fn one_second(&self) -> f64 {
        f64::from(self.tick_rate)
    }

    /// Records `tick` as the newest snapshot tick seen. Returns `false`, and changes nothing,
    /// when it is not newer than one seen before (serial-number order).
    pub(crate) fn accept(&mut self, tick: u32) -> bool {
        if self.newest.is_some_and(|newest| !tick_after(tick, newest)) {
            return false;
        }
        self.newest = Some(tick);
        true
    }

    /// Sets the estimate to `tick` where there was none (the first snapshot).
    pub(crate) fn start(&mut self, tick: u32) {
        self.estimate = Some(f64::from(tick));
    }

    /// Moves the estimate for a snapshot of `tick` judged against the estimate `from`: pulled
    /// [`PULL`](Self::PULL) of the way from `from` towards the tick, or
    /// [snapped](Self::snap_to) to it when it is more than one second of ticks ahead of `from`
    /// or more than `behind` ticks behind.
    pub(crate) fn correct(&mut self, tick: u32, from: f64, behind: f64) -> ClockUpdate {
        let error = unwrap_near(tick, from) - from;
        if error > self.one_second() || error < -behind {
            let error = self.snap_to(tick, from);
            return ClockUpdate::Snapped { error };
        }
        self.estimate = Some(from + Self::PULL * error);
        ClockUpdate::Pulled { error }
    }

    /// Sets the estimate to `tick` (its value nearest `from`, the estimate it is judged
    /// against). Returns the error: the tick minus `from`.
    pub(crate) fn snap_to(&mut self, tick: u32, from: f64) -> f64 {
        let target = unwrap_near(tick, from);
        self.estimate = Some(target);
        target - from
    }

    /// Forgets the estimate and the ticks seen, as [`new`](Self::new) (after a disconnect).
    pub fn reset(&mut self) {
        self.estimate = None;
        self.newest = None;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const FRAME: Duration = Duration::from_micros(16_667);

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn starts_on_the_first_snapshot_and_advances_at_the_tick_rate() {
        let mut clock = ServerClock::new(30);
        clock.advance(Duration::from_secs(5));
        assert_eq!(clock.estimate(), None, "nothing to advance yet");
        assert_eq!(clock.render_tick(Duration::ZERO), None);
        assert_eq!(clock.on_snapshot(1000), ClockUpdate::Started);
        assert_eq!(clock.estimate(), Some(1000.0));
        clock.advance(Duration::from_millis(500));
        assert!(close(clock.estimate().unwrap(), 1015.0, 1e-9));
        assert!(close(
            clock.render_tick(Duration::from_millis(100)).unwrap(),
            1012.0,
            1e-9
        ));
        assert_eq!(clock.tick_rate(), 30);
        assert_eq!(ServerClock::new(0).tick_rate(), 1);
    }

    #[test]
    fn pulls_ten_percent_towards_each_snapshot() {
        let mut clock = ServerClock::new(60);
        clock.on_snapshot(100);
        assert_eq!(clock.on_snapshot(120), ClockUpdate::Pulled { error: 20.0 });
        assert!(close(clock.estimate().unwrap(), 102.0, 1e-12));
        let ClockUpdate::Pulled { error } = clock.on_snapshot(121) else {
            panic!("pulled");
        };
        assert!(close(error, 19.0, 1e-12));
        assert!(close(clock.estimate().unwrap(), 103.9, 1e-12));
        // Ahead of the snapshots: pulled back.
        let mut clock = ServerClock::new(60);
        clock.on_snapshot(100);
        clock.advance(Duration::from_millis(500)); // 130
        clock.on_snapshot(101);
        assert!(close(clock.estimate().unwrap(), 127.1, 1e-9));
    }

    #[test]
    fn stale_ticks_are_ignored() {
        let mut clock = ServerClock::new(60);
        clock.on_snapshot(100);
        clock.on_snapshot(110);
        let before = clock.estimate();
        assert_eq!(clock.on_snapshot(110), ClockUpdate::Stale);
        assert_eq!(clock.on_snapshot(50), ClockUpdate::Stale);
        assert_eq!(clock.estimate(), before);
        assert_eq!(clock.newest_snapshot(), Some(110));
    }

    #[test]
    fn snaps_only_beyond_one_second_of_ticks() {
        let mut clock = ServerClock::new(60);
        clock.on_snapshot(100);
        // Exactly one second off: still pulled.
        assert!(!clock.on_snapshot(160).must_clear_buffers());
        let mut clock = ServerClock::new(60);
        clock.on_snapshot(100);
        let update = clock.on_snapshot(161);
        assert_eq!(update, ClockUpdate::Snapped { error: 61.0 });
        assert!(update.must_clear_buffers());
        assert_eq!(clock.estimate(), Some(161.0));
        // Behind by more than a second (the client advanced through a server stall).
        clock.advance(Duration::from_secs(2));
        assert!(clock.on_snapshot(162).must_clear_buffers());
        assert_eq!(clock.estimate(), Some(162.0));
    }

    #[test]
    fn converges_to_regular_snapshots() {
        let mut clock = ServerClock::new(60);
        clock.on_snapshot(0);
        // Started 20 ticks late: the first snapshot arrived while the server was at 20.
        let mut server = 20.0_f64;
        let mut last = 0;
        for _ in 0..600 {
            clock.advance(FRAME);
            server += FRAME.as_secs_f64() * 60.0;
            if server.floor() as u32 > last {
                last = server.floor() as u32;
                clock.on_snapshot(last);
            }
        }
        let error = clock.estimate().unwrap() - server;
        assert!(error.abs() < 1.0, "error {error}");
        let mut reset = clock.clone();
        reset.reset();
        assert_eq!(reset, ServerClock::new(60));
    }

    #[test]
    fn counts_on_past_the_wrap() {
        let mut clock = ServerClock::new(60);
        clock.on_snapshot(u32::MAX - 1);
        let mut last = u32::MAX - 1;
        for _ in 0..120 {
            clock.advance(Duration::from_secs(1) / 60);
            last = last.wrapping_add(1);
            let update = clock.on_snapshot(last);
            assert!(matches!(update, ClockUpdate::Pulled { .. }), "{update:?}");
        }
        assert_eq!(last, 118);
        let wrap = 4_294_967_296.0;
        assert!(close(clock.estimate().unwrap(), wrap + 118.0, 1e-6));
        // A snapshot from before the wrap is stale now.
        assert_eq!(clock.on_snapshot(u32::MAX), ClockUpdate::Stale);
    }
}
