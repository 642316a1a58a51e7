//! [`AdaptiveDelay`]: an interpolation delay that follows how snapshots actually arrive.

use std::time::Duration;

use super::AdaptiveDelayConfig;

/// How many arrival intervals the statistics cover.
const WINDOW: usize = 32;
/// How many intervals are needed before the delay adapts.
const MIN_INTERVALS: usize = 8;
/// An interval longer than this (seconds) is a stall, not spacing or jitter: it is not counted
/// (the [`ServerClock`](super::ServerClock) snaps on such stalls).
const STALL: f64 = 1.0;
/// How fast the delay moves towards its target, in seconds of delay per second of time: the
/// render tick runs at most 10 % slower or faster while the delay adapts, instead of jumping.
const SLEW: f64 = 0.1;

/// An interpolation delay derived from the observed spacing and jitter of snapshot arrivals
/// (beyond the spec), so that low tick rates and bad links buffer enough to interpolate rather
/// than extrapolate, and good links do not wait longer than they need.
///
/// It keeps the last 32 intervals between [arrivals](Self::on_snapshot) (a fixed array; it never
/// allocates) and aims at
///
/// ```text
/// target = intervals × mean interval + jitter_factor × standard deviation of the intervals
/// ```
///
/// clamped to the configured [`min`](AdaptiveDelayConfig::min) and
/// [`max`](AdaptiveDelayConfig::max) (by default 3 intervals plus 2 standard deviations,
/// 50 ms to 500 ms). Lost snapshots lengthen intervals and raise the target, as they should.
///
/// The [delay](Self::delay) moves towards the target at most 0.1 s per second of arrivals, so
/// render ticks slow down or speed up by up to 10 % instead of jumping. It starts at the
/// `initial` delay and adapts once 8 intervals have been seen. Intervals over one second are
/// stalls and are not counted.
///
/// ```
/// use std::time::Duration;
/// use mf_net::interpolation::{AdaptiveDelay, AdaptiveDelayConfig};
///
/// let mut delay = AdaptiveDelay::new(AdaptiveDelayConfig::default(), Duration::from_millis(100));
/// // Snapshots every 50 ms (20 Hz), perfectly regular, for 10 s.
/// for i in 0..200u64 {
///     delay.on_snapshot(Duration::from_millis(50 * i));
/// }
/// let mean = delay.mean_interval().unwrap();
/// assert!(mean.abs_diff(Duration::from_millis(50)) < Duration::from_micros(1));
/// // Three intervals, no jitter.
/// assert!(delay.target().abs_diff(Duration::from_millis(150)) < Duration::from_micros(1));
/// assert_eq!(delay.delay(), delay.target()); // reached, at 10 ms per 100 ms
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveDelay {
    config: AdaptiveDelayConfig,
    /// The last intervals between arrivals, in seconds: a ring of which `count` are valid,
    /// the next written at `next`.
    intervals: [f64; WINDOW],
    count: usize,
    next: usize,
    last_arrival: Option<Duration>,
    /// The statistics of `intervals`, in seconds, once `MIN_INTERVALS` are valid.
    stats: Option<(f64, f64)>,
    target: f64,
    current: f64,
}

impl AdaptiveDelay {
    /// A delay within `config`'s bounds, starting at `initial` (clamped to them), typically
    /// [`InterpolationConfig::delay`](super::InterpolationConfig::delay).
    pub fn new(config: AdaptiveDelayConfig, initial: Duration) -> Self {
        let mut delay = Self {
            config,
            intervals: [0.0; WINDOW],
            count: 0,
            next: 0,
            last_arrival: None,
            stats: None,
            target: 0.0,
            current: 0.0,
        };
        let initial = delay.clamp(initial.as_secs_f64());
        delay.target = initial;
        delay.current = initial;
        delay
    }

    /// The configuration.
    pub fn config(&self) -> &AdaptiveDelayConfig {
        &self.config
    }

