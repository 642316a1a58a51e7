#![allow(clippy::unwrap_used)]
//! Ticks never run out: a server started 300 ticks before the `u32` tick wraps
//! ([`MultiplayerConfig::first_tick`]) runs across the wrap with clients joined.
//!
//! - over a perfect loopback and over a lossy, reordering link under a byte budget (clients
//!   behind), nodes with plain, `owner_only`, quantized and interpolated members keep moving
//!   for 700 ticks across the wrap: every client keeps applying and acknowledging snapshots
//!   (none times out), and converges exactly once the motion stops;
//! - with interest management (movers coming and going per client, update periods of 1 to 3
//!   ticks) over the lossy link, under the budget, across the wrap: every client converges
//!   once every mover is relevant again;
//! - server RPCs changing a replicated member across the wrap (under jitter): clients keep
//!   applying snapshots after each call (the RPC floor orders across the wrap), and the value
//!   never goes back;
//! - a client that joins after the wrap gets everything, and later changes;
//! - interpolation: the shown position moves smoothly across the wrap (no jump, no NaN, no
//!   clock snap), and the render tick keeps increasing.
//! - a derived shadow state orders its change ticks across the wrap, and ages them up to a
//!   floor keeping the newer ones (`Replicated::age`);
//! - a node still for over 2³¹ ticks (long frames jump the tick by almost 2³⁰ four times, while
//!   other nodes move) still replicates its next change, interpolated members included: the
//!   server's aging keeps its change ticks and acknowledgements within 2³⁰ ticks of the
//!   server's, and the client restarts the buffers of a member still for that long.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use glam::Vec3;
use mf_net::prelude::*;
use mf_net::replication::interest::{InterestPolicy, InterestQuery};
use mf_net::replication::{Audience, MultiplayerEvent, NetId, Replicated};
use mf_net::transport::simulated::NetworkConditions;
use mf_net::wire::{NetReader, NetWriter};
use mf_net_tests::harness::{drain, Mp, World};

/// Something that moves: a plain member, one only its owner receives, a quantized one and an
/// interpolated one.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Mover {
    #[replicated]
    x: i32,
    #[replicated(owner_only)]
    secret: u32,
    #[replicated(quantize(min = -1000.0, max = 1000.0, bits = 16))]
    heading: f32,
    #[replicated(interpolate)]
    position: Vec3,
}

const MOVER: SceneIndex = SceneIndex::new(0);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("mover", |scene, root| {
            scene.set_value(root, Mover::default())
        })
        .unwrap();
    scenes
}

/// The first tick: 300 ticks before the wrap.
const FIRST: u32 = u32::MAX - 300;

fn config(max_snapshot_bytes: usize) -> MultiplayerConfig {
    MultiplayerConfig {
        first_tick: FIRST,
        max_snapshot_bytes,
        ..MultiplayerConfig::default()
    }
}

fn lossy() -> NetworkConditions {
    NetworkConditions {
        loss: 0.15,
        duplication: 0.05,
        latency: Duration::from_millis(20),
        jitter: Duration::from_millis(30),
        reorder: 0.1,
    }
}

/// Spawns `n` movers, one in four owned by the first client.
fn spawn_movers(world: &mut World, n: usize) -> Vec<NetRef<Mover>> {
    let root = world.root();
    let owner = world.clients[0].local_peer_id();
    (0..n)
        .map(|i| {
            let authority = if i % 4 == 0 { owner } else { PeerId::SERVER };
            let node = world.server.spawn(MOVER, root, authority).unwrap();
            world.server.scene().net_ref::<Mover>(node).unwrap()
        })
        .collect()
}

