#![allow(clippy::unwrap_used)]
//! Interpolation in the replication runtime, deterministic over `SimulatedTransport`: a server
//! moves `#[replicated(interpolate)]` members, and the client's `Multiplayer` shows them a
//! delay in the past, written into the nodes in `begin_frame`.
//!
//! - constant velocity under 20 % loss and jitter: every frame, shown exactly where the server
//!   was at the render tick, and within a small tolerance of where it was `delay` earlier
//!   (flattened bases included);
//! - stop-and-go: motion resumes from the right moment (hold samples), no jump, no drift;
//! - data stopping: extrapolation for 0.25 s, then a stop; the rotation is held;
//! - the clock converges to the server tick, and after a 2 s stall snaps, each member to its
//!   newest sample, which its buffer keeps: motion goes on from it, and a crate still through
//!   the snap moves again at the right moment (its hold sample);
//! - a client that ran no frame for 2 s receives the backlog of snapshots in one long frame
//!   without snapping its (right) clock;
//! - `enabled = false` snaps every snapshot; spawn state applies immediately;
//! - zero allocations: 100 interpolated boxes moving every frame, 240 frames after warm-up.

use std::time::Duration;

use glam::{Quat, Vec3};
use mf_net::interpolation::{AdaptiveDelayConfig, InterpolationConfig};
use mf_net::prelude::*;
use mf_net::scene::SceneError;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::{Mp, World};

// ---------------------------------------------------------------------------------------------
// Types and scenes
// ---------------------------------------------------------------------------------------------

/// A moving box: an interpolated position and rotation, and a member that snaps.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Crate {
    #[replicated(interpolate)]
    position: Vec3,
    #[replicated(interpolate)]
    rotation: Quat,
    #[replicated]
    color: i32,
}

/// RPCs both ways for the zero-allocation gate (plain-number arguments, nothing to allocate).
#[rpcs]
impl Crate {
    /// A client nudges a crate (client → server).
    #[rpc(any_peer)]
    fn nudge(&mut self, dx: f32, seq: u32) {
        self.position.x += dx * 1e-6 * (seq % 2) as f32;
    }

    /// The server flashes a crate (server → clients).
    #[rpc(server)]
    fn flash(&mut self, color: i32) {
        self.color = color;
    }
}

/// A flattened [`Crate`] base and an interpolated member of its own.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Ship {
    #[replicated(flatten)]
    hull: Crate,
    #[replicated(interpolate)]
    fuel: f32,
}

const CRATE: SceneIndex = SceneIndex::new(0);
const SHIP: SceneIndex = SceneIndex::new(1);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("crate", |scene, root| {
            scene.set_value(root, Crate::default())
        })
        .unwrap();
    scenes
        .register("ship", |scene, root| {
            scene.set_value(root, Ship::default())?;
            Ok::<(), SceneError>(())
        })
        .unwrap();
    scenes
}

// ---------------------------------------------------------------------------------------------
// Motion and the server's record of it
// ---------------------------------------------------------------------------------------------

/// 60 frames per second against the server's 30 ticks: a snapshot every other frame.
const FRAME: Duration = Duration::from_nanos(16_666_667);
/// Units per second along x (and half of it backwards along z).
const SPEED: f32 = 3.0;
/// Radians per second about y.
const SPIN: f32 = 1.0;

fn position(t: f64) -> Vec3 {
    let t = t as f32;
    Vec3::new(SPEED * t, 1.0, -0.5 * SPEED * t)
}

fn rotation(t: f64) -> Quat {
    Quat::from_rotation_y(SPIN * t as f32)
}

/// The value the server captured at each tick.
#[derive(Default)]
struct Truth {
    samples: Vec<(u32, Vec3, Quat)>,
}

impl Truth {
    fn record(&mut self, tick: u32, position: Vec3, rotation: Quat) {
        if !matches!(self.samples.last(), Some(&(last, _, _)) if tick <= last) {
            self.samples.push((tick, position, rotation));
        }
    }

