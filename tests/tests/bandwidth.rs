#![allow(clippy::unwrap_used)]
//! Bandwidth report: what replicating boxes costs on the wire, at default settings (30 Hz, no
//! byte budget), for 100 and 1000 boxes, printed as a table and pinned.
//!
//! A box is the benchmarks' box type: a `Vec3` position, a `Quat` rotation and an `i32` health
//! that rarely changes. One server, one client over loopback (a perfect network: every snapshot
//! arrives and is acknowledged one frame later). Sizes count whole messages, bus header (7 B)
//! included; transport headers (UDP/ENet) are not.
//!
//! Run `cargo test -p mf-net-tests --test bandwidth -- --nocapture` to see the table.
//!
//! Every byte count here is deterministic (which boxes move and which lose health is integer
//! arithmetic; members are fixed-size), so they are pinned exactly: a change to the snapshot or
//! spawn format, or to what a snapshot carries, fails this test until the numbers are updated on
//! purpose.

use std::fmt::Write as _;
use std::time::Duration;

use glam::{Quat, Vec3};
use mf_net::prelude::*;
use mf_net::replication::SnapshotEncoding;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::harness::{Mp, World};

/// The replicated box.
#[derive(Replicated, Debug, Clone, PartialEq)]
struct Crate {
    #[replicated]
    position: Vec3,
    #[replicated]
    rotation: Quat,
    /// Changes for 1 in 100 moving boxes per frame.
    #[replicated]
    health: i32,
}

const CRATE: SceneIndex = SceneIndex::new(0);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("crate", |scene, root| {
            scene.set_value(
                root,
                Crate {
                    position: Vec3::ZERO,
                    rotation: Quat::IDENTITY,
                    health: 100,
                },
            )
        })
        .unwrap();
    scenes
}

/// Which boxes move each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Motion {
    Idle,
    All,
    /// Box `i` moves when `i % 10 == frame % 10`.
    TenPercent,
}

/// Where box `i` is at `frame`: on a grid, drifting and turning every frame.
fn pose(i: usize, frame: u32) -> (Vec3, Quat) {
    let home = Vec3::new((i % 100) as f32 * 2.0, 0.0, (i / 100) as f32 * 2.0);
    let t = frame as f32;
    (
        home + Vec3::new(t * 0.01, 0.5, -t * 0.02),
        Quat::from_rotation_y(t * 0.05 + i as f32 * 0.1),
    )
}

/// One measured setting.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Report {
    boxes: usize,
    /// Bytes of the spawn messages for every box (one message per box).
    spawn_bytes: u64,
    /// The snapshot with nothing changed.
    idle_snapshot: usize,
    /// Snapshot bytes over one second (30 snapshots) with every box moving.
    all_second: u64,
    /// Ack bytes the client sent over that second.
    ack_second: u64,
    /// One snapshot with every box moving.
    all_snapshot: usize,
    /// Snapshot bytes over one second with a tenth of the boxes moving.
    tenth_second: u64,
    /// Bytes over one second with nothing moving.
    idle_second: u64,
}

struct Run {
    world: World,
    handles: Vec<NetRef<Crate>>,
    frame: u32,
}

impl Run {
    fn client(&self) -> &Mp {
        &self.world.clients[0]
    }

    /// One frame with `motion`; returns the size of the snapshot the client received.
    fn frame(&mut self, motion: Motion) -> usize {
        self.frame += 1;
        let f = self.frame;
        let mut mover = 0usize;
        for (i, &h) in self.handles.iter().enumerate() {
            let moves = match motion {
                Motion::Idle => false,
                Motion::All => true,
                Motion::TenPercent => i % 10 == f as usize % 10,
            };
            if !moves {
                continue;
            }
            let (position, rotation) = pose(i, f);
            let b = self.world.server.scene_mut().get_mut(h).unwrap();
            b.position = position;
            b.rotation = rotation;
            // 1 in 100 of the moving boxes loses a point of health.
            if (mover + f as usize) % 100 == 0 {
                b.health -= 1;
            }
            mover += 1;
        }
        let applied = self.client().stats().snapshots_applied;
        self.world.frame();
        assert_eq!(
            self.client().stats().snapshots_applied,
            applied + 1,
            "one snapshot per frame, applied"
        );
        self.client().stats().last_snapshot_bytes
    }

    /// Thirty frames (one second at 30 Hz) with `motion`: bytes the client received and sent.
    fn second(&mut self, motion: Motion) -> (u64, u64) {
        let (down, up) = (
            self.client().stats().bytes_received,
            self.client().stats().bytes_sent,
        );
        for _ in 0..30 {
            self.frame(motion);
        }
        (
            self.client().stats().bytes_received - down,
            self.client().stats().bytes_sent - up,
        )
    }
}

