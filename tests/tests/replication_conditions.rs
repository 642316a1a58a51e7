#![allow(clippy::unwrap_used)]
//! Member options: `owner_only`, `skip_owner`, `initial_only` and `on_change = path`, end to
//! end. Who receives what (spawn, snapshots, late join), authority hand-overs, `on_change`
//! hooks on clients (never on the server), pinned bytes of filtered masks, idle snapshots when
//! only excluded members change, the registry's view, and the zero-allocation gate.

use std::time::Duration;

use mf_net::interpolation::InterpolationConfig;
use mf_net::prelude::*;
use mf_net::replication::{
    message_ids as protocol, Audience, MemberCondition, MultiplayerConfig, NetId,
    ReplicationRegistry, SnapshotEncoding,
};
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::simulated::NetworkConditions;
use mf_net::transport::TransportEvent;
use mf_net_tests::alloc_counter::assert_no_alloc;
use mf_net_tests::harness::{messages, Mp, World};

/// A player's hero: one member of each kind.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Hero {
    /// Bit 0: everyone; counted by a hook.
    #[replicated(on_change = Hero::hp_changed)]
    hp: i32,
    /// Bit 1: only the owner (private); counted by a hook.
    #[replicated(owner_only, on_change = Self::ammo_changed)]
    ammo: u16,
    /// Bit 2: everyone but the owner (the owner predicts it).
    #[replicated(skip_owner)]
    aim: i32,
    /// Bit 3: in the spawn only.
    #[replicated(initial_only)]
    class: u8,
    /// Local: how often `hp_changed` ran, and the `hp` it saw last.
    hp_hooks: u32,
    seen_hp: i32,
    /// Local: how often `ammo_changed` ran.
    ammo_hooks: u32,
}

impl Hero {
    fn hp_changed(&mut self) {
        self.hp_hooks += 1;
        self.seen_hp = self.hp;
    }

    fn ammo_changed(&mut self) {
        self.ammo_hooks += 1;
    }
}

/// A base with an interpolated hooked member and an owner-only one.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Mover {
    #[replicated(interpolate, on_change = Mover::moved)]
    pos: f32,
    #[replicated(owner_only)]
    secret: u32,
    moves: u32,
}

impl Mover {
    fn moved(&mut self) {
        self.moves += 1;
    }
}

/// A type whose conditions and hooks are partly in a flattened base.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Ship {
    #[replicated(flatten)]
    base: Mover,
    #[replicated(skip_owner, on_change = Ship::shield_changed)]
    shield: u8,
    shield_hooks: u32,
}

impl Ship {
    fn shield_changed(&mut self) {
        self.shield_hooks += 1;
    }
}

const HERO: SceneIndex = SceneIndex::new(0);
const SHIP: SceneIndex = SceneIndex::new(1);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("hero", |scene, root| scene.set_value(root, Hero::default()))
        .unwrap();
    scenes
        .register("ship", |scene, root| scene.set_value(root, Ship::default()))
        .unwrap();
    scenes
}

/// Spawns a hero owned by `owner` with the given values; returns its server handle and id.
fn spawn_hero(world: &mut World, owner: PeerId, hero: Hero) -> (NetRef<Hero>, NetId) {
    let root = world.root();
    let node = world.server.spawn(HERO, root, owner).unwrap();
    let handle = world.server.scene().net_ref::<Hero>(node).unwrap();
    *world.server.scene_mut().get_mut(handle).unwrap() = hero;
    (handle, world.server.net_id(node).unwrap())
}

fn hero(hp: i32, ammo: u16, aim: i32, class: u8) -> Hero {
    Hero {
        hp,
        ammo,
        aim,
        class,
        ..Hero::default()
    }
}

/// A client's copy of the node with id `id`.
fn copy<T: Replicated>(mp: &Mp, id: NetId) -> &T {
    let node = mp.node(id).expect("spawned on the client");
    let handle = mp.scene().net_ref::<T>(node).expect("of type T");
    mp.scene().get(handle).unwrap()
}

fn server_mut<T: Replicated>(world: &mut World, handle: NetRef<T>) -> &mut T {
    world.server.scene_mut().get_mut(handle).unwrap()
}

