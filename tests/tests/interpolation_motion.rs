#![allow(clippy::unwrap_used)]
//! Interpolation end to end over a simulated link, deterministic: a server moves a body and
//! sends a snapshot every tick (carrying the member only while it has changed since the
//! client's last acknowledged tick, as the replication protocol does); the link loses, delays
//! and reorders them; the client feeds an `InterpolationTimeline` and an
//! `InterpolationBuffer` as the runtime will, and shows the member every frame.
//!
//! - constant velocity under 20 % loss and jitter: shown exactly where the server was at the
//!   render tick, which runs `delay` (plus the link's latency) behind the server;
//! - stop-and-go: hold samples make motion resume from the right moment (no jump, no drift),
//!   and without them it drifts;
//! - data stopping: extrapolation for `max_extrapolation`, then a stop; rotations held;
//! - an outage of the unreliable link does not snap the clock, and motion recovers;
//! - adaptive delay: on a slow, jittery link it interpolates where a fixed delay extrapolates.

use std::time::Duration;

use glam::{Quat, Vec3};
use mf_net::interpolation::{
    AdaptiveDelayConfig, ClockUpdate, Interpolate, InterpolationBuffer, InterpolationConfig,
    InterpolationTimeline,
};

// ---------------------------------------------------------------------------------------------
// The simulation
// ---------------------------------------------------------------------------------------------

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

/// What the link does to snapshots (server → client). Acknowledgements (client → server) are
/// never lost and take `latency`.
#[derive(Clone, Copy)]
struct Link {
    loss: f64,
    /// Seconds.
    latency: f64,
    /// Seconds of extra delay, drawn uniformly per snapshot (which reorders them).
    jitter: f64,
    /// Seconds `[from, to)` of send time during which every snapshot is lost.
    outage: Option<(f64, f64)>,
}

impl Link {
    const CLEAN: Link = Link {
        loss: 0.0,
        latency: 0.05,
        jitter: 0.0,
        outage: None,
    };
    const BAD: Link = Link {
        loss: 0.2,
        latency: 0.06,
        jitter: 0.04,
        outage: None,
    };
}

struct Scenario<'p, T> {
    tick_rate: u32,
    seconds: f64,
    link: Link,
    /// Client frame times are drawn uniformly from this range (seconds).
    frame: (f64, f64),
    seed: u64,
    config: InterpolationConfig,
    /// Whether the client inserts hold samples (`push_with_hold`) or not (`push`).
    hold: bool,
    /// The member's value on the server at each tick.
    path: &'p dyn Fn(u32) -> T,
}

/// One client frame.
struct Frame<T> {
    /// Client time, seconds.
    time: f64,
    /// The server's tick at `time` (fractional).
    server_tick: f64,
    render_tick: f64,
    shown: T,
    /// The newest sample's tick and the node's known tick when the frame was shown.
    newest: u32,
    known_until: u32,
}

impl<T> Scenario<'_, T> {
    fn new(path: &dyn Fn(u32) -> T) -> Scenario<'_, T> {
        Scenario {
            tick_rate: 60,
            seconds: 10.0,
            link: Link::CLEAN,
            frame: (0.008, 0.025),
            seed: 1,
            config: InterpolationConfig::default(),
            hold: true,
            path,
        }
    }
}

