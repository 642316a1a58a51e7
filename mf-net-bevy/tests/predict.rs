#![allow(clippy::unwrap_used)]
//! Owner prediction under Bevy: each client moves its own walker at once with its input, by the
//! game's own system in `NetStep`; the server runs the same system once per fixed step with
//! every owner's input; at 30 % loss with latency, every client ends with the server's values
//! exactly.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::component::Component;
use bevy_ecs::resource::Resource;
use bevy_ecs::schedule::IntoScheduleConfigs;
use bevy_ecs::system::{Query, Res, ResMut};
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::prelude::*;
use mf_net::replication::{MultiplayerConfig, TickSource};
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_bevy::prelude::*;

mod common;

#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Walk {
    dir: i8,
}

#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Walker {
    #[replicated(predict)]
    x: f32,
}

/// The game's step: every simulated walker moves by its owner's input.
fn walk(inputs: Res<'_, StepInputs<Walk>>, mut walkers: Query<'_, '_, &mut Walker>) {
    for (entity, input) in &inputs.entities {
        if let Ok(mut walker) = walkers.get_mut(*entity) {
            walker.x += f32::from(input.map_or(0, |i| i.dir)) * 0.5;
        }
    }
}

/// Another replicated component a walker may hold.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Badge {
    #[replicated]
    rank: i32,
}

/// Each first run of a tick: the tick, and how many entities it listed.
#[derive(Resource, Default)]
struct Steps(Vec<(u32, usize)>);

fn note_step(inputs: Res<'_, StepInputs<Walk>>, mut steps: ResMut<'_, Steps>) {
    if !inputs.resimulating && !inputs.entities.is_empty() {
        steps.0.push((inputs.tick, inputs.entities.len()));
    }
}

fn app() -> App {
    app_with(MultiplayerConfig::default())
}

fn app_with(config: MultiplayerConfig) -> App {
    let mut app = App::new();
    app.add_plugins((
        TimePlugin,
        MfNetPlugin { config },
        NetPredictionPlugin::<Walk, Walker>::default(),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_nanos(
        33_333_333,
    )))
    .init_resource::<Steps>()
    .replicate::<Walker>()
    .replicate::<Badge>()
    .add_systems(NetStep, (walk, note_step).chain());
    app
}

/// The walkers of `app`, by owner.
fn walkers(app: &mut App) -> Vec<(PeerId, f32)> {
    let world = app.world_mut();
    let mut q = world.query::<(&Walker, &NetOwner)>();
    let mut v: Vec<(PeerId, f32)> = q.iter(world).map(|(w, o)| (o.0, w.x)).collect();
    v.sort_by_key(|(p, _)| p.0);
    v
}

#[test]
fn clients_predict_their_own_walkers_and_converge_with_the_server() {
    let lossy = NetworkConditions::perfect()
        .with_loss(0.3)
        .with_latency(Duration::from_millis(40));
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, Some(lossy), 5);
    let mut clients: Vec<App> = (0..2u64)
        .map(|i| {
            let mut client = app();
            common::start_client(&mut client, &net, Some(lossy), i + 9);
            client
        })
        .collect();
    common::run(&mut server, &mut clients, 40);
    let peers: Vec<PeerId> = clients
        .iter()
        .map(|c| c.world().resource::<NetStatus>().local_peer)
        .collect();
    for &peer in &peers {
        server
            .world_mut()
            .spawn((Walker::default(), Networked, NetOwner(peer)));
    }
    common::run(&mut server, &mut clients, 60);
    assert_eq!(walkers(&mut clients[0]).len(), 2);

    // Client 0 presses: its own walker moves in the same frame, before any snapshot could
    // carry the server's.
    clients[0].insert_resource(LocalInput(Walk { dir: 1 }));
    let before = walkers(&mut clients[0]);
    clients[0].update();
    let after = walkers(&mut clients[0]);
    let own = |v: &[(PeerId, f32)]| v.iter().find(|(p, _)| *p == peers[0]).unwrap().1;
    assert!(
        own(&after) > own(&before),
        "predicted at once: {before:?} -> {after:?}"
    );

    // Both walk a while, then stop; every client ends with the server's walkers exactly.
    clients[1].insert_resource(LocalInput(Walk { dir: -1 }));
    common::run(&mut server, &mut clients, 60);
    for client in &mut clients {
        client.insert_resource(LocalInput(Walk { dir: 0 }));
    }
    common::run(&mut server, &mut clients, 90);
    let want = walkers(&mut server);
    assert!(want.iter().all(|(_, x)| *x != 0.0), "both walked: {want:?}");
    for (i, client) in clients.iter_mut().enumerate() {
        assert_eq!(walkers(client), want, "client {i}");
        let stats = client.world_mut().net(|mp| mp.stats().prediction);
        assert!(stats.ticks_predicted > 0, "client {i} predicted");
    }
}

