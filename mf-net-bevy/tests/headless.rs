#![allow(clippy::unwrap_used)]
//! Headless Bevy apps in one process: a server and 8 clients over loopback at 30 % loss. The
//! server's entities (spawned, changed, despawned by its systems, with children) reach every
//! client; each client's ship moves by its RPCs (shown interpolated) and its walker beside it by
//! its predicted input; rocks name ships by reference; and every client ends with the server's
//! values exactly.

use std::collections::BTreeMap;
use std::time::Duration;

use bevy_app::{App, Last, Update};
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::message::{MessageReader, Messages};
use bevy_ecs::query::With;
use bevy_ecs::resource::Resource;
use bevy_ecs::schedule::ScheduleLabel;
use bevy_ecs::system::{Commands, Query, Res, ResMut};
use bevy_time::{TimePlugin, TimeUpdateStrategy};
use mf_net::prelude::*;
use mf_net::replication::{
    MultiplayerConfig, MultiplayerEvent, NetId, SnapshotEncoding, TickSource,
};
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::NetworkConditions;
use mf_net_bevy::prelude::*;
use mf_net_bevy::ReplicatedComponents;

mod common;

/// A player's ship: moved by its owner's RPC (shown interpolated), damaged by the server.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Ship {
    #[replicated(interpolate)]
    x: f32,
    #[replicated]
    hp: i32,
}

#[rpcs]
impl Ship {
    /// The owner moves its ship (a client's call runs on the server).
    #[rpc(authority)]
    fn thrust(&mut self, dx: f32) {
        self.x += dx.clamp(-1.0, 1.0);
    }
}

/// A rock the server spins and later removes; it points at a ship.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Rock {
    #[replicated]
    angle: i32,
    #[replicated]
    aim: NetRef<Ship>,
    /// The same ship's entity.
    #[replicated]
    near: NetEntity,
}

/// A pebble on a rock: its child entity, despawned with it.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Pebble {
    #[replicated]
    size: i32,
}

/// The input a client predicts its walker with.
#[derive(NetCodec, Debug, Clone, Copy, Default, PartialEq)]
struct Walk {
    dir: i8,
}

/// Beside each ship: a walker its owner predicts.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Walker {
    #[replicated(predict)]
    z: f32,
}

/// The game's step: walkers move by their owners' inputs.
fn walk(inputs: Res<'_, StepInputs<Walk>>, mut walkers: Query<'_, '_, &mut Walker>) {
    for (entity, input) in &inputs.entities {
        if let Ok(mut walker) = walkers.get_mut(*entity) {
            walker.z += f32::from(input.map_or(0, |i| i.dir));
        }
    }
}

const FRAME: Duration = Duration::from_nanos(33_333_333);

