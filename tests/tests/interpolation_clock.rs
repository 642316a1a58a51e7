#![allow(clippy::unwrap_used)]
//! `ServerClock` and `AdaptiveDelay`, deterministic: the clock converges to the server tick
//! under jittered, lossy, reordered snapshot arrival and variable frame times, and recovers
//! from a hitch; it snaps (once) after a 2 s server stall and after the client was suspended
//! for 2 s, but not through a 2 s outage of the link, nor when frames stop advancing it while
//! snapshots still arrive; the adaptive delay grows with jitter and loss and stays within its
//! bounds.

use std::time::Duration;

use mf_net::interpolation::{AdaptiveDelay, AdaptiveDelayConfig, ClockUpdate, ServerClock};

/// splitmix64: a small deterministic generator, so that every run is the same.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..1`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A server at `rate` Hz whose snapshots reach a client over a lossy, jittery link, and the
/// client's clock fed with them at each (variable-length) frame.
struct Run {
    rate: f64,
    rng: Rng,
    loss: f64,
    /// Seconds.
    latency: f64,
    /// Seconds, uniform per snapshot.
    jitter: f64,
    /// Client time and the server's next tick.
    time: f64,
    next_tick: u32,
    /// The server's ticks pause while `time` is in this range (seconds).
    server_stall: Option<(f64, f64)>,
    /// Snapshots sent in this range (seconds) are lost.
    outage: Option<(f64, f64)>,
    /// Seconds of stall so far: server ticks are `(time − stalled) × rate`.
    stalled: f64,
    in_flight: Vec<(f64, u32)>,
    clock: ServerClock,
    updates: Vec<(f64, ClockUpdate)>,
}

impl Run {
    fn new(rate: u32, seed: u64) -> Self {
        Self {
            rate: f64::from(rate),
            rng: Rng(seed),
            loss: 0.2,
            latency: 0.08,
            jitter: 0.04,
            time: 0.0,
            next_tick: 1,
            server_stall: None,
            outage: None,
            stalled: 0.0,
            in_flight: Vec::new(),
            clock: ServerClock::new(rate),
            updates: Vec::new(),
        }
    }

    /// The server's current (fractional) tick.
    fn server_tick(&self) -> f64 {
        (self.time - self.stalled) * self.rate
    }

    /// One client frame of `dt` seconds: server ticks, arrivals, then the clock advances by
    /// `advance` (normally `dt`).
    fn frame(&mut self, dt: f64, advance: f64) {
        let before = self.time;
        self.time += dt;
        if let Some((from, to)) = self.server_stall {
            let overlap = self.time.min(to) - before.max(from);
            if overlap > 0.0 {
                self.stalled += overlap;
            }
        }
        while f64::from(self.next_tick) <= self.server_tick() {
            let tick = self.next_tick;
            self.next_tick += 1;
            let sent = f64::from(tick) / self.rate + self.stalled;
            let lost = self.rng.unit() < self.loss;
            let arrival = sent + self.latency + self.jitter * self.rng.unit();
            let out = self
                .outage
                .is_some_and(|(from, to)| sent >= from && sent < to);
            if !lost && !out {
                self.in_flight.push((arrival, tick));
            }
        }
        self.in_flight.sort_by(|a, b| a.0.total_cmp(&b.0));
        let arrived = self.in_flight.partition_point(|p| p.0 <= self.time);
        for (_, tick) in self.in_flight.drain(..arrived) {
            let update = self.clock.on_snapshot(tick);
            self.updates.push((self.time, update));
        }
        self.clock.advance(Duration::from_secs_f64(advance));
    }

    /// Frames of 8..25 ms until `until` seconds; returns the clock's error (estimate minus
    /// server tick) after each frame.
    fn run_until(&mut self, until: f64) -> Vec<(f64, f64)> {
        let mut errors = Vec::new();
        while self.time < until {
            let dt = 0.008 + 0.017 * self.rng.unit();
            self.frame(dt, dt);
            if let Some(estimate) = self.clock.estimate() {
                errors.push((self.time, estimate - self.server_tick()));
            }
        }
        errors
    }

    fn snaps(&self) -> Vec<f64> {
        self.updates
            .iter()
            .filter(|(_, u)| u.must_clear_buffers())
            .map(|(time, _)| *time)
            .collect()
    }
}

/// The mean and the largest deviation from it of the errors after `from` seconds.
fn settle(errors: &[(f64, f64)], from: f64) -> (f64, f64) {
    let late: Vec<f64> = errors
        .iter()
        .filter(|(t, _)| *t >= from)
        .map(|(_, e)| *e)
        .collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    let swing = late.iter().map(|e| (e - mean).abs()).fold(0.0, f64::max);
    (mean, swing)
}

