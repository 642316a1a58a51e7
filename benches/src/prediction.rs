//! Client-side prediction with rollback through the public API: one server and one client over
//! loopback, the client owning and predicting `entities` [`PredictedBox`]es, both ends running
//! a [`Simulation`] with a trivial step ([`step`]: it adds [`STEP`] to every simulated box's
//! `position.x`). The [`Mode`] decides whether the two ends agree:
//!
//! - [`Mode::Steady`]: the same step on both ends, no frame rolls back;
//! - [`Mode::Rollback`]: the server's step also adds [`DRIFT`], so every confirmation differs
//!   from the prediction and every client frame rolls back;
//! - [`Mode::RollbackEmptyStep`]: the client's step does nothing at all (it does not even walk
//!   the boxes), so again every frame rolls back, and what the rollback costs is the runtime's
//!   alone.
//!
//! Everything else is the same in all three, snapshots included (each carries every box's new
//! position), so the difference between their client frames is the rollback
//! ([`PredictionWorld`]).
//!
//! The rollback's depth is how far the client's present is ahead of the tick the snapshot
//! confirms, which its clock sets from the [lead margin](mf_net::prediction::PredictionConfig):
//! on a loopback where every frame is one tick and the client's frame follows the server's,
//! the depth is `lead_margin + 1` ticks ([`lead_margin_for`]), the same every frame once the
//! clock has settled ([`WARM_UP_FRAMES`]). The tests below check it from the client's
//! prediction stats ([`PredictionWorld::rollbacks_since`]), and so do the benchmarks.

use std::time::Duration;

use glam::{Quat, Vec3};
use mf_net::bus::MessageRegistry;
use mf_net::prediction::{PredictionStats, Simulation, Step};
use mf_net::prelude::*;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};

/// A predicted physics object: its pose and velocity are predicted by its owner (pose also
/// interpolated, so corrections are smoothed), its health is not.
#[derive(Replicated, Debug, Clone, PartialEq)]
pub struct PredictedBox {
    /// Where it is (predicted and smoothed).
    #[replicated(predict, interpolate)]
    pub position: Vec3,
    /// How it is turned (predicted and smoothed).
    #[replicated(predict, interpolate)]
    pub rotation: Quat,
    /// How fast it moves (predicted).
    #[replicated(predict)]
    pub velocity: Vec3,
    /// Not predicted.
    #[replicated]
    pub health: i32,
}

/// The fixture's input: nothing the step reads (the step is the same whatever the input).
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
pub struct Nudge {
    /// Always 0.
    pub push: u8,
}

/// The scene index of [`predicted_library`]'s only scene, `box`.
pub const PREDICTED_SCENE: SceneIndex = SceneIndex::new(0);

/// What [`step`] adds to `position.x` every tick, on both ends.
pub const STEP: f32 = 0.25;

/// What the server's step adds on top in [`Mode::Rollback`]: the client never predicts it.
pub const DRIFT: f32 = 0.001;

/// `position.x` wraps back by this much past it (so that it never grows out of `f32`
/// precision; the wrap is part of the step, the same on both ends).
pub const WRAP: f32 = 64.0;

/// Frames run after the spawns before a fixture is measured: the clock steers to its lead and
/// stays there.
pub const WARM_UP_FRAMES: usize = 240;

/// Whether the two ends' steps agree (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Both ends run [`step`]: no rollback.
    Steady,
    /// The server's step adds [`DRIFT`] too: every confirmation differs, every client frame
    /// rolls back.
    Rollback,
    /// The client's step is empty: every confirmation differs, every client frame rolls back,
    /// and no step walks the boxes on the client.
    RollbackEmptyStep,
}

/// The spawnable scenes (both ends register the same): scene 0, `box`, one [`PredictedBox`] at
/// the root.
pub fn predicted_library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("box", |scene, root| {
            scene.set_value(
                root,
                PredictedBox {
                    position: Vec3::ZERO,
                    rotation: Quat::IDENTITY,
                    velocity: Vec3::new(STEP, 0.0, 0.0),
                    health: 100,
                },
            )
        })
        .expect("a fresh library takes the scene");
    scenes
}

/// The trivial step: every simulated box's `position.x` advances by [`STEP`] (wrapping at
/// [`WRAP`]), plus [`DRIFT`] on the server in [`Mode::Rollback`]; on the client in
/// [`Mode::RollbackEmptyStep`] it does nothing. It reads no input.
#[inline]
pub fn step(s: &mut Step<'_, Nudge>, mode: Mode) {
    let add = match (s.is_server(), mode) {
        (true, Mode::Rollback) => STEP + DRIFT,
        (false, Mode::RollbackEmptyStep) => return,
        _ => STEP,
    };
    for (_, b, _) in s.simulated_mut::<PredictedBox>() {
        let x = b.position.x + add;
        b.position.x = if x >= WRAP { x - WRAP } else { x };
    }
}