/// (hp, ammo, aim, class) of a hero.
fn values(h: &Hero) -> (i32, u16, i32, u8) {
    (h.hp, h.ammo, h.aim, h.class)
}

#[test]
fn owner_only_and_skip_owner_reach_the_right_clients() {
    let mut world = World::new(2, library);
    let owner = world.clients[0].local_peer_id();
    let (handle, id) = spawn_hero(&mut world, owner, hero(100, 30, 5, 3));
    world.step(3);
    // The owner gets ammo and not aim; the other client the reverse (its ammo keeps Default).
    assert_eq!(values(copy(&world.clients[0], id)), (100, 30, 0, 3));
    assert_eq!(values(copy(&world.clients[1], id)), (100, 0, 5, 3));

    let h = server_mut(&mut world, handle);
    (h.hp, h.ammo, h.aim) = (90, 29, 6);
    world.step(3);
    assert_eq!(values(copy(&world.clients[0], id)), (90, 29, 0, 3));
    assert_eq!(values(copy(&world.clients[1], id)), (90, 0, 6, 3));
}

#[test]
fn initial_only_arrives_with_the_spawn_and_late_join_and_never_later() {
    let mut world = World::new(1, library);
    let (handle, id) = spawn_hero(&mut world, PeerId::SERVER, hero(1, 0, 0, 3));
    world.step(3);
    assert_eq!(copy::<Hero>(&world.clients[0], id).class, 3);

    server_mut(&mut world, handle).class = 7;
    world.step(5);
    assert_eq!(
        copy::<Hero>(&world.clients[0], id).class,
        3,
        "never in snapshots"
    );
    let peer = world.clients[0].local_peer_id();
    assert_eq!(
        world.server.peer_stats(peer).unwrap().last_snapshot_bytes,
        9,
        "nothing to send for it"
    );

    // A late joiner's spawn carries the value at the time it joins.
    let late = world.connect_client();
    world.step(4);
    assert_eq!(copy::<Hero>(&world.clients[late], id).class, 7);
    assert_eq!(copy::<Hero>(&world.clients[0], id).class, 3);

    // Other members still flow to both.
    server_mut(&mut world, handle).hp = 2;
    world.step(3);
    assert_eq!(values(copy(&world.clients[0], id)), (2, 0, 0, 3));
    assert_eq!(values(copy(&world.clients[late], id)), (2, 0, 0, 7));
}

#[test]
fn idle_stays_idle_when_only_excluded_members_change() {
    let mut world = World::new(2, library);
    let (owner, other) = (
        world.clients[0].local_peer_id(),
        world.clients[1].local_peer_id(),
    );
    let (handle, _) = spawn_hero(&mut world, owner, hero(1, 1, 1, 1));
    world.step(3);
    let bytes = |world: &World, peer| world.server.peer_stats(peer).unwrap().last_snapshot_bytes;
    assert_eq!((bytes(&world, owner), bytes(&world, other)), (9, 9));
    // A bit-packed spawn is no baseline: the hero's first change, whatever it is, brings
    // each client its whole state once (one both receive here).
    server_mut(&mut world, handle).hp = 2;
    world.step(3);
    assert_eq!((bytes(&world, owner), bytes(&world, other)), (9, 9));

    // Only `aim` (skip_owner) changes, every frame for 40 frames: the owner's snapshots stay
    // idle every tick (nothing owed, no empty entries), the other client's carry it.
    for frame in 0..40 {
        server_mut(&mut world, handle).aim = frame + 10;
        world.frame();
        assert_eq!(bytes(&world, owner), 9, "frame {frame}");
        assert!(bytes(&world, other) > 9, "frame {frame}");
    }
    // Only `ammo` (owner_only): the reverse.
    for frame in 0..40 {
        server_mut(&mut world, handle).ammo = frame as u16 + 10;
        world.frame();
        assert!(bytes(&world, owner) > 9, "frame {frame}");
        assert_eq!(bytes(&world, other), 9, "frame {frame}");
    }
    // Only `class` (initial_only): idle for both.
    for frame in 0..40 {
        server_mut(&mut world, handle).class = frame as u8 + 10;
        world.frame();
        assert_eq!((bytes(&world, owner), bytes(&world, other)), (9, 9));
    }
    // Nothing changes: idle, and both clients kept acknowledging.
    world.step(3);
    assert_eq!((bytes(&world, owner), bytes(&world, other)), (9, 9));
    let tick = world.server.tick();
    for peer in [owner, other] {
        assert!(world.server.peer_stats(peer).unwrap().acknowledged_tick >= tick - 1);
    }
}