/// Runs a scenario; returns every frame shown and how often the clock snapped.
fn simulate<T: Interpolate + PartialEq>(s: &Scenario<'_, T>) -> (Vec<Frame<T>>, usize) {
    let mut rng = Rng(s.seed);
    let rate = f64::from(s.tick_rate);
    let path = s.path;

    // Server.
    let mut next_tick = 1u32;
    let mut last_changed = 0u32;
    let mut acked = 0u32;
    let mut acks: Vec<(f64, u32)> = Vec::new(); // (arrival at the server, tick), in order
    let mut in_flight: Vec<(f64, u32, Option<T>)> = Vec::new(); // (arrival, tick, member)

    // Client: the spawn (tick 0) applied its state immediately; the buffer starts there.
    let mut timeline = InterpolationTimeline::new(s.config, s.tick_rate);
    let mut buffer = InterpolationBuffer::new();
    buffer.push(0, path(0));
    let mut known_until = 0u32;

    let mut frames = Vec::new();
    let mut snaps = 0;
    let mut time = 0.0;
    while time < s.seconds {
        let dt = s.frame.0 + (s.frame.1 - s.frame.0) * rng.unit();
        time += dt;
        // The server's ticks up to now.
        while f64::from(next_tick) / rate <= time {
            let tick = next_tick;
            next_tick += 1;
            let sent = f64::from(tick) / rate;
            if path(tick) != path(tick - 1) {
                last_changed = tick;
            }
            while acks.first().is_some_and(|&(arrival, _)| arrival <= sent) {
                acked = acked.max(acks.remove(0).1);
            }
            let member = (last_changed > acked).then(|| path(tick));
            let lost = rng.unit() < s.link.loss;
            let delay = s.link.latency + s.link.jitter * rng.unit();
            let out = s
                .link
                .outage
                .is_some_and(|(from, to)| sent >= from && sent < to);
            if !lost && !out {
                in_flight.push((sent + delay, tick, member));
            }
        }
        // The client's poll: the snapshots that have arrived, in arrival order.
        in_flight.sort_by(|a, b| a.0.total_cmp(&b.0));
        let arrived = in_flight.partition_point(|p| p.0 <= time);
        for (_, tick, member) in in_flight.drain(..arrived) {
            let update = timeline.on_snapshot(tick);
            if update == ClockUpdate::Stale {
                continue; // the runtime discards stale snapshots
            }
            if update.must_clear_buffers() {
                // As the runtime does: the newest sample stays, at its tick.
                snaps += 1;
                buffer.retain_newest();
            }
            if let Some(value) = member {
                if s.hold {
                    buffer.push_with_hold(known_until, tick, value);
                } else {
                    buffer.push(tick, value);
                }
            }
            // Every snapshot here is untruncated: absent nodes were still.
            known_until = known_until.max(tick);
            acks.push((time + s.link.latency, tick));
        }
        // The frame: advance the clock, show the member.
        timeline.advance(Duration::from_secs_f64(dt));
        if let Some(render_tick) = timeline.render_tick() {
            let shown = buffer
                .sample(render_tick, known_until, timeline.max_extrapolation_ticks())
                .unwrap();
            frames.push(Frame {
                time,
                server_tick: time * rate,
                render_tick,
                shown,
                newest: buffer.newest().unwrap().0,
                known_until,
            });
        }
    }
    (frames, snaps)
}

/// Where the server's member was at a fractional tick: its per-tick values, blended.
fn truth<T: Interpolate>(path: &dyn Fn(u32) -> T, tick: f64) -> T {
    if tick <= 0.0 {
        return path(0);
    }
    let whole = tick.floor();
    let k = whole as u32;
    path(k).interpolate(&path(k + 1), (tick - whole) as f32)
}

/// A distance between two values of a member.
trait Gap {
    fn gap(&self, other: &Self) -> f32;
}

impl Gap for f32 {
    fn gap(&self, other: &Self) -> f32 {
        (self - other).abs()
    }
}

impl Gap for Vec3 {
    fn gap(&self, other: &Self) -> f32 {
        (*self - *other).length()
    }
}

impl Gap for Quat {
    /// The rotation angle between them (either cover), accurate for small angles.
    fn gap(&self, other: &Self) -> f32 {
        let d = self.conjugate() * *other;
        2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
    }
}

/// The largest distance between what was shown and where the server was at the render tick,
/// over frames after `warm_up` seconds.
fn max_error<T: Interpolate + Gap>(
    frames: &[Frame<T>],
    path: &dyn Fn(u32) -> T,
    warm_up: f64,
) -> (f32, f64) {
    frames
        .iter()
        .filter(|f| f.time >= warm_up)
        .map(|f| (f.shown.gap(&truth(path, f.render_tick)), f.render_tick))
        .fold((0.0, 0.0), |worst, e| if e.0 > worst.0 { e } else { worst })
}