fn app() -> App {
    let mut app = App::new();
    app.add_plugins((
        TimePlugin,
        MfNetPlugin::default(),
        NetPredictionPlugin::<Walk, Walker>::default(),
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
    .replicate::<Ship>()
    .replicate::<Rock>()
    .replicate::<Pebble>()
    .replicate::<Walker>()
    .add_systems(NetStep, walk);
    app
}

/// Whether the server's systems change anything.
#[derive(Resource)]
struct Spinning(bool);

/// The server's own systems: rocks spin, ships lose a point of health every 10th frame.
fn spin(
    spinning: Res<'_, Spinning>,
    mut rocks: Query<'_, '_, &mut Rock>,
    mut ships: Query<'_, '_, &mut Ship>,
) {
    if !spinning.0 {
        return;
    }
    for mut rock in &mut rocks {
        rock.angle += 1;
    }
    for mut ship in &mut ships {
        if ship.x as i32 % 10 == 0 {
            ship.hp -= 1;
        }
    }
}

/// How many more frames a client thrusts its ship.
#[derive(Resource)]
struct Thrusts(u32);

/// A client's system: while it has thrusts left, it thrusts its own ship, by RPC.
fn steer(
    mut thrusts: ResMut<'_, Thrusts>,
    status: Res<'_, NetStatus>,
    mut rpc: NetRpc<'_>,
    ships: Query<'_, '_, (Entity, &NetOwner), With<Ship>>,
) {
    if thrusts.0 == 0 {
        return;
    }
    thrusts.0 -= 1;
    for (ship, owner) in &ships {
        if owner.0 == status.local_peer {
            rpc.on::<Ship>(ship).thrust(1.0).unwrap();
        }
    }
}

/// Every rock's aim, as the net id of the ship's entity it names on `app`, by the reference to
/// the ship's component and by the reference to its entity.
fn aims_by_id(app: &mut App) -> BTreeMap<NetId, (NetId, NetId)> {
    let world = app.world_mut();
    let mut rocks = world.query::<(&NetworkId, &Rock)>();
    let aims: Vec<(NetId, NetRef<Ship>, NetEntity)> = rocks
        .iter(world)
        .map(|(id, r)| (id.0, r.aim, r.near))
        .collect();
    aims.into_iter()
        .map(|(id, aim, near)| {
            let ship = entity_of(aim.node()).unwrap();
            let by_ref = world.get::<NetworkId>(ship).unwrap().0;
            let by_entity = world.get::<NetworkId>(near.0.unwrap()).unwrap().0;
            (id, (by_ref, by_entity))
        })
        .collect()
}

/// Every networked entity's value by net id, as `Debug` text (of its one replicated component).
fn values(app: &mut App) -> BTreeMap<NetId, String> {
    let world = app.world_mut();
    let mut out = BTreeMap::new();
    let mut ships = world.query::<(&NetworkId, &Ship, Option<&Walker>)>();
    for (id, ship, walker) in ships.iter(world) {
        out.insert(id.0, format!("{ship:?} {walker:?}"));
    }
    let mut rocks = world.query::<(&NetworkId, &Rock)>();
    for (id, rock) in rocks.iter(world) {
        out.insert(id.0, format!("{}", rock.angle));
    }
    let mut pebbles = world.query::<(&NetworkId, &Pebble, &ChildOf)>();
    let on: Vec<(NetId, i32, Entity)> = pebbles
        .iter(world)
        .map(|(id, p, parent)| (id.0, p.size, parent.parent()))
        .collect();
    for (id, size, rock) in on {
        let rock = world.get::<NetworkId>(rock).map(|r| r.0);
        out.insert(id, format!("pebble {size} on {rock:?}"));
    }
    out
}

#[test]
fn a_server_and_8_clients_converge_over_30_percent_loss() {
    let lossy = NetworkConditions::perfect().with_loss(0.3);
    let net = LoopbackNetwork::new();
    let mut server = app();
    server
        .insert_resource(Spinning(true))
        .add_systems(Update, spin);
    common::start_server(&mut server, &net, Some(lossy), 1);
    let mut clients: Vec<App> = (0..8u64)
        .map(|i| {
            let mut client = app();
            client
                .insert_resource(Thrusts(0))
                .add_systems(Update, steer);
            common::start_client(&mut client, &net, Some(lossy), i + 2);
            client
        })
        .collect();
    common::run(&mut server, &mut clients, 30);
    let peers: Vec<PeerId> = clients
        .iter_mut()
        .map(|c| c.world_mut().net(|mp| mp.local_peer_id()))
        .collect();
    assert!(
        peers.iter().all(|&p| p != PeerId::SERVER),
        "every client joined"
    );

    // One ship per client, owned by it, with a walker beside it; three rocks, each with a
    // pebble.
    for &peer in &peers {
        let ship = Ship { x: 0.0, hp: 100 };
        let owned = (ship, Walker::default(), Networked, NetOwner(peer));
        server.world_mut().spawn(owned);
    }
    let world = server.world_mut();
    let mut ships = world.query::<(Entity, &NetOwner)>();
    let aimed: Vec<Entity> = ships.iter(world).map(|(e, _)| e).take(3).collect();
    let types = world.resource::<ReplicatedComponents>();
    let aims: Vec<NetRef<Ship>> = aimed
        .iter()
        .map(|&e| NetRef::new(types.node_of::<Ship>(e).unwrap()))
        .collect();
    let rocks: Vec<Entity> = aims
        .iter()
        .map(|&aim| {
            let near = NetEntity::from(entity_of(aim.node()).unwrap());
            let rock = Rock {
                angle: 0,
                aim,
                near,
            };
            let world = server.world_mut();
            let rock = world.spawn((rock, Networked)).id();
            world.spawn((Pebble { size: 3 }, Networked, ChildOf(rock)));
            rock
        })
        .collect();
    common::run(&mut server, &mut clients, 30);

    // Each client's system thrusts its own ship in 20 frames, and each walks its walker,
    // predicted: it moves in the frame of the press. Clients show the ships interpolated:
    // behind the server.
    for client in &mut clients {
        client.insert_resource(Thrusts(20));
        client.insert_resource(LocalInput(Walk { dir: 1 }));
    }
    let walked = |app: &mut App| {
        let world = app.world_mut();
        let mut q = world.query::<(&Walker, &NetOwner)>();
        let local = world.resource::<NetStatus>().local_peer;
        let mine: Vec<f32> = q
            .iter(world)
            .filter(|(_, o)| o.0 == local)
            .map(|(w, _)| w.z)
            .collect();
        mine[0]
    };
    let before = walked(&mut clients[0]);
    clients[0].update();
    assert!(
        walked(&mut clients[0]) > before,
        "predicted in the frame of the press"
    );
    common::run(&mut server, &mut clients, 12);
    let shown = |app: &mut App| {
        let world = app.world_mut();
        let mut ships = world.query::<&Ship>();
        ships.iter(world).map(|s| s.x).fold(0.0f32, f32::max)
    };
    let (ahead, behind) = (shown(&mut server), shown(&mut clients[0]));
    assert!(
        behind < ahead,
        "client 0 shows {behind}, the server has {ahead}"
    );
    assert!(behind > 0.0, "client 0 shows its ship moving");
    assert!(clients[0]
        .world_mut()
        .net(|mp| mp.interpolation().is_some()));
    common::run(&mut server, &mut clients, 8);
    for client in &mut clients {
        client.insert_resource(LocalInput(Walk { dir: 0 }));
    }
    // A rock goes, with its pebble; then the server's systems rest, and every client catches
    // up.
    server.world_mut().despawn(rocks[0]);
    common::run(&mut server, &mut clients, 30);
    server.insert_resource(Spinning(false));
    common::run(&mut server, &mut clients, 60);

    let want = values(&mut server);
    assert_eq!(
        want.len(),
        8 + 2 + 2,
        "8 ships, 2 rocks and their pebbles: {want:?}"
    );
    assert!(
        want.values()
            .filter(|v| v.contains("Walker { z: 0.0 }"))
            .count()
            == 0,
        "every walker walked: {want:?}"
    );
    let moved = want.values().filter(|v| v.contains("x: 20.0")).count();
    assert_eq!(moved, 8, "every client's thrusts moved its ship: {want:?}");
    for (i, client) in clients.iter_mut().enumerate() {
        assert_eq!(values(client), want, "client {i}");
        assert_eq!(aims_by_id(client), aims_by_id(&mut server), "client {i}");
    }
}

#[test]
fn a_despawn_on_a_client_is_counted_by_net_events() {
    let net = LoopbackNetwork::new();
    let mut server = app();
    common::start_server(&mut server, &net, None, 0);
    let mut client = app();
    common::start_client(&mut client, &net, None, 0);
    let mut events = Vec::new();
    let step = |server: &mut App, client: &mut App, events: &mut Vec<MultiplayerEvent>| {
        server.update();
        client.update();
        let messages = client.world().resource::<Messages<NetEvent>>();
        events.extend(messages.iter_current_update_messages().map(|e| e.0.clone()));
    };
    for _ in 0..4 {
        step(&mut server, &mut client, &mut events);
    }
    let rock = server
        .world_mut()
        .spawn((
            Rock {
                angle: 7,
                ..Rock::default()
            },
            Networked,
        ))
        .id();
    for _ in 0..4 {
        step(&mut server, &mut client, &mut events);
    }
    assert_eq!(values(&mut client).values().next().unwrap(), "7");
    server.world_mut().despawn(rock);
    for _ in 0..4 {
        step(&mut server, &mut client, &mut events);
    }
    assert!(values(&mut client).is_empty());
    assert!(events
        .iter()
        .any(|e| matches!(e, MultiplayerEvent::ConnectedToServer { .. })));
    assert!(events
        .iter()
        .any(|e| matches!(e, MultiplayerEvent::NodeSpawned { .. })));
    assert!(events
        .iter()
        .any(|e| matches!(e, MultiplayerEvent::NodeDespawned { .. })));
}

/// A component that derives `Replicated` but that the app never registers.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Forgotten {
    #[replicated]
    n: i32,
}

#[test]
fn an_entity_whose_replicated_component_was_never_registered_is_reported() {
    let mut server = app();
    let entity = server
        .world_mut()
        .spawn((Forgotten::default(), Networked))
        .id();
    server.update();
    let messages = server.world().resource::<Messages<NotReplicated>>();
    let reports: Vec<_> = messages.iter_current_update_messages().collect();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].entity, entity);
    assert!(
        reports[0]
            .reason
            .contains("app.replicate::<headless::Forgotten>()"),
        "{}",
        reports[0].reason
    );
    assert!(server.world().get::<Networked>(entity).is_none());
    assert!(server.world().get::<NetworkId>(entity).is_none());
}