/// Moves every mover for `frame` (some only now and then, so that some stay unchanged).
fn move_all(world: &mut World, movers: &[NetRef<Mover>], frame: u32) {
    for (i, &h) in movers.iter().enumerate() {
        let i = i as u32;
        let m = world.server.scene_mut().get_mut(h).unwrap();
        if (frame + i) % 3 != 0 {
            m.x = (frame * 7 + i) as i32;
            m.position = Vec3::new(frame as f32 * 0.1, i as f32, 0.0);
        }
        if (frame + i) % 5 == 0 {
            m.secret = frame ^ i;
            m.heading = (frame % 1000) as f32 - 500.0 + i as f32 * 0.25;
        }
    }
}

/// Runs `frames` frames moving the movers from frame `from` on; asserts that no peer left.
fn run(world: &mut World, movers: &[NetRef<Mover>], from: u32, frames: u32) {
    for frame in from..from + frames {
        move_all(world, movers, frame);
        world.frame();
        for event in drain(&mut world.server) {
            assert!(
                !matches!(event, MultiplayerEvent::PeerLeft { .. }),
                "frame {frame}, server tick {}: {event:?}",
                world.server.tick()
            );
        }
        for (i, client) in world.clients.iter_mut().enumerate() {
            for event in drain(client) {
                assert!(
                    !matches!(event, MultiplayerEvent::Disconnected { .. }),
                    "frame {frame}: client {i}: {event:?}"
                );
            }
        }
    }
}

/// How client `c` differs from the server on the movers (`secret` only where it owns them),
/// or `None`.
fn difference(world: &World, c: usize) -> Option<String> {
    let client = &world.clients[c];
    let peer = client.local_peer_id();
    let mut count = 0;
    for (handle, theirs) in world.server.scene().iter::<Mover>() {
        count += 1;
        let node = handle.node();
        let id = world.server.net_id(node).unwrap();
        let Some(ours) = client
            .node(id)
            .and_then(|n| client.scene().net_ref::<Mover>(n))
            .and_then(|h| client.scene().get(h))
        else {
            return Some(format!("{id} is missing"));
        };
        let owned = world.server.authority(node) == peer;
        let secret = if owned { theirs.secret } else { 0 };
        let expected = (theirs.x, secret, theirs.position);
        if (ours.x, ours.secret, ours.position) != expected
            || (ours.heading - theirs.heading).abs() > 0.05
        {
            return Some(format!("{id}: {ours:?} vs {theirs:?}"));
        }
    }
    let theirs = client.scene().iter::<Mover>().count();
    (theirs != count).then(|| format!("{count} movers on the server, {theirs} on the client"))
}

/// Stops moving and runs until every client has the server's state (at most `frames`).
fn settle(world: &mut World, frames: usize) {
    for _ in 0..frames {
        world.frame();
        if (0..world.clients.len()).all(|c| difference(world, c).is_none()) {
            break;
        }
    }
    for c in 0..world.clients.len() {
        if let Some(diff) = difference(world, c) {
            panic!("client {c} differs from the server: {diff}");
        }
    }
}

/// What every client has applied, as snapshot counts.
fn applied(world: &World) -> Vec<u64> {
    world
        .clients
        .iter()
        .map(|c| c.stats().snapshots_applied)
        .collect()
}

fn across_the_wrap(conditions: Option<NetworkConditions>, budget: usize, seed: u64) {
    let mut world = World::with(3, config(budget), conditions, seed, library);
    assert_eq!(world.server.peers().len(), 3, "every client joined");
    let movers = spawn_movers(&mut world, 60);
    run(&mut world, &movers, 0, 100);
    settle(&mut world, 200);
    let before = applied(&world);
    let start = world.server.tick();
    assert!(
        start > FIRST && start < u32::MAX - 100,
        "before the wrap: {start}"
    );
    // Across the wrap: 700 ticks of motion.
    run(&mut world, &movers, 100, 700);
    let tick = world.server.tick();
    assert!(
        tick > 300 && tick < 1000,
        "the server's tick wrapped: {tick}"
    );
    for (i, client) in world.clients.iter().enumerate() {
        // Still applying snapshots after the wrap, not only before it.
        assert!(
            client.stats().snapshots_applied > before[i] + 300,
            "client {i}: {:?}",
            client.stats()
        );
        let acked = world
            .server
            .peer_stats(client.local_peer_id())
            .unwrap()
            .acknowledged_tick;
        assert!(
            acked < tick && tick - acked < 60,
            "client {i} acknowledged {acked}"
        );
    }
    settle(&mut world, 300);
    // A late joiner, after the wrap, gets everything and then the changes.
    let late = world.connect_client();
    world.step(if conditions.is_some() { 40 } else { 4 });
    assert!(
        world.clients[late].peers().len() == 1,
        "the late client joined"
    );
    settle(&mut world, 300);
    run(&mut world, &movers, 800, 60);
    settle(&mut world, 300);
    let owned = world.server.scene().get(movers[0]).unwrap().secret;
    let shown = owned_secret(
        &world.clients[0],
        world.server.net_id(movers[0].node()).unwrap(),
    );
    assert_eq!(shown, owned, "the owner received its owner_only member");
}

