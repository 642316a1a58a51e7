#![allow(clippy::unwrap_used)]
//! Interest management: per-client relevance of spawn groups (manual settings, a pluggable
//! policy, the built-in `GridInterest` with hysteresis and grace, owned groups), snapshots and
//! RPCs filtered per client, convergence over a lossy network while nodes move in and out of
//! range, and zero allocations in steady state with a grid policy; update tiers (far groups
//! carried only every few ticks, tier changes, convergence and allocations with tiers).

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::interest::{GridInterest, InterestQuery};
use mf_net::replication::MultiplayerEvent;
use mf_net::replication::SnapshotEncoding;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::NetworkConditions;
use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::{drain, messages, networked, Dyn, Mp, World};
use mf_net_tests::send_hook::SendHook;

/// A thing on the XZ plane.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Unit {
    #[replicated]
    x: f32,
    #[replicated]
    z: f32,
    #[replicated]
    hp: i32,
    pings: u32,
}

#[rpcs]
impl Unit {
    /// Server → clients.
    #[rpc(server)]
    fn ping(&mut self, n: u32) {
        self.pings += n;
    }

    /// Client → server.
    #[rpc(any_peer)]
    fn poke(&mut self, n: u32) {
        self.pings += n;
    }
}

/// A descendant, and a positionless group.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Part {
    #[replicated]
    v: u16,
}

/// Scene 0: a [`Unit`] with a [`Part`] child (two network ids).
const UNIT: SceneIndex = SceneIndex::new(0);
/// Scene 1: a lone [`Part`] (no position).
const PART: SceneIndex = SceneIndex::new(1);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("unit", |scene, root| {
            scene.set_value(root, Unit::default())?;
            scene.insert(root, "part", Part::default())
        })
        .unwrap();
    scenes
        .register("part", |scene, root| scene.set_value(root, Part::default()))
        .unwrap();
    scenes
}

fn position(scene: &Scene, node: NodeId) -> Option<[f32; 3]> {
    let unit = scene.get(scene.net_ref::<Unit>(node)?)?;
    Some([unit.x, 0.0, unit.z])
}

fn grid(grace: Duration) -> GridInterest {
    tiered_grid(grace, &[])
}

fn tiered_grid(grace: Duration, tiers: &'static [(u32, u32)]) -> GridInterest {
    GridInterest {
        cell_size: 10.0,
        radius_cells: 1,
        hysteresis_cells: 1,
        grace,
        position,
        tiers,
    }
}

fn spawn_unit(world: &mut World, x: f32, owner: PeerId) -> NodeId {
    let root = world.root();
    let node = world.server.spawn(UNIT, root, owner).unwrap();
    move_to(world, node, x);
    node
}

fn move_to(world: &mut World, node: NodeId, x: f32) {
    let handle = world.server.scene().net_ref::<Unit>(node).unwrap();
    world.server.scene_mut().get_mut(handle).unwrap().x = x;
}

fn set_hp(world: &mut World, node: NodeId, hp: i32) {
    let handle = world.server.scene().net_ref::<Unit>(node).unwrap();
    world.server.scene_mut().get_mut(handle).unwrap().hp = hp;
}

fn peer(world: &World, client: usize) -> PeerId {
    world.clients[client].local_peer_id()
}

/// The client's copy of the server's `node`.
fn copy(world: &World, client: usize, node: NodeId) -> Option<NodeId> {
    let id = world.server.net_id(node)?;
    world.clients[client].node(id)
}

fn unit(mp: &Mp, node: NodeId) -> Unit {
    mp.scene()
        .get(mp.scene().net_ref::<Unit>(node).unwrap())
        .unwrap()
        .clone()
}

/// Panics unless the client's networked nodes are exactly the server's nodes of groups
/// relevant to it, with the same paths and states.
fn assert_restricted_convergence(world: &World, client: usize) {
    world.assert_sees_exactly_what_is_relevant(client);
}

