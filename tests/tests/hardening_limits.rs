#![allow(clippy::unwrap_used)]
//! Limits hold on both ends: a value the server would send but no client could read is refused
//! where it enters (a spawn's name, an RPC argument, a game message, spawner data) or, for a
//! replicated field game code writes directly, kept off the wire with an event, while every
//! other node and every client carries on. (Game messages: `bus.rs`.)

use mf_net::prelude::*;
use mf_net::replication::interest::InterestQuery;
use mf_net::replication::{
    MultiplayerError, MultiplayerEvent, NetId, SnapshotEncoding, MAX_NAME_BYTES,
};
use mf_net::wire::MAX_STRING_BYTES;
use mf_net_tests::harness::{drain, Mp, World};

/// A sign with a text.
#[derive(Replicated, Debug, Default)]
struct Sign {
    #[replicated]
    text: String,
    #[replicated]
    n: i32,
}

#[rpcs]
impl Sign {
    /// Anyone writes on the sign.
    #[rpc(any_peer)]
    fn write(&mut self, text: String) {
        self.text = text;
    }
}

const SIGN: SceneIndex = SceneIndex::new(0);
/// A sign whose builder writes a text too long to send.
const LONG_SIGN: SceneIndex = SceneIndex::new(1);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("sign", |scene, root| {
            scene.set_value(root, Sign::default()).map(drop)
        })
        .unwrap();
    scenes
        .register("long sign", |scene, root| {
            let text = too_long();
            scene.set_value(root, Sign { text, n: 1 }).map(drop)
        })
        .unwrap();
    scenes
}

fn too_long() -> String {
    "x".repeat(MAX_STRING_BYTES + 1)
}

fn sign(mp: &mut Mp, node: NodeId) -> &mut Sign {
    let handle = mp.scene().net_ref::<Sign>(node).unwrap();
    mp.scene_mut().get_mut(handle).unwrap()
}

/// A client's copy of the server's node `net_id`.
fn copy(mp: &mut Mp, net_id: u32) -> &mut Sign {
    let node = mp.node(NetId::new(net_id).unwrap()).unwrap();
    sign(mp, node)
}

fn over_limit_events(mp: &mut Mp) -> Vec<NodeId> {
    drain(mp)
        .into_iter()
        .filter_map(|e| match e {
            MultiplayerEvent::StateOverLimit { node } => Some(node),
            _ => None,
        })
        .collect()
}

/// Two signs on a server with `clients` clients, converged.
/// Both snapshot encodings: a state over the limit stays off the wire in each.
const ENCODINGS: [SnapshotEncoding; 2] = [SnapshotEncoding::Bytes, SnapshotEncoding::Bits];

fn two_signs(clients: usize, encoding: SnapshotEncoding) -> (World, NodeId, NodeId) {
    let mut world = World::with_encoding(clients, encoding, library);
    let root = world.root();
    let a = world.server.spawn(SIGN, root, PeerId::SERVER).unwrap();
    let b = world.server.spawn(SIGN, root, PeerId::SERVER).unwrap();
    world.step(3);
    world.assert_converged();
    drain(&mut world.server);
    (world, a, b)
}

#[test]
fn an_over_long_string_member_stays_off_the_wire_and_everything_else_carries_on() {
    for (clients, encoding) in [1, 3].into_iter().flat_map(|c| ENCODINGS.map(|e| (c, e))) {
        let (mut world, a, b) = two_signs(clients, encoding);
        sign(&mut world.server, a).text = too_long();
        sign(&mut world.server, a).n = 5;
        sign(&mut world.server, b).n = 7;
        // Longer than the peer timeout: no client stalls or times out.
        let frames = 30 * (world.server.config().peer_timeout.as_secs() as usize + 2);
        world.step(frames);
        assert_eq!(
            over_limit_events(&mut world.server),
            [a],
            "{clients} clients, {encoding:?}"
        );
        assert_eq!(world.server.stats().states_over_limit, 1);
        assert_eq!(world.server.peers().len(), clients);
        for client in &mut world.clients {
            assert_eq!(copy(client, 2).n, 7, "the other node is updated");
            assert_eq!(
                copy(client, 1).text,
                "",
                "clients keep the last state they read"
            );
            assert_eq!(copy(client, 1).n, 0);
        }
        // Back under the limit: the node's state goes out whole, and converges.
        sign(&mut world.server, a).text = "fits".to_owned();
        world.step(3);
        world.assert_converged();
        for client in &mut world.clients {
            let a = copy(client, 1);
            assert_eq!((a.text.as_str(), a.n), ("fits", 5));
        }
        // Over again: reported again.
        sign(&mut world.server, a).text = too_long();
        world.step(3);
        assert_eq!(over_limit_events(&mut world.server), [a]);
        assert_eq!(world.server.stats().states_over_limit, 2);
    }
}