    /// The server's value at a fractional tick (linear and slerp between captured ticks; the
    /// last value past them).
    fn at(&self, tick: f64) -> (Vec3, Quat) {
        let i = self
            .samples
            .partition_point(|&(t, _, _)| f64::from(t) <= tick);
        if i == 0 {
            let (_, p, q) = self.samples[0];
            return (p, q);
        }
        if i == self.samples.len() {
            let (_, p, q) = self.samples[i - 1];
            return (p, q);
        }
        let (t0, p0, q0) = self.samples[i - 1];
        let (t1, p1, q1) = self.samples[i];
        let f = ((tick - f64::from(t0)) / f64::from(t1 - t0)) as f32;
        (p0.lerp(p1, f), q0.slerp(q1, f))
    }

    fn newest(&self) -> (u32, Vec3, Quat) {
        *self.samples.last().unwrap()
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn config(interpolation: InterpolationConfig) -> MultiplayerConfig {
    MultiplayerConfig {
        interpolation,
        ..MultiplayerConfig::default()
    }
}

fn lossy() -> NetworkConditions {
    NetworkConditions {
        loss: 0.2,
        jitter: Duration::from_millis(20),
        ..NetworkConditions::default()
    }
}

/// A world at 60 frames per second.
fn world(config: MultiplayerConfig, conditions: Option<NetworkConditions>, seed: u64) -> World {
    let mut world = World::with(1, config, conditions, seed, library);
    world.dt = FRAME;
    world
}

fn spawn<T: Replicated>(world: &mut World, scene: SceneIndex) -> NetRef<T> {
    let root = world.root();
    let node = world.server.spawn(scene, root, PeerId::SERVER).unwrap();
    world.server.scene().net_ref::<T>(node).unwrap()
}

fn server_crate(world: &mut World, handle: NetRef<Crate>) -> &mut Crate {
    world.server.scene_mut().get_mut(handle).unwrap()
}

/// The client's only `T`.
fn shown_value<T: Replicated + Clone>(client: &Mp) -> T {
    let mut all = client.scene().iter::<T>();
    let (_, value) = all.next().expect("spawned on the client");
    assert!(all.next().is_none());
    value.clone()
}

fn render_tick(client: &Mp) -> f64 {
    client
        .interpolation()
        .expect("interpolating")
        .render_tick()
        .expect("a snapshot arrived")
}

/// Moves the server's crate to where it is at `t` seconds, runs a frame, and records what the
/// server captured.
fn moving_frame(world: &mut World, handle: NetRef<Crate>, truth: &mut Truth, t: f64) {
    let (p, q) = (position(t), rotation(t));
    let c = server_crate(world, handle);
    c.position = p;
    c.rotation = q;
    world.frame();
    truth.record(world.server.tick(), p, q);
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn constant_velocity_under_loss_and_jitter_is_shown_delay_behind() {
    let mut world = world(MultiplayerConfig::default(), Some(lossy()), 7);
    let handle = spawn::<Crate>(&mut world, CRATE);
    let ship = spawn::<Ship>(&mut world, SHIP);
    let delay = InterpolationConfig::DEFAULT_DELAY.as_secs_f64();
    let mut truth = Truth::default();
    let (mut at_render, mut behind, mut spin, mut ship_error) = (0f32, 0f32, 0f32, 0f32);
    for frame in 0..900u32 {
        let t = f64::from(frame) * FRAME.as_secs_f64();
        let s = world.server.scene_mut().get_mut(ship).unwrap();
        s.hull.position = position(t);
        s.fuel = position(t).x;
        moving_frame(&mut world, handle, &mut truth, t);
        if frame < 120 {
            continue; // the clock settles
        }
        let client = &world.clients[0];
        let render = render_tick(client);
        let shown = shown_value::<Crate>(client);
        let (p, q) = truth.at(render);
        at_render = at_render.max(shown.position.distance(p));
        spin = spin.max(shown.rotation.angle_between(q));
        behind = behind.max(shown.position.distance(position(t - delay)));
        let ship = shown_value::<Ship>(client);
        ship_error = ship_error
            .max(ship.hull.position.distance(p))
            .max((ship.fuel - p.x).abs());
    }
    let stats = world.clients[0].stats();
    assert!(
        stats.snapshots_applied > 0 && stats.clock_snaps == 0,
        "{stats:?}"
    );
    // Exactly where the server was at the render tick: blending between captured samples (and
    // extrapolating a constant velocity over lost ones) is exact for linear motion.
    assert!(at_render < 1e-3, "max error at the render tick {at_render}");
    assert!(
        ship_error < 1e-3,
        "flattened base and own member: {ship_error}"
    );
    // Rotations are held rather than extrapolated, so lost snapshots can hold them for a tick
    // or two (1 rad/s is 0.033 rad per tick).
    assert!(spin < 0.1, "max rotation error {spin} rad");
    // And where it was `delay` seconds earlier, give or take how late snapshots arrive: the
    // link's jitter (up to 20 ms) and a frame (16.7 ms, as they are received at frame starts),
    // at 3 units/s.
    assert!(
        behind < 0.11,
        "max error against the server {delay} s earlier: {behind}"
    );
    println!("max errors: at render tick {at_render}, delay behind {behind}, spin {spin}");
}

#[test]
fn stop_and_go_resumes_from_the_right_moment() {
    let mut world = world(MultiplayerConfig::default(), None, 0);
    let handle = spawn::<Crate>(&mut world, CRATE);
    let mut truth = Truth::default();
    // Moves 1 s, stops 2 s, moves 1 s: `moving` is the motion's own clock.
    let (mut moving, mut last_shown) = (0.0, None::<Vec3>);
    let (mut error, mut step) = (0f32, 0f32);
    let mut resumed_at = None;
    for frame in 0..300u32 {
        let still = (60..180).contains(&frame);
        if !still {
            moving += FRAME.as_secs_f64();
        }
        moving_frame(&mut world, handle, &mut truth, moving);
        if frame == 180 {
            resumed_at = Some(world.server.tick());
        }
        let client = &world.clients[0];
        let Some(render) = client.interpolation().and_then(|t| t.render_tick()) else {
            continue;
        };
        let shown = shown_value::<Crate>(client).position;
        error = error.max(shown.distance(truth.at(render).0));
        if let Some(last) = last_shown {
            step = step.max(shown.distance(last));
        }
        last_shown = Some(shown);
        // Still while the render tick is before the resume tick.
        if let Some(resume) = resumed_at {
            if render < f64::from(resume) - 1.0 {
                assert_eq!(shown, truth.at(f64::from(resume) - 1.0).0, "frame {frame}");
            }
        }
    }
    assert!(error < 1e-4, "max error {error}");
    // Never more than a frame's motion per frame: no jump when motion resumes.
    let per_frame = position(FRAME.as_secs_f64()).distance(position(0.0));
    assert!(
        step <= per_frame * 1.001,
        "largest step {step} > {per_frame}"
    );
}

#[test]
fn data_stopping_extrapolates_for_a_quarter_second_then_stops_and_holds_rotation() {
    let mut world = world(MultiplayerConfig::default(), None, 0);
    let handle = spawn::<Crate>(&mut world, CRATE);
    let mut truth = Truth::default();
    for frame in 0..120u32 {
        moving_frame(
            &mut world,
            handle,
            &mut truth,
            f64::from(frame) * FRAME.as_secs_f64(),
        );
    }
    // The server stops sending (stalled); the client keeps rendering for 0.9 s.
    let (newest, p_newest, q_newest) = truth.newest();
    let (_, p_before, _) = truth.samples[truth.samples.len() - 2];
    let velocity_per_tick = p_newest - p_before;
    let cap = InterpolationConfig::DEFAULT_MAX_EXTRAPOLATION.as_secs_f64() * 30.0;
    let mut extrapolated = false;
    for _ in 0..54 {
        let client = &mut world.clients[0];
        client.begin_frame(FRAME);
        client.end_frame();
        let render = render_tick(client);
        let shown = shown_value::<Crate>(client);
        if render <= f64::from(newest) {
            let (p, q) = truth.at(render);
            assert!(shown.position.distance(p) < 1e-4);
            assert!(shown.rotation.angle_between(q) < 1e-3);
            continue;
        }
        extrapolated = true;
        let ahead = (render - f64::from(newest)).min(cap) as f32;
        let expected = p_newest + velocity_per_tick * ahead;
        assert!(
            shown.position.distance(expected) < 1e-4,
            "{ahead} ticks ahead: {} vs {expected}",
            shown.position
        );
        assert_eq!(shown.rotation, q_newest, "rotation held, not extrapolated");
    }
    assert!(extrapolated);
    // Stopped 0.25 s (7.5 ticks) past the newest sample.
    let render = render_tick(&world.clients[0]);
    assert!(render > f64::from(newest) + cap + 10.0);
    let stopped = shown_value::<Crate>(&world.clients[0]).position;
    assert!(stopped.distance(p_newest + velocity_per_tick * 7.5) < 1e-4);
    assert!(stopped.distance(position(f64::from(119u32) / 60.0 + 0.25)) < 0.06);
}

#[test]
fn clock_converges_and_snaps_after_a_two_second_stall() {
    let mut world = world(MultiplayerConfig::default(), Some(lossy()), 11);
    let handle = spawn::<Crate>(&mut world, CRATE);
    let mut truth = Truth::default();
    let mut t = 0.0;
    let mut worst = 0f64;
    for frame in 0..300 {
        t += FRAME.as_secs_f64();
        moving_frame(&mut world, handle, &mut truth, t);
        if frame >= 120 {
            let estimate = world.clients[0]
                .interpolation()
                .unwrap()
                .clock()
                .estimate()
                .unwrap();
            worst = worst.max((estimate - f64::from(world.server.tick())).abs());
        }
    }
    // Within a tick of the server (the link delays snapshots by up to 20 ms, 0.6 tick).
    assert!(worst < 1.0, "estimate off by up to {worst} ticks");
    assert_eq!(world.clients[0].stats().clock_snaps, 0);

    // The server stalls for 2 s: the estimate runs 60 ticks ahead.
    let (stalled_at, _, _) = truth.newest();
    for _ in 0..120 {
        let client = &mut world.clients[0];
        client.begin_frame(FRAME);
        client.end_frame();
    }
    // The crate's newest sample: every snapshot carried it (it moves every tick).
    let kept = world.clients[0].tick();
    // It resumes: the first snapshot snaps the clock, and each member snaps to its newest
    // sample, which its buffer keeps at its tick while the older ones go: the client shows it
    // at once instead of sliding back through the old samples, and moves on from it with the
    // server's motion.
    let mut frames = 0;
    while world.clients[0].stats().clock_snaps == 0 {
        t += FRAME.as_secs_f64();
        moving_frame(&mut world, handle, &mut truth, t);
        frames += 1;
        assert!(frames < 30, "no snapshot after the stall");
    }
    let client = &world.clients[0];
    assert_eq!(client.stats().clock_snaps, 1);
    let estimate = client.interpolation().unwrap().clock().estimate().unwrap();
    // (The first snapshot after the stall may be one that the stalled server's link held.)
    let newest_applied = client.tick();
    assert!(newest_applied + 2 >= stalled_at);
    assert!(
        (estimate - f64::from(newest_applied)).abs() < 1.0,
        "{estimate}"
    );
    let render = render_tick(client);
    assert!(
        render < f64::from(stalled_at),
        "the render tick jumped back"
    );
    assert!(kept < newest_applied);
    let shown = shown_value::<Crate>(client).position;
    let from_kept = truth.at(render.max(f64::from(kept))).0;
    assert!(
        shown.distance(from_kept) < 1e-4,
        "{shown} shown, the kept sample is {from_kept}"
    );
    // Then smooth again, exactly on the server's motion from the kept sample on.
    let mut error = 0f32;
    for _ in 0..120 {
        t += FRAME.as_secs_f64();
        moving_frame(&mut world, handle, &mut truth, t);
        let client = &world.clients[0];
        let render = render_tick(client);
        if render >= f64::from(kept) {
            let shown = shown_value::<Crate>(client).position;
            error = error.max(shown.distance(truth.at(render).0));
        }
    }
    assert!(error < 1e-3, "after the snap: {error}");
    assert_eq!(world.clients[0].stats().clock_snaps, 1);
}

/// Sets the server's crate at `x` (along x), runs a frame, and records what the server
/// captured.
fn crate_at_frame(world: &mut World, handle: NetRef<Crate>, truth: &mut Truth, x: f32) {
    let p = Vec3::new(x, 0.0, 0.0);
    server_crate(world, handle).position = p;
    world.frame();
    truth.record(world.server.tick(), p, Quat::IDENTITY);
}

/// A frame of the client alone, of `dt`.
fn client_frame(world: &mut World, dt: Duration) {
    let client = &mut world.clients[0];
    client.begin_frame(dt);
    client.end_frame();
}

/// A crate moves 2 s (0.1 a frame), stands 1 s, (with `stall`: the server stalls 2 s while
/// the client renders, and the clock snaps), stands 1 s more, then moves 1 s: the largest
/// distance between the x shown and the server's at the render tick while it moves again.
fn error_when_a_still_crate_moves_again(stall: bool) -> f32 {
    let mut world = world(MultiplayerConfig::default(), None, 0);
    let handle = spawn::<Crate>(&mut world, CRATE);
    let mut truth = Truth::default();
    let mut x = 0.0;
    for _ in 0..120 {
        x += 0.1;
        crate_at_frame(&mut world, handle, &mut truth, x);
    }
    for _ in 0..60 {
        crate_at_frame(&mut world, handle, &mut truth, x);
    }
    if stall {
        for _ in 0..120 {
            client_frame(&mut world, FRAME);
        }
    }
    for _ in 0..60 {
        crate_at_frame(&mut world, handle, &mut truth, x);
    }
    assert_eq!(world.clients[0].stats().clock_snaps, u64::from(stall));
    let mut error = 0f32;
    for frame in 0..60 {
        x += 0.1;
        crate_at_frame(&mut world, handle, &mut truth, x);
        let client = &world.clients[0];
        let render = render_tick(client);
        let shown = shown_value::<Crate>(client).position.x;
        let server = truth.at(render).0.x;
        if (shown - server).abs() > 1e-3 {
            println!("stall {stall}, frame {frame}: {shown} shown, {server} at {render}");
        }
        error = error.max((shown - server).abs());
    }
    error
}

#[test]
fn a_crate_still_through_a_clock_snap_moves_again_at_the_right_moment() {
    // Without a stall, the hold sample at the tick up to which the crate was known still
    // makes it move again exactly with the server.
    let error = error_when_a_still_crate_moves_again(false);
    assert!(error < 1e-3, "without a stall: off by {error}");
    // The snap keeps each member's newest sample (at its tick): the hold sample is inserted
    // as without it, and the crate does not jump to its first new value early and wait.
    let error = error_when_a_still_crate_moves_again(true);
    assert!(error < 1e-3, "after a snap: off by {error}");
}

#[test]
fn a_client_hitch_and_its_backlog_of_snapshots_keep_the_clock_right() {
    let mut world = world(MultiplayerConfig::default(), None, 0);
    let handle = spawn::<Crate>(&mut world, CRATE);
    let mut truth = Truth::default();
    let mut x = 0.0;
    for _ in 0..180 {
        x += 0.1;
        crate_at_frame(&mut world, handle, &mut truth, x);
    }
    // The client runs no frame for 2 s while the server runs on (and the crate moves).
    for _ in 0..120 {
        x += 0.1;
        let p = Vec3::new(x, 0.0, 0.0);
        server_crate(&mut world, handle).position = p;
        world.server.begin_frame(world.dt);
        world.server.end_frame();
        truth.record(world.server.tick(), p, Quat::IDENTITY);
    }
    // Its next frame is 2 s long and receives the 60 snapshots sent meanwhile: advanced by
    // the true 2 s, the clock is right, and the old snapshots of the backlog do not move it.
    client_frame(&mut world, Duration::from_secs(2));
    let client = &world.clients[0];
    assert_eq!(client.stats().clock_snaps, 0);
    let estimate = client.interpolation().unwrap().clock().estimate().unwrap();
    let server = f64::from(world.server.tick());
    assert!(
        (estimate - server).abs() < 2.0,
        "estimate {estimate}, server at {server}"
    );
    // The backlog is in the buffers: the crate is shown on the server's path at once.
    let mut error = 0f32;
    for _ in 0..60 {
        let client = &world.clients[0];
        let shown = shown_value::<Crate>(client).position.x;
        error = error.max((shown - truth.at(render_tick(client)).0.x).abs());
        x += 0.1;
        crate_at_frame(&mut world, handle, &mut truth, x);
    }
    assert!(error < 1e-3, "off by {error}");
    assert_eq!(world.clients[0].stats().clock_snaps, 0);
}

#[test]
fn disabled_interpolation_snaps_every_snapshot() {
    let mut world = World::with(1, config(InterpolationConfig::disabled()), None, 0, library);
    let handle = spawn::<Crate>(&mut world, CRATE);
    for frame in 0..90u32 {
        let t = f64::from(frame) / 30.0;
        let c = server_crate(&mut world, handle);
        c.position = position(t);
        c.rotation = rotation(t);
        c.color = frame as i32;
        world.frame();
        // A tick every frame at 30 fps: the client shows the server's state as it arrives.
        world.assert_converged();
    }
    assert!(world.clients[0].interpolation().is_none());
    assert_eq!(
        shown_value::<Crate>(&world.clients[0]).position,
        position(89.0 / 30.0)
    );
}

#[test]
fn spawn_state_applies_immediately_and_members_that_do_not_interpolate_snap() {
    let mut world = world(MultiplayerConfig::default(), None, 0);
    let spawned = Crate {
        position: Vec3::new(4.0, 5.0, 6.0),
        rotation: Quat::from_rotation_z(0.5),
        color: 9,
    };
    let handle = spawn::<Crate>(&mut world, CRATE);
    *server_crate(&mut world, handle) = spawned.clone();
    world.frame();
    // The frame the spawn arrives: its state, not a blend from the defaults.
    assert_eq!(shown_value::<Crate>(&world.clients[0]), spawned);
    // It stays while nothing changes, before and after the clock starts.
    for _ in 0..30 {
        world.frame();
        assert_eq!(shown_value::<Crate>(&world.clients[0]), spawned);
    }
    assert!(world.clients[0]
        .interpolation()
        .unwrap()
        .render_tick()
        .is_some());
    // A member that is not interpolated snaps in the frame its snapshot arrives; interpolated
    // ones follow `delay` later.
    let moved = Vec3::new(10.0, 5.0, 6.0);
    let c = server_crate(&mut world, handle);
    c.color = 10;
    c.position = moved;
    world.step(2); // one tick
    let shown_now = shown_value::<Crate>(&world.clients[0]);
    assert_eq!(shown_now.color, 10);
    assert_ne!(shown_now.position, moved);
    world.step(12);
    assert_eq!(shown_value::<Crate>(&world.clients[0]).position, moved);

    // A late joiner gets the current state at once, too.
    let late = world.connect_client();
    let mut frames = 0;
    while world.clients[late].scene().iter::<Crate>().next().is_none() {
        world.frame();
        frames += 1;
        assert!(frames < 10);
    }
    let expected = Crate {
        color: 10,
        position: moved,
        ..spawned
    };
    assert_eq!(shown_value::<Crate>(&world.clients[late]), expected);
    world.step(30);
    assert_eq!(shown_value::<Crate>(&world.clients[late]), expected);
}

#[test]
fn adaptive_delay_follows_the_link() {
    let interpolation = InterpolationConfig {
        adaptive: Some(AdaptiveDelayConfig::default()),
        ..InterpolationConfig::default()
    };
    let slow = MultiplayerConfig {
        tick_rate: 10,
        ..config(interpolation)
    };
    let mut world = world(slow, Some(lossy()), 3);
    let handle = spawn::<Crate>(&mut world, CRATE);
    let mut truth = Truth::default();
    let mut error = 0f32;
    for frame in 0..900u32 {
        moving_frame(
            &mut world,
            handle,
            &mut truth,
            f64::from(frame) * FRAME.as_secs_f64(),
        );
        if frame >= 600 {
            let client = &world.clients[0];
            let shown = shown_value::<Crate>(client).position;
            error = error.max(shown.distance(truth.at(render_tick(client)).0));
        }
    }
    let delay = world.clients[0].interpolation().unwrap().delay();
    // 10 Hz with 20 % loss: three intervals of a bit over 0.1 s, plus jitter.
    assert!(
        delay > Duration::from_millis(300) && delay <= AdaptiveDelayConfig::DEFAULT_MAX,
        "{delay:?}"
    );
    assert!(error < 1e-3, "{error}");
}

#[test]
fn hundred_interpolated_boxes_for_240_frames_allocate_nothing() {
    let mut world = World::new(1, library);
    let handles: Vec<NetRef<Crate>> = (0..100)
        .map(|_| spawn::<Crate>(&mut world, CRATE))
        .collect();
    let churn = |world: &mut World, frame: u32| {
        for (i, &h) in handles.iter().enumerate() {
            let t = f64::from(frame) / 30.0 + i as f64;
            let c = world.server.scene_mut().get_mut(h).unwrap();
            c.position = position(t);
            c.rotation = rotation(t);
            c.color = frame as i32;
        }
    };
    // RPCs both ways every 10 frames: the server flashes its first crate on every client, the
    // client nudges its copy of it on the server.
    let client_copy = {
        for _ in 0..10 {
            world.frame();
        }
        let net_id = world.server.net_id(handles[0].node()).unwrap();
        let node = world.clients[0].node(net_id).unwrap();
        world.clients[0].scene().net_ref::<Crate>(node).unwrap()
    };
    let calls = |world: &mut World, frame: u32| {
        if frame % 10 == 0 {
            world.server.rpc(handles[0]).flash(frame as i32).unwrap();
            world.clients[0].rpc(client_copy).nudge(1.0, frame).unwrap();
        }
    };
    // Warm-up: every ring entry, queue and writer reaches its steady size.
    for frame in 0..200 {
        churn(&mut world, frame);
        calls(&mut world, frame);
        world.frame();
    }
    let applied = world.clients[0].stats().snapshots_applied;
    let rpcs = (
        world.server.stats().rpcs_received,
        world.clients[0].stats().rpcs_received,
    );
    assert_no_alloc(
        "240 interpolated frames with RPCs both ways every 10 frames",
        || {
            for frame in 200..440 {
                churn(&mut world, frame);
                calls(&mut world, frame);
                world.frame();
            }
        },
    );
    let client = &world.clients[0];
    assert_eq!(client.stats().snapshots_applied, applied + 240);
    assert_eq!(
        world.server.stats().rpcs_received,
        rpcs.0 + 24,
        "client -> server calls"
    );
    assert_eq!(
        client.stats().rpcs_received,
        rpcs.1 + 24,
        "server -> client calls"
    );
    assert_eq!(client.scene().iter::<Crate>().count(), 100);
    // Interpolated: shown 3 ticks (0.1 s) behind the server, colors snapped.
    let behind = position(439.0 / 30.0 - 0.1);
    let shown_first = client
        .scene()
        .iter::<Crate>()
        .find(|(_, c)| c.position.distance(behind) < 1e-3);
    assert!(shown_first.is_some(), "no box shown 0.1 s behind");
    assert!(client.scene().iter::<Crate>().all(|(_, c)| c.color == 439));
}

#[test]
fn a_local_value_of_an_interpolated_type_on_a_client_is_never_blended_as_a_networked_one() {
    // The runtime walks its rows beside the scene's column of `Crate` while the two sit at the
    // same indices; a value the client adds itself, a spawn after it, and a despawn that moves
    // the column's last value must each break that.
    let mut world = World::new(1, library);
    let root = world.root();
    let mut nodes: Vec<NodeId> = (0..3)
        .map(|_| world.server.spawn(CRATE, root, PeerId::SERVER).unwrap())
        .collect();
    world.step(4);
    let client_root = world.clients[0].scene().root();
    let far = Crate {
        position: Vec3::splat(1000.0),
        ..Crate::default()
    };
    let local = world.clients[0]
        .scene_mut()
        .insert(client_root, "local", far.clone())
        .unwrap();
    nodes.push(world.server.spawn(CRATE, root, PeerId::SERVER).unwrap());
    for frame in 0..90 {
        if frame < 60 {
            for &node in &nodes {
                let handle = world.server.scene().net_ref::<Crate>(node).unwrap();
                world.server.scene_mut().get_mut(handle).unwrap().position.x += 1.0;
            }
        }
        if frame == 20 {
            world.server.despawn(nodes.remove(0));
        }
        world.step(1);
        assert_eq!(
            world.clients[0].scene().get(local),
            Some(&far),
            "frame {frame}"
        );
    }
    world.assert_converged();
}
