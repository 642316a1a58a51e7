//! One server and 64 clients over an in-process loopback network, 1000 and 10 000 boxes, with
//! real acknowledgements: the server's tick, the clients' frames and the server's processing of
//! the clients' acks, each measured apart.
//!
//! Every benchmark runs a [`ScaleWorld`]: real `Multiplayer` instances (one server, 64 clients)
//! over one `LoopbackNetwork`, default settings (30 Hz, interpolation enabled) but for the byte
//! budget, the frame length exactly one tick interval, so that every frame is one network tick.
//! One iteration is one frame: the server moves the boxes (all of them, or a different tenth
//! each frame), the server runs `begin_frame` (receiving the 64 acks of the previous tick) and
//! `end_frame` (capture of every box, one snapshot per client), then every client runs
//! `begin_frame` (receiving and applying its snapshot, blending interpolated members) and
//! `end_frame` (sending its ack). Only one part of the frame is timed; the rest runs untimed in
//! divan's input generation (`with_inputs`), which is why these benchmarks run one iteration
//! per sample (`sample_size = 1`: a larger sample size panics).
//!
//! - `server_tick/<motion>/<kind>/<budget>/<boxes>`: the server's `begin_frame` + `end_frame`;
//! - `client_frames/<motion>/<kind>/<budget>/<boxes>`: the 64 clients' `begin_frame` +
//!   `end_frame` (their sum: per client, divide by 64);
//!
//! both counted per box × client (64 × boxes items: the entries of a tick's snapshots when
//! every box moves and nothing limits them), with `<motion>` `all` or `ten_percent`, `<kind>`
//! `plain` ([`BoxEntity`]), `interpolated` ([`InterpBox`]: position and rotation
//! `#[replicated(interpolate)]`) or `quantized` ([`QuantBox`]: 16-bit position, 12-bit
//! smallest-three rotation), `<budget>` the server's `max_snapshot_bytes` (0: none, 1200). The
//! whole frame is `server_tick + client_frames` of the same scenario.
//!
//! - `acks/server_begin_frame/<boxes>`: the server's `begin_frame` alone, with every box moving
//!   and no budget: receiving the 64 acks of snapshots that each carried every box (one
//!   `ack` of a ring entry of `boxes` net ids per client). Counted per entry acknowledged
//!   (64 × boxes); per ack, divide the median by 64.
//!
//! - `encoding/<part>_<encoding>/1000`: the server's tick and the clients' frames with
//!   quantized boxes, every box moving and no budget, in the byte and the bit-packed snapshot
//!   encoding; `server_tick_evicted_<encoding>`, the server's tick with the caches emptied
//!   before it, in the untimed part (the clients' frames leave different data in them in the
//!   two encodings, which a server on its own machine does not share);
//!   `client_frame_alone_<encoding>`, one client's frame in a world of one client (its tables
//!   not evicted by 63 other clients' frames; the server's tick still runs in the process);
//!   `server_tick_alone_<encoding>`, the server's tick in a world of one client (the coding of
//!   each entry, which no other client shares); `server_tick_spread_<encoding>`, the server's
//!   tick with the clients at different distances: client `i` runs its frame (receives its
//!   snapshots, acknowledges them) every `1 + i % 4` frames, so that at each tick they stand
//!   1 to 4 ticks behind, in no particular order, as clients at different round trips do;
//!   `server_tick_sealed_<encoding>` and `client_frames_sealed_<encoding>`, the same with every
//!   packet through the secure layer ([`Sealed`]: sealed by its sender, opened by its
//!   receiver), as a deployed game's packets go.
//!
//! - `burst/second_tick_<encoding>/10000`: 10 000 quantized boxes idle since their spawn, one
//!   client, then every box moving: the server's tick of the second frame of motion (the
//!   bit-packed server's value history grows then). A fresh world per sample.
//! - `burst/join_<encoding>/10000`: 10 000 quantized boxes spawned at once, one client: the
//!   frames (server's and client's) until the client has applied every spawn, as a late
//!   joiner to a large world gets them. A fresh world per sample.
//!
//! Run: `cargo bench -p mf-net-benches --bench scale` (a few minutes: most of it is the setup
//! of the 10 000-box worlds and the untimed part of each frame). Run as a test
//! (`cargo test --benches`), each benchmark runs once in a world of two clients and 100 boxes.

