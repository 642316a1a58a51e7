#![allow(clippy::unwrap_used)]
//! RPCs through the `Multiplayer` runtime over loopback: every mode in every direction, one
//! peer, `call_local`, the unreliable channel, authority checks and their change, deferred
//! commands, RPCs on nodes spawned in the same frame, nodes that are not networked, offline
//! calls, and the handshake refusing mismatched RPC signatures by name.

mod rpc_common;

use std::sync::Arc;

use mf_net::replication::message_ids::RPC;
use mf_net::replication::ReplicationRegistry;
use mf_net::rpc::{RpcMode, RpcRegistry};
use mf_net_tests::harness::{drain, messages, Mp, World};
use rpc_common::{copy, library, pawn, recording_client, spawn_pawn, Pawn, PawnRpcs, PAWN};

use mf_net::prelude::*;

fn peer(world: &World, client: usize) -> PeerId {
    world.clients[client].local_peer_id()
}

#[test]
fn server_calls_reach_every_client_and_run_on_the_server_with_call_local() {
    let mut world = World::new(2, library);
    let handle = spawn_pawn(&mut world, PeerId::SERVER);
    world.server.rpc(handle).hit(3).unwrap();
    // call_local: ran on the caller at once.
    assert_eq!(pawn(&world.server, handle).effects, 3);
    assert_eq!(pawn(&world.server, handle).local_runs, 1);
    world.step(2);
    for c in 0..2 {
        let h = copy(&world, &world.clients[c], handle);
        let value = pawn(&world.clients[c], h);
        assert_eq!((value.effects, value.local_runs), (3, 0), "client {c}");
        assert_eq!(world.clients[c].stats().rpcs_received, 1);
    }
    assert_eq!(world.server.stats().rpcs_sent, 2);
    let p0 = peer(&world, 0);
    assert_eq!(world.server.peer_stats(p0).unwrap().rpcs_sent, 1);
}

#[test]
fn server_calls_to_one_peer_reach_only_that_peer() {
    let mut world = World::new(2, library);
    let handle = spawn_pawn(&mut world, PeerId::SERVER);
    let target = peer(&world, 1);
    world.server.rpc(handle).hit_to(target, 5).unwrap();
    // Sent to one other peer: not run here.
    assert_eq!(pawn(&world.server, handle).effects, 0);
    world.step(2);
    let effects: Vec<i32> = (0..2)
        .map(|c| pawn(&world.clients[c], copy(&world, &world.clients[c], handle)).effects)
        .collect();
    assert_eq!(effects, [0, 5]);
    // To the server itself: nothing is sent; the call_local body runs.
    world.server.rpc(handle).hit_to(PeerId::SERVER, 1).unwrap();
    assert_eq!(pawn(&world.server, handle).effects, 1);
    // To nobody we know.
    assert_eq!(
        world.server.rpc(handle).hit_to(PeerId(999), 1),
        Err(RpcSendError::UnknownPeer(PeerId(999)))
    );
}

#[test]
fn the_owning_client_calls_authority_rpcs_and_others_cannot() {
    let mut world = World::new(2, library);
    let owner = peer(&world, 0);
    let handle = spawn_pawn(&mut world, owner);
    let mine = copy(&world, &world.clients[0], handle);
    world.clients[0].rpc(mine).move_by(4).unwrap();
    world.step(4);
    assert_eq!(pawn(&world.server, handle).x, 4);
    assert_eq!(pawn(&world.server, handle).senders, [owner]);
    // The server's state replicates back to everyone.
    world.assert_converged();
    // A client that does not own it is refused before anything is sent.
    let theirs = copy(&world, &world.clients[1], handle);
    let refused = world.clients[1].rpc(theirs).move_by(1);
    let caller = world.clients[1].local_peer_id();
    assert_eq!(
        refused,
        Err(RpcSendError::NotAllowed {
            rpc: "move_by",
            mode: RpcMode::Authority,
            node: theirs.node(),
            authority: owner,
            caller,
        })
    );
    // The message names the node, the caller and the authority.
    let text = refused.unwrap_err().to_string();
    assert_eq!(
        text,
        format!(
            "{caller} may not call the `authority` RPC `move_by` on node {}: only the node's \
             authority, {owner}, may",
            theirs.node()
        )
    );
    // A client never calls a server RPC.
    assert!(matches!(
        world.clients[0].rpc(mine).hit(1),
        Err(RpcSendError::NotAllowed { .. })
    ));
    // Clients only talk to the server: no relaying to another client.
    let other = peer(&world, 1);
    assert_eq!(
        world.clients[0].rpc(mine).wave_to(other),
        Err(RpcSendError::UnknownPeer(other))
    );
}