    /// Records the arrival of a snapshot at local time `now` (any fixed origin, e.g. the time
    /// since the client started; non-decreasing). Call it for snapshots that are applied, not
    /// for stale or duplicated ones.
    pub fn on_snapshot(&mut self, now: Duration) {
        let Some(last) = self.last_arrival.replace(now) else {
            return;
        };
        let interval = now.saturating_sub(last).as_secs_f64();
        if interval <= STALL {
            self.intervals[self.next] = interval;
            self.next = (self.next + 1) % WINDOW;
            self.count = (self.count + 1).min(WINDOW);
            self.update_target();
        }
        let step = SLEW * interval.min(STALL);
        self.current = if self.current < self.target {
            (self.current + step).min(self.target)
        } else {
            (self.current - step).max(self.target)
        };
    }

    /// The delay to use now (moving towards [`target`](Self::target)).
    pub fn delay(&self) -> Duration {
        Duration::from_secs_f64(self.current)
    }

    /// The delay the observed arrivals call for, within the bounds.
    pub fn target(&self) -> Duration {
        Duration::from_secs_f64(self.target)
    }

    /// The mean interval between arrivals, once enough have been seen to adapt.
    pub fn mean_interval(&self) -> Option<Duration> {
        self.stats.map(|(mean, _)| Duration::from_secs_f64(mean))
    }

    /// The jitter (standard deviation of the intervals between arrivals), once enough have been
    /// seen to adapt.
    pub fn jitter(&self) -> Option<Duration> {
        self.stats
            .map(|(_, deviation)| Duration::from_secs_f64(deviation))
    }

    /// Forgets the observed arrivals (after a stall, when the clock snapped, or a reconnect);
    /// the delay stays where it is until enough new intervals have been seen.
    pub fn reset(&mut self) {
        self.count = 0;
        self.next = 0;
        self.last_arrival = None;
        self.stats = None;
        self.target = self.current;
    }

    /// Recomputes the statistics and the target from the valid intervals.
    fn update_target(&mut self) {
        if self.count < MIN_INTERVALS {
            return;
        }
        let intervals = &self.intervals[..self.count];
        let n = self.count as f64;
        let mean = intervals.iter().sum::<f64>() / n;
        let variance = intervals
            .iter()
            .map(|x| (x - mean) * (x - mean))
            .sum::<f64>()
            / n;
        let deviation = variance.sqrt();
        self.stats = Some((mean, deviation));
        self.target =
            self.clamp(self.config.intervals * mean + self.config.jitter_factor * deviation);
    }