fn measure(boxes: usize) -> Report {
    measure_with(boxes, SnapshotEncoding::Bytes)
}

fn measure_with(boxes: usize, snapshot_encoding: SnapshotEncoding) -> Report {
    let config = MultiplayerConfig {
        snapshot_encoding,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(1, config, None, 0, library);
    assert_eq!(world.server.config().tick_rate, 30);
    assert_eq!(world.server.config().max_snapshot_bytes, 0);
    let root = world.root();
    let mut handles = Vec::with_capacity(boxes);
    for i in 0..boxes {
        let node = world.server.spawn(CRATE, root, PeerId::SERVER).unwrap();
        let h = world.server.scene().net_ref::<Crate>(node).unwrap();
        let (position, rotation) = pose(i, 0);
        let b = world.server.scene_mut().get_mut(h).unwrap();
        b.position = position;
        b.rotation = rotation;
        handles.push(h);
    }
    let received = world.clients[0].stats().bytes_received;
    world.frame();
    let client = &world.clients[0];
    assert_eq!(client.stats().networked_nodes, boxes, "every spawn applied");
    // The spawn frame also carries that tick's snapshot (idle: the spawned states are stamped
    // tick 0).
    let idle_snapshot = client.stats().last_snapshot_bytes;
    let spawn_bytes = client.stats().bytes_received - received - idle_snapshot as u64;
    let mut run = Run {
        world,
        handles,
        frame: 0,
    };

    let mut report = Report {
        boxes,
        spawn_bytes,
        idle_snapshot,
        ..Report::default()
    };
    // Warm up: acks in flight, every box moved once.
    for _ in 0..10 {
        run.frame(Motion::All);
    }
    run.frame(Motion::Idle);
    run.frame(Motion::Idle);
    report.all_snapshot = run.frame(Motion::All);
    let (down, up) = run.second(Motion::All);
    report.all_second = down;
    report.ack_second = up;
    for _ in 0..10 {
        run.frame(Motion::TenPercent);
    }
    report.tenth_second = run.second(Motion::TenPercent).0;
    run.frame(Motion::Idle);
    run.frame(Motion::Idle);
    report.idle_second = run.second(Motion::Idle).0;
    run.world.assert_converged();
    report
}

impl Report {
    /// Snapshot bytes per moving box with every box moving (the fixed 9 bytes of a snapshot
    /// left out).
    fn per_moving_box(&self) -> f64 {
        (self.all_second - 30 * self.idle_snapshot as u64) as f64 / (30 * self.boxes) as f64
    }

    fn per_moving_box_tenth(&self) -> f64 {
        (self.tenth_second - 30 * self.idle_snapshot as u64) as f64 / (3 * self.boxes) as f64
    }

    fn per_idle_node(&self) -> f64 {
        (self.idle_second - 30 * self.idle_snapshot as u64) as f64 / (30 * self.boxes) as f64
    }

    fn spawn_per_node(&self) -> f64 {
        self.spawn_bytes as f64 / self.boxes as f64
    }
}

fn table(reports: &[Report]) -> String {
    let mut out = String::new();
    let row = |out: &mut String, label: &str, cell: &dyn Fn(&Report) -> String| {
        let _ = write!(out, "| {label:<44} |");
        for r in reports {
            let _ = write!(out, " {:>12} |", cell(r));
        }
        out.push('\n');
    };
    let _ = write!(
        out,
        "| {:<44} |",
        "default settings (30 Hz, no byte budget)"
    );
    for r in reports {
        let _ = write!(out, " {:>6} boxes |", r.boxes);
    }
    out.push('\n');
    let _ = write!(out, "|{:-<46}|", "");
    for _ in reports {
        let _ = write!(out, "{:->13}:|", "");
    }
    out.push('\n');
    row(
        &mut out,
        "snapshot bytes per moving box (all moving)",
        &|r| format!("{:.2}", r.per_moving_box()),
    );
    row(
        &mut out,
        "snapshot bytes per moving box (10 % moving)",
        &|r| format!("{:.2}", r.per_moving_box_tenth()),
    );
    row(&mut out, "snapshot bytes per idle node", &|r| {
        format!("{:.2}", r.per_idle_node())
    });
    row(&mut out, "idle snapshot bytes", &|r| {
        r.idle_snapshot.to_string()
    });
    row(&mut out, "snapshot bytes, all moving", &|r| {
        r.all_snapshot.to_string()
    });
    row(&mut out, "spawn bytes per node", &|r| {
        format!("{:.2}", r.spawn_per_node())
    });
    row(&mut out, "spawn bytes, every box", &|r| {
        r.spawn_bytes.to_string()
    });
    row(&mut out, "bytes/s per client, all moving", &|r| {
        r.all_second.to_string()
    });
    row(&mut out, "bytes/s per client, 10 % moving", &|r| {
        r.tenth_second.to_string()
    });
    row(&mut out, "bytes/s per client, idle", &|r| {
        r.idle_second.to_string()
    });
    row(&mut out, "bytes/s client → server (acks)", &|r| {
        r.ack_second.to_string()
    });
    out
}

#[test]
fn bandwidth_report() {
    let reports = [measure(100), measure(1000)];
    println!("{}", table(&reports));

    // A snapshot is the bus header (7 B), a flags byte and a terminating 0: 9 B when idle, and
    // an unchanged node costs nothing.
    // A moving box's entry: net id varint (1 B below 128, else 2 B) + length (1 B) + change
    // mask (1 B) + Vec3 (12 B) + Quat (16 B) = 31 or 32 B, + 4 B when its health changed (1 in
    // 100 moving boxes per frame with every box moving).
    // 100 boxes: 9 + 100 × 31 + 1 × 4 = 3113. 1000 boxes: 9 + 127 × 31 + 873 × 32 + 10 × 4.
    // A spawn: header (7 B) + first net id + scene index (1 B) + parent by path ("/root": 7 B)
    // + name ("crate#<id>") + authority + node count + absent count (1 B each) + the full state
    // (mask + 32 B of values: 33 B).
    let expected = [
        Report {
            boxes: 100,
            spawn_bytes: 5534,
            idle_snapshot: 9,
            all_second: 93_390,
            ack_second: 240,
            all_snapshot: 3113,
            tenth_second: 9570,
            idle_second: 270,
        },
        Report {
            boxes: 1000,
            spawn_bytes: 57_179,
            idle_snapshot: 9,
            all_second: 957_660,
            ack_second: 240,
            all_snapshot: 31_922,
            tenth_second: 96_009,
            idle_second: 270,
        },
    ];
    assert_eq!(reports, expected, "pinned byte counts changed");
    assert_eq!(9 + 127 * 31 + 873 * 32 + 10 * 4, 31_922);
    for r in &reports {
        // The spec's budget: about 32 bytes per moving box at default settings.
        assert!(
            r.per_moving_box() <= 32.0,
            "{} B per moving box",
            r.per_moving_box()
        );
        assert!(r.per_moving_box_tenth() <= 32.0);
        assert_eq!(r.per_idle_node(), 0.0);
        assert_eq!(r.idle_snapshot, 9);
    }
}

/// [`Crate`] with its position quantized: 16 bits per coordinate over ±512 (a step of 1.6 cm),
/// 6 bytes instead of 12.
#[derive(Replicated, Debug, Clone, PartialEq)]
struct QuantizedCrate {
    #[replicated(quantize(min = -512.0, max = 512.0, bits = 16))]
    position: Vec3,
    #[replicated]
    rotation: Quat,
    #[replicated]
    health: i32,
}

const QUANTIZED_CRATE: SceneIndex = SceneIndex::new(0);

fn quantized_library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("quantized_crate", |scene, root| {
            scene.set_value(
                root,
                QuantizedCrate {
                    position: Vec3::ZERO,
                    rotation: Quat::IDENTITY,
                    health: 100,
                },
            )
        })
        .unwrap();
    scenes
}