#[test]
fn on_change_runs_once_per_applied_change_on_clients_only() {
    let mut world = World::new(2, library);
    let owner = world.clients[0].local_peer_id();
    let (handle, id) = spawn_hero(&mut world, owner, hero(100, 30, 0, 0));
    world.step(3);
    // The spawn changed hp (0 → 100) on both, ammo (0 → 30) on the owner only.
    let hooks = |mp: &Mp| {
        let h = copy::<Hero>(mp, id);
        (h.hp_hooks, h.ammo_hooks, h.seen_hp)
    };
    assert_eq!(hooks(&world.clients[0]), (1, 1, 100));
    assert_eq!(hooks(&world.clients[1]), (1, 0, 100));

    for k in 1..=5 {
        let h = server_mut(&mut world, handle);
        h.hp = 100 - k;
        h.ammo = 30 - k as u16;
        world.step(2);
    }
    // Unchanged values sent again (unacknowledged resends) do not run hooks again; the hook
    // sees the applied value.
    world.step(10);
    assert_eq!(hooks(&world.clients[0]), (6, 6, 95));
    assert_eq!(hooks(&world.clients[1]), (6, 0, 95));
    // Setting the same value is no change.
    server_mut(&mut world, handle).hp = 95;
    world.step(3);
    assert_eq!(hooks(&world.clients[0]).0, 6);
    // Never on the server's own writes.
    let on_server = world.server.scene().get(handle).unwrap();
    assert_eq!((on_server.hp_hooks, on_server.ammo_hooks), (0, 0));
}

#[test]
fn on_change_is_exactly_once_per_change_on_a_lossy_network() {
    let conditions = NetworkConditions {
        loss: 0.25,
        duplication: 0.2,
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(20),
        reorder: 0.1,
    };
    let mut world = World::with(
        2,
        MultiplayerConfig::default(),
        Some(conditions),
        7,
        library,
    );
    let (handle, id) = spawn_hero(&mut world, PeerId::SERVER, hero(1, 0, 0, 0));
    world.step(20);
    for k in 2..=11 {
        server_mut(&mut world, handle).hp = k;
        world.step(15);
    }
    world.step(30);
    for client in &world.clients {
        let h = copy::<Hero>(client, id);
        assert_eq!((h.hp, h.hp_hooks), (11, 11), "spawn + 10 changes");
    }
}

#[test]
fn on_change_on_interpolated_and_flattened_members() {
    on_change_on_interpolated_and_flattened_members_with(MultiplayerConfig::default());
}

#[test]
fn on_change_on_interpolated_members_without_interpolation() {
    let config = MultiplayerConfig {
        interpolation: InterpolationConfig::disabled(),
        ..MultiplayerConfig::default()
    };
    on_change_on_interpolated_and_flattened_members_with(config);
}

fn on_change_on_interpolated_and_flattened_members_with(config: MultiplayerConfig) {
    let mut world = World::with(2, config, None, 0, library);
    let owner = world.clients[0].local_peer_id();
    let root = world.root();
    let node = world.server.spawn(SHIP, root, owner).unwrap();
    let handle = world.server.scene().net_ref::<Ship>(node).unwrap();
    let id = world.server.net_id(node).unwrap();
    world.step(3);
    // Spawned with default values: nothing changed.
    let seen = |mp: &Mp| {
        let s = copy::<Ship>(mp, id);
        (s.base.moves, s.shield_hooks, s.base.secret, s.shield)
    };
    assert_eq!(seen(&world.clients[0]), (0, 0, 0, 0));

    for k in 1..=4 {
        let s = server_mut(&mut world, handle);
        s.base.pos = k as f32;
        s.base.secret = k;
        s.shield = k as u8;
        world.step(2);
    }
    world.step(10);
    // Every new sample of `pos` ran the base's hook once; `shield` (skip_owner) reached and
    // hooked only the other client; `secret` (owner_only, in the base) only the owner.
    assert_eq!(seen(&world.clients[0]), (4, 0, 4, 0));
    assert_eq!(seen(&world.clients[1]), (4, 4, 0, 4));
    for client in &world.clients {
        assert_eq!(
            copy::<Ship>(client, id).base.pos,
            4.0,
            "blended to the newest"
        );
    }
    assert_eq!(world.server.scene().get(handle).unwrap().base.moves, 0);
}