#[test]
fn manual_relevance_spawns_and_despawns_per_client() {
    let mut world = World::new(2, library);
    let (p0, p1) = (peer(&world, 0), peer(&world, 1));
    let a = spawn_unit(&mut world, 0.0, PeerId::SERVER);
    // Spawned this frame: the setting applies to its first send.
    world.server.set_relevant(a, p0, false).unwrap();
    set_hp(&mut world, a, 3);
    world.step(5);
    assert!(copy(&world, 0, a).is_none(), "client 0 never sees it");
    assert!(drain(&mut world.clients[0])
        .iter()
        .all(|e| !matches!(e, MultiplayerEvent::NodeSpawned { .. })));
    assert_eq!(unit(&world.clients[1], copy(&world, 1, a).unwrap()).hp, 3);
    assert!(!world.server.is_relevant(a, p0));
    assert!(world.server.is_relevant(a, p1));

    // Changes while hidden reach only client 1; relevant again: spawned with the current state.
    set_hp(&mut world, a, 7);
    world.step(3);
    assert!(copy(&world, 0, a).is_none());
    world.server.set_relevant(a, p0, true).unwrap();
    world.step(3);
    let on0 = copy(&world, 0, a).expect("spawned on client 0");
    assert_eq!(unit(&world.clients[0], on0).hp, 7);
    assert_eq!(
        world.clients[0].scene().iter::<Part>().count(),
        1,
        "with its descendant"
    );
    set_hp(&mut world, a, 8);
    world.step(3);
    assert_eq!(unit(&world.clients[0], on0).hp, 8, "and updated afterwards");
    let s0 = *world.server.peer_stats(p0).unwrap();
    assert_eq!((s0.visible_groups, s0.visible_nodes), (1, 2));
    assert_eq!(s0.relevance_spawns, 1);

    // Irrelevant: despawned on client 0 only.
    drain(&mut world.clients[0]);
    drain(&mut world.clients[1]);
    world.server.set_relevant(a, p0, false).unwrap();
    set_hp(&mut world, a, 9);
    world.step(3);
    assert!(copy(&world, 0, a).is_none());
    assert_eq!(networked(&world.clients[0]).len(), 0);
    assert!(drain(&mut world.clients[0])
        .iter()
        .any(|e| matches!(e, MultiplayerEvent::NodeDespawned { .. })));
    assert!(drain(&mut world.clients[1])
        .iter()
        .all(|e| !matches!(e, MultiplayerEvent::NodeDespawned { .. })));
    assert_eq!(unit(&world.clients[1], copy(&world, 1, a).unwrap()).hp, 9);
    let s0 = *world.server.peer_stats(p0).unwrap();
    assert_eq!(
        (s0.visible_groups, s0.visible_nodes, s0.relevance_despawns),
        (0, 0, 1)
    );
    let s1 = *world.server.peer_stats(p1).unwrap();
    assert_eq!(
        (
            s1.visible_groups,
            s1.relevance_spawns,
            s1.relevance_despawns
        ),
        (1, 0, 0)
    );
    assert_eq!(world.server.stats().relevance_spawns, 1);
    assert_eq!(world.server.stats().relevance_despawns, 1);

    // Back to the default (no policy): relevant again.
    world.server.clear_relevant(a, p0).unwrap();
    world.step(3);
    assert_restricted_convergence(&world, 0);
    assert_restricted_convergence(&world, 1);
    assert!(copy(&world, 0, a).is_some());

    // Errors.
    assert!(world.server.set_relevant(a, PeerId(99), true).is_err());
    let root = world.root();
    let plain = world.server.scene_mut().add(root, "plain").unwrap();
    assert!(world.server.set_relevant(plain, p0, true).is_err());
    assert!(world.clients[0].set_relevant(on0, p0, true).is_err());
}

/// A group that comes back to a client costs its spawn alone while its nodes do not change, in
/// either encoding (the client has the spawn's state; a bit-packed node's next entry, when it
/// changes, carries its whole state, as a spawn is no baseline), and its next change arrives.
#[test]
fn a_group_that_comes_back_costs_its_spawn_alone_until_it_changes() {
    for encoding in [SnapshotEncoding::Bytes, SnapshotEncoding::Bits] {
        let mut world = World::with_encoding(1, encoding, library);
        let p = peer(&world, 0);
        let a = spawn_unit(&mut world, 0.0, PeerId::SERVER);
        world.step(5);
        world.server.set_relevant(a, p, false).unwrap();
        world.step(3);
        assert!(copy(&world, 0, a).is_none(), "despawned ({encoding:?})");
        set_hp(&mut world, a, 5);
        world.step(1);
        world.server.set_relevant(a, p, true).unwrap();
        let encoded = world.server.stats().entries_encoded;
        world.step(10);
        let on = copy(&world, 0, a).expect("spawned again");
        assert_eq!(unit(&world.clients[0], on).hp, 5, "({encoding:?})");
        assert_eq!(
            world.server.stats().entries_encoded,
            encoded,
            "no entry after the spawn ({encoding:?})"
        );
        set_hp(&mut world, a, 6);
        world.step(3);
        assert_eq!(unit(&world.clients[0], on).hp, 6, "({encoding:?})");
        assert_restricted_convergence(&world, 0);
    }
}

/// A client that joins late gets the world's spawns and then nothing while the nodes do not
/// change, in either encoding (a bit-packed node's next entry carries its whole state), and
/// their changes arrive.
#[test]
fn a_late_joiner_costs_its_spawns_alone_until_the_nodes_change() {
    for encoding in [SnapshotEncoding::Bytes, SnapshotEncoding::Bits] {
        let mut world = World::with_encoding(1, encoding, library);
        let units: Vec<NodeId> = (0..5)
            .map(|i| spawn_unit(&mut world, i as f32, PeerId::SERVER))
            .collect();
        world.step(5);
        let encoded = world.server.stats().entries_encoded;
        let late = world.connect_client();
        world.step(10);
        assert_eq!(
            world.server.stats().entries_encoded,
            encoded,
            "no entry after the spawns ({encoding:?})"
        );
        set_hp(&mut world, units[0], 4);
        world.step(3);
        let on = copy(&world, late, units[0]).expect("spawned");
        assert_eq!(unit(&world.clients[late], on).hp, 4, "({encoding:?})");
        world.assert_converged();
    }
}

