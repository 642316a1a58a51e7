//! The scale scenario with the core under its built-in `Scene` and under Bevy (mf-net-bevy),
//! side by side in one run: one server and 64 clients over an in-process loopback network,
//! 1000 boxes all moving every frame, real acknowledgements, no byte budget.
//!
//! - `server_tick/scene` and `server_tick/bevy`: the server's `begin_frame` + `end_frame`
//!   (receiving the 64 acks, capture of every box, one snapshot per client). Under Bevy the
//!   core runs with the app's world lent (`world.net`), and captures through `Rows` over the
//!   world's components.
//! - `client_frames/scene` and `client_frames/bevy`: the 64 clients' `begin_frame` +
//!   `end_frame` (apply the snapshot, ack).
//! - `server_tick/bevy_update` and `client_frames/bevy_update`: the same frames as the apps'
//!   whole updates, the adapter's own systems around the core (the world's changes taken,
//!   `NetOwner` writes noted, starts and stops looked at, focus synced, messages): the
//!   difference with `bevy` is what those systems and Bevy's schedules cost.
//!
//! The boxes are the same members (`BoxEntity`; `BevyBox` under Bevy), and both sides send
//! the default snapshot encoding, so the snapshots carry the same states. Counted per box ×
//! client. The adapter's overhead per entity is the difference per item. Run: `cargo bench -p
//! mf-net-benches --bench bevy_scale`. Run as a test, two clients and 100 boxes.

use std::cell::RefCell;

use divan::counter::ItemsCount;
use divan::Bencher;
use mf_net::prelude::MultiplayerConfig;
use mf_net_benches::bevy_scale::BevyScaleWorld;
use mf_net_benches::{running_as_test, BoxEntity, Motion, ScaleWorld, Stage, SCALE_CLIENTS};

fn main() {
    divan::main();
}

const BOXES: usize = 1000;

fn sizes() -> (usize, usize) {
    if running_as_test() {
        (100, 2)
    } else {
        (BOXES, SCALE_CLIENTS)
    }
}

/// The `Scene` side, in the encoding the Bevy side uses (the default configuration's).
fn scene_world() -> ScaleWorld<BoxEntity> {
    let (boxes, clients) = sizes();
    let encoding = MultiplayerConfig::default().snapshot_encoding;
    ScaleWorld::encoded(boxes, Motion::All, encoding, clients)
}

fn bevy_world() -> BevyScaleWorld {
    let (boxes, clients) = sizes();
    BevyScaleWorld::new(boxes, Motion::All, clients, 70)
}

fn items() -> ItemsCount {
    let (boxes, clients) = sizes();
    ItemsCount::new(boxes * clients)
}

#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod server_tick {
    use super::*;

    #[divan::bench]
    fn scene(bencher: Bencher<'_, '_>) {
        let world = RefCell::new(scene_world());
        bencher
            .counter(items())
            .with_inputs(|| world.borrow_mut().advance_to(Stage::ServerBegin))
            .bench_local_values(|()| world.borrow_mut().server_tick());
    }

    #[divan::bench]
    fn bevy(bencher: Bencher<'_, '_>) {
        let world = RefCell::new(bevy_world());
        bencher
            .counter(items())
            .with_inputs(|| world.borrow_mut().advance_to(Stage::ServerBegin))
            .bench_local_values(|()| world.borrow_mut().server_tick());
    }

    /// The server app's whole update: `bevy` and the adapter's own systems.
    #[divan::bench]
    fn bevy_update(bencher: Bencher<'_, '_>) {
        let world = RefCell::new(bevy_world());
        bencher
            .counter(items())
            .with_inputs(|| world.borrow_mut().advance_to(Stage::ServerBegin))
            .bench_local_values(|()| world.borrow_mut().server_update());
    }
}

#[divan::bench_group(sample_count = 30, sample_size = 1)]
mod client_frames {
    use super::*;

    #[divan::bench]
    fn scene(bencher: Bencher<'_, '_>) {
        let world = RefCell::new(scene_world());
        bencher
            .counter(items())
            .with_inputs(|| world.borrow_mut().advance_to(Stage::Clients))
            .bench_local_values(|()| world.borrow_mut().client_frames());
    }

    #[divan::bench]
    fn bevy(bencher: Bencher<'_, '_>) {
        let world = RefCell::new(bevy_world());
        bencher
            .counter(items())
            .with_inputs(|| world.borrow_mut().advance_to(Stage::Clients))
            .bench_local_values(|()| world.borrow_mut().client_frames());
    }

    /// The client apps' whole updates: `bevy` and the adapter's own systems.
    #[divan::bench]
    fn bevy_update(bencher: Bencher<'_, '_>) {
        let world = RefCell::new(bevy_world());
        bencher
            .counter(items())
            .with_inputs(|| world.borrow_mut().advance_to(Stage::Clients))
            .bench_local_values(|()| world.borrow_mut().client_updates());
    }
}