/// Snapshot bytes over one second (30 snapshots) with all `boxes` quantized boxes moving as in
/// [`pose`], after a warm-up; and the idle snapshot's size. In the byte format (the bench box
/// below has the bit-packed figures).
fn measure_quantized(boxes: usize) -> (u64, usize) {
    let mut world = World::with_encoding(1, SnapshotEncoding::Bytes, quantized_library);
    let root = world.root();
    let mut handles = Vec::with_capacity(boxes);
    for i in 0..boxes {
        let node = world
            .server
            .spawn(QUANTIZED_CRATE, root, PeerId::SERVER)
            .unwrap();
        let h = world
            .server
            .scene()
            .net_ref::<QuantizedCrate>(node)
            .unwrap();
        let (position, rotation) = pose(i, 0);
        let b = world.server.scene_mut().get_mut(h).unwrap();
        b.position = position;
        b.rotation = rotation;
        handles.push(h);
    }
    world.frame();
    let idle_snapshot = world.clients[0].stats().last_snapshot_bytes;
    let frame = |world: &mut World, f: u32| {
        for (i, &h) in handles.iter().enumerate() {
            let (position, rotation) = pose(i, f);
            let b = world.server.scene_mut().get_mut(h).unwrap();
            b.position = position;
            b.rotation = rotation;
        }
        world.frame();
    };
    for f in 1..=10 {
        frame(&mut world, f);
    }
    let down = world.clients[0].stats().bytes_received;
    for f in 11..=40 {
        frame(&mut world, f);
    }
    let second = world.clients[0].stats().bytes_received - down;
    world.assert_converged();
    (second, idle_snapshot)
}

