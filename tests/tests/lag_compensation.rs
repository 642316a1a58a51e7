#![allow(clippy::unwrap_used)]
//! Lag compensation with `LagHistory`, deterministic over `SimulatedTransport`:
//!
//! - a server and one client 150 ms apart (75 ms each way), interpolation on, a target moving
//!   at constant speed along x across the `u32` tick wrap: the client fires at the target it
//!   shows, its input carrying the render tick it was at; the server's step, rewinding the
//!   target to that tick, finds it where the client showed it (a hit within a radius smaller
//!   than the distance the target moves in a round trip), while the live position is outside
//!   that radius (a miss without rewinding);
//! - a modified client claiming views far behind or ahead of its inputs: the server's
//!   `view_tick` stays within what a `LagHistory` can serve, and counts the claims outside;
//! - zero allocations: recording 100 moving nodes every tick, with gaps and a late tick, and
//!   querying them, once every tick slot has held them.

use std::time::Duration;

use glam::Vec3;
use mf_net::interpolation::Interpolate;
use mf_net::prediction::{LagHistory, Simulation};
use mf_net::prelude::*;
use mf_net::replication::message_ids;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::NetworkConditions;
use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};
use mf_net::wire::{NetReader, NetWriter};
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::{messages, Dyn, Mp, World};

/// Something to shoot at: its position is interpolated on clients.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Target {
    #[replicated(interpolate)]
    position: Vec3,
}

const TARGET: SceneIndex = SceneIndex::new(0);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("target", |scene, root| {
            scene.set_value(root, Target::default())
        })
        .unwrap();
    scenes
}

/// 60 frames per second against the server's 30 ticks: a tick every other frame.
const FRAME: Duration = Duration::from_nanos(16_666_667);
/// The target's speed along x, in units per second.
const SPEED: f32 = 3.0;
/// The latency each way.
const ONE_WAY: Duration = Duration::from_millis(75);
/// How close a shot must pass the target's centre to hit it. Smaller than the distance the
/// target moves in a round trip (`SPEED` × 0.15 s = 0.45).
const HIT_RADIUS: f32 = 0.25;
/// How far the rewound position may be from what the client showed.
const EPSILON: f32 = 1e-3;
/// The first tick: the measured frames run across the `u32` tick wrap.
const FIRST_TICK: u32 = u32::MAX - 150;

fn position(t: f64) -> Vec3 {
    Vec3::new(SPEED * t as f32, 1.0, -2.0)
}

/// The client's only target, as it shows it this frame.
fn shown(client: &Mp) -> Vec3 {
    let mut all = client.scene().iter::<Target>();
    let (_, target) = all.next().expect("spawned on the client");
    assert!(all.next().is_none());
    target.position
}

/// The shooter's input of one tick: whether it fires, and at which x it saw the target.
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Trigger {
    fire: bool,
    aim: Vec3,
}

/// What the server found for one shot: how far the rewound and the live target were from the
/// aim.
#[derive(Debug, Clone, Copy)]
struct Shot {
    rewound: f32,
    live: f32,
    tick: u32,
}

