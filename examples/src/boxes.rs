//! Boxes on a bad network: a server and several clients in one process, stepped frame by frame.
//!
//! ```text
//! boxes [--seconds N] [--loss P] [--clients N] [--boxes N] [--seed N] [--host]
//! ```
//!
//! - The game runs at 60 frames per second; the server sends snapshots at its network tick
//!   rate, 30 Hz (the [`MultiplayerConfig`] default), independent of the frame rate.
//! - Every endpoint sends through a seeded [`SimulatedTransport`]: `--loss` (10 % by default)
//!   of the unreliable packets are lost, 5 % doubled, and every packet is delayed by 40 ms plus
//!   up to 20 ms of jitter. A simulator degrades what its own end *sends*, so the server's end
//!   is wrapped too: that is where snapshots leave.
//! - The server spawns `--boxes` boxes (100) moving on circles: an interpolated position and
//!   rotation, and a color that snaps when it changes.
//! - Each client owns one player node, driven by tick-stamped input through a [`Simulation`]:
//!   every tick the client samples a [`Steer`] (a slowly turning direction, generated from the
//!   tick: no random numbers), sends it, and moves its own player at once with the same step
//!   function the server runs (`world_step`). The player's position is
//!   `#[replicated(predict, interpolate)]`: predicted (corrections smoothed) on its owner,
//!   interpolated like the boxes on every other client. When the server's state of a tick
//!   differs from the prediction (an input that arrived late, and the server repeated the one
//!   before), the owner rolls back and re-simulates.
//! - With `--host` the server is a listen server whose host plays too: it spawns a player of its
//!   own (authority [`PeerId::SERVER`]) and walks it with its own input, which the same
//!   `Simulation` step reads on the server with no round trip; clients interpolate it like any
//!   other player.
//! - Every simulated second, one line per peer: snapshots applied and discarded (duplicates and
//!   stale ones) in that second, bytes per second, the round-trip time the server measured,
//!   the interpolation delay (adaptive here) and the position error: the largest distance
//!   between where a client showed a box and where the server had it at the moment the client
//!   was showing (the client's render tick: its estimate of the server tick minus the delay;
//!   the server's positions at the two ticks around it, blended). It is zero while every
//!   snapshot arrives, and grows when a lost one makes the client blend across a gap or, data
//!   being late, extrapolate. Then the prediction: rollbacks and ticks re-simulated in that
//!   second, the input lead (how many ticks early the server got the client's inputs, at the
//!   worst recently) and the inputs the server simulated without (missing) in that second.
//! - After `--seconds` (10) the boxes stop and the clients stop walking (they keep sending
//!   input: "stand still"). The run then waits until every client shows exactly the server's
//!   state (boxes, other players, and its own predicted player, bit for bit) and fails if that
//!   takes over three seconds. Last, one line per client sums up its prediction: ticks
//!   predicted, rollbacks and the ticks they re-simulated, and how many of its inputs the
//!   server had on time.
//!
//! Everything is deterministic: the same options and `--seed` give the same output.
//!
//! In a terminal the demo runs in real time behind a live [`dashboard`] (ratatui): sparklines
//! of each client's bandwidth, round trip, loss, interpolation delay and error, the server's
//! tick cost, each client's rollbacks, re-simulated ticks and input lead, and the boxes seen
//! from above on the server and on the first client. `--plain` (or an output that is not a
//! terminal, as in tests and CI) prints the lines above instead, as fast as the machine goes.

pub mod dashboard;

use std::collections::VecDeque;
use std::error::Error;
use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use glam::{Quat, Vec3};
use mf_net::bus::MessageRegistry;
use mf_net::interpolation::{AdaptiveDelayConfig, InterpolationConfig};
use mf_net::prediction::{PredictionStats, Simulation, Step};
use mf_net::prelude::*;
use mf_net::replication::NetworkStats;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};

/// Every endpoint: the in-process loopback behind a bad-network simulator.
type Net = SimulatedTransport<LoopbackTransport>;
/// The replication runtime over [`Net`].
type Mp = Multiplayer<Net>;

/// Frames per simulated second.
const FPS: u32 = 60;
/// Player speed in units per second.
const PLAYER_SPEED: f32 = 4.0;
/// How long one simulation tick lasts: the server's tick rate is the default 30 Hz.
const TICK_SECONDS: f32 = 1.0 / 30.0;
/// How many ticks of box positions the server remembers for the error measurement.
const HISTORY_TICKS: usize = 120;
/// How long the clients may take to converge once the motion stops.
const SETTLE_SECONDS: u32 = 3;
/// Largest difference counted as "the same" at the end (positions in units, angles in radians).
const EPSILON: f32 = 1e-4;
/// Box colors (0xRRGGBB).
const PALETTE: [u32; 6] = [0xe6194b, 0x3cb44b, 0xffe119, 0x4363d8, 0xf58231, 0x911eb4];

