#![allow(clippy::unwrap_used)]
//! Zero-allocation gate for the `scale` benchmarks' steady state: one server and 64 clients
//! over loopback (`mf_net_benches::ScaleWorld`, real `Multiplayer` instances that really
//! acknowledge), 1000 boxes all moving every frame, one network tick per frame. After the
//! fixture's warm-up (more frames than the server's ring of 64 snapshots per client), 30 frames
//! — the motion, the server's frame (64 acks, capture, 64 snapshots of every box) and every
//! client's frame (apply, ack) — allocate nothing, on the server or any client; in the byte
//! format and in bit-packed snapshots (value histories, baselines, shared bodies), with every
//! client at one distance from the server or at four.

use mf_net::replication::SnapshotEncoding;
use mf_net_benches::{BenchBox, BoxEntity, Motion, QuantBox, ScaleWorld, SCALE_CLIENTS};
use mf_net_tests::alloc_counter::assert_no_alloc;

const FRAMES: usize = 30;

/// Runs [`FRAMES`] frames of a warmed-up world under the counting allocator, then checks that
/// they were real frames: a tick each, a snapshot to every client, every ack processed.
fn assert_steady_state_allocates_nothing<T: BenchBox>(world: &mut ScaleWorld<T>, what: &str) {
    assert!(world.acks_keep_up(), "{what}: warmed up, acks flowing");
    let tick = world.server.tick();
    let sent = world.server.stats().snapshots_sent;
    let applied: Vec<u64> = world
        .clients
        .iter()
        .map(|c| c.stats().snapshots_applied)
        .collect();
    assert_no_alloc(what, || world.run_frames(FRAMES));
    assert_eq!(world.server.tick(), tick + FRAMES as u32, "{what}");
    assert_eq!(
        world.server.stats().snapshots_sent,
        sent + (FRAMES * SCALE_CLIENTS) as u64,
        "{what}"
    );
    for (client, before) in world.clients.iter().zip(applied) {
        assert_eq!(
            client.stats().snapshots_applied,
            before + FRAMES as u64,
            "{what}"
        );
    }
    assert!(world.acks_keep_up(), "{what}: every ack processed");
}

#[test]
fn sixty_four_clients_and_1000_moving_boxes_allocate_nothing() {
    let mut world = ScaleWorld::<BoxEntity>::new(1000, Motion::All, 0);
    assert_steady_state_allocates_nothing(&mut world, "64 clients, 1000 boxes, all moving");
    // Every snapshot carried every box (31–32 B each, a few + 4 B for health, 9 B of header).
    let bytes = world.server.stats().last_snapshot_bytes;
    assert!((31_000..33_000).contains(&bytes), "{bytes} B");
    // The clients hold the server's values.
    assert!(world.clients_match_server());
}

#[test]
fn sixty_four_clients_under_a_byte_budget_allocate_nothing() {
    let mut world = ScaleWorld::<QuantBox>::new(1000, Motion::TenPercent, 1200);
    assert_steady_state_allocates_nothing(&mut world, "64 clients, 1000 quantized boxes, 1200 B");
    let stats = world.server.stats();
    assert!(stats.largest_snapshot_bytes <= 1200);
    assert!(stats.snapshots_truncated > 0);
}

#[test]
fn sixty_four_clients_on_bit_packed_snapshots_allocate_nothing() {
    let mut world =
        ScaleWorld::<QuantBox>::encoded(1000, Motion::All, SnapshotEncoding::Bits, SCALE_CLIENTS);
    assert_steady_state_allocates_nothing(&mut world, "64 clients, 1000 boxes, bit-packed");
    // Every snapshot carried every box, delta-coded against the tick before (about 5 B a box).
    let bytes = world.server.stats().last_snapshot_bytes;
    assert!((4_000..7_000).contains(&bytes), "{bytes} B");
    // The clients rebuilt the same quantized values, each the server's within half a step.
    let values = |mp: &mf_net_benches::ScaleMultiplayer| -> Vec<QuantBox> {
        mp.scene()
            .iter::<QuantBox>()
            .map(|(_, b)| b.clone())
            .collect()
    };
    let server = values(&world.server);
    let first = values(&world.clients[0]);
    assert!(world.clients.iter().all(|c| values(c) == first));
    for (s, c) in server.iter().zip(&first) {
        assert!(
            s.position.distance(c.position) < 0.03,
            "{s:?} against {c:?}"
        );
        assert!(
            s.rotation.dot(c.rotation).abs() > 0.999,
            "{s:?} against {c:?}"
        );
        assert_eq!(s.health, c.health);
    }
}

/// Bit-packed, with the clients at different distances (client `i` receiving and acknowledging
/// every `1 + i % 4` frames): a body kept and the changed boxes coded for each distance, and
/// each client shares its distance's body, allocating nothing once warm.
#[test]
fn sixty_four_clients_at_different_distances_on_bit_packed_snapshots_allocate_nothing() {
    const PACES: u32 = 4;
    let mut world =
        ScaleWorld::<QuantBox>::encoded(1000, Motion::All, SnapshotEncoding::Bits, SCALE_CLIENTS);
    world.set_paces(PACES);
    world.run_frames(70);
    let stats = *world.server.stats();
    assert_no_alloc("64 clients at 4 distances, bit-packed", || {
        world.run_frames(FRAMES)
    });
    let now = world.server.stats();
    let sent = now.snapshots_sent - stats.snapshots_sent;
    assert_eq!(sent, (FRAMES * SCALE_CLIENTS) as u64);
    // Every snapshot a copy of its distance's body, or the body copied.
    assert_eq!(now.snapshots_shared - stats.snapshots_shared, sent);
    // One coding of each box per distance and tick: three or four distances a tick (the
    // clients that run every fourth frame run in the same frames, four behind only before it).
    let encoded = now.entries_encoded - stats.entries_encoded;
    let per_distance = (FRAMES * 1000) as u64;
    assert!(
        (3 * per_distance..=4 * per_distance).contains(&encoded),
        "{encoded} codings"
    );
    assert!(
        world.acks_within(PACES + 1),
        "every client acknowledged at its pace"
    );
}