#[test]
fn a_string_exactly_at_the_limit_is_sent() {
    for encoding in ENCODINGS {
        let (mut world, a, _) = two_signs(2, encoding);
        sign(&mut world.server, a).text = "y".repeat(MAX_STRING_BYTES);
        world.step(3);
        world.assert_converged();
        assert!(over_limit_events(&mut world.server).is_empty());
    }
}

#[test]
fn a_spawn_whose_name_or_parent_path_clients_cannot_read_is_refused() {
    let mut world = World::new(1, library);
    let root = world.root();
    let long = "n".repeat(MAX_NAME_BYTES + 1);
    assert_eq!(
        world.server.spawn_named(SIGN, root, &long, PeerId::SERVER),
        Err(MultiplayerError::NameTooLong {
            len: MAX_NAME_BYTES + 1,
            limit: MAX_NAME_BYTES
        })
    );
    // A parent that is not networked travels by path: a path over the limit is refused too.
    let mut parent = root;
    for _ in 0..5 {
        parent = world
            .server
            .scene_mut()
            .add(parent, &"p".repeat(1000))
            .unwrap();
    }
    let refused = world.server.spawn(SIGN, parent, PeerId::SERVER);
    assert!(
        matches!(refused, Err(MultiplayerError::NameTooLong { .. })),
        "{refused:?}"
    );
    assert!(world.server.net_id(parent).is_none());
    // At the limit it is spawned, and reaches the client.
    let at_limit = "m".repeat(MAX_NAME_BYTES);
    world
        .server
        .spawn_named(SIGN, root, &at_limit, PeerId::SERVER)
        .unwrap();
    world.step(3);
    world.assert_converged();
    let client = world.clients[0].scene();
    assert!(client.child(client.root(), &at_limit).is_some());
}

#[test]
fn an_rpc_argument_over_the_limit_is_an_error_for_the_sender() {
    let (mut world, a, _) = two_signs(2, SnapshotEncoding::default());
    let handle = world.server.scene().net_ref::<Sign>(a).unwrap();
    assert_eq!(
        world.server.rpc(handle).write(too_long()),
        Err(RpcSendError::OverLimit)
    );
    let mine = world.clients[0].node(NetId::new(1).unwrap()).unwrap();
    let mine = world.clients[0].scene().net_ref::<Sign>(mine).unwrap();
    assert_eq!(
        world.clients[0].rpc(mine).write(too_long()),
        Err(RpcSendError::OverLimit)
    );
    // The next call is sent as usual.
    world.clients[0].rpc(mine).write("hi".to_owned()).unwrap();
    world.step(3);
    assert_eq!(sign(&mut world.server, a).text, "hi");
}

#[test]
fn a_spawn_whose_state_clients_cannot_read_is_refused_or_withheld() {
    for encoding in ENCODINGS {
        a_spawn_whose_state_clients_cannot_read_is_refused_or_withheld_as(encoding);
    }
}