#[test]
fn grid_interest_has_hysteresis_and_grace() {
    let mut world = World::new(1, library);
    let p0 = peer(&world, 0);
    let player = spawn_unit(&mut world, 0.0, p0);
    let u = spawn_unit(&mut world, 15.0, PeerId::SERVER); // cell 1: within the radius
    let far = spawn_unit(&mut world, 55.0, PeerId::SERVER); // cell 5
    let root = world.root();
    let loose = world.server.spawn(PART, root, PeerId::SERVER).unwrap(); // no position
    world
        .server
        .set_interest_policy(grid(Duration::from_secs(1)), 1)
        .unwrap();
    world.server.set_focus(p0, Some(player)).unwrap();
    world.step(4);
    assert!(copy(&world, 0, player).is_some());
    assert!(copy(&world, 0, u).is_some());
    assert!(
        copy(&world, 0, loose).is_some(),
        "positionless: always relevant"
    );
    assert!(copy(&world, 0, far).is_none());
    let spawns = world.server.stats().relevance_spawns;

    // Oscillating across the radius (cells 1 and 2) and across the leave boundary (cells 2
    // and 3) faster than the grace: no flapping.
    for frame in 0..120 {
        let x = match (frame / 5) % 4 {
            0 => 19.0,
            1 => 21.0,
            2 => 29.0,
            _ => 31.0,
        };
        move_to(&mut world, u, x);
        world.step(1);
        assert!(copy(&world, 0, u).is_some(), "frame {frame}");
    }
    assert_eq!(world.server.stats().relevance_despawns, 0);
    assert_eq!(world.server.stats().relevance_spawns, spawns);

    // Out of range for good: despawned only after the grace (1 s = 30 frames).
    move_to(&mut world, u, 45.0);
    world.step(20);
    assert!(copy(&world, 0, u).is_some(), "still within the grace");
    // Still updated meanwhile.
    assert_eq!(unit(&world.clients[0], copy(&world, 0, u).unwrap()).x, 45.0);
    world.step(15);
    assert!(copy(&world, 0, u).is_none(), "despawned after the grace");
    assert_eq!(world.server.stats().relevance_despawns, 1);

    // Entering needs the radius, not the leave range.
    move_to(&mut world, u, 25.0);
    world.step(5);
    assert!(
        copy(&world, 0, u).is_none(),
        "cell 2 is not within the entering radius"
    );
    move_to(&mut world, u, 12.0);
    world.step(4);
    let back = copy(&world, 0, u).expect("entered again");
    assert_eq!(unit(&world.clients[0], back).x, 12.0);
    assert_eq!(world.server.stats().relevance_spawns, spawns + 1);

    // The focus moves: the far unit comes into range, the near one leaves after the grace.
    move_to(&mut world, player, 50.0);
    world.step(4);
    assert!(copy(&world, 0, far).is_some());
    world.step(40);
    assert!(copy(&world, 0, u).is_none());
    assert!(copy(&world, 0, player).is_some(), "owned: always relevant");
    assert_restricted_convergence(&world, 0);

    // A late joiner without a focus gets only what has no position; with one, its range.
    let late = world.connect_client();
    world.step(4);
    let pl = peer(&world, late);
    assert!(copy(&world, late, loose).is_some());
    assert_eq!(world.clients[late].scene().iter::<Unit>().count(), 0);
    world.server.set_focus(pl, Some(far)).unwrap();
    world.step(4);
    assert!(copy(&world, late, far).is_some());
    assert!(copy(&world, late, player).is_some());
    assert!(copy(&world, late, u).is_none());
    assert_restricted_convergence(&world, late);
    let s = *world.server.peer_stats(pl).unwrap();
    assert_eq!((s.visible_groups, s.visible_nodes), (3, 5));
}

