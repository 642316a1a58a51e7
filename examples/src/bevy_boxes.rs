//! Boxes as Bevy apps: a headless server and clients, each a Bevy `App` with mf-net-bevy,
//! in one process over loopback behind a seeded bad network, or in separate processes over
//! ENet.
//!
//! ```text
//! bevy_boxes [--seconds N] [--loss P] [--clients N] [--boxes N] [--seed N]
//! bevy_boxes --server PORT [--seconds N] [--boxes N] [--clients N]   (PORT 0: any free one)
//! bevy_boxes --client HOST:PORT [--seconds N]
//! ```
//!
//! - The server spawns `--boxes` boxes (40): a `Crate` component and a [`NetTransform`]; its
//!   fixed-step system moves them on circles. Each client that joins gets a `Pilot` it owns.
//! - Each client's system pushes its pilot every few frames, through the `NetRpc` parameter
//!   (an `authority` RPC the server runs).
//! - After `--seconds` (5) of simulated time the boxes stop. In one process the run then checks
//!   that every client shows the server's boxes and pilots (transforms within the
//!   quantization's step) and prints one line per client. Over ENet, the server waits for
//!   `--clients` (1) clients and runs in real time; the client prints what it saw and exits
//!   with failure if it saw no box.

use std::collections::BTreeMap;
use std::error::Error;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy_app::{App, FixedUpdate, Update};
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::message::MessageReader;
use bevy_ecs::query::With;
use bevy_ecs::resource::Resource;
use bevy_ecs::system::{Commands, Query, Res};
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use bevy_transform::components::Transform;
use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::replication::{MultiplayerEvent, NetId};
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net_bevy::prelude::*;
use mf_net_enet::EnetTransport;

/// A box: how often a pilot bumped it is replicated beside its transform.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
pub struct Crate {
    /// Its place on the circles.
    #[replicated]
    pub lane: i32,
}

/// A client's player: moved by its owner's pushes.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
pub struct Pilot {
    /// Pushes the server ran.
    #[replicated]
    pub pushes: u32,
}

#[rpcs]
impl Pilot {
    /// The owner pushes its pilot (a client's call runs on the server; the transform follows
    /// in the server's system).
    #[rpc(authority, rate_limit = 30)]
    fn push(&mut self) {
        self.pushes += 1;
    }
}

/// What a run does.
#[derive(Debug, Clone)]
pub struct Options {
    /// Simulated (or, over ENet, real) seconds of motion.
    pub seconds: u32,
    /// Clients in one process; over ENet, the clients the server waits for.
    pub clients: usize,
    /// Boxes the server spawns.
    pub boxes: usize,
    /// Loss of every end's unreliable packets (in one process).
    pub loss: f32,
    /// The network simulator's seed.
    pub seed: u64,
    /// In one process, or one end over ENet.
    pub mode: Mode,
}

/// Where the apps run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Server and clients in this process, over loopback.
    InProcess,
    /// A server over ENet on this port.
    Server(u16),
    /// A client over ENet to this address.
    Client(String),
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seconds: 5,
            clients: 3,
            boxes: 40,
            loss: 0.1,
            seed: 1,
            mode: Mode::InProcess,
        }
    }
}

/// What a run in one process ended with.
#[derive(Debug, Clone)]
pub struct Report {
    /// Networked entities on the server at the end.
    pub entities: usize,
    /// Each client's pilot's pushes, as the server counted them.
    pub pushes: Vec<u32>,
}

const FRAME: Duration = Duration::from_nanos(16_666_667);

/// Whether the server's boxes move.
#[derive(Resource)]
struct Moving(bool);

/// The server's fixed step: boxes go round; pilots drift by their pushes.
fn circle(
    moving: Res<'_, Moving>,
    mut crates: Query<'_, '_, (&Crate, &mut Transform)>,
    mut pilots: Query<'_, '_, (&Pilot, &mut Transform), bevy_ecs::query::Without<Crate>>,
) {
    if !moving.0 {
        return;
    }
    for (c, mut transform) in &mut crates {
        let turn = bevy_math::Quat::from_rotation_y(0.02 + 0.001 * c.lane as f32);
        transform.translation = turn * transform.translation;
        transform.rotate(turn);
    }
    for (pilot, mut transform) in &mut pilots {
        transform.translation.x = pilot.pushes as f32 * 0.5;
    }
}