/// The `secret` a client holds for the node of `net_id`.
fn owned_secret(client: &Mp, net_id: NetId) -> u32 {
    let node = client.node(net_id).unwrap();
    let handle = client.scene().net_ref::<Mover>(node).unwrap();
    client.scene().get(handle).unwrap().secret
}

#[test]
fn clients_follow_a_server_across_the_wrap_over_loopback() {
    across_the_wrap(None, 0, 0);
}

#[test]
fn clients_follow_a_server_across_the_wrap_over_a_lossy_link_under_a_budget() {
    across_the_wrap(Some(lossy()), 1200, 11);
}

#[test]
fn interpolation_is_smooth_across_the_wrap() {
    let mut world = World::with(1, config(0), None, 0, library);
    world.dt = Duration::from_nanos(16_666_667); // 60 frames a second at 30 ticks
    let movers = spawn_movers(&mut world, 1);
    let h = movers[0];
    let (mut last_x, mut last_render) = (None::<f32>, None::<f64>);
    let mut largest_step = 0f32;
    for frame in 0..1400u32 {
        // 0.05 units a frame, always.
        world.server.scene_mut().get_mut(h).unwrap().position.x = frame as f32 * 0.05;
        world.frame();
        let client = &world.clients[0];
        let Some(render) = client.interpolation().and_then(|t| t.render_tick()) else {
            continue;
        };
        let (_, shown) = client.scene().iter::<Mover>().next().unwrap();
        let x = shown.position.x;
        assert!(x.is_finite() && render.is_finite(), "frame {frame}");
        if frame > 60 {
            let (lx, lr) = (last_x.unwrap(), last_render.unwrap());
            largest_step = largest_step.max((x - lx).abs());
            assert!(
                render > lr,
                "frame {frame}: render tick {render} after {lr}"
            );
        }
        (last_x, last_render) = (Some(x), Some(render));
    }
    assert!(world.server.tick() < 1000, "the server's tick wrapped");
    let stats = world.clients[0].stats();
    assert_eq!(stats.clock_snaps, 0, "{stats:?}");
    // About one frame's motion per frame (0.05), never a jump.
    assert!(largest_step < 0.08, "largest step {largest_step}");
    assert!(last_x.unwrap() > 60.0, "still moving: {last_x:?}");
}

/// A tick interval's worth of frames that jumps the server's tick by `ticks` at 30 Hz.
fn jump(world: &mut World, ticks: u32) {
    let dt = world.dt;
    world.dt = Duration::from_secs(1) / 30 * ticks;
    world.frame();
    world.dt = dt;
}