/// A system that uses [`Forgotten`] (which registers it as a component of the app).
fn count_forgotten(forgotten: Query<'_, '_, &Forgotten>) {
    let _ = forgotten.iter().count();
}

#[test]
fn a_replicated_component_never_registered_is_reported_after_the_first_frame() {
    let mut app = app();
    app.add_systems(Update, count_forgotten);
    app.update();
    let messages = app.world().resource::<Messages<UnregisteredComponent>>();
    let names: Vec<&str> = messages
        .iter_current_update_messages()
        .map(|m| m.type_name)
        .collect();
    assert_eq!(names, ["headless::Forgotten"]);
    app.update();
    let messages = app.world().resource::<Messages<UnregisteredComponent>>();
    assert!(messages.len() <= 1, "reported once");
}

/// What an app's server was told about forgotten registrations: each `NotReplicated` and
/// `UnregisteredComponent`, as text.
#[derive(Resource, Default)]
struct Reports(Vec<String>);

fn note_reports(
    mut not: MessageReader<'_, '_, NotReplicated>,
    mut unregistered: MessageReader<'_, '_, UnregisteredComponent>,
    mut reports: ResMut<'_, Reports>,
) {
    for r in not.read() {
        reports
            .0
            .push(format!("NotReplicated {:?}: {}", r.entity, r.reason));
    }
    for r in unregistered.read() {
        reports
            .0
            .push(format!("UnregisteredComponent {}", r.type_name));
    }
}