#[test]
fn owned_groups_are_always_relevant_to_their_owner() {
    let mut world = World::new(2, library);
    let (p0, p1) = (peer(&world, 0), peer(&world, 1));
    world
        .server
        .set_interest_policy(|_: &InterestQuery<'_>| false, 1)
        .unwrap();
    let mine = spawn_unit(&mut world, 0.0, p0);
    world.step(4);
    assert!(copy(&world, 0, mine).is_some());
    assert!(copy(&world, 1, mine).is_none());
    world.server.set_relevant(mine, p0, false).unwrap();
    world.step(4);
    assert!(
        copy(&world, 0, mine).is_some(),
        "owned wins over a manual setting"
    );

    // Authority moves: the new owner gets it, the old one loses it.
    world.server.set_authority(mine, p1, true).unwrap();
    set_hp(&mut world, mine, 4);
    world.step(4);
    assert!(copy(&world, 0, mine).is_none());
    let on1 = copy(&world, 1, mine).expect("the new owner has it");
    assert_eq!(unit(&world.clients[1], on1).hp, 4);
    assert!(world.clients[1].is_network_authority(on1));
    assert_restricted_convergence(&world, 0);
    assert_restricted_convergence(&world, 1);
}

#[test]
fn snapshots_carry_only_relevant_nodes() {
    // The byte format, whose entries of equal changes have equal sizes.
    let mut world = World::with_encoding(2, SnapshotEncoding::Bytes, library);
    let (p0, p1) = (peer(&world, 0), peer(&world, 1));
    world.step(2);
    let idle = world.server.peer_stats(p1).unwrap().last_snapshot_bytes;
    let nodes: Vec<NodeId> = (0..20)
        .map(|i| spawn_unit(&mut world, i as f32, PeerId::SERVER))
        .collect();
    for &n in &nodes {
        world.server.set_relevant(n, p1, false).unwrap();
    }
    world.step(3);
    for frame in 0..10 {
        for (i, &n) in nodes.iter().enumerate() {
            set_hp(&mut world, n, frame * 100 + i as i32);
        }
        world.step(1);
        let (b0, b1) = (
            world.server.peer_stats(p0).unwrap().last_snapshot_bytes,
            world.server.peer_stats(p1).unwrap().last_snapshot_bytes,
        );
        assert_eq!(b1, idle, "client 1 gets an idle snapshot");
        assert!(
            b0 > idle + 20 * 3,
            "client 0 gets every change ({b0} bytes)"
        );
    }
    assert_eq!(world.clients[1].scene().iter::<Unit>().count(), 0);
    assert_eq!(world.clients[0].scene().iter::<Unit>().count(), 20);

    // Half of them become relevant to client 1: its snapshots grow by their share only.
    for &n in &nodes[..10] {
        world.server.set_relevant(n, p1, true).unwrap();
    }
    world.step(6);
    for (i, &n) in nodes.iter().enumerate() {
        set_hp(&mut world, n, -(i as i32));
    }
    world.step(1);
    let (b0, b1) = (
        world.server.peer_stats(p0).unwrap().last_snapshot_bytes,
        world.server.peer_stats(p1).unwrap().last_snapshot_bytes,
    );
    assert!(b1 > idle && b1 < b0, "{b1} vs {b0}");
    assert_eq!(
        b1 - idle,
        (b0 - idle) / 2,
        "ten equal entries out of twenty"
    );
    assert_restricted_convergence(&world, 0);
    assert_restricted_convergence(&world, 1);
}

#[test]
fn rpcs_go_only_to_clients_that_have_the_node() {
    let mut world = World::new(2, library);
    let (p0, p1) = (peer(&world, 0), peer(&world, 1));
    let a = spawn_unit(&mut world, 0.0, PeerId::SERVER);
    world.step(4);
    world.server.set_relevant(a, p1, false).unwrap();
    world.step(4);
    let handle = world.server.scene().net_ref::<Unit>(a).unwrap();
    let sent1 = world.server.peer_stats(p1).unwrap().rpcs_sent;

    // To the one client that lacks it: skipped and counted.
    world.server.rpc(handle).ping_to(p1, 1).unwrap();
    assert_eq!(world.server.stats().rpcs_not_relevant, 1);
    // To everyone: only client 0.
    world.server.rpc(handle).ping(2).unwrap();
    assert_eq!(world.server.stats().rpcs_not_relevant, 2);
    world.step(3);
    let on0 = copy(&world, 0, a).unwrap();
    assert_eq!(unit(&world.clients[0], on0).pings, 2);
    assert_eq!(world.server.peer_stats(p1).unwrap().rpcs_sent, sent1);
    assert_eq!(world.server.peer_stats(p0).unwrap().rpcs_sent, 1);

    // A client's call on a node the server has just taken from it is dropped.
    world.server.set_relevant(a, p0, false).unwrap();
    world.server.begin_frame(world.dt);
    world.server.end_frame(); // the despawn is on its way
    let mine = world.clients[0].scene().net_ref::<Unit>(on0).unwrap();
    world.clients[0].rpc(mine).poke(5).unwrap();
    world.step(3);
    assert!(copy(&world, 0, a).is_none());
    assert_eq!(unit(&world.server, a).pings, 0, "not run");
    assert_eq!(world.server.stats().rpcs_not_relevant, 3);
    assert_eq!(world.server.peer_stats(p0).unwrap().rpcs_dropped, 1);
}

/// Every frame, unit `i` moves along a line across the grid, in and out of the clients' ranges.
fn wander(world: &mut World, units: &[NodeId], frame: usize) {
    for (i, &u) in units.iter().enumerate() {
        let t = (frame + i * 17) as f32 * 0.8;
        let x = (t % 120.0 - 60.0).abs() - 30.0; // −30..30 and back
        let handle = world.server.scene().net_ref::<Unit>(u).unwrap();
        let unit = world.server.scene_mut().get_mut(handle).unwrap();
        unit.x = x;
        unit.z = (i % 5) as f32 * 7.0 - 14.0;
        unit.hp = (frame + i) as i32;
    }
}

fn converges_with_moving_relevance(loss: f32, seed: u64) {
    converges_with_moving_tiered_relevance(loss, seed, &[]);
}

fn converges_with_moving_tiered_relevance(loss: f32, seed: u64, tiers: &'static [(u32, u32)]) {
    converges_with_moving_relevance_as(loss, seed, tiers, SnapshotEncoding::Bytes);
}

fn converges_with_moving_relevance_as(
    loss: f32,
    seed: u64,
    tiers: &'static [(u32, u32)],
    snapshot_encoding: SnapshotEncoding,
) {
    let conditions = NetworkConditions {
        loss,
        duplication: 0.05,
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(30),
        reorder: 0.1,
    };
    let config = MultiplayerConfig {
        snapshot_encoding,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(3, config, Some(conditions), seed, library);
    assert_eq!(world.server.peers().len(), 3);
    world
        .server
        .set_interest_policy(tiered_grid(Duration::from_millis(200), tiers), 2)
        .unwrap();
    for c in 0..3 {
        let p = peer(&world, c);
        let player = spawn_unit(&mut world, c as f32 * 25.0 - 25.0, p);
        world.server.set_focus(p, Some(player)).unwrap();
    }
    let units: Vec<NodeId> = (0..30)
        .map(|_| spawn_unit(&mut world, 0.0, PeerId::SERVER))
        .collect();
    for frame in 0..300 {
        wander(&mut world, &units, frame);
        world.frame();
    }
    let stats = *world.server.stats();
    assert!(stats.relevance_spawns > 10, "{stats:?}");
    assert!(stats.relevance_despawns > 10, "{stats:?}");
    world.step(150);
    for c in 0..3 {
        assert_restricted_convergence(&world, c);
        let visible = world
            .server
            .peer_stats(peer(&world, c))
            .unwrap()
            .visible_groups;
        assert!(visible > 1 && visible < 33, "client {c}: {visible} groups");
    }
}

#[test]
fn converges_while_nodes_move_in_and_out_of_range_at_10_percent_loss() {
    converges_with_moving_relevance(0.1, 7);
}

#[test]
fn converges_while_nodes_move_in_and_out_of_range_at_25_percent_loss() {
    converges_with_moving_relevance(0.25, 11);
}

#[test]
fn converges_with_update_tiers_while_nodes_move_at_25_percent_loss() {
    // Wide enough that most relevant groups are in the slower tiers, changing tier as they move.
    converges_with_moving_tiered_relevance(0.25, 13, &[(0, 1), (1, 3)]);
    converges_with_moving_tiered_relevance(0.1, 17, &[(0, 2), (1, 6)]);
}

#[test]
fn bit_packed_snapshots_converge_while_nodes_move_in_and_out_of_range_and_tiers() {
    converges_with_moving_relevance_as(0.25, 19, &[], SnapshotEncoding::Bits);
    converges_with_moving_relevance_as(0.25, 23, &[(0, 1), (1, 3)], SnapshotEncoding::Bits);
}

#[test]
fn grid_policy_with_moving_nodes_allocates_nothing_in_steady_state() {
    allocates_nothing_with_moving_nodes(&[]);
}

#[test]
fn update_tiers_with_moving_nodes_allocate_nothing_in_steady_state() {
    // Near units cross between the every-tick and every-2nd-tick tiers as they move.
    allocates_nothing_with_moving_nodes(&[(0, 1), (1, 2), (u32::MAX, 6)]);
}

fn allocates_nothing_with_moving_nodes(tiers: &'static [(u32, u32)]) {
    let mut world = World::new(1, library);
    let p0 = peer(&world, 0);
    let player = spawn_unit(&mut world, 0.0, p0);
    world
        .server
        .set_interest_policy(tiered_grid(Duration::ZERO, tiers), 1)
        .unwrap();
    world.server.set_focus(p0, Some(player)).unwrap();
    // Fifty near (cells −1..1), fifty far (cells 5..7): they move without crossing.
    let near: Vec<NodeId> = (0..50)
        .map(|i| spawn_unit(&mut world, (i % 20) as f32 - 10.0, PeerId::SERVER))
        .collect();
    let far: Vec<NodeId> = (0..50)
        .map(|i| spawn_unit(&mut world, 55.0 + (i % 20) as f32, PeerId::SERVER))
        .collect();
    let handles: Vec<(NetRef<Unit>, f32)> = near
        .iter()
        .map(|&n| (n, 0.0))
        .chain(far.iter().map(|&n| (n, 60.0)))
        .map(|(n, base)| (world.server.scene().net_ref::<Unit>(n).unwrap(), base))
        .collect();
    let step = |world: &mut World, frame: usize| {
        for (i, &(h, base)) in handles.iter().enumerate() {
            let u = world.server.scene_mut().get_mut(h).unwrap();
            u.x = base + ((frame + i) % 15) as f32 - 7.0;
            u.z = ((frame * 3 + i) % 13) as f32 - 6.0;
            u.hp = (frame + i) as i32;
        }
        world.frame();
    };
    for frame in 0..90 {
        step(&mut world, frame);
    }
    assert_eq!(world.clients[0].scene().iter::<Unit>().count(), 51);
    let spawns = world.server.stats().relevance_spawns;
    let despawns = world.server.stats().relevance_despawns;
    assert_no_alloc("grid interest with 100 moving nodes, 120 frames", || {
        for frame in 90..210 {
            step(&mut world, frame);
        }
    });
    assert_eq!(world.server.stats().relevance_spawns, spawns, "no crossing");
    assert_eq!(world.server.stats().relevance_despawns, despawns);
    assert_eq!(world.clients[0].scene().iter::<Unit>().count(), 51);
    // The last changes of groups in slower tiers go out in their next slots.
    world.step(6);
    assert_restricted_convergence(&world, 0);
}

/// Groups made relevant again and changed once right after, over a lossy network: the change
/// must not be lost to a snapshot that overtook the spawn (a client does not acknowledge a
/// snapshot with an entry for an id it never received or that the server despawned).
#[test]
fn a_change_right_after_a_relevance_spawn_is_not_lost_under_loss() {
    let conditions = NetworkConditions {
        loss: 0.3,
        duplication: 0.05,
        latency: Duration::from_millis(10),
        jitter: Duration::from_millis(120),
        reorder: 0.0,
    };
    for seed in 0..4 {
        let mut world = World::with(
            2,
            MultiplayerConfig::default(),
            Some(conditions),
            seed,
            library,
        );
        let p0 = peer(&world, 0);
        let units: Vec<NodeId> = (0..24)
            .map(|i| spawn_unit(&mut world, i as f32, PeerId::SERVER))
            .collect();
        world.step(30);
        for round in 0..12 {
            for (i, &u) in units.iter().enumerate() {
                if (i + round) % 3 == 0 {
                    world.server.set_relevant(u, p0, round % 2 == 0).unwrap();
                }
            }
            world.step(1);
            for (i, &u) in units.iter().enumerate() {
                set_hp(&mut world, u, (round * 100 + i) as i32);
            }
            world.step(12);
        }
        world.step(120);
        assert!(world.server.stats().relevance_spawns > 20);
        assert_restricted_convergence(&world, 0);
        assert_restricted_convergence(&world, 1);
    }
}

/// A transport whose packets on `channel` wait, in order, while `hold` is set (and until every
/// earlier one has gone); those on the other channel go at once. Its `flush` sends what no
/// longer waits. While `ahead` is set, its reliable packets claim a tick 10 000 ahead of the
/// sender's (the message header's tick: bytes 3 to 6, little-endian).
struct Holding<T> {
    inner: T,
    channel: Channel,
    hold: Rc<Cell<bool>>,
    ahead: Rc<Cell<bool>>,
    queue: VecDeque<(PeerId, Vec<u8>)>,
}

impl<T> Holding<T> {
    /// `inner`, holding packets on `channel` while `hold` is set (see the type).
    fn new(inner: T, channel: Channel, hold: &Rc<Cell<bool>>) -> Self {
        Self {
            inner,
            channel,
            hold: Rc::clone(hold),
            ahead: Rc::default(),
            queue: VecDeque::new(),
        }
    }
}

impl<T: Transport> Transport for Holding<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        if self.ahead.get() && channel == Channel::Reliable && data.len() >= 7 {
            let mut data = data.to_vec();
            let tick = u32::from_le_bytes(data[3..7].try_into().unwrap());
            data[3..7].copy_from_slice(&tick.wrapping_add(10_000).to_le_bytes());
            return self.inner.send(peer, channel, &data);
        }
        if channel == self.channel && (self.hold.get() || !self.queue.is_empty()) {
            self.queue.push_back((peer, data.to_vec()));
            return Ok(());
        }
        self.inner.send(peer, channel, data)
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        self.inner.poll_event()
    }

    fn advance(&mut self, dt: Duration) {
        self.inner.advance(dt);
    }

    fn flush(&mut self) {
        if !self.hold.get() {
            while let Some((peer, data)) = self.queue.pop_front() {
                self.inner.send(peer, self.channel, &data).unwrap();
            }
        }
        self.inner.flush();
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.inner.disconnect(peer, reason);
    }

    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }
}