#[test]
fn authority_hand_over_delivers_what_became_visible() {
    let mut world = World::new(3, library);
    let peers: Vec<PeerId> = world.clients.iter().map(|c| c.local_peer_id()).collect();
    let (handle, id) = spawn_hero(&mut world, peers[0], hero(100, 30, 5, 3));
    world.step(3);
    assert_eq!(values(copy(&world.clients[0], id)), (100, 30, 0, 3));
    assert_eq!(values(copy(&world.clients[1], id)), (100, 0, 5, 3));

    // To client 1: it gets ammo (set at spawn, never changed since); client 0 gets aim.
    let node = handle.node();
    world.server.set_authority(node, peers[1], false).unwrap();
    world.step(3);
    assert_eq!(
        world.clients[1].authority(world.clients[1].node(id).unwrap()),
        peers[1]
    );
    assert_eq!(copy::<Hero>(&world.clients[1], id).ammo, 30);
    assert_eq!(copy::<Hero>(&world.clients[0], id).aim, 5);
    // A former owner keeps the last private value it received; it is no longer updated.
    let h = server_mut(&mut world, handle);
    (h.ammo, h.aim) = (12, 8);
    world.step(3);
    assert_eq!(values(copy(&world.clients[0], id)), (100, 30, 8, 3));
    assert_eq!(values(copy(&world.clients[1], id)), (100, 12, 5, 3));
    assert_eq!(values(copy(&world.clients[2], id)), (100, 0, 8, 3));
    // The new owner's ammo hook ran for the value the hand-over delivered and the change.
    assert_eq!(copy::<Hero>(&world.clients[1], id).ammo_hooks, 2);

    // Back to the server: client 1 gets the aim it missed while it owned the node.
    world
        .server
        .set_authority(node, PeerId::SERVER, false)
        .unwrap();
    world.step(3);
    assert_eq!(values(copy(&world.clients[1], id)), (100, 12, 8, 3));
    // Idle again for everyone once acknowledged.
    world.step(3);
    for &peer in &peers {
        assert_eq!(
            world.server.peer_stats(peer).unwrap().last_snapshot_bytes,
            9
        );
    }
}

/// The link of the hand-over tests: 30 % loss, duplication, jitter and reordering.
fn hand_over_link() -> NetworkConditions {
    NetworkConditions {
        loss: 0.3,
        duplication: 0.1,
        latency: Duration::from_millis(20),
        jitter: Duration::from_millis(30),
        reorder: 0.1,
    }
}

#[test]
fn authority_hand_over_survives_a_lossy_network() {
    let conditions = hand_over_link();
    let mut world = World::with(
        2,
        MultiplayerConfig::default(),
        Some(conditions),
        11,
        library,
    );
    let peers: Vec<PeerId> = world.clients.iter().map(|c| c.local_peer_id()).collect();
    let (handle, id) = spawn_hero(&mut world, peers[0], hero(1, 40, 6, 0));
    world.step(20);
    for round in 0..6u16 {
        let to = peers[usize::from(round % 2 == 0)];
        world
            .server
            .set_authority(handle.node(), to, false)
            .unwrap();
        world.step(25);
        let owner = usize::from(round % 2 == 0);
        assert_eq!(
            copy::<Hero>(&world.clients[owner], id).ammo,
            40,
            "round {round}"
        );
        assert_eq!(
            copy::<Hero>(&world.clients[1 - owner], id).aim,
            6,
            "round {round}"
        );
    }
}

