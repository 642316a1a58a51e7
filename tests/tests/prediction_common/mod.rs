//! The game the `prediction*` test binaries share (a module each of them includes): a walking
//! player predicted by its owner, and a world of one server and one client stepped frame by
//! frame with the same step function on both ends.

#![allow(dead_code)]

use std::time::Duration;

use mf_net::prediction::{Simulation, Step};
use mf_net::prelude::*;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_tests::harness::{Mp, World};

/// One tick's input: which way to walk.
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Walk {
    pub(crate) dir: i8,
}

/// A player: its position is predicted by its owner (and smoothed when corrected), and
/// interpolated by everyone else.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
pub(crate) struct Player {
    #[replicated(predict, interpolate)]
    pub(crate) x: f32,
    #[replicated]
    pub(crate) hp: i32,
}

pub(crate) const PLAYER: SceneIndex = SceneIndex::new(0);
pub(crate) const SPEED: f32 = 0.5;
pub(crate) const TICK: Duration = Duration::from_nanos(33_333_333);

pub(crate) fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("player", |scene, root| {
            scene.set_value(root, Player::default())
        })
        .unwrap();
    scenes
}

/// The game's step, the same on both ends: every simulated player walks by its input.
pub(crate) fn walk(step: &mut Step<'_, Walk>) {
    walk_then(step, |_, _, _| {});
}

/// [`walk`], then on the server `server_only` changes each player (given the tick and the
/// direction walked): what a client cannot know, and its prediction gets wrong.
pub(crate) fn walk_then(step: &mut Step<'_, Walk>, server_only: fn(&mut Player, u32, i8)) {
    let (server, tick) = (step.is_server(), step.tick());
    for (_, player, input) in step.simulated_mut::<Player>() {
        let dir = input.map_or(0, |i| i.dir);
        player.x += f32::from(dir) * SPEED;
        if server {
            server_only(player, tick, dir);
        }
    }
}

/// A wall at `x = WALL` that only the server's step knows about.
pub(crate) const WALL: f32 = 10.0;

pub(crate) fn walk_into_wall(step: &mut Step<'_, Walk>) {
    walk_then(step, |player, _, _| player.x = player.x.min(WALL));
}

/// A world of one server and one client under `conditions` (both ends), the client owning one
/// player; and the simulations of both.
pub(crate) struct Game {
    pub(crate) world: World,
    pub(crate) server_sim: Simulation<Walk>,
    pub(crate) client_sim: Simulation<Walk>,
    pub(crate) server_player: NetRef<Player>,
    /// The directions the client sampled, summed: where its inputs take it, in steps. (The
    /// clock may run a frame with no tick, or two, while it steers its lead: a key held for
    /// n frames is not always n ticks.)
    pub(crate) walked: i32,
}

impl Game {
    pub(crate) fn new(config: MultiplayerConfig, conditions: Option<NetworkConditions>) -> Self {
        Self::split(config, conditions, conditions)
    }

    pub(crate) fn split(
        config: MultiplayerConfig,
        server: Option<NetworkConditions>,
        client: Option<NetworkConditions>,
    ) -> Self {
        Self::seeded(config, server, client, 7)
    }

    /// [`split`](Self::split) with the links seeded from `seed`.
    pub(crate) fn seeded(
        config: MultiplayerConfig,
        server: Option<NetworkConditions>,
        client: Option<NetworkConditions>,
        seed: u64,
    ) -> Self {
        let mut world = World::with_split(1, config, server, client, seed, library);
        world.dt = TICK;
        // Over the slowest links the welcome takes longer than the world's own warm-up.
        for _ in 0..300 {
            if !world.clients[0].peers().is_empty() {
                break;
            }
            world.frame();
        }
        let owner = world.clients[0].local_peer_id();
        let root = world.root();
        let node = world.server.spawn(PLAYER, root, owner).unwrap();
        let server_player = world.server.scene().net_ref::<Player>(node).unwrap();
        let mut game = Self {
            world,
            server_sim: Simulation::new(),
            client_sim: Simulation::new(),
            server_player,
            walked: 0,
        };
        // The spawn arrives, the clock steers in.
        for _ in 0..90 {
            game.frame(0, walk);
        }
        game
    }

    /// One frame: the server, then the client, each running `step` with the client pressing
    /// `dir`.
    pub(crate) fn frame(&mut self, dir: i8, step: fn(&mut Step<'_, Walk>)) {
        let dt = self.world.dt;
        self.frame_with(dir, step, dt);
    }

    /// One frame of the server alone: the client does not run (it stalls).
    pub(crate) fn server_frame(&mut self, step: fn(&mut Step<'_, Walk>)) {
        let dt = self.world.dt;
        let server = &mut self.world.server;
        server.begin_frame(dt);
        self.server_sim.run(server, |_| Walk::default(), step);
        server.end_frame();
    }

    /// [`frame`](Self::frame), the client's frame `client_dt` long (the server's is one frame).
    pub(crate) fn frame_with(
        &mut self,
        dir: i8,
        step: fn(&mut Step<'_, Walk>),
        client_dt: Duration,
    ) {
        self.server_frame(step);
        let client = &mut self.world.clients[0];
        client.begin_frame(client_dt);
        let walked = &mut self.walked;
        let sample = |_| {
            *walked += i32::from(dir);
            Walk { dir }
        };
        self.client_sim.run(client, sample, step);
        client.end_frame();
    }

    pub(crate) fn client(&self) -> &Mp {
        &self.world.clients[0]
    }

    pub(crate) fn server_x(&self) -> f32 {
        self.world.server.scene().get(self.server_player).unwrap().x
    }

    pub(crate) fn client_x(&self) -> f32 {
        let mut players = self.client().scene().iter::<Player>();
        let (_, player) = players.next().expect("spawned on the client");
        player.x
    }
}
