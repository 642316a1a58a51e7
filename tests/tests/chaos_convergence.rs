#![allow(clippy::unwrap_used)]
//! Seeded chaos: random spawns (at the root and under other nodes), moves and despawns, value changes
//! of every size and member form, relevance set per client or by a grid, authority moved,
//! clients joining, leaving and stalling, the server stopping and starting again (every
//! client with it), frames of varying length, tick rates, a byte budget,
//! net ids and ticks near their ends, both encodings, over a bad network. Once the changes
//! stop, every client must hold exactly what is relevant to it.
//!
//! `CHAOS_SEEDS=n` (from `CHAOS_FROM`, default 0) runs `n` seeds instead of the default ones:
//! `CHAOS_SEEDS=3000 cargo test --release -p mf-net-tests --test chaos_convergence`.

use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::interest::GridInterest;
use mf_net::replication::SnapshotEncoding;
mod replication_common;

use mf_net_tests::harness::{networked, state_bytes, Mp, World};
use mf_net_tests::rng::{chaos_link, chaos_roster, chaos_seeds, Rng};
use replication_common::{Body, Gun, BODY, TANK};

/// Every member form the bit-packed encoding codes its own way.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Thing {
    #[replicated(quantize(min = -512.0, max = 512.0, bits = 16))]
    position: glam::Vec3,
    #[replicated(quantize(smallest_three, bits = 12))]
    rotation: glam::Quat,
    #[replicated(quantize(min = 0.0, max = 1.0, bits = 7))]
    fraction: f32,
    #[replicated(interpolate)]
    velocity: glam::Vec3,
    #[replicated]
    speed: f32,
    #[replicated]
    big: i64,
    #[replicated]
    small: i8,
    #[replicated]
    flag: bool,
    #[replicated]
    name: String,
}

/// Scene 2, `thing`: one [`Thing`].
const THING: SceneIndex = SceneIndex::new(2);

fn library() -> SceneLibrary {
    let mut scenes = replication_common::library();
    scenes
        .register("thing", |scene, root| {
            scene.set_value(root, Thing::default())
        })
        .unwrap();
    scenes
}

/// A [`Thing`]'s position, for the grid.
fn position(scene: &Scene, node: NodeId) -> Option<[f32; 3]> {
    let thing = scene.get(scene.net_ref::<Thing>(node)?)?;
    Some(thing.position.to_array())
}

/// Update periods by distance the grid may use.
const TIERS: [&[(u32, u32)]; 3] = [&[], &[(1, 1), (3, 2), (u32::MAX, 5)], &[(0, 3)]];

fn grid(rng: &mut Rng) -> GridInterest {
    GridInterest {
        cell_size: 50.0 + rng.below(200) as f32,
        radius_cells: rng.below(4) as u32,
        hysteresis_cells: rng.below(2) as u32,
        grace: Duration::from_millis(rng.below(500)),
        position,
        tiers: TIERS[rng.below(3) as usize],
    }
}

fn float(rng: &mut Rng, old: f32) -> f32 {
    match rng.below(5) {
        0 => old + (rng.below(2001) as f32 - 1000.0) / 1000.0,
        1 => (rng.below(2_000_001) as f32 - 1_000_000.0) / 1000.0,
        2 => f32::from_bits(rng.next_u64() as u32),
        _ => old,
    }
}

fn change_thing(rng: &mut Rng, t: &mut Thing) {
    t.position = glam::Vec3::new(
        float(rng, t.position.x),
        float(rng, t.position.y),
        float(rng, t.position.z),
    );
    if rng.chance(50) {
        let axis = glam::Vec3::new(float(rng, 1.0), float(rng, 0.5), float(rng, 0.25));
        let axis = axis.try_normalize().unwrap_or(glam::Vec3::Y);
        // Under a radian: `w` stays the largest component by far, so that the client's
        // rotation, quantized again, picks the same one (two components close to 1/√2 can
        // swap roles, a property of smallest-three, not a difference).
        t.rotation = glam::Quat::from_axis_angle(axis, rng.below(1000) as f32 / 1000.0);
    }
    t.fraction = float(rng, t.fraction);
    t.velocity.x = float(rng, t.velocity.x);
    t.speed = float(rng, t.speed);
    if rng.chance(30) {
        t.big = t.big.wrapping_add(rng.next_u64() as i64 >> rng.below(64));
        t.small = rng.next_u64() as i8;
        t.flag = !t.flag;
    }
    if rng.chance(10) {
        t.name = "n".repeat(rng.below(40) as usize);
    }
}

