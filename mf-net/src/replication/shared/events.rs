//! [`MultiplayerEvent`] and the bounded queue that holds them.

use std::collections::VecDeque;

use crate::bus::BusEvent;
use crate::replication::shared::misconfiguration::Misconfiguration;
use crate::replication::shared::net_id::NetId;
use crate::rpc::RpcCallError;
use crate::scene::NodeId;
use crate::transport::{DisconnectReason, PeerId};
use crate::wire::DecodeError;

/// Events kept for the game before the oldest are discarded.
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// Something the game may want to react to, taken with
/// [`Multiplayer::next_event`](crate::replication::multiplayer::Multiplayer::next_event).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MultiplayerEvent {
    /// Server: a client completed the handshake and received every live spawn.
    PeerJoined(PeerId),
    /// Server: a joined client is gone.
    PeerLeft {
        /// Who.
        peer: PeerId,
        /// Why.
        reason: DisconnectReason,
    },
    /// Server: a client was refused before joining, with
    /// [`ProtocolMismatch`](DisconnectReason::ProtocolMismatch): its message registry differs
    /// (the transport's connect data) or its replication fingerprint does (the hello). The
    /// client's [`refusal`](crate::replication::multiplayer::Multiplayer::refusal) names the first difference.
    PeerRefused {
        /// The refused connection.
        peer: PeerId,
        /// What differs: the text sent to the client for a replication mismatch; for a message
        /// registry mismatch (which only the client can name), that the registries differ.
        refusal: String,
    },
    /// Client: the server welcomed us.
    ConnectedToServer {
        /// Our peer id, as the server numbers us.
        local_peer_id: PeerId,
    },
    /// Client: the connection ended (refused, kicked, timed out, server gone, or
    /// [`stop`](crate::replication::multiplayer::Multiplayer::stop)). Every spawned node was freed. After a refusal,
    /// [`Multiplayer::refusal`](crate::replication::multiplayer::Multiplayer::refusal) says why.
    Disconnected {
        /// Why.
        reason: DisconnectReason,
    },
    /// Client: a spawn arrived and its instance was added (the root's net id and node).
    NodeSpawned {
        /// The instance root.
        node: NodeId,
        /// Its network id.
        net_id: NetId,
    },
    /// Client: a networked node (with its subtree) was freed on the server's order.
    NodeDespawned {
        /// The network id of the despawned node.
        net_id: NetId,
    },
    /// A networked node's authority changed (on the server when it is set, on clients when
    /// the change arrives).
    AuthorityChanged {
        /// The node.
        node: NodeId,
        /// Its new authority.
        peer: PeerId,
    },
    /// Server: a networked node's state holds a string longer than any client accepts
    /// ([`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)), set by game code: its snapshot
    /// entries are not sent (clients keep its last state) until the value fits again, rather
    /// than sending bytes every client would refuse. Raised once each time it happens, and
    /// counted in [`states_over_limit`](crate::replication::multiplayer::NetworkStats::states_over_limit).
    StateOverLimit {
        /// The node.
        node: NodeId,
    },
    /// Client: a snapshot entry for this node did not read (a server that writes what this
    /// client does not read: a build the handshake fingerprint does not tell apart, or a
    /// hostile one). The entry was skipped, the rest of the snapshot applied and acknowledged;
    /// the node keeps what it read until a later entry for it reads. Counted in
    /// [`entries_rejected`](crate::replication::multiplayer::NetworkStats::entries_rejected).
    EntryRejected {
        /// The node.
        net_id: NetId,
        /// Why the entry did not read.
        error: DecodeError,
    },
    /// A client could not apply a spawn (unknown scene, missing parent or bound node, state
    /// that does not decode); its ids are skipped by snapshots.
    SpawnFailed {
        /// The first network id of the spawn.
        net_id: NetId,
    },
    /// An RPC call was refused: its mode does not allow the sender (as the transport reports
    /// it), or its `validate` function returned `false`. Counted in `rpcs_rejected`.
    RpcRejected {
        /// The peer that sent the call ([`PeerId::SERVER`] on a client, whatever the server's
        /// transport peer id).
        peer: PeerId,
        /// The node it was called on.
        node: NodeId,
        /// The RPC's name.
        rpc: &'static str,
    },
    /// An RPC body received from `peer` returned `Err` or panicked (logged, counted in
    /// `rpcs_failed`; on the server, the client is kicked if
    /// [`kick_on_rpc_failure`](crate::replication::multiplayer::MultiplayerConfig::kick_on_rpc_failure)).
    RpcFailed {
        /// The peer that sent the call ([`PeerId::SERVER`] on a client, whatever the server's
        /// transport peer id).
        peer: PeerId,
        /// The node it was called on.
        node: NodeId,
        /// The RPC's name.
        rpc: &'static str,
        /// What went wrong ([`RpcCallError::Failed`] or [`RpcCallError::Panicked`]).
        error: RpcCallError,
    },
    /// Game code drives the runtime in a way that fails silently otherwise (a simulation that
    /// does not run, a zero frame time, a member that should be predicted): reported once per
    /// kind; its `Display` names the fix.
    Misconfigured(Misconfiguration),
    /// An event of the message bus underneath (send failures, dropped packets, refused peers).
    Bus(BusEvent),
}

/// A bounded FIFO of events.
#[derive(Debug)]
pub(crate) struct EventQueue {
    queue: VecDeque<MultiplayerEvent>,
    pub(crate) lost: u64,
}

impl EventQueue {
    pub(crate) fn new() -> Self {
        Self {
            queue: VecDeque::with_capacity(64),
            lost: 0,
        }
    }

    pub(crate) fn push(&mut self, event: MultiplayerEvent) {
        if self.queue.len() >= MAX_QUEUED_EVENTS {
            self.queue.pop_front();
            self.lost += 1;
        }
        self.queue.push_back(event);
    }

    pub(crate) fn pop(&mut self) -> Option<MultiplayerEvent> {
        self.queue.pop_front()
    }
}
