#![allow(clippy::unwrap_used)]
//! Edge cases of the snapshot and despawn fast paths: states of 128 bytes or more (whose entry
//! length takes a 2-byte varint, written after the state) with and without a byte budget, and a
//! networked node leaving the tree by a move under a detached node after idle frames (the
//! despawn check only scans when the scene may have lost an attached node).

use mf_net::prelude::*;
mod replication_common;

use mf_net_tests::harness::{differences, networked, World};
use replication_common::Body;

/// A note whose text is long enough for a 2-byte entry length.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Note {
    #[replicated]
    text: String,
    #[replicated]
    page: u32,
}

const NOTE: SceneIndex = SceneIndex::new(0);
const BODY: SceneIndex = SceneIndex::new(1);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("note", |scene, root| {
            scene.set_value(root, Note::default()).map(drop)
        })
        .expect("fresh library");
    scenes
        .register("body", |scene, root| {
            scene.set_value(root, Body::default()).map(drop)
        })
        .expect("fresh library");
    scenes
}

fn set_notes(world: &mut World, len: usize, page: u32) {
    let handles: Vec<_> = world
        .server
        .scene()
        .iter::<Note>()
        .map(|(h, _)| h)
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let note = world.server.scene_mut().get_mut(h).unwrap();
        note.text = format!("{i:>len$}");
        note.page = page;
    }
}

#[test]
fn states_of_128_bytes_and_more_replicate() {
    let mut world = World::new(2, library);
    let root = world.root();
    for _ in 0..20 {
        world.server.spawn(NOTE, root, PeerId::SERVER).unwrap();
    }
    world.step(2);
    // Lengths around the 1-byte varint limit, then far past it.
    for (frame, len) in [120usize, 126, 127, 128, 129, 300, 5000, 3]
        .into_iter()
        .enumerate()
    {
        set_notes(&mut world, len, frame as u32);
        world.step(2);
        world.assert_converged();
    }
}

#[test]
fn states_of_128_bytes_and_more_respect_the_byte_budget() {
    let config = MultiplayerConfig {
        max_snapshot_bytes: 1200,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(1, config, None, 0, library);
    let root = world.root();
    for _ in 0..30 {
        world.server.spawn(NOTE, root, PeerId::SERVER).unwrap();
    }
    world.step(2);
    world.assert_converged();
    // 300-byte notes: three or so per snapshot; one of 2000 bytes goes alone, over budget.
    set_notes(&mut world, 300, 1);
    let big = world.server.scene().iter::<Note>().next().unwrap().0;
    world.server.scene_mut().get_mut(big).unwrap().text = "x".repeat(2000);
    let mut frames = 0;
    let mut over = 0;
    loop {
        world.frame();
        frames += 1;
        let sent = world.server.stats().last_snapshot_bytes;
        if sent > 1200 {
            over += 1;
            assert!(
                sent < 2100,
                "only the big note goes over budget ({sent} bytes)"
            );
        }
        if differences(&world.server, &world.clients[0]).is_none() {
            break;
        }
        assert!(frames < 200, "the notes never arrived");
    }
    assert_eq!(over, 1, "the big note went alone, once");
    assert!(world.server.stats().snapshots_truncated > 0);
    world.step(3);
    world.assert_converged();
}

#[test]
fn a_node_moved_under_a_detached_node_after_idle_frames_is_despawned() {
    let mut world = World::new(1, library);
    let root = world.root();
    let body = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    let _other = world.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    world.step(5);
    world.assert_converged();
    assert_eq!(networked(&world.clients[0]).len(), 2);

    // A plain node, detached; then the networked body moves under it (no detach, no remove of
    // the body itself).
    let holder = world.server.scene_mut().add(root, "holder").unwrap();
    world.step(3);
    world.server.scene_mut().detach(holder).unwrap();
    world.step(3);
    assert_eq!(world.server.stats().despawns, 0);
    world.server.scene_mut().reparent(body, holder).unwrap();
    assert!(!world.server.scene().is_attached(body));
    world.step(3);
    assert_eq!(world.server.stats().despawns, 1);
    assert_eq!(world.server.net_id(body), None);
    world.assert_converged();
    assert_eq!(networked(&world.clients[0]).len(), 1);
}
