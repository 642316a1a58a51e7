//! The runtime's cost of a rollback, per re-simulated tick per predicted entity: one server and
//! one client over loopback ([`PredictionWorld`]), the client owning and predicting 1, 16 or
//! 256 boxes, every frame one tick; the client's lead margin sets how far it runs ahead, so
//! that a rollback re-simulates 4 or 16 ticks.
//!
//! One iteration is **one client frame**: `begin_frame` (the snapshot of the tick the server
//! just simulated, carrying every box's new position; the predicted rows back to the confirmed
//! state, the entries applied, the confirmations compared with the history), the
//! `Simulation`'s `run` (the rollback, if any, then this frame's tick: the input stored and
//! sent, the step, the state recorded, the correction shown) and `end_frame` (the ack). The
//! server's frame runs untimed in divan's input generation (`with_inputs`), so these
//! benchmarks run one iteration per sample (`sample_size = 1`).
//!
//! - `client_frame/steady/<depth>/<entities>`: both ends run the same trivial step (add a
//!   constant to `position.x`): no rollback. The reference;
//! - `client_frame/rollback/<depth>/<entities>`: the server's step adds a little more, so every
//!   frame rolls back `depth` ticks: every predicted row restored to the rollback tick (its
//!   shown state kept as the start of the smoothed correction), the state recorded at that
//!   tick, `depth` ticks re-simulated with the same trivial step and recorded, the correction
//!   ended (the new state kept as its target), and the frame shows the blend;
//! - `client_frame/rollback_empty_step/<depth>/<entities>`: the same with an empty step on the
//!   client (it does not walk the boxes), so the rollback costs the runtime's passes alone.
//!
//! All three are counted per `depth × entities` (re-simulated tick × predicted entity), so the
//! difference of a rollback's per-item figure and `steady`'s is the rollback's cost per
//! re-simulated tick per entity. The benchmarks check afterwards that every timed frame rolled
//! back exactly `depth` ticks (or none, `steady`). No bitcode reference applies: nothing here
//! is serialized beyond the snapshot, the same in all three.
//!
//! Beside them, `server_step/boxes_1000/<clients>` times the server's side: its step of 1000
//! boxes it owns and one per client, each given its authority's input, with 1, 64 or 256
//! clients sending theirs ([`ServerStepWorld`]; the clients' frames and the server's frame
//! around the step run untimed), counted per box.
//!
//! Run: `cargo bench -p mf-net-benches --bench prediction`.

use std::cell::RefCell;

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher};
use mf_net_benches::prediction::{Mode, PredictionWorld, ServerStepWorld};
use mf_net_benches::sized;

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// Rollback depths, in ticks.
const DEPTHS: [u32; 2] = [4, 16];

/// Predicted entities: a player's own (1), a few, every nearby physics object (256).
const ENTITIES: [usize; 3] = [1, 16, 256];

/// Times the client's frame; the server's frame runs untimed before each.
fn bench_client_frame(bencher: Bencher<'_, '_>, entities: usize, depth: u32, mode: Mode) {
    // Run as a test (see `mf_net_benches::running_as_test`): one entity.
    let entities = sized(entities, 1);
    let world = RefCell::new(PredictionWorld::new(entities, depth, mode));
    assert_eq!(world.borrow().predicted(), entities);
    let before = world.borrow().stats();
    let frames = RefCell::new(0u64);
    bencher
        .counter(ItemsCount::new(depth as usize * entities))
        .with_inputs(|| {
            world.borrow_mut().server_frame();
            *frames.borrow_mut() += 1;
        })
        .bench_local_values(|()| world.borrow_mut().client_frame());
    let world = world.borrow();
    let frames = *frames.borrow();
    let expected = match mode {
        Mode::Steady => (0, 0),
        Mode::Rollback | Mode::RollbackEmptyStep => (frames, frames * u64::from(depth)),
    };
    assert_eq!(
        world.rollbacks_since(&before),
        expected,
        "{mode:?}: every frame rolls back {depth} ticks (or none): {:?}",
        world.stats()
    );
}

/// One client frame, counted per re-simulated tick × predicted entity.
#[divan::bench_group(sample_count = 1000, sample_size = 1, max_time = 3)]
mod client_frame {
    use super::*;

    /// Both ends agree: no rollback.
    #[divan::bench(consts = DEPTHS, args = ENTITIES)]
    fn steady<const DEPTH: u32>(bencher: Bencher<'_, '_>, entities: usize) {
        bench_client_frame(bencher, entities, DEPTH, Mode::Steady);
    }

    /// Every frame rolls back `DEPTH` ticks and re-simulates them with the trivial step.
    #[divan::bench(consts = DEPTHS, args = ENTITIES)]
    fn rollback<const DEPTH: u32>(bencher: Bencher<'_, '_>, entities: usize) {
        bench_client_frame(bencher, entities, DEPTH, Mode::Rollback);
    }

    /// Every frame rolls back `DEPTH` ticks; the client's step is empty.
    #[divan::bench(consts = DEPTHS, args = ENTITIES)]
    fn rollback_empty_step<const DEPTH: u32>(bencher: Bencher<'_, '_>, entities: usize) {
        bench_client_frame(bencher, entities, DEPTH, Mode::RollbackEmptyStep);
    }
}

/// Clients sending inputs to the server (each owning one box).
const CLIENTS: [usize; 3] = [1, 64, 256];

/// The server's step of 1000 boxes it owns (and one per client), each given its authority's
/// input, with `clients` clients sending theirs: counted per box stepped. The clients' frames
/// and the server's frame around the step run untimed.
#[divan::bench_group(sample_count = 200, sample_size = 1, max_time = 3)]
mod server_step {
    use super::*;

    #[divan::bench(args = CLIENTS)]
    fn boxes_1000(bencher: Bencher<'_, '_>, clients: usize) {
        let clients = sized(clients, 2);
        let world = RefCell::new(ServerStepWorld::new(clients, sized(1000, 10)));
        let boxes = world
            .borrow()
            .server
            .scene()
            .iter::<mf_net_benches::prediction::PredictedBox>()
            .count();
        bencher
            .counter(ItemsCount::new(boxes))
            .with_inputs(|| world.borrow_mut().before_step())
            .bench_local_values(|()| world.borrow_mut().server_step());
        // Every box had its authority's input (every client's arrived).
        world.borrow_mut().before_step();
        assert_eq!(world.borrow_mut().server_step(), boxes);
    }
}