use std::cell::RefCell;

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher};
use mf_net::replication::SnapshotEncoding;
use mf_net_benches::{
    running_as_test, BenchBox, BoxEntity, InterpBox, Link, Motion, Plain, QuantBox, ScaleWorld,
    Sealed, Stage, SCALE_BOXES, SCALE_BUDGETS, SCALE_CLIENTS, SCALE_ROW,
};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// The world a benchmark runs: [`ScaleWorld::new`], or, when the binary runs as a test (see
/// [`running_as_test`]), two clients, one row of boxes and a few warm-up frames.
fn world<T: BenchBox>(boxes: usize, motion: Motion, budget: usize) -> ScaleWorld<T> {
    if running_as_test() {
        ScaleWorld::with_clients(SCALE_ROW, motion, budget, 2, 4)
    } else {
        ScaleWorld::new(boxes, motion, budget)
    }
}

/// Items per frame: every box for every client.
fn items<T: BenchBox, L: Link>(world: &RefCell<ScaleWorld<T, L>>) -> ItemsCount {
    let world = world.borrow();
    ItemsCount::new(world.handles.len() * world.clients.len())
}

/// Times the server's frame; the clients' frames and the motion run untimed.
fn bench_server_tick<T: BenchBox>(
    bencher: Bencher<'_, '_>,
    boxes: usize,
    motion: Motion,
    budget: usize,
) {
    let world = RefCell::new(world::<T>(boxes, motion, budget));
    bencher
        .counter(items(&world))
        .with_inputs(|| world.borrow_mut().advance_to(Stage::ServerBegin))
        .bench_local_values(|()| world.borrow_mut().server_tick());
    assert!(world.borrow().acks_keep_up(), "every client acknowledged");
}

/// Times the 64 clients' frames; the motion and the server's frame run untimed.
fn bench_client_frames<T: BenchBox>(
    bencher: Bencher<'_, '_>,
    boxes: usize,
    motion: Motion,
    budget: usize,
) {
    let world = RefCell::new(world::<T>(boxes, motion, budget));
    bencher
        .counter(items(&world))
        .with_inputs(|| world.borrow_mut().advance_to(Stage::Clients))
        .bench_local_values(|()| world.borrow_mut().client_frames());
    world.borrow_mut().advance_to(Stage::Move);
    assert!(world.borrow().acks_keep_up(), "every client acknowledged");
}

