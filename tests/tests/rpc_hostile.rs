#![allow(clippy::unwrap_used)]
//! A hostile client against the server: a bare loopback transport that says hello and then sends
//! crafted RPC packets (spoofed sender ids in payloads, unknown node and RPC ids, truncated and
//! oversize arguments, an `authority` RPC for another player's node, 10 000 calls of a
//! rate-limited RPC in one second, bodies that panic or fail). The server keeps running, its
//! counters show each case, an honest client's state is untouched, and the offender is kicked
//! where configured.

mod rpc_common;

use mf_net::prelude::*;
use mf_net::replication::message_ids::INPUT;
use mf_net::rpc::RpcCallError;
use mf_net_tests::harness::{drain, World};
use rpc_common::{copy, library, pawn, spawn_pawn, wire, PawnRpcs, RawClient, PAWN};

fn varint(n: u32) -> Vec<u8> {
    let mut w = NetWriter::new();
    w.write_var_u32(n);
    w.into_vec()
}

#[test]
fn crafted_rpcs_are_counted_and_refused_without_harming_anyone() {
    let mut world = World::new(1, library);
    let honest = world.clients[0].local_peer_id();
    let mut raw = RawClient::join(&mut world);
    let hostile = raw.peer.unwrap();
    let theirs = spawn_pawn(&mut world, honest);
    let shared = spawn_pawn(&mut world, PeerId::SERVER);
    raw.step(&mut world, 2);
    let theirs_id = world.server.net_id(theirs.node()).unwrap().get();
    let shared_id = world.server.net_id(shared.node()).unwrap().get();
    drain(&mut world.server);
    let before = *world.server.stats();

    // A spoofed sender id in the payload: the context reports the transport's sender.
    raw.rpc(shared_id, wire::SAY, &honest.0.to_le_bytes());
    // An authority RPC for the honest player's pawn (with the honest id in the payload too).
    raw.rpc(theirs_id, wire::MOVE_BY, &100i32.to_le_bytes());
    // Unknown node ids, and a net id that is not even a valid varint.
    raw.rpc(9_999, wire::WAVE, &[]);
    raw.rpc(0, wire::WAVE, &[]);
    raw.send(
        mf_net::replication::message_ids::RPC,
        Channel::Reliable,
        &[0xff; 6],
    );
    // Unknown RPC ids (one beyond the table, one beyond any u16).
    raw.rpc(shared_id, 200, &[]);
    raw.rpc(shared_id, 70_000, &[]);
    // Truncated arguments: 2 bytes of a u32; a byte array claiming 1000 bytes with 3 present.
    raw.rpc(shared_id, wire::PING, &[1, 0]);
    let mut claimed = varint(1000);
    claimed.extend([1, 2, 3]);
    raw.rpc(shared_id, wire::BLOB, &claimed);
    // Oversize arguments: bytes after the last argument.
    let mut extra = 1u32.to_le_bytes().to_vec();
    extra.extend([0; 100]);
    raw.rpc(shared_id, wire::PING, &extra);
    // Bodies that panic and that fail.
    raw.rpc(shared_id, wire::EXPLODE, &[]);
    raw.rpc(shared_id, wire::REFUSE, &[]);
    // A server-only RPC from a client.
    raw.rpc(shared_id, wire::HIT, &5i32.to_le_bytes());
    raw.step(&mut world, 2);

    let stats = *world.server.stats();
    assert_eq!(stats.rpcs_received - before.rpcs_received, 13);
    // Unknown nodes (3, one of them a malformed header), unknown RPCs (2), malformed (3).
    assert_eq!(stats.rpcs_dropped - before.rpcs_dropped, 8);
    // move_by on another's pawn, hit from a client.
    assert_eq!(stats.rpcs_rejected - before.rpcs_rejected, 2);
    assert_eq!(stats.rpcs_failed - before.rpcs_failed, 2);
    let per_peer = world.server.peer_stats(hostile).unwrap();
    assert_eq!(
        (
            per_peer.rpcs_received,
            per_peer.rpcs_dropped,
            per_peer.rpcs_rejected,
            per_peer.rpcs_failed
        ),
        (13, 8, 2, 2)
    );
    // Only `say` ran, and it saw the real sender.
    let value = pawn(&world.server, shared);
    assert_eq!(value.senders, [hostile]);
    assert_eq!(value.claimed, [honest.0]);
    assert_eq!((value.pings, value.blob, value.effects), (0, 0, 0));
    assert_eq!(pawn(&world.server, theirs).x, 0);

    let events = drain(&mut world.server);
    assert!(events.contains(&MultiplayerEvent::RpcRejected {
        peer: hostile,
        node: theirs.node(),
        rpc: "move_by"
    }));
    assert!(events.contains(&MultiplayerEvent::RpcFailed {
        peer: hostile,
        node: shared.node(),
        rpc: "explode",
        error: RpcCallError::Panicked("boom".to_owned())
    }));
    assert!(events.contains(&MultiplayerEvent::RpcFailed {
        peer: hostile,
        node: shared.node(),
        rpc: "refuse",
        error: RpcCallError::Failed("refused".to_owned())
    }));
    // Not kicked by default.
    assert!(raw.disconnected.is_none());
    assert!(world.server.peers().contains(&hostile));

    // The honest client still plays: its move goes through and everyone agrees.
    let mine = copy(&world, &world.clients[0], theirs);
    world.clients[0].rpc(mine).move_by(3).unwrap();
    raw.step(&mut world, 4);
    assert_eq!(pawn(&world.server, theirs).x, 3);
    world.assert_converged();
}