fn value(rng: &mut Rng, old: i32) -> i32 {
    match rng.below(4) {
        0 => old.wrapping_add(rng.below(5) as i32 - 2),
        1 => old.wrapping_add(rng.below(2000) as i32 - 1000),
        2 => rng.next_u64() as i32,
        _ => old,
    }
}

fn run(seed: u64) {
    let mut rng = Rng::seeded(seed);
    let config = MultiplayerConfig {
        snapshot_encoding: match rng.chance(70) {
            true => SnapshotEncoding::Bits,
            false => SnapshotEncoding::Bytes,
        },
        max_snapshot_bytes: match rng.below(3) {
            0 => 0,
            1 => 300 + rng.below(700) as usize,
            _ => 1200,
        },
        first_tick: match rng.chance(50) {
            true => u32::MAX - rng.below(300) as u32,
            false => 0,
        },
        tick_rate: [30, 60, 128][rng.below(3) as usize],
        first_net_id: match rng.chance(30) {
            true => u32::MAX - 200 - rng.below(1500) as u32,
            false => 1,
        },
        ..MultiplayerConfig::default()
    };
    let conditions = chaos_link(&mut rng);
    let clients = 1 + rng.below(3) as usize;
    let mut world = World::with(clients, config, conditions, seed, library);
    let gridded = rng.chance(40);
    if gridded {
        let g = grid(&mut rng);
        world
            .server
            .set_interest_policy(g, 1 + rng.below(3) as u32)
            .unwrap();
    }
    let mut chaos = Chaos {
        rng,
        live: Vec::new(),
        stalls: vec![0; clients],
        gridded,
    };
    for _ in 0..60 + chaos.rng.below(400) {
        chaos.spawn_and_despawn(&mut world);
        chaos.change(&mut world);
        chaos.reassign(&mut world);
        chaos.frame(&mut world);
    }
    // Once the changes stop, every client settles on what is relevant to it.
    for _ in 0..600 {
        world.frame();
        if (0..world.clients.len()).all(|c| sees_what_is_relevant(&world, c)) {
            return;
        }
    }
    for c in 0..world.clients.len() {
        world.assert_sees_exactly_what_is_relevant(c);
    }
}

/// One world's chaos: its generator, the nodes it spawned that live, the frames each client
/// has yet to stall, and whether a grid decides relevance.
struct Chaos {
    rng: Rng,
    live: Vec<NodeId>,
    stalls: Vec<u64>,
    gridded: bool,
}

impl Chaos {
    /// A live node at random, if there is one.
    fn any_node(&mut self) -> Option<NodeId> {
        let n = self.live.len() as u64;
        (n > 0).then(|| self.live[self.rng.below(n) as usize])
    }

    /// A client's peer at random.
    fn any_client(&mut self, world: &World) -> PeerId {
        let c = self.rng.below(world.clients.len() as u64) as usize;
        world.clients[c].local_peer_id()
    }

    /// Up to five spawns (at the root, or under a live node), up to two despawns.
    fn spawn_and_despawn(&mut self, world: &mut World) {
        let root = world.root();
        for _ in 0..self.rng.below(6) {
            let parent = match self.rng.chance(70) {
                true => root,
                false => self.any_node().unwrap_or(root),
            };
            let scene = [BODY, TANK, THING][self.rng.below(3) as usize];
            if let Ok(node) = world.server.spawn(scene, parent, PeerId::SERVER) {
                self.live.push(node);
            }
        }
        for _ in 0..self.rng.below(3) {
            if !self.live.is_empty() && self.rng.chance(60) {
                let i = self.rng.below(self.live.len() as u64) as usize;
                world.server.despawn(self.live.swap_remove(i));
            }
        }
        self.live.retain(|&n| world.server.scene().contains(n));
        if self.rng.chance(10) {
            self.move_one(world);
        }
    }