/// The spawnable scenes, registered in this order on every peer (see [`scenes`]).
const BOX_SCENE: SceneIndex = SceneIndex::new(0);
const PLAYER_SCENE: SceneIndex = SceneIndex::new(1);

// ---------------------------------------------------------------------------------------------
// The replicated types
// ---------------------------------------------------------------------------------------------

/// A box the server moves on a circle.
#[derive(Replicated, Default, Debug)]
struct MovingBox {
    /// Blended between snapshots on clients (`Vec3` interpolates linearly).
    #[replicated(interpolate)]
    position: Vec3,
    /// Blended too (`Quat` interpolates along the shortest arc).
    #[replicated(interpolate)]
    rotation: Quat,
    /// 0xRRGGBB. Not interpolated: it snaps when a snapshot carrying a change is applied.
    #[replicated]
    color: u32,
    /// Local, never sent: the circle this box follows (only the server's copy is ever set).
    orbit: Orbit,
}

/// A circle around a center, walked at a constant angular speed.
#[derive(Debug, Default, Clone, Copy)]
struct Orbit {
    center: Vec3,
    radius: f32,
    /// Radians per second.
    speed: f32,
    /// Angle at time zero.
    phase: f32,
}

impl Orbit {
    /// The orbit of box `i`: spread over a grid, various radii and speeds, no random numbers.
    fn for_box(i: usize) -> Self {
        let (row, column) = ((i / 10) as f32, (i % 10) as f32);
        Self {
            center: Vec3::new(column * 20.0, 0.0, row * 20.0),
            radius: 2.0 + (i % 7) as f32,
            speed: 0.5 + 0.1 * (i % 11) as f32,
            phase: i as f32 * 2.399_963, // the golden angle
        }
    }

    fn angle(&self, time: f32) -> f32 {
        self.phase + self.speed * time
    }

    fn position(&self, time: f32) -> Vec3 {
        let angle = self.angle(time);
        self.center + self.radius * Vec3::new(angle.cos(), 0.0, angle.sin())
    }

    /// Facing along the circle.
    fn rotation(&self, time: f32) -> Quat {
        Quat::from_rotation_y(-self.angle(time))
    }
}

/// A client's avatar, owned (and driven) by that client.
#[derive(Replicated, Default, Debug)]
struct Player {
    /// Predicted by the owning client (its corrections smoothed), interpolated on the others.
    #[replicated(predict, interpolate)]
    position: Vec3,
    #[replicated]
    color: u32,
}

/// One tick of a client's input: the direction its player walks in (unit length at most).
#[derive(NetCodec, Clone, Copy, Default, Debug, PartialEq)]
pub struct Steer {
    /// The direction, in the XZ plane.
    pub direction: Vec3,
}

impl Steer {
    /// The input bot client `index` sends for `tick`: walking along a heading that turns by
    /// 0.05 radians a tick, from the tick alone (the same on every run).
    fn of_bot(index: usize, tick: u32) -> Self {
        let heading = index as f32 + 0.05 * (tick % 4096) as f32;
        Self {
            direction: Vec3::new(heading.cos(), 0.0, heading.sin()),
        }
    }
}

/// The world step, run by the server for every player and by each client for its own (the
/// same function, so that the prediction matches the server's state exactly): each player
/// walks one tick along its owner's input. The input is checked here, on both ends: a
/// modified client cannot walk faster than an honest one.
fn world_step(step: &mut Step<'_, Steer>) {
    for (_, player, input) in step.simulated_mut::<Player>() {
        let Some(steer) = input else { continue };
        let direction = if steer.direction.is_finite() {
            steer.direction.clamp_length_max(1.0)
        } else {
            Vec3::ZERO
        };
        player.position += direction * (PLAYER_SPEED * TICK_SECONDS);
    }
}

/// The spawnable scenes. Every peer registers the same scenes in the same order (the handshake
/// checks it). Each builder runs identically on the server and on clients.
fn scenes() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    let boxes = scenes.register("box", |scene, root| {
        scene.set_value(root, MovingBox::default())
    });
    let players = scenes.register("player", |scene, root| {
        scene.set_value(root, Player::default())
    });
    assert_eq!(
        (boxes.expect("a new name"), players.expect("a new name")),
        (BOX_SCENE, PLAYER_SCENE)
    );
    scenes
}