#[test]
fn a_node_still_for_more_than_half_the_tick_space_still_replicates_its_next_change() {
    // Long frames jump the tick (2³⁰ ticks of 30 Hz are 414 days): no timeouts.
    let config = MultiplayerConfig {
        peer_timeout: Duration::MAX,
        ..config(0)
    };
    let mut world = World::with(2, config, None, 0, library);
    let movers = spawn_movers(&mut world, 3);
    run(&mut world, &movers, 0, 10);
    settle(&mut world, 30);
    let still = world.server.scene().get(movers[1]).unwrap().clone();
    // Four jumps of just under 2³⁰ ticks (the longest frame supported): movers 0 and 2 move
    // between them, mover 1 never.
    for j in 0..4u32 {
        jump(&mut world, (1 << 30) - 1000);
        for frame in 0..20 {
            for i in [0, 2] {
                let m = world.server.scene_mut().get_mut(movers[i]).unwrap();
                m.x = (j * 100 + frame) as i32;
                m.position.x += 1.0;
            }
            world.frame();
        }
        settle(&mut world, 60);
    }
    assert_eq!(world.server.scene().get(movers[1]).unwrap(), &still);
    // Almost 4·2³⁰ ticks later, mover 1 changes: every client gets it, and then the next.
    for value in [41, 42] {
        let m = world.server.scene_mut().get_mut(movers[1]).unwrap();
        m.x = value;
        m.secret = value as u32;
        m.position.y = value as f32;
        settle(&mut world, 60);
    }
    let shown = owned_secret(
        &world.clients[0],
        world.server.net_id(movers[0].node()).unwrap(),
    );
    assert_eq!(shown, world.server.scene().get(movers[0]).unwrap().secret);
}

/// The mask of members `state` writes since `since` (for every client).
fn written_since(state: &<Mover as Replicated>::State, since: u32) -> u64 {
    let mut w = NetWriter::new();
    Mover::write_since(state, since, &mut w);
    NetReader::new(w.as_slice()).read_var_u64().unwrap()
}

#[test]
fn shadow_stamps_order_across_the_wrap_and_age_up_to_the_floor() {
    const ALL: u64 = 0b1111;
    let mut m = Mover::default();
    let mut state = m.new_state(u32::MAX - 1);
    m.x = 5;
    assert!(m.capture(&mut state, 1), "a change after the wrap");
    assert_eq!(Mover::last_changed(&state), 1);
    assert_eq!(Mover::last_changed_for(&state, Audience::NonOwner), 1);
    // Since a tick before the wrap: `x` (bit 0) only; since the change: nothing.
    assert_eq!(written_since(&state, u32::MAX), 0b1);
    assert_eq!(written_since(&state, 1), 0);
    // Aging to 0 moves the stamps of before the wrap up to it, and keeps the newer one.
    Mover::age(&mut state, 0);
    assert_eq!(written_since(&state, u32::MAX), ALL);
    assert_eq!(written_since(&state, 0), 0b1);
    assert_eq!(Mover::last_changed(&state), 1);
    // Aging past every stamp merges them into the floor.
    Mover::age(&mut state, 10);
    assert_eq!(Mover::last_changed(&state), 10);
    assert_eq!(written_since(&state, 10), 0);
    assert_eq!(written_since(&state, 9), ALL);
}

/// Once set, every group is relevant to every client ([`Flicker`]).
static ALL_RELEVANT: AtomicBool = AtomicBool::new(false);

/// Movers come and go per client every two seconds, each at its own phase, and go out every
/// first, second or third tick; the first client's own movers stay.
struct Flicker;

impl Flicker {
    /// The mover's index (its `position.y`, see [`move_all`]).
    fn index(query: &InterestQuery<'_>) -> u32 {
        let Some(scene) = query.scene() else {
            return 0;
        };
        scene
            .net_ref::<Mover>(query.group_root)
            .and_then(|h| scene.get(h))
            .map_or(0, |m| m.position.y as u32)
    }
}

impl InterestPolicy for Flicker {
    fn relevant(&mut self, query: &InterestQuery<'_>) -> bool {
        let i = Self::index(query);
        let phase = query.now.as_secs() / 2 + u64::from(i) + query.peer.0;
        ALL_RELEVANT.load(Ordering::Relaxed) || i % 4 == 0 || phase % 2 == 0
    }

    fn update_period(&mut self, query: &InterestQuery<'_>) -> u32 {
        1 + Self::index(query) % 3
    }
}