#[test]
fn any_peer_rpcs_reach_the_server_from_every_client_with_the_transport_sender() {
    let mut world = World::new(2, library);
    let handle = spawn_pawn(&mut world, PeerId::SERVER);
    for c in 0..2 {
        let h = copy(&world, &world.clients[c], handle);
        world.clients[c].rpc(h).wave().unwrap();
    }
    world.step(2);
    let mut senders = pawn(&world.server, handle).senders.clone();
    senders.sort();
    let mut expected = vec![peer(&world, 0), peer(&world, 1)];
    expected.sort();
    assert_eq!(senders, expected);
    assert_eq!(world.server.stats().rpcs_received, 2);
    assert_eq!(world.clients[0].stats().rpcs_sent, 1);
}

#[test]
fn call_local_runs_on_a_calling_client_too() {
    let mut world = World::new(1, library);
    let handle = spawn_pawn(&mut world, PeerId::SERVER);
    let h = copy(&world, &world.clients[0], handle);
    world.clients[0].rpc(h).cheer().unwrap();
    assert_eq!(pawn(&world.clients[0], h).cheers, (1, 1));
    world.step(2);
    assert_eq!(pawn(&world.server, handle).cheers, (1, 0));
}

#[test]
fn unreliable_rpcs_travel_on_the_unreliable_channel() {
    let mut world = World::new(0, library);
    let (c, log) = recording_client(&mut world);
    world.step(4);
    let handle = spawn_pawn(&mut world, PeerId::SERVER);
    let h = copy(&world, &world.clients[c], handle);
    log.borrow_mut().clear();
    world.clients[c].rpc(h).ping(2).unwrap();
    world.clients[c].rpc(h).wave().unwrap();
    world.step(2);
    let rpcs: Vec<Channel> = log
        .borrow()
        .iter()
        .filter(|(_, id)| *id == RPC)
        .map(|(channel, _)| *channel)
        .collect();
    assert_eq!(rpcs, [Channel::Unreliable, Channel::Reliable]);
    assert_eq!(pawn(&world.server, handle).pings, 2);
}

#[test]
fn authority_moves_with_set_authority() {
    let mut world = World::new(2, library);
    let (first, second) = (peer(&world, 0), peer(&world, 1));
    let handle = spawn_pawn(&mut world, first);
    let old = copy(&world, &world.clients[0], handle);
    let new = copy(&world, &world.clients[1], handle);
    // Before the change: the second client is refused.
    assert!(world.clients[1].rpc(new).move_by(1).is_err());

    world
        .server
        .set_authority(handle.node(), second, true)
        .unwrap();
    // The first client has not heard yet: its call leaves, and the server rejects it.
    world.clients[0].rpc(old).move_by(10).unwrap();
    drain(&mut world.server);
    world.step(3);
    assert_eq!(pawn(&world.server, handle).x, 0);
    assert_eq!(world.server.stats().rpcs_rejected, 1);
    assert_eq!(world.server.peer_stats(first).unwrap().rpcs_rejected, 1);
    let events = drain(&mut world.server);
    assert!(events.contains(&MultiplayerEvent::RpcRejected {
        peer: first,
        node: handle.node(),
        rpc: "move_by"
    }));

    // Now the new owner's call is accepted, and the old owner is refused.
    world.clients[1].rpc(new).move_by(2).unwrap();
    assert!(world.clients[0].rpc(old).move_by(1).is_err());
    world.step(3);
    assert_eq!(pawn(&world.server, handle).x, 2);
    assert_eq!(pawn(&world.server, handle).senders, [second]);
    world.assert_converged();
}

