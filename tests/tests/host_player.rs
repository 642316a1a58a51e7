#![allow(clippy::unwrap_used)]
//! One game code path for the three roles: the host of a listen server plays beside its
//! clients, and the same program runs offline as singleplayer. An `authority` RPC the server
//! calls on its own node runs there at once, as a call from the server, with nothing encoded;
//! its input feeds the `Simulation` with no round trip.

use std::time::Duration;

use mf_net::prediction::{Simulation, Step};
use mf_net::prelude::*;
use mf_net::replication::MultiplayerEvent;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::{Mp, World};

/// One tick's input.
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Walk {
    dir: i8,
}

/// A player: predicted by its owner, interpolated by everyone else.
#[derive(Replicated, Debug, Default, Clone)]
struct Avatar {
    #[replicated(predict, interpolate)]
    x: f32,
    #[replicated]
    hp: i32,
    /// Local: who healed this avatar here, last.
    healer: Option<PeerId>,
    /// Local: waves run here.
    waves: u32,
}

#[rpcs]
impl Avatar {
    /// The owner heals its avatar (a client's call travels to the server; the host's runs
    /// there at once).
    #[rpc(authority, validate = small_heal)]
    fn heal(&mut self, ctx: &RpcContext, amount: i32) {
        self.hp += amount;
        self.healer = Some(ctx.sender());
    }

    /// The owner waves, at most twice a second.
    #[rpc(authority, rate_limit = 2)]
    fn wave(&mut self) {
        self.waves += 1;
    }
}

/// Refuses a heal of more than 10.
fn small_heal(_: &Avatar, _: &RpcContext, amount: &i32) -> bool {
    *amount <= 10
}

const AVATAR: SceneIndex = SceneIndex::new(0);
const SPEED: f32 = 0.5;
const TICK: Duration = Duration::from_nanos(33_333_333);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("avatar", |scene, root| {
            scene.set_value(root, Avatar::default())
        })
        .unwrap();
    scenes
}

/// The game's step, the same in every role.
fn walk(step: &mut Step<'_, Walk>) {
    for (_, avatar, input) in step.simulated_mut::<Avatar>() {
        avatar.x += f32::from(input.map_or(0, |i| i.dir)) * SPEED;
    }
}

/// What player `i` presses in frame `frame` (the host is player 0).
fn pressed(i: usize, frame: usize) -> Walk {
    Walk {
        dir: [1, 0, -1, 1][(frame / 15 + i) % 4],
    }
}

/// The player's own avatar on `mp`: a client's, the host's, singleplayer's alike.
fn own(mp: &Mp) -> NetRef<Avatar> {
    mp.owned::<Avatar>().next().unwrap()
}

/// One frame of the game in any role: `mp` runs its step with player `i`'s input (`moving`:
/// pressing at all) and heals its own avatar every 20 frames.
fn play(mp: &mut Mp, sim: &mut Simulation<Walk>, i: usize, frame: usize, moving: bool) {
    mp.begin_frame(TICK);
    let input = |_| {
        if moving {
            pressed(i, frame)
        } else {
            Walk::default()
        }
    };
    sim.run(mp, input, walk);
    if moving && frame % 20 == 0 {
        let avatar = own(mp);
        mp.rpc(avatar).heal(1).unwrap();
    }
    mp.end_frame();
}