/// A server noting its reports and a client, joined over a perfect loopback.
fn reporting_server_and_client() -> (App, Vec<App>) {
    let net = LoopbackNetwork::new();
    let mut server = app();
    server
        .init_resource::<Reports>()
        .add_systems(Last, note_reports);
    common::start_server(&mut server, &net, None, 1);
    let mut clients = vec![app()];
    common::start_client(&mut clients[0], &net, None, 2);
    common::run(&mut server, &mut clients, 20);
    (server, clients)
}

/// The reports `app` noted since the last look.
fn reports(app: &mut App) -> Vec<String> {
    std::mem::take(&mut app.world_mut().resource_mut::<Reports>().0)
}

/// How many `Forgotten` components `app` holds.
fn forgotten(app: &mut App) -> usize {
    let world = app.world_mut();
    world.query::<&Forgotten>().iter(world).count()
}

/// A `Forgotten` first used after the app's first frame, beside a registered `Ship` on a
/// `Networked` entity, is reported once (`UnregisteredComponent`), and the entity is networked
/// with its `Ship`. (Types were checked once, at the end of the first frame, and an entity's
/// components only when it held no registered one: nothing named the missing
/// `app.replicate::<Forgotten>()`, and `Forgotten` was silently never sent.)
#[test]
fn a_forgotten_component_beside_a_registered_one_is_reported() {
    let (mut server, mut clients) = reporting_server_and_client();
    reports(&mut server);
    let ship = Ship { x: 0.0, hp: 1 };
    server
        .world_mut()
        .spawn((ship, Forgotten { n: 42 }, Networked));
    common::run(&mut server, &mut clients, 10);
    assert_eq!(
        reports(&mut server),
        ["UnregisteredComponent headless::Forgotten"]
    );
    assert_eq!(values(&mut clients[0]).len(), 1, "the ship arrives");
    assert_eq!(forgotten(&mut clients[0]), 0, "Forgotten is not sent");
    server
        .world_mut()
        .spawn((Forgotten { n: 1 }, Ship::default(), Networked));
    common::run(&mut server, &mut clients, 5);
    assert!(reports(&mut server).is_empty(), "reported once");
}

