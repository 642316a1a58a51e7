#![allow(clippy::unwrap_used)]
//! An engine's fixed step drives the server's ticks (`TickSource::External`): each
//! `tick_now` is one tick, one capture and one snapshot per client; frames without a step send
//! none, and two steps in one frame send two.

use mf_net::prelude::*;
use mf_net::replication::TickSource;
use mf_net_tests::harness::World;

#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Counter {
    #[replicated]
    n: i32,
}

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("counter", |scene, root| {
            scene.set_value(root, Counter::default())
        })
        .unwrap();
    scenes
}

#[test]
fn each_fixed_step_is_one_tick_and_one_snapshot_per_client() {
    let config = MultiplayerConfig {
        tick_source: TickSource::External,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(2, config, None, 0, library);
    let root = world.root();
    let node = world
        .server
        .spawn(SceneIndex::new(0), root, PeerId::SERVER)
        .unwrap();
    let counter = world.server.scene().net_ref::<Counter>(node).unwrap();
    // Frames on their own advance nothing.
    let tick = world.server.tick();
    world.step(10);
    assert_eq!(world.server.tick(), tick);
    assert_eq!(world.server.stats().snapshots_sent, 0);

    // `steps[f]` fixed steps in frame f, each changing the value once.
    let steps = [1, 2, 0, 0, 1, 3, 1];
    let mut value = 0;
    for &n in &steps {
        world.server.begin_frame(world.dt);
        for _ in 0..n {
            value += 1;
            world.server.scene_mut().get_mut(counter).unwrap().n = value;
            world.server.tick_now();
        }
        world.server.end_frame();
        for client in &mut world.clients {
            client.begin_frame(world.dt);
            client.end_frame();
        }
    }
    let ticks: u64 = steps.iter().sum();
    assert_eq!(u64::from(world.server.tick().wrapping_sub(tick)), ticks);
    assert_eq!(world.server.stats().snapshots_sent, ticks * 2);
    // Each step's change went in its own tick: every snapshot carried one entry.
    assert_eq!(world.server.stats().entries_encoded, ticks);
    world.assert_converged();
    // A client's own `tick_now` does nothing.
    let client_tick = world.clients[0].tick();
    world.clients[0].tick_now();
    assert_eq!(world.clients[0].tick(), client_tick);
}