// ---------------------------------------------------------------------------------------------
// Options and report
// ---------------------------------------------------------------------------------------------

/// What to simulate (the command-line options).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Simulated seconds of motion before the convergence check (`--seconds`, default 10).
    pub seconds: u32,
    /// Probability that an unreliable packet is lost, on every end (`--loss`, default 0.1;
    /// `10%` works too).
    pub loss: f32,
    /// Number of clients (`--clients`, default 3).
    pub clients: usize,
    /// Number of boxes (`--boxes`, default 100).
    pub boxes: usize,
    /// Seed of the network simulators (`--seed`, default 1).
    pub seed: u64,
    /// Print the per-second lines, not the dashboard (`--plain`; also when the output is not a
    /// terminal).
    pub plain: bool,
    /// A listen server: the host plays a player of its own (`--host`).
    pub host: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seconds: 10,
            loss: 0.1,
            clients: 3,
            boxes: 100,
            seed: 1,
            plain: false,
            host: false,
        }
    }
}

const USAGE: &str =
    "usage: boxes [--seconds N] [--loss P | P%] [--clients N] [--boxes N] [--seed N] [--plain] \
     [--host]";

impl Options {
    /// Parses command-line arguments (without the program name).
    ///
    /// # Errors
    ///
    /// An unknown flag, a missing or malformed value, or a value out of range.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        fn value<T: std::str::FromStr>(flag: &str, arg: Option<String>) -> Result<T, String> {
            let arg = arg.ok_or_else(|| format!("{flag} needs a value"))?;
            arg.parse()
                .map_err(|_| format!("{flag}: cannot read `{arg}`"))
        }
        let mut options = Self::default();
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            match flag.as_str() {
                "--seconds" => options.seconds = value(&flag, args.next())?,
                "--clients" => options.clients = value(&flag, args.next())?,
                "--boxes" => options.boxes = value(&flag, args.next())?,
                "--seed" => options.seed = value(&flag, args.next())?,
                "--plain" => options.plain = true,
                "--host" => options.host = true,
                "--loss" => {
                    let arg: String = value(&flag, args.next())?;
                    options.loss = match arg.strip_suffix('%') {
                        Some(percent) => value::<f32>(&flag, Some(percent.to_owned()))? / 100.0,
                        None => value(&flag, Some(arg))?,
                    };
                }
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if !(0.0..=1.0).contains(&options.loss) {
            return Err("--loss is a probability (0.1) or a percentage (10%)".into());
        }
        if options.seconds == 0 {
            return Err("--seconds must be at least 1".into());
        }
        if !(1..=64).contains(&options.clients) {
            return Err("--clients must be 1 to 64".into());
        }
        if options.boxes > 10_000 {
            return Err("--boxes must be at most 10000".into());
        }
        Ok(options)
    }
}

/// How a run went.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Per client: snapshots applied in full.
    pub snapshots_applied: Vec<u64>,
    /// Per client: stale or duplicate snapshots discarded.
    pub snapshots_discarded: Vec<u64>,
    /// The largest position error seen on any client while the boxes moved (see the module
    /// documentation).
    pub worst_error: f32,
    /// Frames from the end of the motion until every client matched the server.
    pub settle_frames: u32,
    /// Per client: its prediction counters at the end.
    pub prediction: Vec<PredictionStats>,
    /// With `--host`: how far the host's own player walked from its seat (0 without).
    pub host_walked: f32,
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

/// The server's side of the demo.
struct Server {
    mp: Mp,
    /// The boxes, in spawn order.
    boxes: Vec<NetRef<MovingBox>>,
    /// Their network ids: how a client finds its copy of each box.
    box_ids: Vec<NetId>,
    /// Box positions at each recent network tick, oldest first (for the error measurement).
    history: VecDeque<(u32, Vec<Vec3>)>,
    /// The players' simulation (the same step as the clients').
    sim: Simulation<Steer>,
    /// With `--host`: the host's own player's bot index (its input depends on it).
    host: Option<usize>,
}