/// A `Forgotten` first inserted into an entity networked already is reported once, as it
/// first appears. (Nothing named it: it was never sent, and never reported.)
#[test]
fn a_forgotten_component_inserted_into_a_networked_entity_is_reported() {
    let (mut server, mut clients) = reporting_server_and_client();
    let ship = server
        .world_mut()
        .spawn((Ship { x: 0.0, hp: 1 }, Networked))
        .id();
    common::run(&mut server, &mut clients, 10);
    reports(&mut server);
    server
        .world_mut()
        .entity_mut(ship)
        .insert(Forgotten { n: 42 });
    common::run(&mut server, &mut clients, 10);
    assert_eq!(
        reports(&mut server),
        ["UnregisteredComponent headless::Forgotten"]
    );
    assert_eq!(forgotten(&mut clients[0]), 0, "Forgotten is not sent");
    assert!(server.world().get::<Networked>(ship).is_some());
}

/// A beacon the server calls on: `boom` for the clients only, `hit` on itself and the clients.
#[derive(Component, Replicated, Debug, Default, Clone, PartialEq)]
struct Beacon {
    #[replicated]
    hp: i32,
    /// Local: what `boom` added on this peer.
    booms: i32,
    /// Local: how many times `hit` ran on this peer.
    flashes: i32,
}

#[rpcs]
impl Beacon {
    /// The server tells the clients.
    #[rpc(server)]
    fn boom(&mut self, n: i32) {
        self.booms += n;
    }

    /// The server hits, on itself and on the clients.
    #[rpc(server, call_local)]
    fn hit(&mut self, n: i32) {
        self.hp -= n;
        self.flashes += 1;
    }
}

/// An app that replicates beacons, with `config`.
fn beacon_app(config: MultiplayerConfig) -> App {
    let mut app = App::new();
    app.add_plugins((TimePlugin, MfNetPlugin { config }))
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .replicate::<Beacon>();
    app
}

/// What the server's [`call_beacon`] does next: spawn a beacon (`spawn`), make the plain one
/// `Networked` (`plain`), or call again on one networked earlier (`again`); each time it calls
/// `boom(5)` and `hit(10)` on it in the same system.
#[derive(Resource, Default)]
struct BeaconPlan {
    spawn: bool,
    plain: Option<Entity>,
    again: Option<Entity>,
}

fn call_beacon(
    mut plan: ResMut<'_, BeaconPlan>,
    mut commands: Commands<'_, '_>,
    mut rpc: NetRpc<'_>,
) {
    let beacon = Beacon {
        hp: 100,
        ..Beacon::default()
    };
    let e = if std::mem::take(&mut plan.spawn) {
        commands.spawn((beacon, Networked)).id()
    } else if let Some(e) = plan.plain.take() {
        commands.entity(e).insert(Networked);
        e
    } else if let Some(e) = plan.again.take() {
        e
    } else {
        return;
    };
    rpc.on::<Beacon>(e).boom(5).unwrap();
    rpc.on::<Beacon>(e).hit(10).unwrap();
}

/// Every beacon on `app`.
fn beacons(app: &mut App) -> Vec<Beacon> {
    let world = app.world_mut();
    world.query::<&Beacon>().iter(world).cloned().collect()
}

/// What differs from one beacon on `server` and on `client`, each with `hp` and `flashes`, and
/// `booms` on the client (the server's `boom` runs on clients only).
fn beacons_differ(
    server: &mut App,
    client: &mut App,
    (hp, booms, flashes): (i32, i32, i32),
) -> Option<String> {
    let (on_server, shown) = (beacons(server), beacons(client));
    let ok = on_server.len() == 1
        && (on_server[0].hp, on_server[0].flashes) == (hp, flashes)
        && shown.len() == 1
        && (shown[0].hp, shown[0].booms, shown[0].flashes) == (hp, booms, flashes);
    (!ok).then(|| format!("server {on_server:?}, client {shown:?}"))
}