/// The lead margin that makes every rollback `depth` ticks deep on this fixture's loopback.
///
/// # Panics
/// If `depth` is 0 or over 256.
pub fn lead_margin_for(depth: u32) -> u8 {
    u8::try_from(depth - 1).expect("a depth of 1 to 256 ticks")
}

/// A server and one client over loopback, the client owning `entities` predicted boxes, both
/// running a [`Simulation`] (see the [module docs](self)).
pub struct PredictionWorld {
    /// The server.
    pub server: Multiplayer<LoopbackTransport>,
    /// The client.
    pub client: Multiplayer<LoopbackTransport>,
    server_sim: Simulation<Nudge>,
    client_sim: Simulation<Nudge>,
    mode: Mode,
    dt: Duration,
}

impl PredictionWorld {
    /// Connects, spawns `entities` boxes owned by the client, lets the spawns arrive and runs
    /// [`WARM_UP_FRAMES`] frames. The client's lead margin is [`lead_margin_for`]`(depth)`;
    /// every other prediction setting is the default (history 64 ticks, smoothing 150 ms).
    ///
    /// # Panics
    /// If the client does not join or get the spawns within 100 frames.
    pub fn new(entities: usize, depth: u32, mode: Mode) -> Self {
        let net = LoopbackNetwork::new();
        let messages = MessageRegistry::new(1);
        let mut config = MultiplayerConfig {
            peer_timeout: Duration::MAX,
            handshake_timeout: Duration::MAX,
            ..MultiplayerConfig::default()
        };
        config.prediction.lead_margin = lead_margin_for(depth);
        let dt = Duration::from_secs(1) / u32::from(config.tick_rate.max(1));
        let mut server = Multiplayer::new(predicted_library(), config);
        server
            .start_server(
                net.listen("predict", 1).expect("a fresh network"),
                messages.clone(),
            )
            .expect("the server starts");
        let mut client = Multiplayer::new(predicted_library(), config);
        client
            .start_client(|data| net.connect("predict", data), messages)
            .expect("the client starts");
        let mut world = Self {
            server,
            client,
            server_sim: Simulation::new(),
            client_sim: Simulation::new(),
            mode,
            dt,
        };
        run_until(&mut world, Self::frame, "the client joined", |w| {
            w.server.peers().len() == 1
        });
        let owner = world.client.local_peer_id();
        let root = world.server.scene().root();
        for _ in 0..entities {
            world
                .server
                .spawn(PREDICTED_SCENE, root, owner)
                .expect("the box scene spawns");
        }
        run_until(&mut world, Self::frame, "the spawns arrived", |w| {
            w.client.stats().networked_nodes == entities
        });
        for _ in 0..WARM_UP_FRAMES {
            world.frame();
        }
        world
    }

    /// The server's frame: `begin_frame`, its simulation's ticks, `end_frame` (a snapshot).
    pub fn server_frame(&mut self) {
        let mode = self.mode;
        self.server.begin_frame(self.dt);
        self.server_sim
            .run(&mut self.server, |_| Nudge::default(), |s| step(s, mode));
        self.server.end_frame();
    }

    /// The client's frame: `begin_frame` (the snapshot, confirmations), its simulation (a
    /// rollback unless [`Mode::Steady`], then this frame's tick), `end_frame` (the ack).
    #[inline]
    pub fn client_frame(&mut self) {
        let mode = self.mode;
        self.client.begin_frame(self.dt);
        self.client_sim
            .run(&mut self.client, |_| Nudge::default(), |s| step(s, mode));
        self.client.end_frame();
    }

    /// One frame: the server's, then the client's.
    pub fn frame(&mut self) {
        self.server_frame();
        self.client_frame();
    }

    /// The client's prediction counters.
    pub fn stats(&self) -> PredictionStats {
        self.client.stats().prediction
    }

    /// Rollbacks and ticks re-simulated since `before` (an earlier [`stats`](Self::stats)).
    pub fn rollbacks_since(&self, before: &PredictionStats) -> (u64, u64) {
        let now = self.stats();
        (
            now.rollbacks - before.rollbacks,
            now.resimulated_ticks - before.resimulated_ticks,
        )
    }

    /// How many boxes the client predicts.
    pub fn predicted(&self) -> usize {
        self.client.scene().iter::<PredictedBox>().count()
    }
}

/// A server stepping `boxes` boxes it owns while `clients` clients, each owning one box,
/// send their inputs every tick: what a server's [`Step`] costs as the clients grow (each
/// simulated node's input is looked up among every client's).
pub struct ServerStepWorld {
    /// The server.
    pub server: Multiplayer<LoopbackTransport>,
    clients: Vec<(Multiplayer<LoopbackTransport>, Simulation<Nudge>)>,
    server_sim: Simulation<Nudge>,
    dt: Duration,
    /// Whether the server began a frame that has not ended.
    begun: bool,
}