fn a_spawn_whose_state_clients_cannot_read_is_refused_or_withheld_as(encoding: SnapshotEncoding) {
    let (mut world, _, _) = two_signs(2, encoding);
    let root = world.root();
    let children = world.server.scene().children(root).len();
    // Built over the limit: refused, and nothing is left of it.
    let refused = world.server.spawn(LONG_SIGN, root, PeerId::SERVER);
    assert!(
        matches!(refused, Err(MultiplayerError::StateOverLimit(_))),
        "{refused:?}"
    );
    assert_eq!(world.server.scene().children(root).len(), children);
    // Set over the limit after the spawn, in the same frame: the spawn is withheld from the
    // clients (raised, counted), and they stay connected and get the next spawn.
    let late = world.server.spawn(SIGN, root, PeerId::SERVER).unwrap();
    sign(&mut world.server, late).text = too_long();
    world.step(2);
    assert_eq!(over_limit_events(&mut world.server), [late, late]);
    let next = world.server.spawn(SIGN, root, PeerId::SERVER).unwrap();
    sign(&mut world.server, next).n = 9;
    world.step(30 * (world.server.config().peer_timeout.as_secs() as usize + 2));
    assert_eq!(world.server.peers().len(), 2);
    let next_id = world.server.net_id(next).unwrap().get();
    let late_id = world.server.net_id(late).unwrap();
    for client in &mut world.clients {
        assert_eq!(copy(client, next_id).n, 9);
        assert!(client.node(late_id).is_none());
    }
}

#[test]
fn a_late_joiner_is_not_sent_a_state_it_cannot_read() {
    for encoding in ENCODINGS {
        a_late_joiner_is_not_sent_a_state_it_cannot_read_as(encoding);
    }
}

fn a_late_joiner_is_not_sent_a_state_it_cannot_read_as(encoding: SnapshotEncoding) {
    let (mut world, a, b) = two_signs(1, encoding);
    sign(&mut world.server, a).text = too_long();
    world.step(2);
    assert_eq!(over_limit_events(&mut world.server), [a]);
    let late = world.connect_client();
    world.step(30 * (world.server.config().peer_timeout.as_secs() as usize + 2));
    assert_eq!(world.server.peers().len(), 2);
    assert_eq!(over_limit_events(&mut world.server), [a]);
    let a_id = world.server.net_id(a).unwrap();
    let b_id = world.server.net_id(b).unwrap();
    assert!(world.clients[late].node(a_id).is_none());
    assert!(world.clients[late].node(b_id).is_some());
}

/// A spawn withheld from connected clients (a member over the limit) reaches them with the
/// next snapshot once the member fits: `policy` sets an interest policy (everything relevant,
/// evaluated rarely, so that its evaluation does not deliver it), in either encoding.
fn a_withheld_spawn_is_delivered_once_it_fits(policy: bool, encoding: SnapshotEncoding) {
    let (mut world, _, _) = two_signs(2, encoding);
    if policy {
        world
            .server
            .set_interest_policy(|_: &InterestQuery<'_>| true, 1000)
            .unwrap();
        world.step(2);
    }
    let root = world.root();
    let late = world.server.spawn(SIGN, root, PeerId::SERVER).unwrap();
    sign(&mut world.server, late).text = too_long();
    world.step(5);
    assert_eq!(over_limit_events(&mut world.server), [late, late]);
    let late_id = world.server.net_id(late).unwrap();
    for client in &world.clients {
        assert!(client.node(late_id).is_none());
    }
    sign(&mut world.server, late).text = "fits".to_owned();
    sign(&mut world.server, late).n = 3;
    // One frame: the server's next snapshot, and each client's frame receiving it.
    world.step(1);
    for (i, client) in world.clients.iter_mut().enumerate() {
        let copy = client.node(late_id);
        assert!(
            copy.is_some(),
            "client {i} (policy: {policy}) never got the spawn"
        );
        assert_eq!(sign(client, copy.unwrap()).text, "fits");
        assert_eq!(sign(client, copy.unwrap()).n, 3);
    }
    assert!(world.server.is_relevant(late, world.server.peers()[0]));
    // It then replicates as any node, without another event.
    sign(&mut world.server, late).n = 4;
    world.step(3);
    world.assert_converged();
    assert_eq!(over_limit_events(&mut world.server), []);
}

#[test]
fn a_withheld_spawn_is_delivered_once_it_fits_without_a_policy() {
    for encoding in ENCODINGS {
        a_withheld_spawn_is_delivered_once_it_fits(false, encoding);
    }
}

#[test]
fn a_withheld_spawn_is_delivered_once_it_fits_with_a_policy() {
    for encoding in ENCODINGS {
        a_withheld_spawn_is_delivered_once_it_fits(true, encoding);
    }
}