impl Server {
    fn start(net: &LoopbackNetwork, options: &Options) -> Result<Self, Box<dyn Error>> {
        let listener = net.listen("boxes", options.clients)?;
        let transport = SimulatedTransport::new(listener, conditions(options), options.seed);
        let mut mp = Mp::new(scenes(), MultiplayerConfig::default());
        mp.start_server(transport, MessageRegistry::new(1))?;

        // Spawning before any client connects is fine: a joining client receives every live
        // spawn with its current state (late join).
        let root = mp.scene().root();
        let mut boxes = Vec::with_capacity(options.boxes);
        let mut box_ids = Vec::with_capacity(options.boxes);
        for i in 0..options.boxes {
            // `spawn_as` returns the typed handle of the instance root.
            let handle = mp.spawn_as::<MovingBox>(BOX_SCENE, root, PeerId::SERVER)?;
            let moving = mp.scene_mut().get_mut(handle).expect("just spawned");
            moving.orbit = Orbit::for_box(i);
            boxes.push(handle);
            box_ids.push(
                mp.net_id(handle.node())
                    .expect("spawned nodes are networked"),
            );
        }
        let mut server = Self {
            mp,
            boxes,
            box_ids,
            history: VecDeque::with_capacity(HISTORY_TICKS + 1),
            sim: Simulation::new(),
            host: options.host.then_some(options.clients),
        };
        if server.host.is_some() {
            // The host's own player: the server has authority over it, and its input is the
            // server's own.
            server.spawn_player(PeerId::SERVER)?;
        }
        server.move_boxes(0.0);
        Ok(server)
    }