#[test]
fn interest_and_update_tiers_across_the_wrap() {
    let mut world = World::with(3, config(1200), Some(lossy()), 5, library);
    world
        .server
        .set_interest_policy(Flicker, 3)
        .expect("a server");
    let movers = spawn_movers(&mut world, 40);
    run(&mut world, &movers, 0, 100);
    assert!(world.server.tick() > FIRST && world.server.tick() < u32::MAX - 100);
    let hidden = world.clients[1].scene().iter::<Mover>().count();
    assert!(hidden < 40, "some movers are not on client 1: {hidden}");
    // Across the wrap, movers coming and going on every client.
    run(&mut world, &movers, 100, 700);
    assert!(world.server.tick() < 1000, "the server's tick wrapped");
    ALL_RELEVANT.store(true, Ordering::Relaxed);
    settle(&mut world, 300);
}

#[rpcs]
impl Mover {
    /// The server moves a mover along by RPC (reliable, while snapshots are not).
    #[rpc(server, call_local)]
    fn bump(&mut self, by: i32) {
        self.x += by;
    }
}

#[test]
fn server_rpcs_across_the_wrap_never_hold_snapshots_back() {
    let jitter = NetworkConditions {
        latency: Duration::from_millis(60),
        jitter: Duration::from_millis(60),
        ..NetworkConditions::default()
    };
    let mut world = World::with(3, config(0), Some(jitter), 3, library);
    let movers = spawn_movers(&mut world, 2);
    world.step(30);
    let mut shown = vec![Vec::new(); world.clients.len()];
    let (mut applied_at_wrap, mut bumps) = (None, 0);
    for frame in 0..700u32 {
        // Every frame within 40 ticks of the wrap, every fifth frame otherwise.
        let near_wrap = world.server.tick().wrapping_add(40) < 80;
        if near_wrap || frame % 5 == 0 {
            world.server.rpc(movers[1]).bump(1).unwrap();
            bumps += 1;
        }
        // Mover 0 changes by snapshot only.
        world.server.scene_mut().get_mut(movers[0]).unwrap().x = frame as i32;
        world.frame();
        if world.server.tick() < 10 && applied_at_wrap.is_none() {
            applied_at_wrap = Some(applied(&world));
        }
        let id = world.server.net_id(movers[1].node()).unwrap();
        for (c, client) in world.clients.iter().enumerate() {
            let node = client.node(id).unwrap();
            let h = client.scene().net_ref::<Mover>(node).unwrap();
            shown[c].push(client.scene().get(h).unwrap().x);
        }
    }
    assert!(world.server.tick() > 300 && world.server.tick() < 1000);
    let at_wrap = applied_at_wrap.expect("the tick wrapped");
    for (c, applied) in applied(&world).into_iter().enumerate() {
        assert!(
            applied > at_wrap[c] + 300,
            "client {c}: {applied} vs {at_wrap:?}"
        );
        // Every call changed the value once: it never went back.
        assert!(
            shown[c].windows(2).all(|w| w[1] >= w[0]),
            "client {c} went back"
        );
    }
    settle(&mut world, 120);
    assert!(bumps > 200);
    assert_eq!(world.server.scene().get(movers[1]).unwrap().x, bumps);
}

/// The server's tick clock derives from the frame time alone: a frame begun twice before it
/// ended (two `begin_frame`s, one `end_frame`) still advances the ticks by the whole time.
#[test]
fn the_tick_clock_follows_the_frame_time_even_when_a_frame_is_begun_twice() {
    let mut mp: Multiplayer<mf_net::transport::loopback::LoopbackTransport> =
        Multiplayer::new(SceneLibrary::new(), MultiplayerConfig::default());
    let interval = Duration::from_secs(1) / 30;
    let start = mp.tick();
    for _ in 0..10 {
        mp.begin_frame(interval);
        mp.begin_frame(interval);
        mp.end_frame();
    }
    assert_eq!(mp.tick().wrapping_sub(start), 20);
}