#[test]
fn ten_thousand_calls_of_a_rate_limited_rpc_in_one_second_run_five_times() {
    // Only the per-RPC limit: the flood check (which would kick this sender) is off.
    let config = MultiplayerConfig {
        rpc_flood_threshold: 0,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(1, config, None, 0, library);
    let mut raw = RawClient::join(&mut world);
    let hostile = raw.peer.unwrap();
    let target = spawn_pawn(&mut world, PeerId::SERVER);
    let id = world.server.net_id(target.node()).unwrap().get();
    raw.step(&mut world, 1);
    // 25 frames of 1/30 s: 400 calls each, all within one second of the server's time.
    for _ in 0..25 {
        for _ in 0..400 {
            raw.rpc(id, wire::SPAM, &[]);
        }
        raw.step(&mut world, 1);
    }
    assert_eq!(pawn(&world.server, target).spam, 5);
    let stats = world.server.stats();
    assert_eq!(stats.rpcs_rate_limited, 9_995);
    assert_eq!(
        world.server.peer_stats(hostile).unwrap().rpcs_rate_limited,
        9_995
    );
    // The honest client is not limited by the other connection's calls.
    let h = copy(&world, &world.clients[0], target);
    world.clients[0].rpc(h).spam().unwrap();
    raw.step(&mut world, 2);
    assert_eq!(pawn(&world.server, target).spam, 6);
    // A second later the window has passed: the hostile client may call again.
    raw.step(&mut world, 30);
    raw.rpc(id, wire::SPAM, &[]);
    raw.step(&mut world, 2);
    assert_eq!(pawn(&world.server, target).spam, 7);
    world.assert_converged();
}

#[test]
fn a_failing_body_kicks_its_sender_when_configured() {
    let config = MultiplayerConfig {
        kick_on_rpc_failure: true,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(1, config, None, 0, library);
    let mut raw = RawClient::join(&mut world);
    let hostile = raw.peer.unwrap();
    let target = spawn_pawn(&mut world, PeerId::SERVER);
    let id = world.server.net_id(target.node()).unwrap().get();
    raw.step(&mut world, 1);
    drain(&mut world.server);
    raw.rpc(id, wire::EXPLODE, &[]);
    raw.rpc(id, wire::WAVE, &[]);
    raw.step(&mut world, 3);
    assert_eq!(raw.disconnected, Some(DisconnectReason::Kicked));
    assert!(!world.server.peers().contains(&hostile));
    let stats = world.server.stats();
    assert_eq!((stats.rpcs_failed, stats.rpc_kicks), (1, 1));
    // The call after the failing one was not run.
    assert!(pawn(&world.server, target).senders.is_empty());
    let events = drain(&mut world.server);
    assert!(events.contains(&MultiplayerEvent::PeerLeft {
        peer: hostile,
        reason: DisconnectReason::Kicked
    }));
    // The honest client was not touched.
    assert_eq!(world.server.peers().len(), 1);
    let h = copy(&world, &world.clients[0], target);
    world.clients[0].rpc(h).wave().unwrap();
    world.step(2);
    assert_eq!(pawn(&world.server, target).senders.len(), 1);
    world.assert_converged();
}

#[test]
fn the_default_configuration_kicks_a_flood() {
    let mut world = World::new(1, library);
    assert_eq!(
        world.server.config().rpc_flood_threshold,
        mf_net::replication::multiplayer::DEFAULT_RPC_FLOOD_THRESHOLD
    );
    let mut raw = RawClient::join(&mut world);
    let target = spawn_pawn(&mut world, PeerId::SERVER);
    let id = world.server.net_id(target.node()).unwrap().get();
    raw.step(&mut world, 1);
    for _ in 0..2_000 {
        raw.rpc(id, wire::WAVE, &[]);
    }
    raw.step(&mut world, 3);
    assert_eq!(raw.disconnected, Some(DisconnectReason::Kicked));
    assert_eq!(pawn(&world.server, target).senders.len(), 600);
}

#[test]
fn a_flood_over_the_threshold_kicks() {
    let config = MultiplayerConfig {
        rpc_flood_threshold: 100,
        ..MultiplayerConfig::default()
    };
    let mut world = World::with(1, config, None, 0, library);
    let mut raw = RawClient::join(&mut world);
    let hostile = raw.peer.unwrap();
    let target = spawn_pawn(&mut world, PeerId::SERVER);
    let id = world.server.net_id(target.node()).unwrap().get();
    raw.step(&mut world, 1);
    for _ in 0..10_000 {
        raw.rpc(id, wire::WAVE, &[]);
    }
    raw.step(&mut world, 3);
    assert_eq!(raw.disconnected, Some(DisconnectReason::Kicked));
    assert!(!world.server.peers().contains(&hostile));
    // The first 100 ran; none after the threshold.
    assert_eq!(pawn(&world.server, target).senders.len(), 100);
    assert_eq!(world.server.stats().rpc_kicks, 1);
    // The honest client stays under the threshold and keeps playing.
    let h = copy(&world, &world.clients[0], target);
    for _ in 0..50 {
        world.clients[0].rpc(h).wave().unwrap();
    }
    world.step(2);
    assert_eq!(pawn(&world.server, target).senders.len(), 150);
    assert_eq!(world.server.peers().len(), 1);
    world.assert_converged();
}

/// A valid input message: newest tick `tick`, one input of one byte, no view.
fn input(tick: u32) -> Vec<u8> {
    [varint(tick), vec![1, 2, 7, 0]].concat()
}

fn send_inputs(raw: &mut RawClient, first: u32, count: u32) {
    for tick in first..first + count {
        raw.send(INPUT, Channel::Unreliable, &input(tick));
    }
}

#[test]
fn the_default_configuration_kicks_an_input_flood() {
    use mf_net::replication::multiplayer::DEFAULT_INPUT_FLOOD_THRESHOLD;
    let mut world = World::new(1, library);
    assert_eq!(
        world.server.config().input_flood_threshold,
        DEFAULT_INPUT_FLOOD_THRESHOLD
    );
    assert_eq!(DEFAULT_INPUT_FLOOD_THRESHOLD, 600);
    let mut raw = RawClient::join(&mut world);
    let hostile = raw.peer.unwrap();
    raw.step(&mut world, 1);
    drain(&mut world.server);
    // At the threshold: counted, not kicked.
    send_inputs(&mut raw, 1, 600);
    raw.step(&mut world, 1);
    assert_eq!(raw.disconnected, None);
    let stats = world.server.peer_stats(hostile).unwrap();
    assert_eq!(stats.input_messages, 600);
    // 100 000 a second: kicked at the first one over.
    send_inputs(&mut raw, 601, 3_000);
    raw.step(&mut world, 3);
    assert_eq!(raw.disconnected, Some(DisconnectReason::Kicked));
    assert!(!world.server.peers().contains(&hostile));
    assert_eq!(world.server.stats().input_kicks, 1);
    assert!(
        drain(&mut world.server).contains(&MultiplayerEvent::PeerLeft {
            peer: hostile,
            reason: DisconnectReason::Kicked
        })
    );
    // The honest client was not touched.
    assert_eq!(world.server.peers().len(), 1);
}

#[test]
fn the_input_flood_threshold_is_configurable() {
    for threshold in [0, 100] {
        let config = MultiplayerConfig {
            input_flood_threshold: threshold,
            ..MultiplayerConfig::default()
        };
        let mut world = World::with(1, config, None, 0, library);
        let mut raw = RawClient::join(&mut world);
        let peer = raw.peer.unwrap();
        raw.step(&mut world, 1);
        // Under the threshold, spread over a second and more: never kicked.
        for frame in 0..40 {
            send_inputs(&mut raw, 1 + frame * 3, 3);
            raw.step(&mut world, 1);
        }
        assert_eq!(raw.disconnected, None, "threshold {threshold}");
        assert_eq!(world.server.peer_stats(peer).unwrap().input_messages, 120);
        send_inputs(&mut raw, 200, 5_000);
        raw.step(&mut world, 3);
        let kicked = threshold > 0;
        assert_eq!(raw.disconnected.is_some(), kicked, "threshold {threshold}");
        assert_eq!(world.server.stats().input_kicks, u64::from(kicked));
        if !kicked {
            assert_eq!(world.server.peer_stats(peer).unwrap().input_messages, 5_120);
        }
    }
}

/// A client that guesses the net id of a node whose spawn has not gone out (ids are handed
/// out in order) and calls an RPC on it: the call is dropped as on a node it does not have,
/// whether the node is hidden from it or not (no client has it yet), and so is one once the
/// spawn went out if the node is hidden from it.
#[test]
fn a_call_on_a_node_whose_spawn_has_not_gone_out_is_dropped() {
    for hidden in [true, false] {
        let mut world = World::new(0, library);
        let mut raw = RawClient::join(&mut world);
        let hostile = raw.peer.unwrap();
        raw.step(&mut world, 2);
        let root = world.root();
        let node = world.server.spawn(PAWN, root, PeerId::SERVER).unwrap();
        if hidden {
            world.server.set_relevant(node, hostile, false).unwrap();
        }
        let id = world.server.net_id(node).unwrap().get();
        // Read in the server's next frame, before the spawn goes out at its end.
        raw.rpc(id, wire::WAVE, &[]);
        raw.step(&mut world, 1);
        let pawn_of = |world: &World| {
            let handle = world.server.scene().net_ref::<rpc_common::Pawn>(node);
            pawn(&world.server, handle.unwrap()).senders.clone()
        };
        assert_eq!(pawn_of(&world), [], "hidden: {hidden}");
        assert_eq!(
            world.server.stats().rpcs_not_relevant,
            1,
            "hidden: {hidden}"
        );
        // Once the spawn went out, a call runs only where the client has the node.
        raw.rpc(id, wire::WAVE, &[]);
        raw.step(&mut world, 3);
        let ran = if hidden { vec![] } else { vec![hostile] };
        assert_eq!(pawn_of(&world), ran, "hidden: {hidden}");
        let dropped = 1 + u64::from(hidden);
        assert_eq!(world.server.stats().rpcs_not_relevant, dropped);
    }
}