    /// Reacts to the runtime's events: a joining client gets a player it owns.
    fn handle_events(&mut self) -> Result<(), Box<dyn Error>> {
        while let Some(event) = self.mp.next_event() {
            match event {
                MultiplayerEvent::PeerJoined(peer) => self.spawn_player(peer)?,
                MultiplayerEvent::PeerLeft { peer, reason } => {
                    return Err(format!("{peer} left unexpectedly ({reason})").into());
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Spawns the player of `peer` (the host's: [`PeerId::SERVER`]).
    fn spawn_player(&mut self, peer: PeerId) -> Result<(), Box<dyn Error>> {
        let root = self.mp.scene().root();
        // The third argument is the node's authority: this peer's input drives it, and a
        // client predicts it.
        let handle = self.mp.spawn_as::<Player>(PLAYER_SCENE, root, peer)?;
        let player = self.mp.scene_mut().get_mut(handle).expect("just spawned");
        let seat = peer.0 as f32;
        player.position = Vec3::new(seat * 10.0, 1.0, -10.0);
        player.color = PALETTE[(peer.0 as usize) % PALETTE.len()];
        Ok(())
    }

    /// Game logic: the server writes plain fields; the runtime notices what changed.
    fn move_boxes(&mut self, time: f32) {
        for (i, &handle) in self.boxes.iter().enumerate() {
            if let Some(moving) = self.mp.scene_mut().get_mut(handle) {
                moving.position = moving.orbit.position(time);
                moving.rotation = moving.orbit.rotation(time);
                // A new color every few seconds, at a different moment for each box.
                moving.color = PALETTE[(i + (time as usize + i) / 3) % PALETTE.len()];
            }
        }
    }

    /// Simulates the ticks this frame's `end_frame` reaches: every player walks by its owner's
    /// input of that tick. The server's own input is the host's (with `--host`, `walking`),
    /// else it stands still.
    fn simulate(&mut self, walking: bool) {
        let host = self.host.filter(|_| walking);
        let sample = |tick| host.map_or_else(Steer::default, |index| Steer::of_bot(index, tick));
        self.sim.run(&mut self.mp, sample, world_step);
    }

    /// After `end_frame`: remembers the box positions of a new network tick.
    fn record_history(&mut self) {
        let tick = self.mp.tick();
        if self.history.back().is_some_and(|&(last, _)| last == tick) {
            return;
        }
        // Reuse the oldest buffer once the history is full.
        let mut positions = match self.history.len() {
            n if n >= HISTORY_TICKS => self.history.pop_front().map(|(_, p)| p),
            _ => None,
        }
        .unwrap_or_default();
        positions.clear();
        let scene = self.mp.scene();
        positions.extend(
            self.boxes
                .iter()
                .map(|&handle| scene.get(handle).map_or(Vec3::ZERO, |b| b.position)),
        );
        self.history.push_back((tick, positions));
    }

    /// The server's box positions at a fractional tick, blended between the two ticks around
    /// it (what a client should show at that render tick), if both are remembered.
    fn positions_at(&self, tick: f64) -> Option<(&[Vec3], &[Vec3], f32)> {
        let before = tick.floor();
        let find = |t: f64| {
            let t = u32::try_from(t as i64).ok()?;
            let i = self
                .history
                .binary_search_by_key(&t, |&(tick, _)| tick)
                .ok()?;
            self.history
                .get(i)
                .map(|(_, positions)| positions.as_slice())
        };
        Some((find(before)?, find(before + 1.0)?, (tick - before) as f32))
    }

    /// This client's player on the server.
    fn player_of(&self, peer: PeerId) -> Option<&Player> {
        self.mp
            .scene()
            .iter::<Player>()
            .find(|(handle, _)| self.mp.authority(handle.node()) == peer)
            .map(|(_, player)| player)
    }
}

/// The simulated network of every end.
fn conditions(options: &Options) -> NetworkConditions {
    NetworkConditions::laggy(Duration::from_millis(40), Duration::from_millis(20))
        .with_loss(options.loss)
        .with_duplication(0.05)
}

// ---------------------------------------------------------------------------------------------
// A client
// ---------------------------------------------------------------------------------------------

/// One client's side of the demo.
struct Client {
    label: String,
    mp: Mp,
    /// Which bot this is (its input depends on it).
    index: usize,
    /// Our player, once its spawn arrived.
    player: Option<NetRef<Player>>,
    /// Our player's simulation: predicted ahead of the server, rolled back when it was wrong.
    sim: Simulation<Steer>,
    /// The first tick we measure at: the tick of the first snapshot we applied. Until the
    /// render tick reaches it we show the state our spawns carried, with nothing older to
    /// blend from, so the "error" would only measure how late we joined.
    measure_from: Option<f64>,
    /// The largest position error since the last report.
    error_this_second: f32,
    /// The largest position error this frame.
    error_now: f32,
    /// Counters at the last report, for per-second deltas.
    last: NetworkStats,
    /// The server's count of our missing inputs at the last report.
    last_missing: u64,
}

impl Client {
    fn start(
        net: &LoopbackNetwork,
        options: &Options,
        index: usize,
    ) -> Result<Self, Box<dyn Error>> {
        let messages = MessageRegistry::new(1);
        let seed = options
            .seed
            .wrapping_mul(1000)
            .wrapping_add(index as u64 + 1);
        // The transport connects with the protocol fingerprint `start_client` passes it.
        let open =
            |data| SimulatedTransport::new(net.connect("boxes", data), conditions(options), seed);
        let config = MultiplayerConfig {
            // The delay follows the observed snapshot spacing and jitter (50 to 500 ms).
            interpolation: InterpolationConfig {
                adaptive: Some(AdaptiveDelayConfig::default()),
                ..InterpolationConfig::default()
            },
            ..MultiplayerConfig::default()
        };
        let mut mp = Mp::new(scenes(), config);
        mp.start_client(open, messages)?;
        Ok(Self {
            label: format!("client {}", index + 1),
            mp,
            index,
            player: None,
            sim: Simulation::new(),
            measure_from: None,
            error_this_second: 0.0,
            error_now: 0.0,
            last: NetworkStats::default(),
            last_missing: 0,
        })
    }

    fn handle_events(&mut self, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
        while let Some(event) = self.mp.next_event() {
            match event {
                MultiplayerEvent::ConnectedToServer { local_peer_id } => {
                    writeln!(out, "{} joined as {local_peer_id}", self.label)?;
                }
                MultiplayerEvent::Disconnected { reason } => {
                    return Err(format!("{} was disconnected ({reason})", self.label).into());
                }
                _ => {}
            }
        }
        if self.player.is_none() {
            // Our player is the one player we have authority over.
            self.player = self.mp.owned::<Player>().next();
        }
        Ok(())
    }

    /// Runs our simulation for this frame: each tick predicted samples our input (walking
    /// along a slowly turning heading, or standing still), sends it, and moves our player at
    /// once; a misprediction found in this frame's snapshots is rolled back first.
    fn simulate(&mut self, walking: bool) {
        let index = self.index;
        let sample = |tick| {
            if walking {
                Steer::of_bot(index, tick)
            } else {
                Steer::default()
            }
        };
        self.sim.run(&mut self.mp, sample, world_step);
    }

    /// Compares the boxes as shown this frame with the server's at our render tick.
    fn measure(&mut self, server: &Server) {
        self.error_now = 0.0;
        if self.measure_from.is_none() && self.mp.tick() > 0 {
            self.measure_from = Some(f64::from(self.mp.tick()));
        }
        let Some(render_tick) = self.mp.interpolation().and_then(|t| t.render_tick()) else {
            return;
        };
        if self.measure_from.map_or(true, |from| render_tick < from) {
            return;
        }
        let Some((before, after, t)) = server.positions_at(render_tick) else {
            return;
        };
        for (i, id) in server.box_ids.iter().enumerate() {
            let shown = self
                .mp
                .node(*id)
                .and_then(|node| self.mp.scene().net_ref::<MovingBox>(node))
                .and_then(|handle| self.mp.scene().get(handle));
            if let (Some(shown), Some(a), Some(b)) = (shown, before.get(i), after.get(i)) {
                let error = shown.position.distance(a.lerp(*b, t));
                self.error_this_second = self.error_this_second.max(error);
                self.error_now = self.error_now.max(error);
            }
        }
    }

    /// The first difference between what this client shows and the server's state, if any.
    fn difference(&self, server: &Server) -> Option<String> {
        let (scene, theirs) = (self.mp.scene(), server.mp.scene());
        let boxes = (
            scene.iter::<MovingBox>().count(),
            theirs.iter::<MovingBox>().count(),
        );
        let players = (
            scene.iter::<Player>().count(),
            theirs.iter::<Player>().count(),
        );
        if boxes.0 != boxes.1 || players.0 != players.1 {
            return Some(format!(
                "{boxes:?} boxes and {players:?} players (here, server)"
            ));
        }
        let copy = |node: NodeId| {
            let id = server.mp.net_id(node)?;
            self.mp.node(id)
        };
        for (handle, original) in theirs.iter::<MovingBox>() {
            let shown = copy(handle.node())
                .and_then(|node| scene.net_ref::<MovingBox>(node))
                .and_then(|handle| scene.get(handle));
            let Some(shown) = shown else {
                return Some(format!("box {} is missing", handle.node()));
            };
            if shown.position.distance(original.position) > EPSILON
                || !shown.rotation.abs_diff_eq(original.rotation, EPSILON)
                || shown.color != original.color
            {
                return Some(format!("box {}: {shown:?} vs {original:?}", handle.node()));
            }
        }
        for (handle, original) in theirs.iter::<Player>() {
            let shown = copy(handle.node())
                .and_then(|node| scene.net_ref::<Player>(node))
                .and_then(|handle| scene.get(handle));
            match shown {
                Some(shown)
                    if shown.position.distance(original.position) <= EPSILON
                        && shown.color == original.color => {}
                _ => {
                    return Some(format!(
                        "player {}: {shown:?} vs {original:?}",
                        handle.node()
                    ))
                }
            }
        }
        // Our own player is predicted: the loop above compared what we show (our prediction,
        // its corrections faded) with the server's. Being predicted, it must match bit for bit.
        let mine = self.player.and_then(|handle| scene.get(handle))?;
        match server.player_of(self.mp.local_peer_id()) {
            Some(theirs) if theirs.position == mine.position => None,
            theirs => Some(format!(
                "our player is at {mine:?}, the server's at {theirs:?}"
            )),
        }
    }

    /// This second's line: snapshot counters, bandwidth, round trip, delay, error.
    fn report(&mut self, second: u32, server: &Server, out: &mut dyn Write) -> std::io::Result<()> {
        let stats = *self.mp.stats();
        let peer = server.mp.peer_stats(self.mp.local_peer_id());
        let rtt = peer.map_or(Duration::ZERO, |peer| peer.round_trip_time);
        let missing = peer.map_or(0, |peer| peer.inputs.missing);
        let delay = self
            .mp
            .interpolation()
            .map_or(Duration::ZERO, |timeline| timeline.delay());
        let (predicted, before) = (stats.prediction, self.last.prediction);
        writeln!(
            out,
            "[{second:>3} s] {:<9} applied {:>2}  discarded {:>2}  in {:>5.1} kB/s  \
             out {:>3.1} kB/s  rtt {:>3} ms  delay {:>3} ms  error {:.3}  rollbacks {:>2} \
             ({:>2} ticks)  lead {:>2}  missing {}",
            self.label,
            stats.snapshots_applied - self.last.snapshots_applied,
            stats.snapshots_discarded - self.last.snapshots_discarded,
            stats.bytes_received_per_second as f64 / 1000.0,
            stats.bytes_sent_per_second as f64 / 1000.0,
            rtt.as_millis(),
            delay.as_millis(),
            self.error_this_second,
            predicted.rollbacks - before.rollbacks,
            predicted.resimulated_ticks - before.resimulated_ticks,
            predicted.input_lead,
            missing - self.last_missing,
        )?;
        self.last = stats;
        self.last_missing = missing;
        self.error_this_second = 0.0;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The frame loop
// ---------------------------------------------------------------------------------------------

/// The demo after one frame of motion, as an observer of [`run_observed`] sees it.
pub struct FrameView<'a> {
    frame: u32,
    server: &'a Server,
    clients: &'a [Client],
    tick_cost: Option<Duration>,
}

impl FrameView<'_> {
    /// The frame number (from 1; 60 frames a simulated second).
    pub fn frame(&self) -> u32 {
        self.frame
    }

    /// What the dashboard shows of this moment.
    pub fn sample(&self) -> dashboard::Sample {
        let xz = |p: Vec3| (f64::from(p.x), f64::from(p.z));
        let boxes = |mp: &Mp| -> Vec<(f64, f64)> {
            mp.scene()
                .iter::<MovingBox>()
                .map(|(_, b)| xz(b.position))
                .collect()
        };
        let players = |mp: &Mp| -> Vec<(f64, f64)> {
            mp.scene()
                .iter::<Player>()
                .map(|(_, p)| xz(p.position))
                .collect()
        };
        let clients = self
            .clients
            .iter()
            .map(|client| {
                let stats = client.mp.stats();
                dashboard::ClientSample {
                    label: client.label.clone(),
                    bytes_in: stats.bytes_received_per_second,
                    bytes_out: stats.bytes_sent_per_second,
                    rtt: self
                        .server
                        .mp
                        .peer_stats(client.mp.local_peer_id())
                        .map_or(Duration::ZERO, |peer| peer.round_trip_time),
                    loss: client.mp.link_quality().map_or(0.0, |link| link.loss),
                    delay: client
                        .mp
                        .interpolation()
                        .map_or(Duration::ZERO, |timeline| timeline.delay()),
                    error: client.error_now,
                    rollbacks: stats.prediction.rollbacks,
                    resimulated_ticks: stats.prediction.resimulated_ticks,
                    input_lead: stats.prediction.input_lead,
                }
            })
            .collect();
        let first = self.clients.first().map(|client| &client.mp);
        dashboard::Sample {
            time: self.frame as f32 / FPS as f32,
            tick: self.server.mp.tick(),
            tick_cost: self.tick_cost,
            server_out: self.server.mp.stats().bytes_sent_per_second,
            clients,
            server_boxes: boxes(&self.server.mp),
            server_players: players(&self.server.mp),
            client_boxes: first.map(boxes).unwrap_or_default(),
            client_players: first.map(players).unwrap_or_default(),
        }
    }
}

/// Runs the simulation, writing its report lines to `out`.
///
/// # Errors
///
/// A runtime call refused, a client disconnected or an RPC rejected, the clients not converging
/// within three seconds of the end of the motion, or `out` failing.
pub fn run(options: &Options, out: &mut dyn Write) -> Result<Report, Box<dyn Error>> {
    run_observed(options, out, &mut |_| ControlFlow::Continue(()))
}

/// [`run`], calling `observe` after every frame of motion; [`ControlFlow::Break`] ends the
/// motion early (the convergence check still runs).
///
/// # Errors
///
/// As [`run`].
pub fn run_observed(
    options: &Options,
    out: &mut dyn Write,
    observe: &mut dyn FnMut(&FrameView<'_>) -> ControlFlow<()>,
) -> Result<Report, Box<dyn Error>> {
    writeln!(
        out,
        "{} boxes, {} clients, {} s at {FPS} fps, 30 Hz ticks; every end: {:.0} % loss, 5 % \
         duplication, 40 ms + up to 20 ms latency (seed {})",
        options.boxes,
        options.clients,
        options.seconds,
        options.loss * 100.0,
        options.seed,
    )?;
    let net = LoopbackNetwork::new();
    let mut server = Server::start(&net, options)?;
    let mut clients = (0..options.clients)
        .map(|index| Client::start(&net, options, index))
        .collect::<Result<Vec<_>, _>>()?;

    let dt = Duration::from_secs(1) / FPS;
    let motion_frames = options.seconds * FPS;
    let mut last_server = NetworkStats::default();
    let mut worst_error = 0.0_f32;
    let mut tick_cost = None;

    // Phase 1: everything moves, and every second each peer reports.
    for frame in 1..=motion_frames {
        let time = frame as f32 / FPS as f32;

        // The server: receive (handshakes, RPCs), game logic, then send (snapshots on ticks).
        // The demo times the frames that run a network tick (the core reads no clock).
        let (started, tick) = (Instant::now(), server.mp.tick());
        server.mp.begin_frame(dt);
        server.handle_events()?;
        server.move_boxes(time);
        server.simulate(true);
        server.mp.end_frame();
        if server.mp.tick() != tick {
            tick_cost = Some(started.elapsed());
        }
        server.record_history();

        // The clients: receive and blend, look, predict (sending input).
        for client in &mut clients {
            client.mp.begin_frame(dt);
            client.handle_events(out)?;
            client.measure(&server);
            client.simulate(true);
            client.mp.end_frame();
        }

        if frame % FPS == 0 {
            let second = frame / FPS;
            let stats = *server.mp.stats();
            writeln!(
                out,
                "[{second:>3} s] server    tick {:>4}  snapshots {:>3}  in {:>3.1} kB/s  \
                 out {:>5.1} kB/s  nodes {}",
                server.mp.tick(),
                stats.snapshots_sent - last_server.snapshots_sent,
                stats.bytes_received_per_second as f64 / 1000.0,
                stats.bytes_sent_per_second as f64 / 1000.0,
                stats.networked_nodes,
            )?;
            last_server = stats;
            for client in &mut clients {
                worst_error = worst_error.max(client.error_this_second);
                client.report(second, &server, out)?;
            }
        }
        let view = FrameView {
            frame,
            server: &server,
            clients: &clients,
            tick_cost,
        };
        if observe(&view).is_break() {
            break;
        }
    }
    for client in &clients {
        if client.player.is_none() {
            return Err(format!("{} never received its player", client.label).into());
        }
    }

    // Phase 2: nothing moves any more. Snapshots keep carrying the last changes until every
    // client acknowledged them, so every client must end up showing exactly the server's state.
    let mut settle_frames = 0;
    loop {
        let differences: Vec<String> = clients
            .iter()
            .filter_map(|c| c.difference(&server).map(|d| format!("{}: {d}", c.label)))
            .collect();
        if differences.is_empty() {
            break;
        }
        if settle_frames >= SETTLE_SECONDS * FPS {
            return Err(format!("no convergence: {}", differences.join("; ")).into());
        }
        settle_frames += 1;
        server.mp.begin_frame(dt);
        server.handle_events()?;
        server.simulate(false);
        server.mp.end_frame();
        for client in &mut clients {
            client.mp.begin_frame(dt);
            client.handle_events(out)?;
            client.simulate(false); // standing still, still sending input
            client.mp.end_frame();
        }
    }
    writeln!(
        out,
        "converged {settle_frames} frames ({} ms) after the motion stopped: every client shows \
         exactly the server's state ({} boxes, {} players); worst error while moving \
         {worst_error:.3}",
        settle_frames * 1000 / FPS,
        server.boxes.len(),
        server.mp.scene().iter::<Player>().count(),
    )?;
    for client in &clients {
        let predicted = client.mp.stats().prediction;
        let inputs = server
            .mp
            .peer_stats(client.mp.local_peer_id())
            .map(|peer| peer.inputs)
            .unwrap_or_default();
        writeln!(
            out,
            "{}: predicted {} ticks, {} rollbacks re-simulating {} ticks (deepest {}), \
             {} clock jumps; the server had {} of its inputs on time, {} missing, {} late",
            client.label,
            predicted.ticks_predicted,
            predicted.rollbacks,
            predicted.resimulated_ticks,
            predicted.deepest_rollback,
            predicted.clock_jumps,
            inputs.on_time,
            inputs.missing,
            inputs.late,
        )?;
    }
    Ok(Report {
        snapshots_applied: clients
            .iter()
            .map(|c| c.mp.stats().snapshots_applied)
            .collect(),
        snapshots_discarded: clients
            .iter()
            .map(|c| c.mp.stats().snapshots_discarded)
            .collect(),
        worst_error,
        settle_frames,
        prediction: clients.iter().map(|c| c.mp.stats().prediction).collect(),
        host_walked: server
            .player_of(PeerId::SERVER)
            .filter(|_| options.host)
            .map_or(0.0, |p| p.position.distance(Vec3::new(0.0, 1.0, -10.0))),
    })
}

/// Runs the demo with command-line arguments (without the program name).
pub fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    let args: Vec<String> = args.into_iter().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match Options::parse(args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = if options.plain || !std::io::stdout().is_terminal() {
        run(&options, &mut std::io::stdout().lock()).map(drop)
    } else {
        dashboard::run_live(&options)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("boxes failed: {e}");
            ExitCode::FAILURE
        }
    }
}