#[test]
fn a_shot_travels_with_its_render_tick_and_hits_only_with_rewind() {
    let config = MultiplayerConfig {
        first_tick: FIRST_TICK,
        ..MultiplayerConfig::default()
    };
    assert!(config.interpolation.enabled);
    let link = NetworkConditions::laggy(ONE_WAY, Duration::ZERO);
    let mut world = World::with(1, config, Some(link), 3, library);
    world.dt = FRAME;
    let root = world.root();
    let node = world.server.spawn(TARGET, root, PeerId::SERVER).unwrap();
    let target = world.server.scene().net_ref::<Target>(node).unwrap();
    let shooter = world.clients[0].local_peer_id();

    // One second of history at the server's tick rate.
    let tick_rate = u32::from(world.server.tick_rate());
    let mut history = LagHistory::<Target, Vec3>::new(tick_rate, |t| t.position);
    assert_eq!(history.capacity(), 32);
    let interval = 1.0 / f64::from(tick_rate);

    let mut server_sim = Simulation::<Trigger>::new();
    let mut client_sim = Simulation::<Trigger>::new();
    let mut shots: Vec<Shot> = Vec::new();
    for frame in 0..600u32 {
        let server = &mut world.server;
        server.begin_frame(FRAME);
        server_sim.run(
            server,
            |_| Trigger::default(),
            |step| {
                // The target moves one tick, and the history keeps where it was.
                let t = f64::from(step.tick().wrapping_sub(FIRST_TICK)) * interval;
                step.scene_mut().get_mut(target).unwrap().position = position(t);
                history.record(step.scene(), step.tick());
                let Some(trigger) = step.input(shooter).filter(|i| i.fire) else {
                    return;
                };
                let render_tick = step.view_tick(shooter).expect("the shooter interpolates");
                let rewound = history.at(node, render_tick).expect("within the history");
                let live = step.scene().get(target).unwrap().position;
                shots.push(Shot {
                    rewound: rewound.distance(trigger.aim),
                    live: live.distance(trigger.aim),
                    tick: step.tick(),
                });
            },
        );
        server.end_frame();
        let client = &mut world.clients[0];
        client.begin_frame(FRAME);
        // From the third second on, the client fires every frame at the target it shows.
        let fire = frame >= 180 && client.scene().iter::<Target>().next().is_some();
        let aim = if fire { shown(client) } else { Vec3::ZERO };
        client_sim.run(client, |_| Trigger { fire, aim }, |_| {});
        client.end_frame();
    }
    assert!(shots.len() > 180, "{} shots arrived", shots.len());
    let before_wrap = shots.iter().any(|s| s.tick >= FIRST_TICK);
    let after_wrap = shots.iter().any(|s| s.tick < FIRST_TICK);
    assert!(before_wrap && after_wrap, "the shots span the tick wrap");
    let worst_rewind = shots.iter().map(|s| s.rewound).fold(0f32, f32::max);
    let nearest_live = shots.iter().map(|s| s.live).fold(f32::MAX, f32::min);
    // The view tick travels in 256ths of a tick: the rewound target is within that much of
    // where the client showed it.
    let quantum = SPEED / tick_rate as f32 / 256.0;
    assert!(
        worst_rewind < HIT_RADIUS && worst_rewind <= quantum + EPSILON,
        "rewound {worst_rewind} from the aim"
    );
    // Without rewinding, every shot misses: the client is the latency plus the interpolation
    // delay behind when it fires, and the shot takes the latency to arrive.
    assert!(
        nearest_live > HIT_RADIUS,
        "the live target only {nearest_live} from the aim"
    );
    let stats = world.clients[0].stats();
    assert_eq!(stats.clock_snaps, 0, "{stats:?}");
    eprintln!(
        "{} shots: rewound within {worst_rewind}, live at least {nearest_live} away",
        shots.len()
    );
}

/// A scene of 100 targets with positions by index.
fn crowd() -> (Scene, Vec<NetRef<Target>>) {
    let mut scene = Scene::new();
    let root = scene.root();
    let targets = (0..100)
        .map(|i| {
            let position = Vec3::new(i as f32, 0.0, 0.0);
            scene
                .insert(root, &format!("t{i}"), Target { position })
                .unwrap()
        })
        .collect();
    (scene, targets)
}

#[test]
fn recording_allocates_nothing_once_every_slot_held_the_nodes() {
    let (mut scene, targets) = crowd();
    let mut history = LagHistory::<Target, Vec3>::new(30, |t| t.position);
    let first = u32::MAX - 500; // across the wrap, too
                                // Warm-up: every slot holds the 100 nodes once.
    for i in 0..history.capacity() {
        history.record(&scene, first.wrapping_add(i));
    }
    let probe = targets[37].node();
    let mut tick = first.wrapping_add(history.capacity() - 1);
    let mut checksum = 0.0f32;
    assert_no_alloc("recording and querying 100 nodes for 1000 ticks", || {
        for step in 0..1000u32 {
            for (_, target) in scene.iter_mut::<Target>() {
                target.position.x += 0.1;
            }
            // Every 7th frame spans three ticks (two skipped); every 11th a late older tick
            // is recorded again.
            tick = tick.wrapping_add(if step % 7 == 0 { 3 } else { 1 });
            history.record(&scene, tick);
            if step % 11 == 0 {
                history.record(&scene, tick.wrapping_sub(1));
            }
            let render = f64::from(tick) - 4.5;
            checksum += history.at(probe, render).map_or(0.0, |p| p.x);
            checksum += history.nodes_at(tick).map(|(_, p)| p.x).sum::<f32>();
            checksum += history.span().map_or(0, |(a, _)| a & 1) as f32;
        }
    });
    std::hint::black_box(checksum);
    assert_eq!(history.nodes_at(tick).count(), 100);
    assert_eq!(history.span().map(|(_, newest)| newest), Some(tick));
    // The probe moved 0.1 a step: 4.5 ticks back (a gap may lie between) it was at most
    // 0.45 behind, and never ahead.
    let now = scene.get(targets[37]).unwrap().position;
    let back = history.at(probe, f64::from(tick) - 4.5).unwrap();
    assert!(
        back.x < now.x && now.x - back.x <= 0.45 + 1e-3,
        "{back} {now}"
    );
    // `Interpolate` is what blends: halfway between two whole ticks.
    let (a, b) = (
        history.at(probe, f64::from(tick) - 2.0).unwrap(),
        history.at(probe, f64::from(tick) - 1.0).unwrap(),
    );
    let half = history.at(probe, f64::from(tick) - 1.5).unwrap();
    assert!(half.distance(a.interpolate(&b, 0.5)) < 1e-5);
}