impl ServerStepWorld {
    /// Connects `clients` clients, spawns a box for each and `boxes` for the server, and runs
    /// [`WARM_UP_FRAMES`] frames.
    ///
    /// # Panics
    /// If the clients do not join or get the spawns within 100 frames.
    pub fn new(clients: usize, boxes: usize) -> Self {
        let net = LoopbackNetwork::new();
        let messages = MessageRegistry::new(1);
        let config = MultiplayerConfig {
            peer_timeout: Duration::MAX,
            handshake_timeout: Duration::MAX,
            ..MultiplayerConfig::default()
        };
        let dt = Duration::from_secs(1) / u32::from(config.tick_rate.max(1));
        let mut server = Multiplayer::new(predicted_library(), config);
        server
            .start_server(
                net.listen("steps", clients).expect("a fresh network"),
                messages.clone(),
            )
            .expect("the server starts");
        let clients = (0..clients)
            .map(|_| {
                let mut client = Multiplayer::new(predicted_library(), config);
                client
                    .start_client(|data| net.connect("steps", data), messages.clone())
                    .expect("the client starts");
                (client, Simulation::new())
            })
            .collect();
        let mut world = Self {
            server,
            clients,
            server_sim: Simulation::new(),
            dt,
            begun: false,
        };
        let n = world.clients.len();
        run_until(&mut world, Self::frame, "the clients joined", |w| {
            w.server.peers().len() == n
        });
        let root = world.server.scene().root();
        let owners: Vec<PeerId> = world.server.peers().to_vec();
        for owner in owners
            .into_iter()
            .chain(std::iter::repeat(PeerId::SERVER).take(boxes))
        {
            world
                .server
                .spawn(PREDICTED_SCENE, root, owner)
                .expect("the box scene spawns");
        }
        run_until(&mut world, Self::frame, "the spawns arrived", |w| {
            w.clients
                .iter()
                .all(|(c, _)| c.stats().networked_nodes == n + boxes)
        });
        for _ in 0..WARM_UP_FRAMES {
            world.frame();
        }
        world
    }

    /// Everything of a frame but the server's step: the end of the server's last frame, the
    /// clients' frames (each steps and sends its input), the server's `begin_frame`.
    pub fn before_step(&mut self) {
        if std::mem::take(&mut self.begun) {
            self.server.end_frame();
        }
        for (client, sim) in &mut self.clients {
            client.begin_frame(self.dt);
            sim.run(client, |_| Nudge { push: 1 }, |s| step(s, Mode::Steady));
            client.end_frame();
        }
        self.server.begin_frame(self.dt);
        self.begun = true;
    }

    /// The server's simulation of this frame's tick: every box stepped, each with its
    /// authority's input. Returns how many of the boxes had an input.
    pub fn server_step(&mut self) -> usize {
        let mut with_input = 0;
        self.server_sim.run(
            &mut self.server,
            |_| Nudge::default(),
            |s| {
                for (_, b, input) in s.simulated_mut::<PredictedBox>() {
                    with_input += usize::from(input.is_some());
                    b.position.x = (b.position.x + STEP) % WRAP;
                }
            },
        );
        with_input
    }

    /// One whole frame.
    pub fn frame(&mut self) {
        self.before_step();
        self.server_step();
    }
}

/// Runs `frame` on `world` until `done`, at most 100 times.
///
/// # Panics
/// If `done` is not reached in 100 frames (`what` says what was awaited).
fn run_until<W>(world: &mut W, frame: fn(&mut W), what: &str, done: impl Fn(&W) -> bool) {
    for _ in 0..100 {
        frame(world);
        if done(world) {
            return;
        }
    }
    panic!("not reached in 100 frames: {what}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_rolls_back_to_the_configured_depth() {
        for (depth, mode) in [
            (1, Mode::Rollback),
            (2, Mode::Rollback),
            (4, Mode::Rollback),
            (16, Mode::Rollback),
            (4, Mode::RollbackEmptyStep),
            (16, Mode::RollbackEmptyStep),
        ] {
            let mut world = PredictionWorld::new(3, depth, mode);
            assert_eq!(world.predicted(), 3);
            let before = world.stats();
            for _ in 0..100 {
                world.frame();
            }
            let (rollbacks, ticks) = world.rollbacks_since(&before);
            assert_eq!(
                (rollbacks, ticks),
                (100, 100 * u64::from(depth)),
                "{mode:?}, depth {depth}: {:?}",
                world.stats()
            );
            assert_eq!(world.stats().clock_jumps, 0, "{:?}", world.stats());
        }
    }

    #[test]
    fn without_drift_no_frame_rolls_back() {
        let mut world = PredictionWorld::new(3, 4, Mode::Steady);
        let before = world.stats();
        for _ in 0..100 {
            world.frame();
        }
        assert_eq!(world.rollbacks_since(&before), (0, 0));
        assert!(world.stats().confirmations > 0);
    }
}
