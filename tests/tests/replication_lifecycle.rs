#![allow(clippy::unwrap_used)]
//! Node and connection lifecycle: a networked node detached and attached again in the same
//! frame stays networked, one still detached at the end of the frame is despawned (and kept as a
//! plain node on the server), `Scene::reparent` alone is not replicated and
//! `Multiplayer::reparent` is; control messages the transport
//! refuses disconnect the client with `ReliableSendFailed` on both ends; timeouts keep their
//! reason when leaving sends control messages.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use mf_net::prelude::*;
use mf_net::replication::{MultiplayerError, MultiplayerEvent};
use mf_net::scene::SceneError;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::SendError;
mod replication_common;

use mf_net_tests::harness::{differences, drain, messages, networked, Dyn, Mp, World};
use mf_net_tests::send_hook::SendHook;
use replication_common::{library, Body, Gun, BODY, TANK};

fn body(mp: &mut Mp, node: NodeId) -> &mut Body {
    let handle = mp.scene().net_ref::<Body>(node).unwrap();
    mp.scene_mut().get_mut(handle).unwrap()
}

#[test]
fn detached_and_attached_again_in_the_same_frame_stays_networked() {
    let mut world = World::new(2, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.assert_converged();
    let id = world.server.net_id(tank).unwrap();

    // The root: detached, changed while detached, put back.
    world.server.scene_mut().detach(tank).unwrap();
    assert!(!world.server.scene().is_attached(tank));
    body(&mut world.server, tank).x = 5;
    world.server.scene_mut().attach(tank, root).unwrap();
    // A descendant: detached and put back under its parent.
    let gun = world.server.scene().child(tank, "gun").unwrap();
    let gun_id = world.server.net_id(gun).unwrap();
    world.server.scene_mut().detach(gun).unwrap();
    let h = world.server.scene().net_ref::<Gun>(gun).unwrap();
    world.server.scene_mut().get_mut(h).unwrap().ammo = 77;
    world.server.scene_mut().attach(gun, tank).unwrap();
    world.step(3);

    assert_eq!(world.server.stats().despawns, 0, "nothing was despawned");
    assert_eq!(world.server.net_id(tank), Some(id), "same node, same id");
    assert_eq!(world.server.net_id(gun), Some(gun_id));
    world.assert_converged();
    for client in &mut world.clients {
        assert!(!drain(client)
            .iter()
            .any(|e| matches!(e, MultiplayerEvent::NodeDespawned { .. })));
        let copy = client.node(id).unwrap();
        assert_eq!(body(client, copy).x, 5);
    }
}

#[test]
fn still_detached_at_the_end_of_the_frame_is_despawned_and_kept_plain() {
    let mut world = World::new(2, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let other = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    body(&mut world.server, tank).x = 9;
    world.step(2);
    world.assert_converged();
    for client in &mut world.clients {
        drain(client);
    }

    // A descendant alone: its own despawn.
    let gun = world.server.scene().child(other, "gun").unwrap();
    world.server.scene_mut().detach(gun).unwrap();
    // A root: one despawn, its descendants go with it.
    world.server.scene_mut().detach(tank).unwrap();
    world.step(3);
    assert_eq!(world.server.stats().despawns, 2);
    world.assert_converged();
    for client in &mut world.clients {
        let despawned: Vec<u32> = drain(client)
            .iter()
            .filter_map(|e| match e {
                MultiplayerEvent::NodeDespawned { net_id } => Some(net_id.get()),
                _ => None,
            })
            .collect();
        assert_eq!(despawned, [1, 5], "the tank root, then the other's gun");
        assert_eq!(networked(client).len(), 2, "the other tank without its gun");
    }
    // On the server the detached nodes stay, plain, with their values.
    let scene = world.server.scene();
    assert!(scene.is_detached(tank) && scene.is_detached(gun));
    assert_eq!(scene.detached_roots().count(), 2);
    assert_eq!(world.server.net_id(tank), None);
    assert_eq!(world.server.net_id(gun), None);
    assert_eq!(body(&mut world.server, tank).x, 9);

    // Attached again later: a plain node that is not replicated.
    world.server.scene_mut().attach(tank, root).unwrap();
    body(&mut world.server, tank).x = 10;
    world.step(3);
    assert_eq!(world.server.net_id(tank), None);
    for client in &world.clients {
        assert!(differences(&world.server, client).is_none());
        assert!(client.scene().find("/root/tank#1").is_none());
    }
    // Removing a detached node destroys it.
    assert!(world.server.scene_mut().remove(gun));
    assert!(!world.server.scene().contains(gun));
}

#[test]
fn spawned_and_detached_in_the_same_frame_sends_nothing() {
    let mut world = World::new(1, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.server.scene_mut().detach(tank).unwrap();
    world.step(3);
    assert_eq!(world.server.stats().spawns, 0);
    assert_eq!(world.clients[0].stats().spawns, 0);
    assert_eq!(world.server.net_id(tank), None);
    assert!(world.server.scene().contains(tank));
    // Spawning or binding under / at a node that is not in the tree is refused.
    assert_eq!(
        world.server.spawn(BODY, tank, PeerId::SERVER),
        Err(MultiplayerError::Scene(SceneError::NoSuchNode(tank)))
    );
    let gun = world.server.scene().child(tank, "gun").unwrap();
    assert_eq!(
        world.server.bind(gun),
        Err(MultiplayerError::Scene(SceneError::NoSuchNode(gun)))
    );
}

/// `Scene::reparent` alone moves the node on the server only; `Multiplayer::reparent` moves it
/// on clients too (see `an_instance_moved_with_reparent_moves_on_clients`).
#[test]
fn reparenting_a_networked_node_is_not_replicated() {
    let mut world = World::new(1, library);
    let root = world.root();
    let level = world.server.scene_mut().add(root, "level").unwrap();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    let id = world.server.net_id(tank).unwrap();
    world.server.scene_mut().reparent(tank, level).unwrap();
    body(&mut world.server, tank).x = 3;
    world.step(3);
    // Still networked, and its state still replicates...
    assert_eq!(world.server.net_id(tank), Some(id));
    let client = &mut world.clients[0];
    let copy = client.node(id).unwrap();
    assert_eq!(body(client, copy).x, 3);
    // ...but the client keeps its copy where it was spawned (a documented limit).
    assert_eq!(
        world.server.scene().path(tank).as_deref(),
        Some("/root/level/tank#1")
    );
    assert_eq!(
        world.clients[0].scene().path(copy).as_deref(),
        Some("/root/tank#1")
    );
}

/// The path of the copy of the server's `node` on `client`.
fn copy_path(world: &World, client: usize, node: NodeId) -> Option<String> {
    let id = world.server.net_id(node)?;
    let copy = world.clients[client].node(id)?;
    world.clients[client].scene().path(copy)
}

/// `Multiplayer::reparent` moves an instance on the server and on every client, the same
/// copy: under a networked node, under a plain node of another instance (found by its path),
/// back under the root. From then on it goes with its new parent: despawned with it, and a
/// client that joins later gets it there.
#[test]
fn an_instance_moved_with_reparent_moves_on_clients() {
    let mut world = World::new(1, library);
    let root = world.root();
    let moved = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let carrier = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    let id = world.server.net_id(moved).unwrap();
    let copy = world.clients[0].node(id).unwrap();
    let paths = |world: &World| (world.server.scene().path(moved), copy_path(world, 0, moved));
    world.server.reparent(moved, carrier).unwrap();
    body(&mut world.server, moved).x = 4;
    world.step(3);
    let carried = world.server.scene().path(carrier).unwrap();
    let (server, client) = paths(&world);
    assert_eq!(server, Some(format!("{carried}/tank#1")));
    assert_eq!(client, server);
    assert_eq!(world.clients[0].node(id), Some(copy), "the same copy");
    world.assert_converged();
    // Under a plain node of the carrier: the client finds it by its path.
    let turret = world.server.scene().child(carrier, "turret").unwrap();
    world.server.reparent(moved, turret).unwrap();
    world.step(3);
    let (server, client) = paths(&world);
    assert_eq!(server, Some(format!("{carried}/turret/tank#1")));
    assert_eq!(client, server);
    // A client joining now gets it there.
    let late = world.connect_client();
    world.step(6);
    assert_eq!(copy_path(&world, late, moved), server);
    world.assert_converged();
    // Despawned with its new parent, on every peer.
    world.server.despawn(carrier);
    world.step(3);
    assert!(!world.server.scene().contains(moved));
    for client in &world.clients {
        assert!(client.node(id).is_none());
    }
    world.assert_converged();
}

/// Moved back under the root, an instance outlives the parent it was under, despawned in the
/// same frame.
#[test]
fn an_instance_moved_out_outlives_its_old_parent() {
    let mut world = World::new(1, library);
    let root = world.root();
    let moved = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let carrier = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.server.reparent(moved, carrier).unwrap();
    world.step(3);
    world.server.reparent(moved, root).unwrap();
    world.server.despawn(carrier);
    world.step(3);
    assert_eq!(copy_path(&world, 0, moved).as_deref(), Some("/root/tank#1"));
    world.assert_converged();
}

/// `Multiplayer::reparent` refuses what it cannot move, and moves nothing then: a node inside
/// an instance, a plain node, a parent inside the instance, and any call on a client.
#[test]
fn reparent_refuses_what_it_cannot_move() {
    let mut world = World::new(1, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let plain = world.server.scene_mut().add(root, "plain").unwrap();
    world.step(3);
    let gun = world.server.scene().child(tank, "gun").unwrap();
    let server = &mut world.server;
    assert_eq!(
        server.reparent(gun, root),
        Err(MultiplayerError::NotGroupRoot(gun))
    );
    assert_eq!(
        server.reparent(plain, tank),
        Err(MultiplayerError::NotNetworked(plain))
    );
    assert_eq!(
        server.reparent(tank, gun),
        Err(MultiplayerError::Scene(SceneError::InsideItself {
            node: tank,
            parent: gun
        }))
    );
    assert_eq!(server.scene().path(tank).as_deref(), Some("/root/tank#1"));
    let id = world.server.net_id(tank).unwrap();
    let copy = world.clients[0].node(id).unwrap();
    assert_eq!(
        world.clients[0].reparent(copy, root),
        Err(MultiplayerError::NotServer)
    );
}

#[test]
fn a_late_joiner_gets_a_node_detached_while_it_joined() {
    let mut world = World::new(0, library);
    let root = world.root();
    let tank = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(2);
    let late = world.connect_client();
    // The game detaches the tank before the server receives (and handles the hello) and puts
    // it back before the end of the frame, every frame while the client joins.
    for _ in 0..6 {
        world.server.scene_mut().detach(tank).unwrap();
        world.server.begin_frame(world.dt);
        world.server.scene_mut().attach(tank, root).unwrap();
        world.server.end_frame();
        let client = &mut world.clients[late];
        client.begin_frame(world.dt);
        client.end_frame();
    }
    assert_eq!(world.server.peers().len(), 1);
    world.step(3);
    world.assert_converged();
    assert_eq!(networked(&world.clients[late]).len(), 3);
}

/// Which reliable sends a [`refusing`] transport refuses.
#[derive(Default)]
struct Policy {
    all: bool,
    peers: Vec<PeerId>,
}

/// A loopback endpoint whose reliable sends fail as `policy` says.
fn refusing(inner: LoopbackTransport, policy: Rc<RefCell<Policy>>) -> Dyn {
    Box::new(SendHook::new(inner, move |peer, channel, _| {
        let policy = policy.borrow();
        if channel == Channel::Reliable && (policy.all || policy.peers.contains(&peer)) {
            return Err(SendError::Refused);
        }
        Ok(())
    }))
}

/// A server behind a [`refusing`] transport and plain loopback clients.
struct Rig {
    net: LoopbackNetwork,
    server: Mp,
    clients: Vec<Mp>,
    policy: Rc<RefCell<Policy>>,
}

impl Rig {
    fn new(clients: usize) -> Self {
        let net = LoopbackNetwork::new();
        let policy = Rc::new(RefCell::new(Policy::default()));
        let transport = refusing(net.listen("game", 8).unwrap(), Rc::clone(&policy));
        let mut server = Mp::new(library(), MultiplayerConfig::default());
        server.start_server(transport, messages()).unwrap();
        let mut rig = Self {
            net,
            server,
            clients: Vec::new(),
            policy,
        };
        for _ in 0..clients {
            rig.connect();
        }
        rig.step(4);
        rig
    }

    fn connect(&mut self) -> usize {
        let mut client = Mp::new(library(), MultiplayerConfig::default());
        let net = &self.net;
        client
            .start_client(
                |data| -> Dyn { Box::new(net.connect("game", data)) },
                messages(),
            )
            .unwrap();
        self.clients.push(client);
        self.clients.len() - 1
    }

    fn step(&mut self, frames: usize) {
        let dt = Duration::from_secs(1) / 30;
        for _ in 0..frames {
            self.server.begin_frame(dt);
            self.server.end_frame();
            for client in &mut self.clients {
                client.begin_frame(dt);
                client.end_frame();
            }
        }
    }

    /// Refuses reliable sends to client `i`.
    fn refuse(&mut self, i: usize) -> PeerId {
        let peer = self.clients[i].local_peer_id();
        self.policy.borrow_mut().peers.push(peer);
        peer
    }

    /// Asserts that client `i` (peer `peer`) was dropped for a refused control message, on
    /// both ends, and that client `kept` is fine and agrees with the server.
    fn assert_dropped(&mut self, i: usize, peer: PeerId, kept: usize) {
        let reason = DisconnectReason::ReliableSendFailed;
        assert!(
            drain(&mut self.server).contains(&MultiplayerEvent::PeerLeft { peer, reason }),
            "the server dropped the client"
        );
        assert!(!self.server.peers().contains(&peer));
        assert!(self.server.stats().control_send_failures >= 1);
        let client = &mut self.clients[i];
        assert!(
            drain(client).contains(&MultiplayerEvent::Disconnected { reason }),
            "the client learned why"
        );
        assert!(!client.is_running());
        assert!(networked(client).is_empty());
        assert_eq!(client.scene().len(), 1, "every spawned node freed");
        let good = self.clients[kept].local_peer_id();
        assert!(self.server.peers().contains(&good));
        assert!(differences(&self.server, &self.clients[kept]).is_none());
    }
}

#[test]
fn a_refused_spawn_disconnects_the_client() {
    let mut rig = Rig::new(2);
    let root = rig.server.scene().root();
    rig.server.spawn(BODY, root, PeerId::SERVER).unwrap();
    rig.step(2);
    drain(&mut rig.server);
    let peer = rig.refuse(0);
    rig.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    rig.step(3);
    rig.assert_dropped(0, peer, 1);
    assert_eq!(networked(&rig.clients[1]).len(), 4);
}

#[test]
fn a_refused_despawn_disconnects_the_client() {
    let mut rig = Rig::new(2);
    let root = rig.server.scene().root();
    let tank = rig.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    rig.step(3);
    drain(&mut rig.server);
    let peer = rig.refuse(1);
    rig.server.despawn(tank);
    rig.step(3);
    rig.assert_dropped(1, peer, 0);
}

#[test]
fn a_refused_authority_change_disconnects_the_client() {
    let mut rig = Rig::new(2);
    let root = rig.server.scene().root();
    let tank = rig.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    rig.step(3);
    drain(&mut rig.server);
    let owner = rig.clients[1].local_peer_id();
    let peer = rig.refuse(0);
    rig.server.set_authority(tank, owner, true).unwrap();
    rig.step(3);
    rig.assert_dropped(0, peer, 1);
    let c = &rig.clients[1];
    assert_eq!(c.authority(c.node(NetId::new(1).unwrap()).unwrap()), owner);
}

#[test]
fn a_refused_welcome_disconnects_the_late_joiner() {
    let mut rig = Rig::new(1);
    let root = rig.server.scene().root();
    rig.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    rig.step(3);
    drain(&mut rig.server);
    rig.policy.borrow_mut().all = true;
    let late = rig.connect();
    rig.step(4);
    rig.policy.borrow_mut().all = false;
    let events = drain(&mut rig.server);
    assert!(!events
        .iter()
        .any(|e| matches!(e, MultiplayerEvent::PeerJoined(_))));
    assert_eq!(rig.server.peers().len(), 1);
    let client = &mut rig.clients[late];
    assert!(drain(client).contains(&MultiplayerEvent::Disconnected {
        reason: DisconnectReason::ReliableSendFailed
    }));
    assert!(!client.is_running());
    assert!(differences(&rig.server, &rig.clients[0]).is_none());
}

#[test]
fn a_refused_hello_disconnects_the_client_itself() {
    let world = World::new(0, library);
    let policy = Rc::new(RefCell::new(Policy {
        all: true,
        peers: Vec::new(),
    }));
    let mut client = Mp::new(library(), MultiplayerConfig::default());
    client
        .start_client(
            |data| refusing(world.net.connect("game", data), policy),
            messages(),
        )
        .unwrap();
    let mut world = world;
    let mut events = Vec::new();
    for _ in 0..4 {
        world.frame();
        client.begin_frame(world.dt);
        client.end_frame();
        events.extend(drain(&mut client));
    }
    assert!(events.contains(&MultiplayerEvent::Disconnected {
        reason: DisconnectReason::ReliableSendFailed
    }));
    assert_eq!(client.stats().control_send_failures, 1);
    assert!(!client.is_running());
    assert!(world.server.peers().is_empty());
}

#[test]
fn clients_timing_out_together_all_leave_with_timeout() {
    // Ownership handed back to the server sends authority changes while the expired clients
    // are being dropped; that must not change the other expired client's reason.
    let config = MultiplayerConfig {
        despawn_owned_on_disconnect: false,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(2, config, None, 0, library);
    let owner = world.clients[1].local_peer_id();
    let other = world.clients[0].local_peer_id();
    let root = world.root();
    let tank = world.server.spawn(TANK, root, owner).unwrap();
    world.step(3);
    drain(&mut world.server);
    // Both stop talking at once.
    let silent: Vec<Mp> = world.clients.drain(..).collect();
    world.step(30 * 15 + 10); // the peer timeout (15 s at 30 Hz), and a little more
    let events = drain(&mut world.server);
    for peer in [owner, other] {
        assert!(
            events.contains(&MultiplayerEvent::PeerLeft {
                peer,
                reason: DisconnectReason::Timeout
            }),
            "{peer}: {events:?}"
        );
    }
    assert!(world.server.peers().is_empty());
    assert_eq!(world.server.authority(tank), PeerId::SERVER);
    drop(silent);
}

#[test]
fn the_tick_after_a_despawn_moves_a_value_every_change_still_goes_out_at_once() {
    // The despawn moves the scene column's last `Body` into the freed index: the capture of
    // the next tick must find it there (its old index is gone) and send its change with the
    // others, over a loopback that delivers each snapshot in the frame it is sent.
    let mut world = World::new(1, library);
    let root = world.root();
    let mut nodes: Vec<NodeId> = (0..4)
        .map(|_| world.server.spawn(BODY, root, PeerId::SERVER).unwrap())
        .collect();
    world.step(4);
    for frame in 0..12 {
        for &node in &nodes {
            let handle = world.server.scene().net_ref::<Body>(node).unwrap();
            world.server.scene_mut().get_mut(handle).unwrap().x += 1;
        }
        if frame == 5 {
            world.server.despawn(nodes.remove(0));
        }
        world.step(1);
        world.assert_converged();
    }
}

/// An instance spawned under a plain node of another instance goes with that instance: a
/// client that has it despawns it (and forgets its ids) with the instance, and one that lacks
/// the instance is not sent it. (Clients kept its ids after the instance's despawn; a client
/// lacking the instance was sent a spawn it could not place.)
#[test]
fn an_instance_under_a_plain_node_of_another_goes_with_that_one() {
    let mut world = World::new(2, library);
    let root = world.root();
    let carrier = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    let peer = world.clients[1].local_peer_id();
    world.server.set_relevant(carrier, peer, false).unwrap();
    world.step(3);
    let turret = world.server.scene().child(carrier, "turret").unwrap();
    let carried = world.server.spawn(TANK, turret, PeerId::SERVER).unwrap();
    world.step(3);
    let id = world.server.net_id(carried).unwrap();
    assert!(world.clients[0].node(id).is_some());
    assert!(world.clients[1].node(id).is_none());
    assert_eq!(world.clients[1].stats().spawn_failures, 0);
    world.server.despawn(carrier);
    world.step(3);
    for client in &world.clients {
        assert!(client.node(id).is_none());
    }
    world.assert_converged();
}

/// An instance under a plain node of an instance that moves is spawned for clients joining later
/// at that node's new path. (Its spawn named the old path, which no longer exists: the spawn
/// failed.)
#[test]
fn an_instance_under_a_moved_instance_reaches_a_late_joiner_at_its_new_path() {
    let mut world = World::new(1, library);
    let root = world.root();
    let moved = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let turret = world.server.scene().child(moved, "turret").unwrap();
    let inner = world.server.spawn(BODY, turret, PeerId::SERVER).unwrap();
    let carrier = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.server.reparent(moved, carrier).unwrap();
    world.step(3);
    let late = world.connect_client();
    world.step(6);
    let path = world.server.scene().path(inner);
    assert_eq!(copy_path(&world, late, inner), path);
    assert_eq!(world.clients[late].stats().spawn_failures, 0);
    world.assert_converged();
}

/// A move refused because it would give a group under a plain node of the moved instance a
/// path clients cannot read is undone: the instance stays where it was, in its place among its
/// siblings, and clients see no move. (Moved back, it went last among its parent's children.)
#[test]
fn a_refused_move_leaves_the_instance_in_its_place() {
    let mut world = World::new(1, library);
    let root = world.root();
    let moved = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    let turret = world.server.scene().child(moved, "turret").unwrap();
    world.server.spawn(BODY, turret, PeerId::SERVER).unwrap();
    world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    // A plain node whose path leaves no room for the moved instance's own.
    let mut far = root;
    for _ in 0..4 {
        far = world
            .server
            .scene_mut()
            .add(far, &"p".repeat(1020))
            .unwrap();
    }
    world.step(3);
    let before = world.server.scene().children(root).to_vec();
    let refused = world.server.reparent(moved, far);
    assert!(
        matches!(refused, Err(MultiplayerError::NameTooLong { .. })),
        "{refused:?}"
    );
    assert_eq!(world.server.scene().children(root), before);
    world.step(3);
    world.assert_converged();
}

/// A client joining in the frame an instance is moved under one spawned in that frame (whose
/// spawn has not gone out when the client is sent the world) gets the new one, then the moved
/// one under it. (It was sent the moved one first, under a parent it did not have: the spawn
/// failed.)
#[test]
fn a_client_joining_as_an_instance_moves_under_a_new_one_gets_both() {
    let mut world = World::new(0, library);
    let root = world.root();
    let moved = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
    world.step(2);
    let late = world.connect_client();
    // Each frame until the client joins: a new carrier, and the instance moved under it before
    // the frame (in which the server may take the client's hello and send it the world).
    for _ in 0..20 {
        if !world.server.peers().is_empty() {
            break;
        }
        let carrier = world.server.spawn(TANK, root, PeerId::SERVER).unwrap();
        let turret = world.server.scene().child(carrier, "turret").unwrap();
        world.server.reparent(moved, turret).unwrap();
        world.frame();
    }
    assert_eq!(world.server.peers().len(), 1, "the client joined");
    world.step(6);
    assert_eq!(world.clients[late].stats().spawn_failures, 0);
    assert_eq!(
        copy_path(&world, late, moved),
        world.server.scene().path(moved)
    );
    world.assert_converged();
}