/// A client transport that rewrites the view of every input it sends: a modified client
/// claiming to have seen the world at any tick it likes (`claim(tick)`: ticks behind).
struct ClaimViews<T> {
    inner: T,
    claim: fn(u32) -> u32,
}

impl<T: Transport> ClaimViews<T> {
    fn rewrite(&self, packet: &[u8]) -> Option<Vec<u8>> {
        let (header, payload) = packet.split_at_checked(7)?;
        if u16::from_le_bytes([header[1], header[2]]) != message_ids::INPUT {
            return None;
        }
        let mut r = NetReader::new(payload);
        let mut w = NetWriter::new();
        w.write_bytes(header);
        let newest = r.read_var_u32().ok()?;
        let count = r.read_u8().ok()?;
        w.write_var_u32(newest);
        w.write_u8(count);
        for k in 0..u32::from(count) {
            let n = r.read_len().ok()?;
            w.write_len(n);
            w.write_bytes(r.read_bytes(n.saturating_sub(1)).ok()?);
            if r.read_var_u32().ok()? != 0 {
                r.read_u8().ok()?;
            }
            let tick = newest.wrapping_sub(u32::from(count) - 1 - k);
            w.write_var_u32((self.claim)(tick).wrapping_add(1));
            w.write_u8(0);
        }
        Some(w.into_vec())
    }
}

impl<T: Transport> Transport for ClaimViews<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        match self.rewrite(data) {
            Some(claimed) => self.inner.send(peer, channel, &claimed),
            None => self.inner.send(peer, channel, data),
        }
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        self.inner.poll_event()
    }

    fn advance(&mut self, dt: Duration) {
        self.inner.advance(dt);
    }

    fn flush(&mut self) {
        self.inner.flush();
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.inner.disconnect(peer, reason);
    }

    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }
}

/// What a modified client claims: even ticks 2³¹ behind (in serial order: as far ahead),
/// ticks divisible by three 100 000 behind (over half an hour at 30 Hz), others 3 behind.
fn wild_claim(tick: u32) -> u32 {
    match tick {
        t if t % 2 == 0 => 1 << 31,
        t if t % 3 == 0 => 100_000,
        _ => 3,
    }
}

#[test]
fn view_ticks_a_client_claims_outside_the_window_are_clamped_and_counted() {
    let config = MultiplayerConfig::default();
    let net = LoopbackNetwork::new();
    let mut server = Mp::new(library(), config);
    let listener: Dyn = Box::new(net.listen("game", 4).unwrap());
    server.start_server(listener, messages()).unwrap();
    let mut client = Mp::new(library(), config);
    let open = |data| -> Dyn {
        Box::new(ClaimViews {
            inner: net.connect("game", data),
            claim: wild_claim,
        })
    };
    client.start_client(open, messages()).unwrap();
    let mut server_sim = Simulation::<Trigger>::new();
    let mut client_sim = Simulation::<Trigger>::new();
    let mut views = Vec::new();
    for frame in 0..120 {
        server.begin_frame(FRAME);
        if frame == 10 {
            let root = server.scene().root();
            server.spawn(TARGET, root, PeerId::SERVER).unwrap();
        }
        let shooter = client.local_peer_id();
        server_sim.run(
            &mut server,
            |_| Trigger::default(),
            |step| {
                if let Some(view) = step.view_tick(shooter) {
                    views.push((step.tick(), view));
                }
            },
        );
        server.end_frame();
        client.begin_frame(FRAME);
        client_sim.run(&mut client, |_| Trigger::default(), |_| {});
        client.end_frame();
    }
    assert!(views.len() > 30, "{} views", views.len());
    let max = f64::from(LagHistory::<Target, Vec3>::MAX_TICKS);
    for &(tick, view) in &views {
        let behind = f64::from(tick) - view;
        assert!((0.0..=max).contains(&behind), "tick {tick}: view {view}");
        let expected = match wild_claim(tick) {
            3 => 3.0,
            claim if claim == 1 << 31 => 0.0,
            _ => max,
        };
        assert_eq!(behind, expected, "tick {tick}");
    }
    let peer = client.local_peer_id();
    let inputs = server.peer_stats(peer).unwrap().inputs;
    let outside = views.iter().filter(|v| wild_claim(v.0) != 3).count() as u64;
    assert_eq!(inputs.views_out_of_window, outside, "{inputs:?}");
}