/// A motion's module of benchmarks: one per box kind (`plain`, `interpolated`, `quantized`),
/// each over every budget and box count, all timing `$bench`.
macro_rules! motion_benches {
    ($(#[$doc:meta])* $name:ident, $motion:expr, $bench:ident) => {
        $(#[$doc])*
        mod $name {
            use super::*;

            const MOTION: Motion = $motion;

            #[divan::bench(consts = SCALE_BUDGETS, args = SCALE_BOXES)]
            fn plain<const BUDGET: usize>(bencher: Bencher<'_, '_>, boxes: usize) {
                $bench::<BoxEntity>(bencher, boxes, MOTION, BUDGET);
            }

            #[divan::bench(consts = SCALE_BUDGETS, args = SCALE_BOXES)]
            fn interpolated<const BUDGET: usize>(bencher: Bencher<'_, '_>, boxes: usize) {
                $bench::<InterpBox>(bencher, boxes, MOTION, BUDGET);
            }

            #[divan::bench(consts = SCALE_BUDGETS, args = SCALE_BOXES)]
            fn quantized<const BUDGET: usize>(bencher: Bencher<'_, '_>, boxes: usize) {
                $bench::<QuantBox>(bencher, boxes, MOTION, BUDGET);
            }
        }
    };
}

/// The server's tick: `begin_frame` (64 acks) + `end_frame` (capture, 64 snapshots).
#[divan::bench_group(sample_count = 20, sample_size = 1)]
mod server_tick {
    use super::*;

    motion_benches!(
        /// Every box moves every frame.
        all, Motion::All, bench_server_tick
    );
    motion_benches!(
        /// A different tenth of the boxes moves each frame.
        ten_percent, Motion::TenPercent, bench_server_tick
    );
}

/// The 64 clients' frames: each receives and applies its snapshot, then acknowledges it.
#[divan::bench_group(sample_count = 20, sample_size = 1)]
mod client_frames {
    use super::*;

    motion_benches!(
        /// Every box moves every frame.
        all, Motion::All, bench_client_frames
    );
    motion_benches!(
        /// A different tenth of the boxes moves each frame.
        ten_percent, Motion::TenPercent, bench_client_frames
    );
}

/// Acknowledgement processing on the server.
#[divan::bench_group(sample_count = 20, sample_size = 1)]
mod acks {
    use super::*;

    /// The server's `begin_frame` alone, receiving the 64 clients' acks of snapshots that each
    /// carried every box (all moving, no budget); counted per entry acknowledged.
    #[divan::bench(args = SCALE_BOXES)]
    fn server_begin_frame(bencher: Bencher<'_, '_>, boxes: usize) {
        let world = RefCell::new(world::<BoxEntity>(boxes, Motion::All, 0));
        bencher
            .counter(items(&world))
            .with_inputs(|| world.borrow_mut().advance_to(Stage::ServerBegin))
            .bench_local_values(|()| world.borrow_mut().server_begin());
        world.borrow_mut().advance_to(Stage::Move);
        assert!(world.borrow().acks_keep_up(), "every client acknowledged");
    }
}

/// The two snapshot encodings side by side ([`SnapshotEncoding`]): quantized boxes
/// ([`QuantBox`]), every box moving (`server_tick_tenth_<encoding>`: a tenth), no budget;
/// `<part>_<encoding>/<boxes>`, timed as `server_tick` and `client_frames`.
#[divan::bench_group(sample_count = 20, sample_size = 1)]
mod encoding {
    use super::*;

    fn encoded<L: Link>(
        boxes: usize,
        encoding: SnapshotEncoding,
    ) -> RefCell<ScaleWorld<QuantBox, L>> {
        moving::<L>(boxes, Motion::All, encoding)
    }

    /// [`encoded`], the boxes moving as `motion` says.
    fn moving<L: Link>(
        boxes: usize,
        motion: Motion,
        encoding: SnapshotEncoding,
    ) -> RefCell<ScaleWorld<QuantBox, L>> {
        RefCell::new(match running_as_test() {
            true => ScaleWorld::encoded(SCALE_ROW, motion, encoding, 2),
            false => ScaleWorld::encoded(boxes, motion, encoding, SCALE_CLIENTS),
        })
    }

    /// The server's tick after the clients' frames, over the link `L`; `evicted`, with the
    /// caches emptied of what those frames and the tick before left there (see [`Eviction`]).
    fn server<L: Link>(
        bencher: Bencher<'_, '_>,
        boxes: usize,
        encoding: SnapshotEncoding,
        evicted: bool,
    ) {
        server_of(bencher, encoded::<L>(boxes, encoding), evicted, 1);
    }

    /// The server's tick of `world` (see [`server`]); after the run, every client has
    /// acknowledged one of the `behind` newest ticks but the newest
    /// ([`ScaleWorld::acks_within`]).
    fn server_of<L: Link>(
        bencher: Bencher<'_, '_>,
        world: RefCell<ScaleWorld<QuantBox, L>>,
        evicted: bool,
        behind: u32,
    ) {
        let mut eviction = evicted.then(Eviction::new);
        bencher
            .counter(items(&world))
            .with_inputs(|| {
                world.borrow_mut().advance_to(Stage::ServerBegin);
                if let Some(eviction) = &mut eviction {
                    eviction.run();
                }
            })
            .bench_local_values(|()| world.borrow_mut().server_tick());
        let within = world.borrow().acks_within(behind);
        assert!(within, "every client acknowledged at its pace");
    }

    /// Reads a buffer twice the size of this machine's last-level cache (32 MiB), a byte per
    /// cache line, so that whatever was cached before is gone, and the lines that replace it
    /// are clean (their eviction costs the timed tick no write-back). The 64 clients run in
    /// the benchmark's process between two server ticks, and what they leave in the caches
    /// depends on the encoding (bit-packed, each client also keeps its baselines' values);
    /// a server on its own machine shares its caches with no client. Evicting before each
    /// tick starts both encodings' ticks alike: from memory.
    struct Eviction {
        buffer: Vec<u8>,
    }

    impl Eviction {
        fn new() -> Self {
            let size = if running_as_test() { 1 << 16 } else { 64 << 20 };
            Self {
                buffer: (0..size).map(|i| i as u8).collect(),
            }
        }

        fn run(&mut self) {
            let sum = self
                .buffer
                .iter()
                .step_by(64)
                .fold(0u8, |sum, &b| sum.wrapping_add(b));
            divan::black_box(sum);
        }
    }

    /// The clients' frames, over the link `L`.
    fn clients<L: Link>(bencher: Bencher<'_, '_>, boxes: usize, encoding: SnapshotEncoding) {
        clients_of(bencher, encoded::<L>(boxes, encoding));
    }

    /// The clients' frames of `world`.
    fn clients_of<L: Link>(bencher: Bencher<'_, '_>, world: RefCell<ScaleWorld<QuantBox, L>>) {
        bencher
            .counter(items(&world))
            .with_inputs(|| world.borrow_mut().advance_to(Stage::Clients))
            .bench_local_values(|()| world.borrow_mut().client_frames());
        world.borrow_mut().advance_to(Stage::Move);
        assert!(world.borrow().acks_keep_up(), "every client acknowledged");
    }

    #[divan::bench(args = [1000])]
    fn server_tick_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        server::<Plain>(bencher, boxes, SnapshotEncoding::Bytes, false);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_tenth_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        let world = moving::<Plain>(boxes, Motion::TenPercent, SnapshotEncoding::Bytes);
        server_of(bencher, world, false, 1);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_tenth_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        let world = moving::<Plain>(boxes, Motion::TenPercent, SnapshotEncoding::Bits);
        server_of(bencher, world, false, 1);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_evicted_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        server::<Plain>(bencher, boxes, SnapshotEncoding::Bytes, true);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        server::<Plain>(bencher, boxes, SnapshotEncoding::Bits, false);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_evicted_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        server::<Plain>(bencher, boxes, SnapshotEncoding::Bits, true);
    }

    /// The server's tick with every packet sealed by the secure layer ([`Sealed`]), as a
    /// deployed server's are: the sealing grows with the bytes each snapshot takes.
    #[divan::bench(args = [1000])]
    fn server_tick_sealed_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        server::<Sealed>(bencher, boxes, SnapshotEncoding::Bytes, false);
    }

    /// [`server_tick_sealed_bytes`] in the bit-packed encoding.
    #[divan::bench(args = [1000])]
    fn server_tick_sealed_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        server::<Sealed>(bencher, boxes, SnapshotEncoding::Bits, false);
    }

    /// The clients' frames with every packet sealed ([`server_tick_sealed_bytes`]).
    #[divan::bench(args = [1000])]
    fn client_frames_sealed_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        clients::<Sealed>(bencher, boxes, SnapshotEncoding::Bytes);
    }

    /// [`client_frames_sealed_bytes`] in the bit-packed encoding.
    #[divan::bench(args = [1000])]
    fn client_frames_sealed_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        clients::<Sealed>(bencher, boxes, SnapshotEncoding::Bits);
    }

    /// The clients' paces in the `spread` benchmarks: each client 1 to this many ticks behind.
    const SPREAD: u32 = 4;

    /// The server's tick with the clients at different distances (see
    /// [`ScaleWorld::set_paces`]): client `i` runs its frame every `1 + i % SPREAD` frames, so
    /// that they acknowledged different ticks, in no particular order.
    fn server_spread(bencher: Bencher<'_, '_>, boxes: usize, encoding: SnapshotEncoding) {
        let world = encoded::<Plain>(boxes, encoding);
        world.borrow_mut().set_paces(SPREAD);
        world.borrow_mut().run_frames(2 * SPREAD as usize);
        server_of(bencher, world, false, SPREAD + 1);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_spread_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        server_spread(bencher, boxes, SnapshotEncoding::Bytes);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_spread_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        server_spread(bencher, boxes, SnapshotEncoding::Bits);
    }

    #[divan::bench(args = [1000])]
    fn client_frames_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        clients::<Plain>(bencher, boxes, SnapshotEncoding::Bytes);
    }

    #[divan::bench(args = [1000])]
    fn client_frames_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        clients::<Plain>(bencher, boxes, SnapshotEncoding::Bits);
    }

    /// The server's tick in a world of one client: the coding of every moving box's entry,
    /// which no other client shares.
    fn server_alone(bencher: Bencher<'_, '_>, boxes: usize, encoding: SnapshotEncoding) {
        let rows = if running_as_test() { SCALE_ROW } else { boxes };
        let world = ScaleWorld::<QuantBox>::encoded(rows, Motion::All, encoding, 1);
        server_of(bencher, RefCell::new(world), false, 1);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_alone_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        server_alone(bencher, boxes, SnapshotEncoding::Bytes);
    }

    #[divan::bench(args = [1000])]
    fn server_tick_alone_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        server_alone(bencher, boxes, SnapshotEncoding::Bits);
    }

    /// One client's frame in a world of one client: what a client pays without 63 other
    /// clients' frames run between two of its own (the server's tick still runs between).
    fn alone(bencher: Bencher<'_, '_>, boxes: usize, encoding: SnapshotEncoding) {
        let rows = if running_as_test() { SCALE_ROW } else { boxes };
        let world = ScaleWorld::<QuantBox>::encoded(rows, Motion::All, encoding, 1);
        clients_of(bencher, RefCell::new(world));
    }

    #[divan::bench(args = [1000])]
    fn client_frame_alone_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        alone(bencher, boxes, SnapshotEncoding::Bytes);
    }

    #[divan::bench(args = [1000])]
    fn client_frame_alone_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        alone(bencher, boxes, SnapshotEncoding::Bits);
    }
}