/// The server gives every client that joins a pilot.
fn welcome(mut events: MessageReader<'_, '_, NetEvent>, mut commands: Commands<'_, '_>) {
    for event in events.read() {
        if let MultiplayerEvent::PeerJoined(peer) = event.0 {
            commands.spawn((
                Pilot::default(),
                NetTransform::default(),
                Networked,
                NetOwner(peer),
            ));
        }
    }
}

/// Frames between a client's pushes.
#[derive(Resource)]
struct Pushing(u32);

/// A client pushes its own pilot every 20th frame while pushing is on.
fn pilot(
    mut frames: bevy_ecs::system::Local<'_, u32>,
    pushing: Res<'_, Pushing>,
    status: Res<'_, NetStatus>,
    mut rpc: NetRpc<'_>,
    pilots: Query<'_, '_, (Entity, &NetOwner), With<Pilot>>,
) {
    *frames += 1;
    if pushing.0 == 0 || *frames % pushing.0 != 0 {
        return;
    }
    for (entity, owner) in &pilots {
        if owner.0 == status.local_peer {
            let _ = rpc.on::<Pilot>(entity).push();
        }
    }
}

/// A headless app with mf-net-bevy, stepped by `FRAME` per update when `manual`.
fn app(manual: bool) -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin::default(), NetTransformPlugin))
        .replicate::<Crate>()
        .replicate::<Pilot>();
    if manual {
        app.insert_resource(TimeUpdateStrategy::ManualDuration(FRAME));
    }
    app
}

fn server_app(manual: bool, boxes: usize) -> App {
    let mut server = app(manual);
    server
        .insert_resource(Moving(true))
        .add_systems(FixedUpdate, circle)
        .add_systems(Update, welcome);
    for i in 0..boxes {
        let lane = i32::try_from(i).unwrap_or(i32::MAX);
        let radius = 5.0 + (i % 10) as f32 * 3.0;
        let angle = i as f32 * 0.7;
        let at = Transform::from_xyz(radius * angle.cos(), 0.0, radius * angle.sin());
        server
            .world_mut()
            .spawn((Crate { lane }, at, NetTransform::default(), Networked));
    }
    server
}

fn client_app(manual: bool) -> App {
    let mut client = app(manual);
    client
        .insert_resource(Pushing(20))
        .add_systems(Update, pilot);
    client
}

/// Every networked entity of `app` by net id: its crate or pilot, and its translation.
fn shown(app: &mut App) -> BTreeMap<NetId, (String, [f32; 3])> {
    let world = app.world_mut();
    let mut q = world.query::<(&NetworkId, Option<&Crate>, Option<&Pilot>, &Transform)>();
    q.iter(world)
        .map(|(id, c, p, t)| {
            let what = format!("{c:?} {p:?}");
            (id.0, (what, t.translation.to_array()))
        })
        .collect()
}

/// Runs server and clients in this process.
///
/// # Errors
///
/// A client that does not show the server's state two seconds after the boxes stop.
pub fn run(options: &Options, out: &mut impl std::io::Write) -> Result<Report, Box<dyn Error>> {
    let conditions = NetworkConditions::perfect()
        .with_loss(options.loss)
        .with_latency(Duration::from_millis(40))
        .with_jitter(Duration::from_millis(20));
    let net = LoopbackNetwork::new();
    let mut server = server_app(true, options.boxes);
    let listen = net.listen("bevy_boxes", options.clients.max(1))?;
    server.world_mut().net(|mp| {
        let transport: Box<dyn Transport> =
            Box::new(SimulatedTransport::new(listen, conditions, options.seed));
        mp.start_server(transport, MessageRegistry::new(1))
    })?;
    let mut clients = Vec::new();
    for i in 0..options.clients as u64 {
        let mut client = client_app(true);
        client.world_mut().net(|mp| {
            let open = |data| -> Box<dyn Transport> {
                let inner = net.connect("bevy_boxes", data);
                Box::new(SimulatedTransport::new(
                    inner,
                    conditions,
                    options.seed + i + 1,
                ))
            };
            mp.start_client(open, MessageRegistry::new(1))
        })?;
        clients.push(client);
    }
    let frames = |server: &mut App, clients: &mut [App], n: u32| {
        for _ in 0..n {
            server.update();
            for client in clients.iter_mut() {
                client.update();
            }
        }
    };
    frames(&mut server, &mut clients, options.seconds * 60);
    server.insert_resource(Moving(false));
    for client in &mut clients {
        client.insert_resource(Pushing(0));
    }
    let mut settled = false;
    for _ in 0..120 {
        frames(&mut server, &mut clients, 1);
        let want = shown(&mut server);
        if clients.iter_mut().all(|c| close(&shown(c), &want)) {
            settled = true;
            break;
        }
    }
    if !settled {
        return Err("a client does not show the server's state".into());
    }
    let want = shown(&mut server);
    let world = server.world_mut();
    let mut pilots = world.query::<(&Pilot, &NetOwner)>();
    let mut pushes: Vec<(PeerId, u32)> = pilots.iter(world).map(|(p, o)| (o.0, p.pushes)).collect();
    pushes.sort_unstable();
    for (peer, count) in &pushes {
        writeln!(
            out,
            "client {peer}: pilot pushed {count} times, every box in place"
        )?;
    }
    Ok(Report {
        entities: want.len(),
        pushes: pushes.into_iter().map(|(_, n)| n).collect(),
    })
}