/// The book (RPCs and snapshots): "A call on a node spawned (or bound) in the same frame is
/// held until the node's spawn goes out at the frame's end, and sent after it as a held call."
/// A server system that spawns a beacon (or makes a plain one `Networked`) and calls on it in
/// the same system reaches the client: `boom` runs there, and `hit` there and on the server,
/// once each; a later call on it too. Both encodings, lossy or not, on either tick source.
/// (The queue was applied before the frame's new entities were networked: `boom` was dropped
/// silently, and `hit` ran on the server only.)
#[test]
fn calls_on_an_entity_networked_in_their_frame_reach_the_clients() {
    let mut failures = Vec::new();
    for encoding in [SnapshotEncoding::Bits, SnapshotEncoding::Bytes] {
        for lossy in [false, true] {
            for own_clock in [false, true] {
                for spawn in [true, false] {
                    let mut config = MultiplayerConfig {
                        snapshot_encoding: encoding,
                        ..MfNetPlugin::default().config
                    };
                    if own_clock {
                        config.tick_source = TickSource::OwnClock;
                    }
                    let lossy = lossy.then(|| NetworkConditions::perfect().with_loss(0.2));
                    let (mut server, mut clients) = beacon_served(config, lossy, spawn, Update);
                    common::run(&mut server, &mut clients, 60);
                    let case = format!(
                        "{encoding:?} lossy={} own_clock={own_clock} spawn={spawn}",
                        lossy.is_some()
                    );
                    let first = beacons_differ(&mut server, &mut clients[0], (90, 5, 1));
                    failures.extend(first.map(|f| format!("{case}, its first frame: {f}")));
                    let world = server.world_mut();
                    let networked = world.query::<(Entity, &Beacon)>().single(world).unwrap().0;
                    server.world_mut().resource_mut::<BeaconPlan>().again = Some(networked);
                    common::run(&mut server, &mut clients, 30);
                    let later = beacons_differ(&mut server, &mut clients[0], (80, 10, 2));
                    failures.extend(later.map(|f| format!("{case}, a later frame: {f}")));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A server and a joined client of `config` over a link under `lossy`; the server's system in
/// `schedule` spawns a beacon (or, unless `spawn`, makes a plain one `Networked`) and calls on it
/// in the same frame.
fn beacon_served(
    config: MultiplayerConfig,
    lossy: Option<NetworkConditions>,
    spawn: bool,
    schedule: impl ScheduleLabel,
) -> (App, Vec<App>) {
    let net = LoopbackNetwork::new();
    let mut server = beacon_app(config);
    common::start_server(&mut server, &net, lossy, 1);
    let mut clients = vec![beacon_app(config)];
    common::start_client(&mut clients[0], &net, lossy, 2);
    common::run(&mut server, &mut clients, 20);
    let plain = (!spawn).then(|| {
        let beacon = Beacon {
            hp: 100,
            ..Beacon::default()
        };
        server.world_mut().spawn(beacon).id()
    });
    let plan = BeaconPlan {
        spawn,
        plain,
        again: None,
    };
    server
        .insert_resource(plan)
        .add_systems(schedule, call_beacon);
    (server, clients)
}

/// Calls queued after the frame's send (a system in `Last`), on a beacon spawned (or made
/// `Networked`) in the same system, reach the client too: they are applied as the next frame
/// starts, the beacon networked first. (They were applied before it was networked: `boom` was
/// dropped, and `hit` ran on the server only.)
#[test]
fn calls_queued_in_last_on_an_entity_networked_in_their_frame_reach_the_clients() {
    for spawn in [true, false] {
        let config = MfNetPlugin::default().config;
        let (mut server, mut clients) = beacon_served(config, None, spawn, Last);
        common::run(&mut server, &mut clients, 30);
        let differ = beacons_differ(&mut server, &mut clients[0], (90, 5, 1));
        assert!(differ.is_none(), "spawn={spawn}: {differ:?}");
    }
}

/// Offline (the app serves no one) a call on a beacon spawned in the frame of the call runs as
/// any offline call does: `hit` (`call_local`) runs here, `boom` nowhere; the beacon is
/// networked.
#[test]
fn offline_calls_on_an_entity_spawned_in_their_frame_run_here() {
    let mut app = beacon_app(MfNetPlugin::default().config);
    app.insert_resource(BeaconPlan {
        spawn: true,
        ..BeaconPlan::default()
    })
    .add_systems(Update, call_beacon);
    app.update();
    let world = app.world_mut();
    let (beacon, id) = world
        .query::<(&Beacon, Option<&NetworkId>)>()
        .single(world)
        .unwrap();
    assert_eq!((beacon.hp, beacon.booms, beacon.flashes), (90, 0, 1));
    assert!(id.is_some(), "networked");
}