/// Boxes idle since their spawn, then all set moving at once (an explosion): the server's
/// tick of the second frame of motion, the one in which each box's value history grows to
/// hold what a baseline within reach reads (see `benches/README.md`, twenty-fourth step). One
/// client; a fresh world for each sample, since the burst happens once in a world.
#[divan::bench_group(sample_count = 5, sample_size = 1)]
mod burst {
    use super::*;

    fn second_tick(bencher: Bencher<'_, '_>, boxes: usize, encoding: SnapshotEncoding) {
        let rows = if running_as_test() { SCALE_ROW } else { boxes };
        bencher
            .counter(ItemsCount::new(rows))
            .with_inputs(|| {
                let mut world = ScaleWorld::<QuantBox>::encoded(rows, Motion::Still, encoding, 1);
                world.set_motion(Motion::All);
                world.run_frames(1);
                world.advance_to(Stage::ServerBegin);
                world
            })
            .bench_local_values(|mut world| {
                world.server_tick();
                world
            });
    }

    #[divan::bench(args = [10_000])]
    fn second_tick_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        second_tick(bencher, boxes, SnapshotEncoding::Bytes);
    }

    #[divan::bench(args = [10_000])]
    fn second_tick_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        second_tick(bencher, boxes, SnapshotEncoding::Bits);
    }

    /// The frames (server's and client's) in which one client receives and applies `boxes`
    /// spawns made at once.
    fn join(bencher: Bencher<'_, '_>, boxes: usize, encoding: SnapshotEncoding) {
        let rows = if running_as_test() { SCALE_ROW } else { boxes };
        bencher
            .counter(ItemsCount::new(rows))
            .with_inputs(|| ScaleWorld::<QuantBox>::spawning(rows, encoding, 1))
            .bench_local_values(|mut world| {
                world.run_until_spawned();
                world
            });
    }

    #[divan::bench(args = [10_000])]
    fn join_bytes(bencher: Bencher<'_, '_>, boxes: usize) {
        join(bencher, boxes, SnapshotEncoding::Bytes);
    }

    #[divan::bench(args = [10_000])]
    fn join_bits(bencher: Bencher<'_, '_>, boxes: usize) {
        join(bencher, boxes, SnapshotEncoding::Bits);
    }
}