#[test]
fn bandwidth_quantized_position() {
    // A moving box's entry: net id varint (1 B below 128, else 2 B) + length (1 B) + change mask
    // (1 B) + quantized Vec3 (3 × 2 B) + Quat (16 B) = 25 or 26 B (31 or 32 B unquantized; the
    // z coordinate moves 0.02 a frame, more than the 1.6 cm step, so every box is resent every
    // frame). Health never changes here.
    // 100 boxes: 30 × (9 + 100 × 25). 1000 boxes: 30 × (9 + 127 × 25 + 873 × 26).
    assert_eq!(30 * (9 + 127 * 25 + 873 * 26), 776_460);
    for (boxes, expected) in [(100, 75_270u64), (1000, 776_460u64)] {
        let (second, idle) = measure_quantized(boxes);
        let per_box = (second - 30 * idle as u64) as f64 / (30 * boxes) as f64;
        println!(
            "quantized position (16 bits): {boxes} boxes, {per_box:.2} snapshot bytes per moving \
             box, {second} bytes/s"
        );
        assert_eq!(idle, 9);
        assert_eq!(
            second, expected,
            "pinned byte count changed ({boxes} boxes)"
        );
    }
}

/// The default box bit-packed: its unquantized floats travel as differences of their bits from
/// the acknowledged baseline's (a bobbing component moves by some thousands of representable
/// values a tick, under 20 bits; a component that stays, one bit). Pinned beside the byte
/// format's figures: 13.7 B a moving box (15.2 when every entry carried its length) where the
/// byte format takes 31.9 B (the target: at most 26 B); idle snapshots are the same
/// 9 B.
#[test]
fn bandwidth_report_bit_packed() {
    let reports = [
        measure_with(100, SnapshotEncoding::Bits),
        measure_with(1000, SnapshotEncoding::Bits),
    ];
    println!("bit-packed snapshots\n{reports:#?}");
    let pinned: Vec<_> = reports
        .iter()
        .map(|r| (r.all_snapshot, r.all_second, r.tenth_second, r.idle_second))
        .collect();
    assert_eq!(
        pinned,
        [(1378, 38_708, 4870, 270), (13_091, 372_003, 45_461, 270)],
        "pinned byte counts changed"
    );
}

/// The benchmarks' box as games would send it: a 16-bit quantized position, a 12-bit
/// smallest-three rotation and a rarely changing `i32`.
#[derive(Replicated, Debug, Clone, PartialEq)]
struct BenchBox {
    #[replicated(quantize(min = -512.0, max = 512.0, bits = 16))]
    position: Vec3,
    #[replicated(quantize(smallest_three, bits = 12))]
    rotation: Quat,
    #[replicated]
    health: i32,
}

fn bench_box_library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("bench_box", |scene, root| {
            scene.set_value(
                root,
                BenchBox {
                    position: Vec3::ZERO,
                    rotation: Quat::IDENTITY,
                    health: 100,
                },
            )
        })
        .unwrap();
    scenes
}

/// Snapshot bytes over one second (30 snapshots) with all `boxes` bench boxes moving as in
/// [`pose`] (one in 100 losing a point of health each frame), after a warm-up, with
/// `snapshot_encoding` and a link of `latency` each way; and the idle snapshot's size.
fn measure_bench_box(
    boxes: usize,
    snapshot_encoding: SnapshotEncoding,
    latency: Duration,
) -> (u64, usize) {
    measure_bench_box_at(30, boxes, snapshot_encoding, latency)
}