/// One frame of the server, then of the client.
fn frame_both(server: &mut Mp, client: &mut Mp, dt: Duration) {
    server.begin_frame(dt);
    server.end_frame();
    client.begin_frame(dt);
    client.end_frame();
}

/// A server on `transport` (listening on `net` as "game") sending `encoding`, and a client
/// connected to it, four frames on.
fn connected(net: &LoopbackNetwork, transport: Dyn, encoding: SnapshotEncoding) -> (Mp, Mp) {
    let config = MultiplayerConfig {
        snapshot_encoding: encoding,
        ..MultiplayerConfig::default()
    };
    let mut server = Mp::new(library(), config);
    server.start_server(transport, messages()).unwrap();
    let mut client = Mp::new(library(), MultiplayerConfig::default());
    client
        .start_client(
            |data| -> Dyn { Box::new(net.connect("game", data)) },
            messages(),
        )
        .unwrap();
    for _ in 0..4 {
        frame_both(&mut server, &mut client, FRAME);
    }
    assert!(server.peers().contains(&client.local_peer_id()));
    (server, client)
}

/// A frame at 30 Hz.
const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);

/// A group made relevant again is re-spawned under its old ids, below the highest id the
/// client holds; its spawn (reliable) is held back a few frames while snapshots (unreliable)
/// carrying a change made after the spawn was written reach the client first. The client must
/// not acknowledge them, or the server would count the change as delivered and the client
/// would keep the spawn's older state.
#[test]
fn a_snapshot_overtaking_a_relevance_respawn_is_not_acknowledged() {
    let net = LoopbackNetwork::new();
    let hold = Rc::new(Cell::new(false));
    let reliable_to_client = Rc::new(Cell::new(0u32));
    let counter = Rc::clone(&reliable_to_client);
    // The hook counts the reliable packets that leave the server (spawns, despawns).
    let holding = Holding::new(net.listen("game", 8).unwrap(), Channel::Reliable, &hold);
    let transport: Dyn = Box::new(SendHook::new(holding, move |_, channel, _| {
        if channel == Channel::Reliable {
            counter.set(counter.get() + 1);
        }
        Ok(())
    }));
    let (mut server, mut client) = connected(&net, transport, SnapshotEncoding::default());
    let (p, dt) = (client.local_peer_id(), FRAME);

    let root = server.scene().root();
    let a = server.spawn(UNIT, root, PeerId::SERVER).unwrap(); // ids 1 and 2
    let b = server.spawn(UNIT, root, PeerId::SERVER).unwrap(); // ids 3 and 4
    for _ in 0..4 {
        frame_both(&mut server, &mut client, dt);
    }
    let a_id = server.net_id(a).unwrap();
    assert!(client.node(a_id).is_some());
    assert!(client.node(server.net_id(b).unwrap()).is_some());

    // A leaves the client; B (higher ids) stays.
    server.set_relevant(a, p, false).unwrap();
    for _ in 0..4 {
        frame_both(&mut server, &mut client, dt);
    }
    assert!(client.node(a_id).is_none());

    // A comes back: its spawn is held; a change made right after it travels in snapshots.
    hold.set(true);
    let before = reliable_to_client.get();
    server.set_relevant(a, p, true).unwrap();
    frame_both(&mut server, &mut client, dt);
    assert!(
        reliable_to_client.get() > before,
        "the spawn was sent (and held)"
    );
    let h = server.scene().net_ref::<Unit>(a).unwrap();
    server.scene_mut().get_mut(h).unwrap().hp = 42;
    for _ in 0..4 {
        frame_both(&mut server, &mut client, dt);
    }
    assert!(client.node(a_id).is_none(), "the spawn has not arrived");
    hold.set(false);
    for _ in 0..6 {
        frame_both(&mut server, &mut client, dt);
    }
    let copy = client.node(a_id).expect("spawned again");
    assert_eq!(unit(&client, copy).hp, 42, "the change was not lost");
    assert!(server.peers().contains(&p));
}