#[test]
fn clock_converges_to_the_server_tick_under_jittered_arrival() {
    for (rate, seed) in [(60, 1), (60, 2), (30, 3), (20, 4), (128, 5)] {
        let mut run = Run::new(rate, seed);
        let errors = run.run_until(20.0);
        assert!(run.snaps().is_empty(), "{rate} Hz: snapped");
        if 1.0 / f64::from(rate) < run.jitter {
            // Snapshots overtook each other; the late ones were ignored.
            assert!(run.updates.iter().any(|(_, u)| *u == ClockUpdate::Stale));
        }
        // The estimate follows the ticks of arriving snapshots: the server tick less the
        // link's latency (between the minimum and the maximum), steadily.
        let (mean, swing) = settle(&errors, 5.0);
        let r = f64::from(rate);
        let (low, high) = (
            -(run.latency + run.jitter) * r - 0.5,
            -run.latency * r + 0.5,
        );
        assert!(
            mean > low && mean < high,
            "{rate} Hz: mean error {mean}, not in {low}..{high}"
        );
        assert!(
            swing < 0.25 * r * run.jitter + 0.75,
            "{rate} Hz: swings {swing} ticks"
        );
    }
}

#[test]
fn clock_recovers_from_a_hitch_by_pulling_ten_percent_per_snapshot() {
    let mut run = Run::new(60, 11);
    run.run_until(2.0);
    // The client's clock jumps 0.5 s ahead (30 ticks: under a second, so pulled back).
    run.clock.advance(Duration::from_millis(500));
    let errors = run.run_until(6.0);
    assert!(run.snaps().is_empty());
    let (settled, _) = settle(&errors, 5.0);
    let first = errors.first().unwrap().1;
    assert!(
        first - settled > 25.0,
        "the hitch put it {first} ticks ahead"
    );
    // 10 % per snapshot, ~48 snapshots a second: within 1 tick of where it settles in 1 s.
    let after = |t: f64| errors.iter().find(|(time, _)| *time >= t).unwrap().1;
    assert!(
        (after(3.0) - settled).abs() < 1.0,
        "{} vs {settled}",
        after(3.0)
    );
    // And monotonically towards it: never overshoots by more than the jitter.
    assert!(errors.iter().all(|(_, e)| *e > settled - 2.0));
}

#[test]
fn clock_snaps_once_after_a_two_second_server_stall() {
    let mut run = Run::new(60, 21);
    run.server_stall = Some((5.0, 7.0));
    let errors = run.run_until(12.0);
    let snaps = run.snaps();
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    // At the first snapshot after the stall: the estimate ran 2 s (120 ticks) ahead.
    assert!(
        snaps[0] > 7.0 && snaps[0] < 7.0 + 0.2,
        "snapped at {}",
        snaps[0]
    );
    let snap = run
        .updates
        .iter()
        .find_map(|(_, u)| match u {
            ClockUpdate::Snapped { error } => Some(*error),
            _ => None,
        })
        .unwrap();
    assert!((snap + 120.0).abs() < 10.0, "error {snap}");
    // Settled before and after, at the same offset.
    let (before, _) = settle(
        &errors
            .iter()
            .copied()
            .filter(|(t, _)| *t < 5.0)
            .collect::<Vec<_>>(),
        3.0,
    );
    let (after, swing) = settle(&errors, 8.0);
    assert!((before - after).abs() < 0.5, "{before} vs {after}");
    assert!(swing < 2.0);
}

#[test]
fn a_client_that_stops_advancing_but_keeps_receiving_is_pulled_along() {
    let mut run = Run::new(30, 31);
    run.run_until(3.0);
    // For 2 s frames run and snapshots are applied, but the clock is not advanced.
    let until = run.time + 2.0;
    let mut worst = 0.0_f64;
    while run.time < until {
        run.frame(0.016, 0.0);
        worst = worst.min(run.clock.estimate().unwrap() - run.server_tick());
    }
    // Each snapshot pulls 10 % of the error: it settles where a pull makes up the ticks
    // between snapshots (1.25 with 20 % loss), 12.5 ticks behind (plus the latency), far
    // from a snap.
    assert!(run.snaps().is_empty());
    let per_snapshot = 1.0 / (1.0 - run.loss);
    let bound = -(per_snapshot / ServerClock::PULL + (run.latency + run.jitter) * 30.0 + 2.0);
    assert!(worst < -8.0 && worst > bound, "fell {worst} ticks behind");
}

#[test]
fn clock_snaps_after_the_client_was_suspended_for_two_seconds() {
    let mut run = Run::new(30, 32);
    run.run_until(3.0);
    // Suspended for 2 s: no frames, the snapshots sent meanwhile dropped, then one frame whose
    // time the game clamped to 0.1 s.
    run.outage = Some((run.time, run.time + 2.0));
    run.frame(2.0, 0.1);
    let errors = run.run_until(8.0);
    let snaps = run.snaps();
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    let (mean, swing) = settle(&errors, 6.0);
    assert!(mean < 0.0 && mean > -0.2 * 30.0, "recovered to {mean}");
    assert!(swing < 1.5);
}