/// Bit-packed snapshots code each entry against what its audience acknowledged: members of
/// another owner condition become visible at each hand-over, with values changing every frame
/// under loss, and each client ends with exactly what it may see.
#[test]
fn bit_packed_authority_hand_over_under_loss_with_changing_values() {
    let conditions = hand_over_link();
    let config = MultiplayerConfig {
        snapshot_encoding: SnapshotEncoding::Bits,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(2, config, Some(conditions), 12, library);
    let peers: Vec<PeerId> = world.clients.iter().map(|c| c.local_peer_id()).collect();
    let (handle, id) = spawn_hero(&mut world, peers[0], hero(1, 40, 6, 0));
    world.step(20);
    for round in 0..6u16 {
        let to = peers[usize::from(round % 2 == 0)];
        world
            .server
            .set_authority(handle.node(), to, false)
            .unwrap();
        for frame in 0..25 {
            let h = server_mut(&mut world, handle);
            h.hp = i32::from(round) * 100 + frame;
            h.ammo = 40 + round;
            h.aim = frame - 12;
            world.frame();
        }
        world.step(25);
        let owner = usize::from(round % 2 == 0);
        let (mine, theirs) = (
            copy::<Hero>(&world.clients[owner], id),
            copy::<Hero>(&world.clients[1 - owner], id),
        );
        assert_eq!(
            (mine.hp, mine.ammo),
            (i32::from(round) * 100 + 24, 40 + round)
        );
        assert_eq!((theirs.hp, theirs.aim), (i32::from(round) * 100 + 24, 12));
    }
}

/// A hand-driven client that records every packet, for pinned bytes.
struct Raw {
    transport: LoopbackTransport,
    received: Vec<Vec<u8>>,
}

impl Raw {
    fn join(net: &LoopbackNetwork, server: &mut Mp) -> Self {
        let data = mf_net::replication::connect_data(&messages()).unwrap();
        let mut raw = Self {
            transport: net.connect("game", data),
            received: Vec::new(),
        };
        raw.frame(server);
        let mut hello = server.fingerprint().to_le_bytes().to_vec();
        hello.push(0);
        raw.send(protocol::HELLO, &hello, Channel::Reliable);
        raw.frame(server);
        raw.received.clear();
        raw
    }

    fn frame(&mut self, server: &mut Mp) {
        server.begin_frame(Duration::from_secs(1) / 30);
        server.end_frame();
        while let Some(event) = self.transport.poll_event() {
            if let TransportEvent::Received { data, .. } = event {
                self.received.push(data.to_vec());
            }
        }
    }

    fn send(&mut self, id: u16, payload: &[u8], channel: Channel) {
        let mut packet = vec![1];
        packet.extend_from_slice(&id.to_le_bytes());
        packet.extend_from_slice(&0u32.to_le_bytes());
        packet.extend_from_slice(payload);
        let _ = self.transport.send(PeerId::SERVER, channel, &packet);
        self.transport.flush();
    }

    /// The payloads (after the 7-byte header) of the packets with message id `id`.
    fn take(&mut self, id: u16) -> Vec<Vec<u8>> {
        let (hits, rest): (Vec<_>, Vec<_>) = self
            .received
            .drain(..)
            .partition(|p| p.len() >= 3 && u16::from_le_bytes([p[1], p[2]]) == id);
        self.received = rest;
        hits.into_iter().map(|p| p[7..].to_vec()).collect()
    }
}

#[test]
fn pinned_bytes_of_filtered_masks() {
    // The byte format's masks, pinned.
    let world = World::with_encoding(0, SnapshotEncoding::Bytes, library);
    let net = world.net;
    let mut server = world.server;
    let mut raw = Raw::join(&net, &mut server);
    let me = PeerId(2); // loopback numbers peers from 2
    assert_eq!(server.peers(), [me]);
    let root = server.scene().root();
    let mine = server.spawn_named(HERO, root, "mine", me).unwrap();
    let theirs = server
        .spawn_named(HERO, root, "theirs", PeerId::SERVER)
        .unwrap();
    for node in [mine, theirs] {
        let h = server.scene().net_ref::<Hero>(node).unwrap();
        *server.scene_mut().get_mut(h).unwrap() = hero(-1, 0x0102, 7, 9);
    }
    raw.frame(&mut server);
    // Both spawns in one message, each behind its length.
    let messages = raw.take(protocol::SPAWN);
    assert_eq!(messages.len(), 1);
    let mut r = NetReader::new(&messages[0]);
    let spawns: Vec<&[u8]> = std::iter::from_fn(|| {
        (r.remaining() > 0).then(|| r.read_len().and_then(|len| r.read_bytes(len)).unwrap())
    })
    .collect();
    assert_eq!(spawns.len(), 2);
    // The owned hero's full state leaves out `aim` (skip_owner): mask 0b1011.
    #[rustfmt::skip]
    assert!(spawns[0].ends_with(&[
        0x0b,                         // mask: hp, ammo, class
        0xff, 0xff, 0xff, 0xff,       // hp = -1
        0x02, 0x01,                   // ammo = 0x0102
        9,                            // class
    ]), "{:?}", spawns[0]);
    // The server-owned one leaves out `ammo` (owner_only): mask 0b1101.
    #[rustfmt::skip]
    assert!(spawns[1].ends_with(&[
        0x0d,                         // mask: hp, aim, class
        0xff, 0xff, 0xff, 0xff,       // hp = -1
        7, 0, 0, 0,                   // aim = 7
        9,                            // class
    ]), "{:?}", spawns[1]);
    assert_eq!(raw.take(protocol::SNAPSHOT), [vec![0, 0]], "idle");

    // Every member of both changes.
    for node in [mine, theirs] {
        let h = server.scene().net_ref::<Hero>(node).unwrap();
        *server.scene_mut().get_mut(h).unwrap() = hero(2, 3, 4, 5);
    }
    raw.frame(&mut server);
    #[rustfmt::skip]
    assert_eq!(raw.take(protocol::SNAPSHOT), [vec![
        0x00,                         // flags
        0x01, 0x07,                   // net id 1 (mine), 7 bytes
        0x03, 2, 0, 0, 0, 3, 0,       // mask 0b0011: hp = 2, ammo = 3
        0x02, 0x09,                   // net id 2 (theirs), 9 bytes
        0x05, 2, 0, 0, 0, 4, 0, 0, 0, // mask 0b0101: hp = 2, aim = 4
        0x00,                         // end
    ]]);

    // Acknowledged; then only members this client does not receive change: idle (9 bytes).
    let tick = u8::try_from(server.tick()).unwrap();
    assert!(tick < 0x80);
    raw.send(protocol::ACK, &[tick], Channel::Unreliable);
    raw.frame(&mut server);
    raw.received.clear();
    let h = server.scene().net_ref::<Hero>(mine).unwrap();
    server.scene_mut().get_mut(h).unwrap().aim = 40;
    let h = server.scene().net_ref::<Hero>(theirs).unwrap();
    server.scene_mut().get_mut(h).unwrap().ammo = 40;
    for _ in 0..3 {
        raw.frame(&mut server);
        assert_eq!(raw.take(protocol::SNAPSHOT), [vec![0, 0]]);
    }
}

#[test]
fn the_registry_and_constants_show_the_options() {
    assert_eq!(Hero::OWNER_EXCLUDED, 0b0100);
    assert_eq!(Hero::NON_OWNER_EXCLUDED, 0b0010);
    assert_eq!(Hero::SNAPSHOT_EXCLUDED, 0b1000);
    assert_eq!((Hero::OWNER_CONDITIONS, Hero::ON_CHANGE), (true, true));
    assert_eq!(Ship::OWNER_EXCLUDED, 0b1);
    assert_eq!(
        Ship::NON_OWNER_EXCLUDED,
        0,
        "the base's own constants hold its bits"
    );
    assert_eq!(Mover::NON_OWNER_EXCLUDED, 0b10);
    assert_eq!((Ship::OWNER_CONDITIONS, Ship::ON_CHANGE), (true, true));
    assert_eq!(Audience::Owner.excluded::<Hero>(), 0b0100);
    assert_eq!(Audience::NonOwner.excluded::<Hero>(), 0b0010);
    assert_eq!(Audience::All.excluded::<Hero>(), 0);

    let members = Hero::MEMBERS;
    assert_eq!(members[0].on_change, Some("Hero::hp_changed"));
    assert_eq!(members[1].condition, MemberCondition::OwnerOnly);
    assert_eq!(members[1].on_change, Some("Self::ammo_changed"));
    assert_eq!(members[2].condition, MemberCondition::SkipOwner);
    assert!(members[3].initial_only && members[3].condition == MemberCondition::Always);

    // The options are in the schema hash: recomputing it without them gives another one.
    let hash = |flags: [u64; 4]| {
        use mf_net::schema::{hash_name, hash_str, hash_u64};
        let mut h = hash_name(Hero::NAME);
        for (m, f) in members.iter().zip(flags) {
            h = hash_u64(hash_u64(hash_str(h, m.name), m.schema_hash), f);
        }
        h
    };
    assert_eq!(
        Hero::SCHEMA_HASH,
        hash([1 << 4, 1 << 1 | 1 << 4, 1 << 2, 1 << 3])
    );
    assert_ne!(Hero::SCHEMA_HASH, hash([0; 4]));

    let dump = ReplicationRegistry::global().dump();
    assert!(
        dump.contains("ammo: u16 (schema ")
            && dump.contains(", owner_only, on_change = Self::ammo_changed\n"),
        "{dump}"
    );
    assert!(dump.contains(", skip_owner\n"), "{dump}");
    assert!(dump.contains(", initial_only\n"), "{dump}");
    assert!(
        dump.contains(", interpolate, on_change = Mover::moved\n"),
        "{dump}"
    );
}

#[test]
fn trait_level_writes_filter_the_mask() {
    let server = hero(1, 2, 3, 4);
    let mut state = server.new_state(0);
    let mut changed = server.clone();
    (changed.hp, changed.ammo, changed.aim, changed.class) = (5, 6, 7, 8);
    assert!(changed.capture(&mut state, 1));
    let bytes = |f: &dyn Fn(&mut NetWriter)| {
        let mut w = NetWriter::new();
        f(&mut w);
        w.into_vec()
    };
    // Snapshots: never `class`; the owner never `aim`, others never `ammo`.
    assert_eq!(
        bytes(&|w| Hero::write_since_for(&state, Some(0), Audience::Owner, w)),
        [0b0011, 5, 0, 0, 0, 6, 0]
    );
    assert_eq!(
        bytes(&|w| Hero::write_since_for(&state, Some(0), Audience::NonOwner, w)),
        [0b0101, 5, 0, 0, 0, 7, 0, 0, 0]
    );
    assert_eq!(
        bytes(&|w| Hero::write_since(&state, 0, w)),
        [0b0111, 5, 0, 0, 0, 6, 0, 7, 0, 0, 0]
    );
    assert_eq!(
        bytes(&|w| Hero::write_since_for(&state, Some(1), Audience::Owner, w)),
        [0]
    );
    // `None`: everything the audience receives in snapshots, whatever its ticks.
    assert_eq!(
        bytes(&|w| Hero::write_since_for(&state, None, Audience::NonOwner, w)),
        [0b0101, 5, 0, 0, 0, 7, 0, 0, 0]
    );
    // Spawns: `class` included.
    assert_eq!(
        bytes(&|w| Hero::write_full_for(&state, Audience::Owner, w)),
        [0b1011, 5, 0, 0, 0, 6, 0, 8]
    );
    assert_eq!(bytes(&|w| Hero::write_full(&state, w))[0], 0b1111);
    // Only `class` changes at tick 2: nothing for any snapshot audience.
    changed.class = 9;
    assert!(changed.capture(&mut state, 2));
    assert_eq!(Hero::last_changed(&state), 2);
    assert_eq!(Hero::last_changed_for(&state, Audience::Owner), 1);
    assert_eq!(Hero::last_changed_for(&state, Audience::All), 1);
    // Only `aim`: the owner has nothing new.
    changed.aim = 10;
    assert!(changed.capture(&mut state, 3));
    assert_eq!(Hero::last_changed_for(&state, Audience::Owner), 1);
    assert_eq!(Hero::last_changed_for(&state, Audience::NonOwner), 3);

    // read_tracked records changed hooked members; run_on_change runs them once.
    let mut client = Hero::default();
    let full = bytes(&|w| Hero::write_full_for(&state, Audience::Owner, w));
    let mut masks = [0u64; 1];
    client
        .read_tracked(&mut NetReader::new(&full), &mut masks)
        .unwrap();
    assert_eq!(masks, [0b0011]);
    assert_eq!(client.hp_hooks, 0, "hooks wait for run_on_change");
    client.run_on_change(&masks);
    assert_eq!(
        (client.hp_hooks, client.ammo_hooks, client.seen_hp),
        (1, 1, 5)
    );
    // The same values again: no change recorded. Plain `read` records and runs nothing.
    let mut masks = [0u64; 1];
    client
        .read_tracked(&mut NetReader::new(&full), &mut masks)
        .unwrap();
    assert_eq!(masks, [0]);
    client.read(&mut NetReader::new(&full)).unwrap();
    assert_eq!(client.hp_hooks, 1);
}

#[test]
fn conditions_and_hooks_allocate_nothing_in_steady_state() {
    let mut world = World::new(2, library);
    let owner = world.clients[0].local_peer_id();
    let mut heroes = Vec::new();
    for i in 0..50 {
        let who = if i % 2 == 0 { owner } else { PeerId::SERVER };
        heroes.push(spawn_hero(&mut world, who, hero(1, 1, 1, 1)));
    }
    let root = world.root();
    let ships: Vec<NetRef<Ship>> = (0..50)
        .map(|_| {
            let node = world.server.spawn(SHIP, root, owner).unwrap();
            world.server.scene().net_ref::<Ship>(node).unwrap()
        })
        .collect();
    let churn = |world: &mut World, frame: i32| {
        for (k, (h, _)) in heroes.iter().enumerate() {
            let h = server_mut(world, *h);
            h.hp = frame + k as i32;
            h.ammo = frame as u16;
            h.aim = -frame;
            h.class = frame as u8;
        }
        for s in &ships {
            let s = server_mut(world, *s);
            s.base.pos = frame as f32;
            s.base.secret = frame as u32;
            s.shield = frame as u8;
        }
    };
    for frame in 0..300 {
        churn(&mut world, frame);
        world.frame();
    }
    let (_, id) = heroes[1];
    let before = copy::<Hero>(&world.clients[1], id).hp_hooks;
    assert_no_alloc("240 frames with conditions and hooks", || {
        for frame in 300..540 {
            churn(&mut world, frame);
            world.frame();
        }
    });
    world.step(3);
    let after = copy::<Hero>(&world.clients[1], id);
    assert_eq!(after.hp_hooks, before + 240);
    assert_eq!(after.hp, 539 + 1);
}

/// Armor, flattened into [`Geared`].
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Gear {
    #[replicated]
    armor: i32,
}

/// A flattened base, a plain member, an owner-only one and an initial-only one.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Geared {
    #[replicated(flatten)]
    gear: Gear,
    #[replicated]
    hp: i32,
    #[replicated(owner_only)]
    ammo: u16,
    #[replicated(initial_only)]
    class: u8,
}