/// A group that leaves a client and comes back is spawned again with its state then, and the
/// server sends nothing more until it changes. A snapshot written before the group left, held
/// back until after its return (and after every later snapshot was held too, so that it is
/// the newest the client has seen), would set the older values on the new copy for good: the
/// client discards snapshots from before a spawn it applied.
#[test]
fn a_snapshot_from_before_a_group_left_arriving_after_its_return_is_discarded() {
    for encoding in [SnapshotEncoding::Bytes, SnapshotEncoding::Bits] {
        let net = LoopbackNetwork::new();
        let hold = Rc::new(Cell::new(false));
        let holding = Holding::new(net.listen("game", 8).unwrap(), Channel::Unreliable, &hold);
        let (mut server, mut client) = connected(&net, Box::new(holding), encoding);
        let (p, dt) = (client.local_peer_id(), FRAME);
        let a = server
            .spawn(UNIT, server.scene().root(), PeerId::SERVER)
            .unwrap();
        for _ in 0..4 {
            frame_both(&mut server, &mut client, dt);
        }
        let a_id = server.net_id(a).unwrap();
        let h = server.scene().net_ref::<Unit>(a).unwrap();

        // A change whose snapshots are held; the group leaves, changes, and comes back.
        hold.set(true);
        server.scene_mut().get_mut(h).unwrap().hp = 7;
        frame_both(&mut server, &mut client, dt);
        server.set_relevant(a, p, false).unwrap();
        for _ in 0..2 {
            frame_both(&mut server, &mut client, dt);
        }
        assert!(client.node(a_id).is_none(), "despawned ({encoding:?})");
        server.scene_mut().get_mut(h).unwrap().hp = 8;
        frame_both(&mut server, &mut client, dt);
        server.set_relevant(a, p, true).unwrap();
        for _ in 0..2 {
            frame_both(&mut server, &mut client, dt);
        }
        let copy = client.node(a_id).expect("spawned again");
        assert_eq!(
            unit(&client, copy).hp,
            8,
            "the spawn's state ({encoding:?})"
        );

        // The held snapshots arrive, oldest (the one carrying 7) first.
        hold.set(false);
        for _ in 0..6 {
            frame_both(&mut server, &mut client, dt);
        }
        let copy = client.node(a_id).expect("still there");
        assert_eq!(
            unit(&client, copy).hp,
            8,
            "the stale entry was not kept ({encoding:?})"
        );
        assert!(client.stats().snapshots_discarded > 0, "({encoding:?})");
        assert!(server.peers().contains(&p));
    }
}