/// A walker its client predicts, made `Networked` again after it stopped being networked, is
/// a new entity on the client, which predicts it again and ends where the server has it.
#[test]
fn a_walker_networked_again_is_predicted_again() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, None, 5);
    let mut clients = vec![app()];
    common::start_client(&mut clients[0], &net, None, 9);
    common::run(&mut server, &mut clients, 40);
    let peer = clients[0].world().resource::<NetStatus>().local_peer;
    let walker = (Walker::default(), Networked, NetOwner(peer));
    let walker = server.world_mut().spawn(walker).id();
    clients[0].insert_resource(LocalInput(Walk { dir: 1 }));
    common::run(&mut server, &mut clients, 30);
    server.world_mut().entity_mut(walker).remove::<Networked>();
    common::run(&mut server, &mut clients, 20);
    assert_eq!(walkers(&mut clients[0]), []);
    server.world_mut().entity_mut(walker).insert(Networked);
    common::run(&mut server, &mut clients, 30);
    let before = walkers(&mut clients[0]);
    assert_eq!(before.len(), 1);
    clients[0].update();
    let after = walkers(&mut clients[0]);
    assert!(
        after[0].1 > before[0].1,
        "predicted at once: {before:?} -> {after:?}"
    );
    clients[0].insert_resource(LocalInput(Walk { dir: 0 }));
    common::run(&mut server, &mut clients, 60);
    let want = walkers(&mut server);
    assert!(want[0].1 > 0.0, "it walked: {want:?}");
    assert_eq!(walkers(&mut clients[0]), want);
}

/// A client that stops and starts again, and then a server that does, predict and converge
/// as in their first runs: each new run's walker is predicted at once and ends where the
/// server has it.
#[test]
fn a_client_and_a_server_started_again_predict_again() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, None, 5);
    let mut clients = vec![app()];
    for run in 0..3 {
        match run {
            0 => {}
            1 => clients[0].world_mut().net(|mp| mp.stop()),
            _ => {
                server.world_mut().net(|mp| mp.stop());
                common::run(&mut server, &mut clients, 3);
                common::start_server(&mut server, &net, None, 5);
            }
        }
        common::start_client(&mut clients[0], &net, None, 9);
        common::run(&mut server, &mut clients, 40);
        let peer = clients[0].world().resource::<NetStatus>().local_peer;
        let walker = (Walker::default(), Networked, NetOwner(peer));
        server.world_mut().spawn(walker);
        common::run(&mut server, &mut clients, 30);
        let before = walkers(&mut clients[0]);
        assert_eq!(before.len(), 1, "run {run}: the new walker alone");
        clients[0].insert_resource(LocalInput(Walk { dir: 1 }));
        clients[0].update();
        let after = walkers(&mut clients[0]);
        assert!(
            after[0].1 > before[0].1,
            "run {run}: predicted at once: {before:?} -> {after:?}"
        );
        common::run(&mut server, &mut clients, 20);
        clients[0].insert_resource(LocalInput(Walk { dir: 0 }));
        common::run(&mut server, &mut clients, 60);
        let want = walkers(&mut server);
        assert_eq!(
            want.len(),
            1,
            "run {run}: the walker of the run before went"
        );
        assert!(want[0].1 > 0.0, "run {run}: it walked: {want:?}");
        assert_eq!(walkers(&mut clients[0]), want, "run {run}");
    }
}

/// A walker with another replicated component, on a perfect link, with the server ticking on
/// the fixed step (the default) and on its own clock: the server steps each tick once, with
/// the walker listed once, as the client predicts it, and the client never rolls back.
#[test]
fn the_server_steps_each_tick_once_with_each_walker_once() {
    for tick_source in [TickSource::External, TickSource::OwnClock] {
        let make = || {
            app_with(MultiplayerConfig {
                tick_source,
                ..MultiplayerConfig::default()
            })
        };
        let net = LoopbackNetwork::new();
        let mut server = make();
        common::start_server(&mut server, &net, None, 5);
        let mut clients = vec![make()];
        common::start_client(&mut clients[0], &net, None, 9);
        common::run(&mut server, &mut clients, 10);
        let peer = clients[0].world().resource::<NetStatus>().local_peer;
        let walker = (
            Walker::default(),
            Badge { rank: 2 },
            Networked,
            NetOwner(peer),
        );
        server.world_mut().spawn(walker);
        common::run(&mut server, &mut clients, 20);
        server.world_mut().resource_mut::<Steps>().0.clear();
        let from = server.world_mut().net(|mp| mp.tick());
        clients[0].insert_resource(LocalInput(Walk { dir: 1 }));
        common::run(&mut server, &mut clients, 30);
        let to = server.world_mut().net(|mp| mp.tick());
        let steps = server.world().resource::<Steps>().0.clone();
        let ticks: Vec<u32> = steps.iter().map(|&(tick, _)| tick).collect();
        let want: Vec<u32> = (from + 1..=to).collect();
        assert_eq!(ticks, want, "{tick_source:?}: each tick stepped once");
        assert!(
            steps.iter().all(|&(_, listed)| listed == 1),
            "{tick_source:?}: the walker listed once a step: {steps:?}"
        );
        clients[0].insert_resource(LocalInput(Walk { dir: 0 }));
        common::run(&mut server, &mut clients, 20);
        let prediction = clients[0].world_mut().net(|mp| mp.stats().prediction);
        assert_eq!(prediction.rollbacks, 0, "{tick_source:?}");
        assert_eq!(walkers(&mut clients[0]), walkers(&mut server));
    }
}