#[test]
fn changed_before_names_the_newest_change_before_a_tick_that_an_audience_receives() {
    let mut geared = Geared::default();
    let mut state = geared.new_state(1);
    assert_eq!(Geared::changed_before(&state, 1, Audience::NonOwner), None);
    assert_eq!(
        Geared::changed_before(&state, 2, Audience::NonOwner),
        Some(1)
    );
    // The base's armor at 4, the owner's ammo at 6, the spawn-only class at 8, hp at 9.
    for (tick, change) in [
        (4, (|g: &mut Geared| g.gear.armor = 3) as fn(&mut Geared)),
        (6, |g| g.ammo = 2),
        (8, |g| g.class = 1),
        (9, |g| g.hp = 5),
    ] {
        change(&mut geared);
        assert!(geared.capture(&mut state, tick));
    }
    assert_eq!(Geared::last_changed_for(&state, Audience::NonOwner), 9);
    assert_eq!(
        Geared::changed_before(&state, 9, Audience::NonOwner),
        Some(4)
    );
    assert_eq!(Geared::changed_before(&state, 9, Audience::Owner), Some(6));
    assert_eq!(Geared::changed_before(&state, 4, Audience::NonOwner), None);
    // Every `since` from that change up to before the last writes the same bytes.
    let since = |since| {
        let mut w = NetWriter::new();
        Geared::write_since_for(&state, Some(since), Audience::NonOwner, &mut w);
        w.into_vec()
    };
    for s in 4..9 {
        assert_eq!(since(s), since(4), "since {s}");
    }
    assert_ne!(since(3), since(4));
}