/// A server (broken or hostile) whose spawn claims a tick far ahead of its snapshots cannot make
/// the client discard every snapshot until then: a floor more than two seconds of ticks past
/// the newest snapshot applied is not believed, and the node's later changes still arrive.
#[test]
fn a_spawn_claiming_a_tick_far_ahead_does_not_make_the_client_discard_every_snapshot() {
    let net = LoopbackNetwork::new();
    let holding = Holding::new(
        net.listen("game", 8).unwrap(),
        Channel::Reliable,
        &Rc::default(),
    );
    // While `ahead` is set, reliable packets (here: the spawn) claim a tick 10 000 ahead.
    let ahead = Rc::clone(&holding.ahead);
    let (mut server, mut client) = connected(&net, Box::new(holding), SnapshotEncoding::Bytes);
    let dt = FRAME;
    ahead.set(true);
    let a = server
        .spawn(UNIT, server.scene().root(), PeerId::SERVER)
        .unwrap();
    frame_both(&mut server, &mut client, dt);
    ahead.set(false);
    let a_id = server.net_id(a).unwrap();
    let copy = client.node(a_id).expect("spawned");
    let h = server.scene().net_ref::<Unit>(a).unwrap();
    server.scene_mut().get_mut(h).unwrap().hp = 9;
    for _ in 0..4 {
        frame_both(&mut server, &mut client, dt);
    }
    assert_eq!(unit(&client, copy).hp, 9, "the change arrived");
}