// ---------------------------------------------------------------------------------------------
// Constant velocity
// ---------------------------------------------------------------------------------------------

/// 0.1 m per tick along x, 0.05 along y: 6 m/s at 60 Hz.
fn cruising(tick: u32) -> Vec3 {
    Vec3::new(0.1, 0.05, 0.0) * tick as f32
}

#[test]
fn constant_velocity_is_shown_where_the_server_was_delay_ago_under_loss_and_jitter() {
    for seed in 1..=4 {
        let scenario = Scenario {
            seconds: 20.0,
            link: Link::BAD,
            seed,
            ..Scenario::new(&cruising)
        };
        let (frames, snaps) = simulate(&scenario);
        assert_eq!(snaps, 0, "seed {seed}");
        // Shown exactly on the server's path at the render tick (blends of a straight line,
        // and extrapolations along it, are on it).
        let (error, at) = max_error(&frames, &cruising, 1.0);
        assert!(
            error < 2e-3,
            "seed {seed}: off by {error} m at render tick {at}"
        );
        // The render tick runs the delay behind the clock, which follows the ticks of arriving
        // snapshots: so the delay plus the link's latency (part of the jitter, and up to a
        // frame of waiting for the poll) behind the server, steadily, and never backwards.
        let rate = 60.0;
        let (link, frame) = (scenario.link, scenario.frame);
        let lags: Vec<f64> = frames
            .iter()
            .filter(|f| f.time >= 3.0)
            .map(|f| f.server_tick - f.render_tick)
            .collect();
        let mean = lags.iter().sum::<f64>() / lags.len() as f64;
        let (low, high) = (
            (0.1 + link.latency) * rate,
            (0.1 + link.latency + link.jitter + frame.1) * rate,
        );
        assert!(
            mean > low && mean < high,
            "seed {seed}: mean lag {mean} ticks, not in {low}..{high}"
        );
        let swing = lags
            .iter()
            .map(|lag| (lag - mean).abs())
            .fold(0.0, f64::max);
        assert!(
            swing < 1.0,
            "seed {seed}: lag swings {swing} ticks around {mean}"
        );
        for pair in frames.windows(2) {
            assert!(
                pair[1].render_tick > pair[0].render_tick,
                "seed {seed}: render tick went back"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stop and go
// ---------------------------------------------------------------------------------------------

/// Moves 0.1 m per tick for 2 s, stops for 2 s (absent from snapshots), moves again.
fn stop_and_go(tick: u32) -> f32 {
    let moving = tick.min(120) + tick.saturating_sub(240);
    moving as f32 * 0.1
}

/// The largest backwards step and the largest forward step relative to the path's speed
/// (0.1 m per tick) between consecutive frames.
fn steps(frames: &[Frame<f32>], warm_up: f64) -> (f32, f32) {
    let mut back = 0.0_f32;
    let mut excess = 0.0_f32;
    for pair in frames.windows(2).filter(|p| p[0].time >= warm_up) {
        let moved = pair[1].shown - pair[0].shown;
        let allowed = 0.1 * (pair[1].render_tick - pair[0].render_tick) as f32;
        back = back.max(-moved);
        excess = excess.max(moved - allowed);
    }
    (back, excess)
}

#[test]
fn stop_and_go_resumes_from_the_right_moment_thanks_to_hold_samples() {
    let scenario = Scenario {
        seconds: 7.0,
        ..Scenario::new(&stop_and_go)
    };
    let (frames, snaps) = simulate(&scenario);
    assert_eq!(snaps, 0);
    // The whole stop is rendered.
    assert!(frames.iter().any(|f| f.render_tick < 120.0));
    assert!(frames.iter().any(|f| f.render_tick > 300.0));
    let (error, at) = max_error(&frames, &stop_and_go, 0.5);
    assert!(error < 1e-4, "off by {error} m at render tick {at}");
    let (back, excess) = steps(&frames, 0.5);
    assert!(
        back < 1e-5 && excess < 1e-4,
        "back {back}, faster by {excess}"
    );
    // While it stood, the node was known past its newest sample: it held, not extrapolated.
    let stopped: Vec<_> = frames
        .iter()
        .filter(|f| f.render_tick > 121.0 && f.render_tick < 239.0)
        .collect();
    assert!(stopped.len() > 100);
    for f in stopped {
        assert_eq!(f.shown, 12.0, "at render tick {}", f.render_tick);
    }

    // Without hold samples the blend towards the first new value starts when it stopped:
    // it creeps during the stop and leaves late.
    let (frames, _) = simulate(&Scenario {
        hold: false,
        ..scenario
    });
    let (error, _) = max_error(&frames, &stop_and_go, 0.5);
    assert!(error > 0.05, "drift without hold samples: only {error} m");
}

#[test]
fn stop_and_go_under_loss_and_jitter_never_jumps_or_drifts() {
    for seed in 1..=6 {
        let scenario = Scenario {
            seconds: 7.0,
            link: Link::BAD,
            seed,
            ..Scenario::new(&stop_and_go)
        };
        let (frames, snaps) = simulate(&scenario);
        assert_eq!(snaps, 0);
        // A lost snapshot at a corner of the path (the tick it stopped or started) moves the
        // corner by up to the ticks lost; everywhere else it is exact.
        let (error, at) = max_error(&frames, &stop_and_go, 0.5);
        assert!(error <= 0.1 + 1e-4, "seed {seed}: off by {error} m at {at}");
        let (back, excess) = steps(&frames, 0.5);
        assert!(back < 1e-4, "seed {seed}: moved back {back} m");
        assert!(excess < 0.05, "seed {seed}: jumped ahead by {excess} m");
        // Where the path is straight, away from the corners, it is exact.
        for f in frames.iter().filter(|f| f.time > 0.5) {
            let r = f.render_tick;
            if (r - 120.0).abs() > 4.0 && (r - 240.0).abs() > 4.0 {
                let e = (f.shown - truth(&stop_and_go, r)).abs();
                assert!(e < 1e-4, "seed {seed}: off by {e} at {r}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Data stopping
// ---------------------------------------------------------------------------------------------

fn spinning(tick: u32) -> Quat {
    Quat::from_rotation_y(0.05 * tick as f32)
}

#[test]
fn when_data_stops_positions_extrapolate_for_max_extrapolation_then_stop_and_rotations_hold() {
    let link = Link {
        outage: Some((4.0, f64::INFINITY)),
        ..Link::CLEAN
    };
    let positions = Scenario {
        seconds: 6.0,
        link,
        ..Scenario::new(&cruising)
    };
    let (position_frames, _) = simulate(&positions);
    let rotations = Scenario {
        seconds: 6.0,
        link,
        ..Scenario::new(&spinning)
    };
    let (rotation_frames, _) = simulate(&rotations);
    // Same seed, same link: the same frames and deliveries.
    assert_eq!(position_frames.len(), rotation_frames.len());

    let newest = position_frames.last().unwrap().newest;
    // Tick 240 is sent at 4 s, in the outage.
    assert_eq!(newest, 239, "the last snapshot before the outage");
    let cap = 0.25 * 60.0;
    let (mut extrapolated, mut stopped) = (0, 0);
    for (p, r) in position_frames.iter().zip(&rotation_frames) {
        assert_eq!(p.render_tick, r.render_tick);
        let tick = p.render_tick;
        if tick <= f64::from(p.newest) {
            continue;
        }
        assert_eq!(p.known_until, p.newest, "data is late, not still");
        if tick <= f64::from(newest) + cap {
            // Along the last velocity.
            extrapolated += 1;
            let e = p.shown.gap(&truth(&cruising, tick));
            assert!(e < 1e-3, "off by {e} at {tick}");
        } else {
            // Stopped where the cap is reached.
            stopped += 1;
            let e = p.shown.gap(&truth(&cruising, f64::from(newest) + cap));
            assert!(e < 1e-3, "off by {e} at {tick}");
        }
        // Rotation: held at the newest sample, exactly.
        assert_eq!(r.shown, spinning(r.newest), "at {tick}");
    }
    assert!(extrapolated >= 10, "{extrapolated} frames extrapolated");
    assert!(stopped >= 60, "{stopped} frames stopped");
    // Before the outage both were blended on the path.
    let (e, _) = max_error(&rotation_frames[..100], &spinning, 0.5);
    assert!(e < 1e-3, "rotation off by {e} rad");
}

#[test]
fn an_outage_does_not_snap_the_clock_and_motion_recovers() {
    let scenario = Scenario {
        seconds: 8.0,
        link: Link {
            outage: Some((3.0, 5.0)),
            ..Link::BAD
        },
        seed: 7,
        ..Scenario::new(&cruising)
    };
    let (frames, snaps) = simulate(&scenario);
    assert_eq!(snaps, 0, "the estimate kept advancing through the outage");
    // During the outage the body stopped 0.25 s past the last data; once data flows again
    // (and the render tick has passed the gap) it is exact again.
    let (error, at) = max_error(&frames, &cruising, 5.0 + 0.1 + 0.2);
    assert!(error < 2e-3, "off by {error} m at {at} after the outage");
    let longest_stop = frames
        .iter()
        .filter(|f| f.render_tick > f64::from(f.newest) + 15.0)
        .count();
    assert!(longest_stop > 60, "it did stop during the outage");
}

// ---------------------------------------------------------------------------------------------
// Adaptive delay
// ---------------------------------------------------------------------------------------------

/// The fraction of frames (after warm-up) shown past the newest sample while data was late.
fn late_fraction<T>(frames: &[Frame<T>]) -> f64 {
    let shown: Vec<_> = frames.iter().filter(|f| f.time > 3.0).collect();
    let late = shown
        .iter()
        .filter(|f| f.render_tick > f64::from(f.newest) && f.known_until <= f.newest)
        .count();
    late as f64 / shown.len() as f64
}

/// One metre per tick.
fn ramp(tick: u32) -> f32 {
    tick as f32
}

#[test]
fn adaptive_delay_interpolates_on_a_slow_jittery_link_where_a_fixed_delay_extrapolates() {
    let slow = Link {
        loss: 0.2,
        latency: 0.05,
        jitter: 0.15,
        outage: None,
    };
    let fixed = Scenario {
        tick_rate: 10,
        seconds: 30.0,
        link: slow,
        seed: 3,
        ..Scenario::new(&ramp)
    };
    let (fixed_frames, _) = simulate(&fixed);
    let adaptive_config = InterpolationConfig {
        adaptive: Some(AdaptiveDelayConfig::default()),
        ..InterpolationConfig::default()
    };
    let adaptive = Scenario {
        config: adaptive_config,
        ..fixed
    };
    let (adaptive_frames, snaps) = simulate(&adaptive);
    assert_eq!(snaps, 0);
    let (fixed_late, adaptive_late) = (
        late_fraction(&fixed_frames),
        late_fraction(&adaptive_frames),
    );
    assert!(
        fixed_late > 0.3,
        "the fixed 0.1 s delay is one tick at 10 Hz: {fixed_late}"
    );
    assert!(
        adaptive_late < fixed_late / 10.0,
        "adaptive {adaptive_late} vs fixed {fixed_late}"
    );
    // The adaptive delay settled within its bounds, well above the fixed one.
    let lag = |f: &Frame<f32>| (f.server_tick - f.render_tick) / 10.0;
    let last = adaptive_frames.last().unwrap();
    assert!(
        lag(last) > 0.3 && lag(last) < 0.5 + 0.3,
        "lag {} s",
        lag(last)
    );
}