#[test]
fn bodies_queue_authority_changes_and_rpcs_that_apply_after_the_dispatch() {
    let mut world = World::new(2, library);
    let claimant = peer(&world, 1);
    let handle = spawn_pawn(&mut world, PeerId::SERVER);
    let h = copy(&world, &world.clients[1], handle);
    world.clients[1].rpc(h).claim().unwrap();
    world.step(3);
    assert_eq!(world.server.authority(handle.node()), claimant);
    assert!(world.clients[1].is_network_authority(h.node()));
    // Now it may move it.
    world.clients[1].rpc(h).move_by(7).unwrap();
    // A queued call_local RPC: sent to every client, and run on the server.
    let h0 = copy(&world, &world.clients[0], handle);
    world.clients[0].rpc(h0).echo(6).unwrap();
    world.step(3);
    assert_eq!(pawn(&world.server, handle).x, 7);
    assert_eq!(pawn(&world.server, handle).effects, 6);
    for c in 0..2 {
        let copy = copy(&world, &world.clients[c], handle);
        assert_eq!(pawn(&world.clients[c], copy).effects, 6);
    }
    world.assert_converged();
}

#[test]
fn a_call_on_a_node_spawned_this_frame_arrives_after_its_spawn() {
    let mut world = World::new(1, library);
    let root = world.root();
    let node = world.server.spawn(PAWN, root, PeerId::SERVER).unwrap();
    let handle = world.server.scene().net_ref::<Pawn>(node).unwrap();
    world.server.rpc(handle).hit(4).unwrap();
    world.step(3);
    let h = copy(&world, &world.clients[0], handle);
    assert_eq!(pawn(&world.clients[0], h).effects, 4);
    assert_eq!(world.clients[0].stats().rpcs_dropped, 0);
}

#[test]
fn on_the_server_and_offline_an_authority_rpc_on_its_own_node_runs_at_once_and_others_only_call_local(
) {
    for running in [false, true] {
        let mut world = World::new(1, library);
        let mut offline = Mp::new(library(), MultiplayerConfig::default());
        let mp = if running {
            &mut world.server
        } else {
            &mut offline
        };
        let root = mp.scene().root();
        let handle = mp
            .scene_mut()
            .insert(root, "local", Pawn::default())
            .unwrap();
        mp.rpc(handle).hit(2).unwrap();
        mp.rpc(handle).wave().unwrap();
        // The server owns the node: the call's destination is itself, and it runs here, as a
        // call from the server, nothing encoded.
        mp.rpc(handle).move_by(1).unwrap();
        // Named to the server, the destination is the same.
        mp.rpc(handle).move_by_to(PeerId::SERVER, 1).unwrap();
        let value = mp.scene().get(handle).unwrap();
        assert_eq!((value.effects, value.x), (2, 2));
        assert_eq!(value.senders, [PeerId::SERVER, PeerId::SERVER]);
        assert_eq!(value.local_runs, 1, "only `hit` ran as a call_local run");
        assert_eq!(mp.stats().rpcs_sent, 0);
    }
}

#[test]
fn mismatched_rpc_signatures_are_refused_with_the_difference_named() {
    let mut world = World::new(0, library);
    // A client whose build has no RPCs on `Pawn` (as an older build would).
    let types = ReplicationRegistry::from_inventory().unwrap();
    let without = RpcRegistry::from_parts(&types, [], []).unwrap();
    let mut client = Mp::new(library(), MultiplayerConfig::default());
    client.set_rpc_registry(Arc::new(without)).unwrap();
    let net = &world.net;
    client
        .start_client(
            |data| -> mf_net_tests::harness::Dyn { Box::new(net.connect("game", data)) },
            messages(),
        )
        .unwrap();
    assert_ne!(client.fingerprint(), world.server.fingerprint());
    world.clients.push(client);
    world.step(4);
    let refusal = world.clients[0].refusal().unwrap().to_owned();
    assert!(
        refusal.contains("type `") && refusal.contains("Pawn") && refusal.contains("RPC"),
        "{refusal}"
    );
    assert!(refusal.contains("move_by"), "{refusal}");
    assert!(!world.clients[0].is_running());
    // The RPC tables are listed with wire ids, modes and options.
    let dump = world.server.rpc_registry().unwrap().dump();
    assert!(dump.contains("move_by(dx: i32) authority"), "{dump}");
    assert!(dump.contains("spam() any_peer, rate_limit = 5"), "{dump}");
}