/// A node the client's game code frees does not hold acknowledgements back (its entries are
/// skipped, yet the snapshots acknowledged), even after a despawn of another node: the client
/// stays connected past `peer_timeout` and its other nodes keep updating.
#[test]
fn a_node_freed_locally_does_not_stop_acknowledgements() {
    let config = MultiplayerConfig {
        peer_timeout: Duration::from_millis(500),
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(1, config, None, 0, library);
    let p0 = peer(&world, 0);
    let freed = spawn_unit(&mut world, 0.0, PeerId::SERVER);
    let kept = spawn_unit(&mut world, 1.0, PeerId::SERVER);
    let other = spawn_unit(&mut world, 2.0, PeerId::SERVER);
    world.step(4);
    let local = copy(&world, 0, freed).unwrap();
    world.clients[0].scene_mut().remove(local);
    assert!(!world.clients[0].scene().contains(local));
    // Another node despawned by the server meanwhile.
    world.server.scene_mut().remove(other);
    let mut acked = world.server.peer_stats(p0).unwrap().acknowledged_tick;
    for round in 0..6 {
        for frame in 0..10 {
            let hp = round * 10 + frame;
            set_hp(&mut world, freed, hp);
            set_hp(&mut world, kept, hp);
            world.step(1);
        }
        assert!(world.server.peers().contains(&p0), "round {round}");
        let now = world.server.peer_stats(p0).unwrap().acknowledged_tick;
        assert!(now > acked, "round {round}: acknowledgements go on");
        acked = now;
        let on0 = copy(&world, 0, kept).unwrap();
        assert_eq!(unit(&world.clients[0], on0).hp, round * 10 + 9);
    }
    // Two seconds in all: four times the timeout, and no disconnection.
    assert!(drain(&mut world.clients[0])
        .iter()
        .all(|e| !matches!(e, MultiplayerEvent::Disconnected { .. })));
    assert_eq!(world.clients[0].scene().iter::<Unit>().count(), 1);
}

/// Sets every unit's hp to `hp`, runs one frame, and returns which units' copies on client 0
/// have it afterwards.
fn change_all(world: &mut World, units: &[NodeId], hp: i32) -> Vec<bool> {
    for &u in units {
        set_hp(world, u, hp);
    }
    world.frame();
    units
        .iter()
        .map(|&u| unit(&world.clients[0], copy(world, 0, u).unwrap()).hp == hp)
        .collect()
}

#[test]
fn far_groups_are_carried_only_every_n_ticks_and_near_ones_every_tick() {
    // The byte format, whose entries of equal changes have equal sizes.
    let mut world = World::with_encoding(1, SnapshotEncoding::Bytes, library);
    let p0 = peer(&world, 0);
    world.step(2);
    let idle = world.server.peer_stats(p0).unwrap().last_snapshot_bytes;
    let player = spawn_unit(&mut world, 0.0, p0);
    // Cell 0 (every tick) and three far ones in cell 5 (every 3rd tick): consecutive groups of
    // two ids each, so their first net ids, and slots, differ modulo 3.
    let near = spawn_unit(&mut world, 5.0, PeerId::SERVER);
    let far: Vec<NodeId> = (0..3)
        .map(|_| spawn_unit(&mut world, 55.0, PeerId::SERVER))
        .collect();
    let mut policy = tiered_grid(Duration::ZERO, &[(1, 1), (u32::MAX, 3)]);
    policy.radius_cells = 8;
    world.server.set_interest_policy(policy, 1).unwrap();
    world.server.set_focus(p0, Some(player)).unwrap();
    world.step(6);
    let units: Vec<NodeId> = [near].into_iter().chain(far.iter().copied()).collect();
    assert_restricted_convergence(&world, 0);

    // K = 12 ticks of changes to every unit.
    let mut updated = vec![Vec::new(); units.len()];
    let mut bytes = Vec::new();
    for frame in 0..12 {
        for (u, fresh) in change_all(&mut world, &units, 100 + frame)
            .into_iter()
            .enumerate()
        {
            if fresh {
                updated[u].push(frame);
            }
        }
        bytes.push(world.server.peer_stats(p0).unwrap().last_snapshot_bytes);
    }
    assert_eq!(updated[0], (0..12).collect::<Vec<_>>(), "near: every tick");
    for (i, frames) in updated[1..].iter().enumerate() {
        assert_eq!(frames.len(), 4, "far {i}: every 3rd tick ({frames:?})");
        assert!(
            frames.windows(2).all(|w| w[1] - w[0] == 3),
            "far {i}: {frames:?}"
        );
    }
    // Spread: each tick carries exactly one of the three far groups.
    let mut firsts: Vec<i32> = updated[1..].iter().map(|f| f[0]).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, [0, 1, 2]);
    // So every snapshot holds two equal entries (near and one far) ...
    assert!(bytes.iter().all(|&b| b == bytes[0]), "{bytes:?}");
    // ... where every tick (no tiers) it holds four.
    world
        .server
        .set_interest_policy(
            GridInterest {
                radius_cells: 8,
                ..grid(Duration::ZERO)
            },
            1,
        )
        .unwrap();
    world.step(3);
    assert!(change_all(&mut world, &units, 1000).iter().all(|&f| f));
    let all = world.server.peer_stats(p0).unwrap().last_snapshot_bytes;
    assert_eq!(all - idle, 2 * (bytes[0] - idle), "{all} vs {}", bytes[0]);
    assert_restricted_convergence(&world, 0);
}

#[test]
fn a_tier_change_takes_effect_at_the_next_evaluation() {
    let mut world = World::new(1, library);
    let p0 = peer(&world, 0);
    let player = spawn_unit(&mut world, 0.0, p0);
    let a = spawn_unit(&mut world, 55.0, PeerId::SERVER);
    let mut policy = tiered_grid(Duration::ZERO, &[(1, 1), (u32::MAX, 6)]);
    policy.radius_cells = 8;
    world.server.set_interest_policy(policy, 1).unwrap();
    world.server.set_focus(p0, Some(player)).unwrap();
    world.step(6);
    let units = [a];
    let fresh = |world: &mut World, from: i32, frames: i32| {
        (from..from + frames)
            .filter(|&hp| change_all(world, &units, hp)[0])
            .count()
    };
    assert_eq!(fresh(&mut world, 1, 12), 2, "far: every 6th tick");

    // Closer: from the evaluation in the frame it moved, every tick.
    move_to(&mut world, a, 5.0);
    assert_eq!(fresh(&mut world, 100, 12), 12, "near: every tick");
    // Away again: back to every 6th tick, still converging.
    move_to(&mut world, a, 55.0);
    assert!((1..=3).contains(&fresh(&mut world, 200, 12)));
    // A manual setting (or anything but the policy) means every tick.
    world.server.set_relevant(a, p0, true).unwrap();
    world.step(1);
    assert_eq!(fresh(&mut world, 300, 6), 6, "manual: every tick");
    world.server.clear_relevant(a, p0).unwrap();
    world.step(1);
    assert_eq!(fresh(&mut world, 400, 12), 2, "the policy's tier again");

    // With a slower evaluation, the change waits for the next evaluation at most.
    let mut policy = tiered_grid(Duration::ZERO, &[(1, 1), (u32::MAX, 6)]);
    policy.radius_cells = 8;
    world.server.set_interest_policy(policy, 4).unwrap();
    world.step(6);
    move_to(&mut world, a, 5.0);
    world.step(4);
    assert_eq!(
        fresh(&mut world, 500, 8),
        8,
        "after an evaluation: every tick"
    );
    world.step(4);
    assert_restricted_convergence(&world, 0);
}