    /// Moves a live instance under the root, another live instance, or a plain node of one
    /// (a tank's turret); a move into its own subtree is refused.
    fn move_one(&mut self, world: &mut World) {
        let (Some(node), Some(other)) = (self.any_node(), self.any_node()) else {
            return;
        };
        let scene = world.server.scene();
        let parent = match self.rng.below(3) {
            0 => world.root(),
            1 => other,
            _ => scene.child(other, "turret").unwrap_or(other),
        };
        let _ = world.server.reparent(node, parent);
    }

    /// Changes members of a share of the nodes of each type.
    fn change(&mut self, world: &mut World) {
        let rng = &mut self.rng;
        let scene = world.server.scene_mut();
        let bodies: Vec<_> = scene.iter::<Body>().map(|(h, _)| h).collect();
        for h in bodies {
            if rng.chance(40) {
                let b = scene.get_mut(h).unwrap();
                b.x = value(rng, b.x);
                b.y = value(rng, b.y);
                if rng.chance(20) {
                    b.hp = rng.next_u64() as u8;
                }
            }
        }
        let guns: Vec<_> = scene.iter::<Gun>().map(|(h, _)| h).collect();
        for h in guns {
            if rng.chance(10) {
                scene.get_mut(h).unwrap().ammo = rng.next_u64() as u16;
            }
        }
        let things: Vec<_> = scene.iter::<Thing>().map(|(h, _)| h).collect();
        for h in things {
            if rng.chance(50) {
                change_thing(rng, scene.get_mut(h).unwrap());
            }
        }
    }

    /// Relevance set or cleared, a focus moved, authority given, a client joining or leaving,
    /// a client stalling (now and then each).
    fn reassign(&mut self, world: &mut World) {
        if let Some(node) = self.any_node().filter(|_| self.rng.chance(20)) {
            let peer = self.any_client(world);
            let _ = match self.rng.below(3) {
                0 => world.server.clear_relevant(node, peer),
                r => world.server.set_relevant(node, peer, r == 1),
            };
        }
        if let Some(node) = self
            .any_node()
            .filter(|_| self.gridded && self.rng.chance(10))
        {
            let peer = self.any_client(world);
            let _ = world.server.set_focus(peer, Some(node));
        }
        if let Some(node) = self.any_node().filter(|_| self.rng.chance(5)) {
            let c = self.rng.below(world.clients.len() as u64 + 1) as usize;
            let peer = world
                .clients
                .get(c)
                .map_or(PeerId::SERVER, Mp::local_peer_id);
            let _ = world.server.set_authority(node, peer, self.rng.chance(50));
        }
        chaos_roster(world, &mut self.stalls, &mut self.rng, (3, 90));
        if self.rng.chance(1) {
            // The server starts again, every client with it: its nodes are plain nodes now
            // (what clients owned went), and the grid, if any, decides for the next run too.
            world.restart();
            self.live.clear();
        }
    }

    /// One frame of the server, and of every client not stalled (a stalled client runs no
    /// frame until its stall ends, then one of at most a second, as game loops clamp `dt`);
    /// each frame's length varies.
    fn frame(&mut self, world: &mut World) {
        let dt = Duration::from_millis(20 + self.rng.below(30));
        world.server.begin_frame(dt);
        world.server.end_frame();
        for (client, stall) in world.clients.iter_mut().zip(&mut self.stalls) {
            match *stall {
                0 => {
                    client.begin_frame(dt);
                    client.end_frame();
                }
                1 => {
                    client.begin_frame(dt * 30);
                    client.end_frame();
                    *stall = 0;
                }
                _ => *stall -= 1,
            }
        }
    }
}

/// Whether client `c` holds exactly the server's nodes relevant to it, with their states.
fn sees_what_is_relevant(world: &World, c: usize) -> bool {
    let client = &world.clients[c];
    let peer = client.local_peer_id();
    let mut expected = 0;
    for (id, node) in networked(&world.server) {
        let copy = client.node(id);
        if !world.server.is_relevant(node, peer) {
            if copy.is_some() {
                return false;
            }
            continue;
        }
        expected += 1;
        let Some(copy) = copy else { return false };
        if state_bytes(&world.server, node) != state_bytes(client, copy) {
            return false;
        }
        if world.server.scene().path(node) != client.scene().path(copy) {
            return false;
        }
    }
    networked(client).len() == expected
}

#[test]
fn random_worlds_converge() {
    for seed in chaos_seeds(0..8) {
        // Shown with a failure (the test's output is captured otherwise).
        println!("seed {seed}");
        run(seed);
    }
}
