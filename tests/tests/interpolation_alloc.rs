#![allow(clippy::unwrap_used)]
//! Zero allocations for client interpolation in steady state: a buffer allocates once, when
//! created; pushing (hold samples and ring wrap included), sampling (blend, hold,
//! extrapolation), the server clock (pulls, stale ticks, snaps) and the adaptive delay never
//! allocate. The scene: 100 boxes moving (and stopping and going) every frame, position and
//! rotation interpolated, 240 frames after warm-up.

use std::time::Duration;

use glam::{Quat, Vec3};
use mf_net::interpolation::{
    AdaptiveDelay, AdaptiveDelayConfig, ClockUpdate, InterpolationBuffer, InterpolationConfig,
    InterpolationTimeline, ServerClock,
};
use mf_net_tests::alloc_counter::{assert_no_alloc, is_counting, measure};

const FRAME: Duration = Duration::from_micros(16_667);

#[test]
fn a_buffer_allocates_once_when_created_and_never_after() {
    assert!(is_counting());
    let (mut buffer, info) = measure(InterpolationBuffer::<Vec3>::new);
    assert_eq!(info.count_total, 1, "one allocation for the 32 samples");
    assert_no_alloc("push, hold, sample, retain the newest and clear", || {
        for tick in 1..=1000u32 {
            if tick % 7 == 0 {
                buffer.insert_hold(tick);
            } else {
                buffer.push_with_hold(tick - 1, tick, Vec3::splat(tick as f32));
            }
            buffer.push(tick / 2, Vec3::ZERO); // stale: ignored
            let render = f64::from(tick) - 2.5;
            let shown = buffer.sample(render, tick, 15.0).unwrap();
            std::hint::black_box(shown);
            std::hint::black_box(buffer.sample(f64::from(tick) + 5.0, tick - 1, 15.0));
            if tick % 300 == 0 {
                buffer.clear();
            } else if tick % 300 == 150 {
                buffer.retain_newest();
            }
        }
    });
    assert_eq!(buffer.len(), InterpolationBuffer::<Vec3>::CAPACITY);
}

/// One box on the server at a tick: it moves for 30 ticks and stands for 15 (so its members
/// are absent from snapshots, then resume after a hold sample), each box in its own phase.
fn pose(index: usize, tick: u32) -> (Vec3, Quat) {
    let local = tick + 15 * index as u32;
    let moved = local / 45 * 30 + (local % 45).min(30);
    let t = moved as f32 * 0.05;
    (
        Vec3::new(index as f32 + t, 0.5 * t, -t),
        Quat::from_rotation_y(0.1 * t + index as f32),
    )
}

struct Box3 {
    position: InterpolationBuffer<Vec3>,
    rotation: InterpolationBuffer<Quat>,
    last: (Vec3, Quat),
    known_until: u32,
}

#[test]
fn a_hundred_interpolated_boxes_allocate_nothing_in_steady_state() {
    assert!(is_counting());
    let config = InterpolationConfig {
        adaptive: Some(AdaptiveDelayConfig::default()),
        ..InterpolationConfig::default()
    };
    let mut timeline = InterpolationTimeline::new(config, 60);
    let mut boxes: Vec<Box3> = (0..100)
        .map(|i| {
            let (p, r) = pose(i, 0);
            let mut position = InterpolationBuffer::new();
            let mut rotation = InterpolationBuffer::new();
            position.push(0, p);
            rotation.push(0, r);
            Box3 {
                position,
                rotation,
                last: (p, r),
                known_until: 0,
            }
        })
        .collect();
    let mut shown: Vec<(Vec3, Quat)> = Vec::with_capacity(100);
    let mut snaps = 0;

    // One client frame: a snapshot of `tick` arrives (or does not), then the frame is shown.
    let mut frame = |tick: u32, arrives: bool| {
        if arrives {
            let update = timeline.on_snapshot(tick);
            if update.must_clear_buffers() {
                snaps += 1;
                for b in &mut boxes {
                    b.position.retain_newest();
                    b.rotation.retain_newest();
                }
            }
            if update != ClockUpdate::Stale {
                for (i, b) in boxes.iter_mut().enumerate() {
                    let (p, r) = pose(i, tick);
                    if p != b.last.0 {
                        b.position.push_with_hold(b.known_until, tick, p);
                    }
                    if r != b.last.1 {
                        b.rotation.push_with_hold(b.known_until, tick, r);
                    }
                    b.last = (p, r);
                    b.known_until = tick;
                }
            }
        }
        timeline.advance(FRAME);
        let render = timeline.render_tick().unwrap();
        let limit = timeline.max_extrapolation_ticks();
        shown.clear();
        for b in &boxes {
            shown.push((
                b.position.sample(render, b.known_until, limit).unwrap(),
                b.rotation.sample(render, b.known_until, limit).unwrap(),
            ));
        }
    };

    // Warm-up: buffers full, statistics collected.
    for tick in 1..=120 {
        frame(tick, true);
    }
    assert_no_alloc("240 frames of 100 interpolated boxes", || {
        for tick in 121..=360 {
            // Every 5th snapshot lost; every 50th frame a reordered old one arrives too.
            frame(tick, tick % 5 != 0);
            if tick % 50 == 0 {
                frame(tick - 3, true);
            }
        }
        // A server stall: the clock snaps, the buffers keep their newest samples and refill.
        for _ in 0..150 {
            frame(360, false);
        }
        for tick in 361..=400 {
            frame(tick, true);
        }
    });
    assert_eq!(snaps, 1, "the stall snapped the clock once");
    assert_eq!(shown.len(), 100);
}

#[test]
fn the_clock_and_the_adaptive_delay_allocate_nothing() {
    assert!(is_counting());
    let mut clock = ServerClock::new(60);
    let mut delay = AdaptiveDelay::new(AdaptiveDelayConfig::default(), Duration::from_millis(100));
    let mut now = Duration::ZERO;
    let mut updates = [0usize; 4];
    assert_no_alloc("clock and adaptive delay", || {
        for tick in 1..=10_000u32 {
            now += FRAME;
            clock.advance(FRAME);
            // Jittery arrival order, a stall every 2000 ticks.
            let tick = if tick % 2000 == 0 {
                tick + 200
            } else {
                tick ^ 1
            };
            let update = clock.on_snapshot(tick);
            updates[match update {
                ClockUpdate::Started => 0,
                ClockUpdate::Pulled { .. } => 1,
                ClockUpdate::Snapped { .. } => 2,
                ClockUpdate::Stale => 3,
            }] += 1;
            if update != ClockUpdate::Stale {
                delay.on_snapshot(now);
            }
            if update.must_clear_buffers() {
                delay.reset();
            }
            std::hint::black_box((clock.render_tick(delay.delay()), delay.target()));
        }
    });
    assert_eq!(updates[0], 1);
    assert!(
        updates[1] > 1000 && updates[2] > 0 && updates[3] > 1000,
        "{updates:?}"
    );
}