#[test]
fn a_listen_server_host_plays_beside_8_clients_at_30_percent_loss() {
    let lossy = NetworkConditions::perfect().with_loss(0.3);
    let mut world = World::with(8, MultiplayerConfig::default(), Some(lossy), 5, library);
    world.dt = TICK;
    let root = world.root();
    let host = world.server.spawn(AVATAR, root, PeerId::SERVER).unwrap();
    for c in 0..8 {
        let peer = world.clients[c].local_peer_id();
        world.server.spawn(AVATAR, root, peer).unwrap();
    }
    let host = world.server.scene().net_ref::<Avatar>(host).unwrap();
    let mut server_sim = Simulation::new();
    let mut client_sims: Vec<Simulation<Walk>> = (0..8).map(|_| Simulation::new()).collect();
    let mut frame = 0;
    let mut run = |world: &mut World, moving: bool, frames: usize| {
        for _ in 0..frames {
            play(&mut world.server, &mut server_sim, 0, frame, moving);
            for (c, sim) in client_sims.iter_mut().enumerate() {
                play(&mut world.clients[c], sim, c + 1, frame, moving);
            }
            frame += 1;
        }
    };
    run(&mut world, false, 60);

    // The host's heal runs at once, on the server, from the server, nothing sent.
    let sent = world.server.stats().rpcs_sent;
    world.server.rpc(host).heal(2).unwrap();
    let avatar = world.server.scene().get(host).unwrap();
    assert_eq!((avatar.hp, avatar.healer), (2, Some(PeerId::SERVER)));
    assert_eq!(world.server.stats().rpcs_sent, sent);
    // Validated as a remote call is: too much is refused, counted and raised.
    assert!(world.server.rpc(host).heal(50).is_err());
    assert_eq!(world.server.stats().rpcs_rejected, 1);
    let events: Vec<_> = std::iter::from_fn(|| world.server.next_event()).collect();
    assert!(events.iter().any(|e| matches!(
        e,
        MultiplayerEvent::RpcRejected {
            peer: PeerId::SERVER,
            rpc: "heal",
            ..
        }
    )));

    let start = world.server.scene().get(host).unwrap().x;
    run(&mut world, true, 300);
    let moved = world.server.scene().get(host).unwrap().x;
    assert_ne!(moved, start, "the host's input moved its avatar");
    run(&mut world, false, 300);
    world.assert_converged();
    // 15 heals of 1 each (frames 60..360, every 20th), and the first heal of 2.
    let hp = world.server.scene().get(host).unwrap().hp;
    assert_eq!(hp, 2 + 15);
    for client in &world.clients {
        let mine = client.scene().get(own(client)).unwrap();
        assert_eq!(mine.hp, 15, "every client's heals reached the server");
        assert!(client.stats().prediction.ticks_predicted > 0);
    }
}

#[test]
fn singleplayer_is_the_same_program_offline_with_nothing_encoded_and_no_allocation() {
    let mut mp = Mp::new(library(), MultiplayerConfig::default());
    let root = mp.scene().root();
    let player = mp.spawn(AVATAR, root, PeerId::SERVER).unwrap();
    let player = mp.scene().net_ref::<Avatar>(player).unwrap();
    let mut sim = Simulation::new();
    for frame in 0..40 {
        play(&mut mp, &mut sim, 0, frame, true);
    }
    let before = mp.scene().get(player).unwrap().clone();
    assert_no_alloc("a singleplayer frame: input, step, an RPC", || {
        for frame in 40..240 {
            play(&mut mp, &mut sim, 0, frame, true);
        }
    });
    let after = mp.scene().get(player).unwrap();
    assert_ne!(after.x, before.x, "the input moved the player");
    assert_eq!(after.hp, before.hp + 10, "10 heals ran");
    assert_eq!(after.healer, Some(PeerId::SERVER));
    let stats = mp.stats();
    assert_eq!(
        (
            stats.bytes_sent,
            stats.rpcs_sent,
            stats.entries_encoded,
            stats.snapshots_sent
        ),
        (0, 0, 0, 0)
    );
}

#[test]
fn the_servers_own_calls_keep_their_rate_limit() {
    let mut mp = Mp::new(library(), MultiplayerConfig::default());
    let root = mp.scene().root();
    let player = mp.spawn(AVATAR, root, PeerId::SERVER).unwrap();
    let player = mp.scene().net_ref::<Avatar>(player).unwrap();
    let mut refused = 0;
    for second in 0..3 {
        for frame in 0..30 {
            mp.begin_frame(TICK);
            if frame < 5 {
                match mp.rpc(player).wave() {
                    Ok(()) => {}
                    Err(RpcSendError::RateLimited {
                        rpc: "wave",
                        limit: 2,
                    }) => refused += 1,
                    Err(error) => panic!("{error}"),
                }
            }
            mp.end_frame();
        }
        assert_eq!(mp.scene().get(player).unwrap().waves, 2 * (second + 1));
    }
    assert_eq!(refused, 9);
    assert_eq!(mp.stats().rpcs_rate_limited, 9);
}