/// [`measure_bench_box`] at `tick_rate` ticks a second, a frame a tick: bytes over one second
/// (`tick_rate` snapshots).
fn measure_bench_box_at(
    tick_rate: u8,
    boxes: usize,
    snapshot_encoding: SnapshotEncoding,
    latency: Duration,
) -> (u64, usize) {
    let config = MultiplayerConfig {
        snapshot_encoding,
        tick_rate,
        ..MultiplayerConfig::default()
    };
    let conditions = NetworkConditions {
        latency,
        ..NetworkConditions::perfect()
    };
    let mut world = World::with(1, config, Some(conditions), 0, bench_box_library);
    world.dt = Duration::from_secs(1) / u32::from(tick_rate);
    let root = world.root();
    let handles: Vec<_> = (0..boxes)
        .map(|_| {
            let node = world.server.spawn(CRATE, root, PeerId::SERVER).unwrap();
            world.server.scene().net_ref::<BenchBox>(node).unwrap()
        })
        .collect();
    // Warm-ups of 40 and 20 frames at 30 Hz, as long at other rates.
    let frames = |at_30: u32| at_30 * u32::from(tick_rate) / 30;
    for _ in 0..frames(40) {
        world.frame();
    }
    let idle_snapshot = world.clients[0].stats().last_snapshot_bytes;
    let frame = |world: &mut World, f: u32| {
        for (i, &h) in handles.iter().enumerate() {
            let (position, rotation) = pose(i, f);
            let b = world.server.scene_mut().get_mut(h).unwrap();
            b.position = position;
            b.rotation = rotation;
            if (i + f as usize) % 100 == 0 {
                b.health -= 1;
            }
        }
        world.frame();
    };
    let warm = frames(20);
    for f in 1..=warm {
        frame(&mut world, f);
    }
    let down = world.clients[0].stats().bytes_received;
    for f in warm + 1..=warm + u32::from(tick_rate) {
        frame(&mut world, f);
    }
    let second = world.clients[0].stats().bytes_received - down;
    for _ in 0..frames(40) {
        world.frame();
    }
    world.assert_converged();
    (second, idle_snapshot)
}

/// Bytes per moving box and tick in a second of [`measure_bench_box_at`].
fn per_moving_box(tick_rate: u8, boxes: usize, (second, idle): (u64, usize)) -> f64 {
    let ticks = u64::from(tick_rate);
    (second - ticks * idle as u64) as f64 / (ticks * boxes as u64) as f64
}

/// At 128 Hz a client's acknowledgements take four times as many ticks: a baseline reaches 64
/// ticks back there (half a second), so that a client 150 or 200 ms away each way (a round
/// trip of 39 to 52 ticks) is still sent deltas. (The boxes move as far each tick as at
/// 30 Hz, so deltas across as many ticks are larger.) Reaching 32 ticks back at every rate,
/// those clients got every moving box whole: 1 793 408 B/s, 14.00 B a box.
#[test]
fn bandwidth_bench_box_at_128_hz() {
    // Each way; bytes a second and the idle snapshot's size (a byte more once the default
    // baseline is over a tick back); at most so many bytes a moving box.
    for (latency, expected, most) in [
        (0, (535_906, 9), 6.0),
        (50, (1_160_576, 10), 10.0),
        (150, (1_173_120, 10), 10.0),
        (200, (1_178_880, 10), 10.0),
    ] {
        let latency = Duration::from_millis(latency);
        let m = measure_bench_box_at(128, 1000, SnapshotEncoding::Bits, latency);
        let per_box = per_moving_box(128, 1000, m);
        println!(
            "128 Hz, {latency:?} each way: {} B/s, {per_box:.2} B per moving box",
            m.0
        );
        assert_eq!(m, expected, "pinned byte count changed");
        assert!(per_box <= most, "{per_box:.2} B per moving box");
    }
}

#[test]
fn bandwidth_bench_box_bit_packed() {
    // The byte format: id (1–2 B) + length + mask + position (6 B) + rotation (4 B) = 13–14 B,
    // + 4 B for a health change.
    let (second, idle) = measure_bench_box(1000, SnapshotEncoding::Bytes, Duration::ZERO);
    assert_eq!((second, idle), (447_660, 9), "pinned byte count changed");
    // Bit-packed: each box coded against its state one tick before (loopback: every snapshot
    // is acknowledged before the next goes out), then with 50 ms of latency each way (a
    // baseline 3 to 4 ticks back). The targets: at most 6 and 8 B per moving box.
    for (latency, expected, target) in [(0, 125_592, 6.0), (50, 154_236, 8.0)] {
        let latency = Duration::from_millis(latency);
        let (second, idle) = measure_bench_box(1000, SnapshotEncoding::Bits, latency);
        let per_box = (second - 30 * idle as u64) as f64 / (30 * 1000) as f64;
        println!("bit-packed, {latency:?} each way: {second} B/s, {per_box:.2} B per moving box");
        assert_eq!((second, idle), (expected, 9), "pinned byte count changed");
        assert!(per_box <= target, "{per_box:.2} B per moving box");
    }
}