    /// `seconds` within the configured bounds (`max` below `min` counts as `min`; NaN, from
    /// unusable weights, as `max`).
    fn clamp(&self, seconds: f64) -> f64 {
        let min = self.config.min.as_secs_f64();
        let max = self.config.max.as_secs_f64().max(min);
        if seconds.is_nan() {
            max
        } else {
            seconds.clamp(min, max)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    /// Within a microsecond (the statistics are computed in `f64` seconds).
    #[track_caller]
    fn assert_near(actual: Option<Duration>, expected: Duration) {
        let actual = actual.unwrap();
        assert!(
            actual.abs_diff(expected) < Duration::from_micros(1),
            "{actual:?} vs {expected:?}"
        );
    }

    fn feed(delay: &mut AdaptiveDelay, start: Duration, intervals: &[u64]) -> Duration {
        let mut now = start;
        delay.on_snapshot(now);
        for &i in intervals {
            now += ms(i);
            delay.on_snapshot(now);
        }
        now
    }

    #[test]
    fn waits_for_enough_intervals() {
        let mut d = AdaptiveDelay::new(AdaptiveDelayConfig::default(), ms(100));
        feed(&mut d, Duration::ZERO, &[10; MIN_INTERVALS - 1]);
        assert_eq!(d.target(), ms(100));
        assert_eq!(d.mean_interval(), None);
        assert_eq!(d.jitter(), None);
        d.on_snapshot(ms(10 * MIN_INTERVALS as u64));
        assert_near(d.mean_interval(), ms(10));
        assert_near(d.jitter(), Duration::ZERO);
        assert_eq!(
            d.target(),
            ms(50),
            "3 × 10 ms, clamped up to the 50 ms minimum"
        );
    }

    #[test]
    fn adds_jitter_and_respects_bounds() {
        let config = AdaptiveDelayConfig {
            min: ms(20),
            max: ms(300),
            ..AdaptiveDelayConfig::default()
        };
        let mut d = AdaptiveDelay::new(config, ms(100));
        // Alternating 20 / 60 ms: mean 40, standard deviation 20.
        let pattern: Vec<u64> = (0..WINDOW)
            .map(|i| if i % 2 == 0 { 20 } else { 60 })
            .collect();
        feed(&mut d, Duration::ZERO, &pattern);
        assert_near(d.mean_interval(), ms(40));
        assert_near(d.jitter(), ms(20));
        assert_near(Some(d.target()), ms(160));
        // Above the maximum: clamped.
        let mut d = AdaptiveDelay::new(config, ms(100));
        feed(&mut d, Duration::ZERO, &[200; WINDOW]);
        assert_eq!(d.target(), ms(300));
        // An initial delay outside the bounds is clamped too.
        assert_eq!(AdaptiveDelay::new(config, ms(5)).delay(), ms(20));
        assert_eq!(AdaptiveDelay::new(config, ms(900)).delay(), ms(300));
        // max < min counts as min.
        let inverted = AdaptiveDelayConfig {
            min: ms(80),
            max: ms(10),
            ..config
        };
        assert_eq!(AdaptiveDelay::new(inverted, ms(100)).delay(), ms(80));
        // Unusable weights cannot panic.
        let nan = AdaptiveDelayConfig {
            intervals: f64::NAN,
            ..config
        };
        let mut d = AdaptiveDelay::new(nan, ms(100));
        feed(&mut d, Duration::ZERO, &[10; WINDOW]);
        assert_eq!(d.target(), ms(300));
        let negative = AdaptiveDelayConfig {
            intervals: -5.0,
            ..config
        };
        let mut d = AdaptiveDelay::new(negative, ms(100));
        feed(&mut d, Duration::ZERO, &[10; WINDOW]);
        assert_eq!(d.target(), ms(20));
    }

    #[test]
    fn delay_slews_towards_the_target() {
        let mut d = AdaptiveDelay::new(AdaptiveDelayConfig::default(), ms(100));
        let mut now = feed(&mut d, Duration::ZERO, &[100; MIN_INTERVALS]);
        assert_near(Some(d.target()), ms(300));
        // 10 ms of delay per 100 ms interval.
        assert!(
            (d.delay().as_secs_f64() - 0.110).abs() < 1e-9,
            "{:?}",
            d.delay()
        );
        let mut previous = d.delay();
        while d.delay() < d.target() {
            now += ms(100);
            d.on_snapshot(now);
            let step = d.delay().as_secs_f64() - previous.as_secs_f64();
            assert!(step > 0.0 && step <= 0.010 + 1e-9, "step {step}");
            previous = d.delay();
        }
        assert!(
            now <= Duration::from_secs(3),
            "reached the target at {now:?}"
        );
        assert_eq!(d.delay(), d.target());
        assert_near(Some(d.delay()), ms(300));
    }

    #[test]
    fn stalls_are_not_counted_and_reset_forgets() {
        let mut d = AdaptiveDelay::new(AdaptiveDelayConfig::default(), ms(100));
        let now = feed(&mut d, Duration::ZERO, &[20; WINDOW]);
        let before = (d.mean_interval(), d.jitter());
        d.on_snapshot(now + Duration::from_secs(2));
        assert_eq!(
            (d.mean_interval(), d.jitter()),
            before,
            "a stall is not an interval"
        );
        // Time going backwards counts as a zero interval rather than panicking.
        d.on_snapshot(now);
        assert!(d.mean_interval().unwrap() < ms(20));
        let current = d.delay();
        d.reset();
        assert_eq!(d.mean_interval(), None);
        assert_eq!(d.delay(), current);
        assert_eq!(d.target(), current);
        assert_eq!(d.config(), &AdaptiveDelayConfig::default());
    }
}