/// Whether `got` shows what `want` has: the same entities and values, translations within the
/// quantization's step.
fn close(
    got: &BTreeMap<NetId, (String, [f32; 3])>,
    want: &BTreeMap<NetId, (String, [f32; 3])>,
) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|((a, (va, ta)), (b, (vb, tb)))| {
            a == b && va == vb && ta.iter().zip(tb).all(|(x, y)| (x - y).abs() <= 1.0 / 128.0)
        })
}

/// One end over ENet, in real time.
///
/// # Errors
///
/// The transport cannot start; a client that saw no box.
pub fn run_enet(options: &Options, out: &mut impl std::io::Write) -> Result<(), Box<dyn Error>> {
    let end = Instant::now() + Duration::from_secs(u64::from(options.seconds));
    match &options.mode {
        Mode::Server(port) => {
            let mut server = server_app(false, options.boxes);
            let addr = format!("127.0.0.1:{port}").parse()?;
            let transport = EnetTransport::listen(addr, options.clients.max(1))?;
            if let Some(local) = transport.local_addr() {
                writeln!(out, "listening on {local}")?;
                out.flush()?;
            }
            server
                .world_mut()
                .net(|mp| mp.start_server(Box::new(transport), MessageRegistry::new(1)))?;
            while Instant::now() < end {
                server.update();
                std::thread::sleep(FRAME);
            }
            writeln!(out, "server: {} entities", shown(&mut server).len())?;
            Ok(())
        }
        Mode::Client(addr) => {
            let mut client = client_app(false);
            let addr = addr.clone();
            client.world_mut().net(|mp| {
                let open = |data| -> Result<Box<dyn Transport>, mf_net_enet::EnetError> {
                    Ok(Box::new(EnetTransport::connect(addr.as_str(), data)?))
                };
                mp.start_client(open, MessageRegistry::new(1))
            })?;
            while Instant::now() < end {
                client.update();
                std::thread::sleep(FRAME);
            }
            let seen = shown(&mut client);
            let boxes = seen
                .values()
                .filter(|(what, _)| what.starts_with("Some"))
                .count();
            writeln!(out, "client: {} entities, {boxes} boxes", seen.len())?;
            if boxes == 0 {
                return Err("the client saw no box".into());
            }
            Ok(())
        }
        Mode::InProcess => run(options, out).map(|_| ()),
    }
}

/// The options `args` ask for.
///
/// # Errors
///
/// An unknown option or a value that does not parse.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, Box<dyn Error>> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--seconds" => options.seconds = value()?.parse()?,
            "--clients" => options.clients = value()?.parse()?,
            "--boxes" => options.boxes = value()?.parse()?,
            "--loss" => options.loss = value()?.parse()?,
            "--seed" => options.seed = value()?.parse()?,
            "--server" => options.mode = Mode::Server(value()?.parse()?),
            "--client" => options.mode = Mode::Client(value()?),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok(options)
}

/// The example's entry point.
pub fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    let result = parse(args).and_then(|options| run_enet(&options, &mut std::io::stdout()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bevy_boxes: {error}");
            ExitCode::FAILURE
        }
    }
}