#[test]
fn clock_does_not_snap_through_a_two_second_outage() {
    let mut run = Run::new(60, 41);
    run.outage = Some((4.0, 6.0));
    let errors = run.run_until(10.0);
    assert!(run.snaps().is_empty(), "{:?}", run.snaps());
    // No snapshot, no pull: the estimate kept advancing at the server's rate.
    let during: Vec<f64> = errors
        .iter()
        .filter(|(t, _)| *t > 4.2 && *t < 6.0)
        .map(|(_, e)| *e)
        .collect();
    let drift = during
        .iter()
        .fold(0.0_f64, |m, e| m.max((e - during[0]).abs()));
    assert!(drift < 1e-4, "drifted {drift} ticks without snapshots");
}

// ---------------------------------------------------------------------------------------------
// Adaptive delay
// ---------------------------------------------------------------------------------------------

/// Feeds `seconds` of arrivals of a `rate` Hz server over a link with `loss` and `jitter`
/// (seconds) into `delay`, as a client polling every ~16 ms observes them.
fn feed(delay: &mut AdaptiveDelay, rate: f64, loss: f64, jitter: f64, seconds: f64, seed: u64) {
    let mut rng = Rng(seed);
    let mut arrivals: Vec<f64> = (1..(seconds * rate) as u32)
        .filter_map(|tick| {
            let lost = rng.unit() < loss;
            let arrival = f64::from(tick) / rate + 0.05 + jitter * rng.unit();
            (!lost).then_some(arrival)
        })
        .collect();
    arrivals.sort_by(f64::total_cmp);
    let mut frame = 0.0;
    let mut next = 0;
    while next < arrivals.len() {
        frame += 0.016;
        while next < arrivals.len() && arrivals[next] <= frame {
            delay.on_snapshot(Duration::from_secs_f64(frame));
            next += 1;
        }
    }
}

#[test]
fn adaptive_delay_grows_with_jitter_and_loss() {
    let config = AdaptiveDelayConfig {
        min: Duration::from_millis(10),
        max: Duration::from_secs(2),
        ..AdaptiveDelayConfig::default()
    };
    let initial = Duration::from_millis(100);
    let mut previous = Duration::ZERO;
    for (jitter, loss) in [
        (0.0, 0.0),
        (0.02, 0.0),
        (0.06, 0.05),
        (0.12, 0.1),
        (0.25, 0.2),
    ] {
        let mut delay = AdaptiveDelay::new(config, initial);
        feed(&mut delay, 20.0, loss, jitter, 30.0, 7);
        let target = delay.target();
        // At least three mean intervals, and more as arrivals get irregular.
        let mean = delay.mean_interval().unwrap();
        assert!(target >= mean * 3, "{target:?} < 3 × {mean:?}");
        assert!(
            target > previous,
            "jitter {jitter}, loss {loss}: {target:?} ≤ {previous:?}"
        );
        // The delay follows the (moving) target closely once it has caught up.
        let behind = delay.delay().abs_diff(target);
        assert!(behind < Duration::from_millis(15), "{behind:?} behind");
        previous = target;
    }
    assert!(previous > Duration::from_millis(300), "{previous:?}");
}

#[test]
fn adaptive_delay_respects_its_bounds() {
    let config = AdaptiveDelayConfig::default();
    // 128 Hz, no jitter: 3 intervals are 23 ms, below the 50 ms minimum.
    let mut fast = AdaptiveDelay::new(config, Duration::from_millis(100));
    feed(&mut fast, 128.0, 0.0, 0.0, 10.0, 1);
    assert_eq!(fast.delay(), config.min);
    // 5 Hz with heavy jitter: far above the 500 ms maximum.
    let mut slow = AdaptiveDelay::new(config, Duration::from_millis(100));
    feed(&mut slow, 5.0, 0.3, 0.4, 60.0, 2);
    assert_eq!(slow.delay(), config.max);
    // In between, every step stays within the bounds.
    let mut mid = AdaptiveDelay::new(config, Duration::from_secs(5));
    assert_eq!(mid.delay(), config.max, "the initial delay is clamped");
    let mut rng = Rng(3);
    let mut now = Duration::ZERO;
    for _ in 0..2000 {
        now += Duration::from_micros((rng.unit() * 300_000.0) as u64);
        mid.on_snapshot(now);
        assert!(mid.delay() >= config.min && mid.delay() <= config.max);
        assert!(mid.target() >= config.min && mid.target() <= config.max);
    }
}
