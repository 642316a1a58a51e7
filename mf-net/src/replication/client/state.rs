//! The client side: handshake, spawns, despawns, authority, snapshot application and acks.

use crate::refs::{self, NetIdMap};
use crate::replication::client::named_by::NamedBy;
use crate::replication::client::prediction::ClientPrediction;
use std::collections::HashSet;
use std::time::Duration;

use tracing::{debug, info, warn};

use crate::bus::MessageHeader;
use crate::replication::client::bit_snapshot::{layout_of_type, BitSnapshots, Known};
use crate::replication::client::entry::EntryRef;
use crate::replication::client::entry_batch::EntryBatch;
use crate::replication::client::interpolation::ClientInterpolation;
use crate::replication::client::node_list::{ClientNode, Located, NodeList};
use crate::replication::client::replicas::Replicas;
use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::instance::{
    as_scene_mut, exists, instance_nodes, parent, value_info,
};
use crate::replication::shared::net_id::NetId;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::{
    self, baseline_depth, Kind, ParentRef, SpawnHeader, ToClient, TypedNode, ACK, HELLO,
    MAX_NAME_BYTES, MAX_RESEND_IDS, RESEND, SCENE_BIND, SCENE_TYPED,
};
use crate::replication::shared::state::Shared;
use crate::replication::shared::stats::LinkTracker;
use crate::replication::shared::write_value::write_value;
use crate::scene::{NodeId, SceneIndex};
use crate::store::{Link, Store};
use crate::tick::{tick_after, tick_diff, tick_max};
use crate::transport::{Channel, DisconnectReason, PeerId};
use crate::wire::{DecodeError, NetReader, NetWriter, ProtocolViolation};

/// Acks queued between two frames before the oldest are dropped (dropping one only makes the
/// server resend what that snapshot carried).
const MAX_PENDING_ACKS: usize = 16;

/// Failed spawns remembered (as ids known to be gone) before the oldest are forgotten
/// (forgetting one only makes snapshots carrying its ids go unacknowledged).
const MAX_FAILED_SPAWNS: usize = 1024;

/// An applied spawn: its root's net id and node, and whether it was a bind (bound nodes stay
/// when the connection ends).
#[derive(Debug, Clone, Copy)]
struct ClientGroup {
    first: u32,
    root: NodeId,
    bound: bool,
}

/// A spawn the client could not apply: its ids are gone locally (the client will never have
/// them) until the server despawns its root or a node it was spawned under.
#[derive(Debug, Clone, Copy)]
struct FailedSpawn {
    first: u32,
    count: u32,
    /// The net id it was spawned under (0: a path).
    parent: u32,
}

/// The client's replication state.
pub(crate) struct ClientState {
    pub(crate) welcomed: bool,
    pub(crate) local_peer: PeerId,
    /// The server's peer id on the transport, from its `Connected` event: every send goes to it
    /// and only its messages are the server's. It is [`PeerId::SERVER`] on most transports, but
    /// not on every one (a `SelectingTransport` offsets the ids of each attempt after the
    /// first); game code still sees the server as [`PeerId::SERVER`].
    pub(crate) server: PeerId,
    started_at: Duration,
    last_snapshot_at: Duration,
    pub(crate) tick_rate: u8,
    /// Newest snapshot tick applied (in full or in part).
    pub(crate) newest_applied: u32,
    /// Snapshots up to this tick are stale, and discarded unacknowledged (see
    /// [`discard_up_to`](Self::discard_up_to)): those captured before the newest server RPC
    /// we ran, or before the state of the newest spawn we applied. Moved up to every snapshot
    /// applied, so that it never falls 2³¹ ticks behind (ticks compare by serial-number
    /// arithmetic, [`crate::tick`]).
    pub(crate) stale_floor: u32,
    /// Newest snapshot tick applied in full.
    newest_acked: u32,
    /// Whether the newest applied snapshot was truncated.
    pub(crate) last_truncated: bool,
    /// The networked nodes.
    pub(crate) nodes: NodeList,
    pub(crate) by_node: NetIdMap,
    groups: Vec<ClientGroup>,
    /// Spawns that failed, oldest first, at most [`MAX_FAILED_SPAWNS`].
    failed: Vec<FailedSpawn>,
    /// Which nodes' states named which net ids.
    named_by: NamedBy,
    /// Net ids of nodes whose states named a node that arrived since: the server is asked to
    /// send their states again ([`RESEND`]) at the end of the frame.
    resend: Vec<u32>,
    acks: [u32; MAX_PENDING_ACKS],
    ack_count: usize,
    /// When the next heartbeat ack is due (set at the first end of frame after the welcome).
    heartbeat_at: Option<Duration>,
    /// Set when the connection ended; the runtime then goes offline.
    pub(crate) finished: Option<DisconnectReason>,
    /// Interpolation of `#[replicated(interpolate)]` members.
    pub(crate) interp: ClientInterpolation,
    /// Loss, duplicates, reordering and jitter of the snapshots received.
    pub(crate) link: LinkTracker,
    /// Which `on_change` members a snapshot entry changed, per state of the node's chain
    /// (grown at spawn to the longest chain with hooks, so snapshots do not allocate).
    changed: Vec<u64>,
    /// The runtime's state of every networked node (interpolation, prediction), by type.
    pub(crate) replicas: Replicas,
    /// Client-side prediction, once a [`Simulation`](crate::prediction::Simulation) runs.
    pub(crate) predict: ClientPrediction,
    /// The snapshot's entries, applied by column (scratch, capacity kept).
    batch: EntryBatch,
    /// Whether the server's snapshots are bit-packed (told in the welcome).
    bits: bool,
    /// The reading of bit-packed snapshots, and the values they are coded against.
    bit_snapshots: BitSnapshots,
    /// When the hello went out.
    hello_at: Duration,
    /// From the hello to the welcome: the first estimate of the round trip (a simulation's
    /// clock starts from it).
    pub(crate) handshake_rtt: Option<Duration>,
}

impl ClientState {
    pub(crate) fn new(now: Duration) -> Self {
        Self {
            welcomed: false,
            local_peer: PeerId(0),
            server: PeerId::SERVER,
            started_at: now,
            last_snapshot_at: now,
            tick_rate: 30,
            newest_applied: 0,
            stale_floor: 0,
            newest_acked: 0,
            last_truncated: false,
            nodes: NodeList::default(),
            by_node: NetIdMap::default(),
            groups: Vec::new(),
            failed: Vec::new(),
            named_by: NamedBy::default(),
            resend: Vec::new(),
            acks: [0; MAX_PENDING_ACKS],
            ack_count: 0,
            heartbeat_at: None,
            finished: None,
            interp: ClientInterpolation::new(),
            link: LinkTracker::default(),
            changed: Vec::new(),
            replicas: Replicas::default(),
            predict: ClientPrediction::default(),
            batch: EntryBatch::default(),
            bits: false,
            bit_snapshots: BitSnapshots::default(),
            hello_at: now,
            handshake_rtt: None,
        }
    }

    /// The scene node of `net_id`.
    pub(crate) fn node_of(&self, net_id: u32) -> Option<NodeId> {
        self.nodes.locate(net_id).map(|l| l.node)
    }

    /// The authority of a networked node.
    pub(crate) fn authority_of(&self, node: NodeId) -> Option<PeerId> {
        self.nodes.authority(self.by_node.get(node)?)
    }

    /// The net id of `node`.
    pub(crate) fn net_id(&self, node: NodeId) -> Option<NetId> {
        self.by_node.get(node).and_then(NetId::new)
    }

    /// The transport connected to the server, whose transport peer id is `server`: remember it
    /// and say hello.
    pub(crate) fn connected(&mut self, core: &mut Outbox, shared: &mut Shared, server: PeerId) {
        self.server = server;
        if !core.is_connected(server) {
            // Refused as soon as connected: the disconnect that follows says why.
            return;
        }
        let (fingerprint, shapes) = (shared.fingerprint, &shared.shapes);
        let rpcs = &shared.rpc;
        self.hello_at = shared.now;
        if let Err(error) = core.send_with(self.server, HELLO, Channel::Reliable, |w| {
            protocol::write_hello(w, fingerprint, shapes);
            crate::replication::shared::rpc_signatures::write_signatures(w, rpcs);
        }) {
            warn!(%error, "hello refused by the transport");
            shared.stats.control_send_failures += 1;
            self.end(core, shared, DisconnectReason::ReliableSendFailed, true);
        }
    }

    /// The connection ended: free every spawned node (bound nodes stay, unbound), raise
    /// `Disconnected`, and disconnect the transport if we are the ones ending it.
    pub(crate) fn end(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        reason: DisconnectReason,
        local: bool,
    ) {
        if self.finished.is_some() {
            return;
        }
        if local {
            core.disconnect(self.server, reason);
        }
        self.free_all(shared);
        info!(%reason, "disconnected from the server");
        self.finished = Some(reason);
        shared
            .events
            .push(MultiplayerEvent::Disconnected { reason });
    }

    pub(crate) fn free_all(&mut self, shared: &mut Shared) {
        for group in self.groups.drain(..) {
            if !group.bound {
                shared.store.despawn(group.root);
            }
        }
        self.nodes.clear();
        self.by_node.clear();
        self.named_by.clear();
        self.resend.clear();
        self.failed.clear();
        self.bit_snapshots.clear();
        // Bound nodes stay, as plain nodes.
        self.replicas.clear();
        shared.stats.networked_nodes = 0;
    }

    /// A replication message from the server, to its handler. Input acks pass no gate; the
    /// rest wait for the welcome (and are ignored once the connection ended). A client → server
    /// message is refused as the wrong direction, after the same gates.
    pub(crate) fn on_message(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        kind: Kind,
        tick: u32,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        match kind {
            Kind::ToClient(ToClient::InputAck) => self.on_input_ack(r),
            _ if self.finished.is_some() => Ok(true),
            Kind::ToClient(ToClient::Welcome) => {
                let peer = PeerId(r.read_u64()?);
                let rate = r.read_u8()?.max(1);
                let tick = r.read_u32()?;
                let bits = match r.read_u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(DecodeError::OutOfRange),
                };
                r.finish()?;
                if self.welcomed {
                    shared.stats.control_dropped += 1;
                    return Ok(true);
                }
                self.welcomed = true;
                self.bits = bits;
                self.handshake_rtt = Some(shared.now.saturating_sub(self.hello_at));
                self.local_peer = peer;
                self.tick_rate = rate;
                self.bit_snapshots.set_depth(baseline_depth(rate));
                self.interp
                    .start(shared.config.interpolation, rate, tick, shared.now);
                self.newest_applied = tick;
                self.newest_acked = tick;
                self.stale_floor = tick;
                self.last_snapshot_at = shared.now;
                core.set_tick(tick);
                info!(%peer, tick, rate, "connected to the server");
                shared.events.push(MultiplayerEvent::ConnectedToServer {
                    local_peer_id: peer,
                });
                Ok(true)
            }
            Kind::ToClient(ToClient::Refuse) => {
                let text = r.read_str()?.to_owned();
                warn!(%text, "the server refused us");
                shared.refusal = Some(text);
                Ok(true)
            }
            _ if !self.welcomed => {
                shared.stats.control_dropped += 1;
                Ok(true)
            }
            Kind::ToClient(ToClient::Spawn) => {
                // One spawn or more, each behind its length, to the end of the message (at
                // least one). Every length is read before any spawn is applied; a spawn that
                // cannot be applied leaves the others as they are.
                let mut spawns = r.clone();
                loop {
                    let len = r.read_len()?;
                    r.skip(len)?;
                    if r.remaining() == 0 {
                        break;
                    }
                }
                while spawns.remaining() > 0 {
                    let len = spawns.read_len()?;
                    let mut spawn = NetReader::new(spawns.read_bytes(len)?);
                    self.on_spawn(shared, tick, &mut spawn)?;
                }
                Ok(true)
            }
            Kind::ToClient(ToClient::Despawn) => {
                // The first net id of each group despawned, to the end of the message (at least
                // one). Every id is read before any is applied.
                let mut ids = r.clone();
                r.read_var_u32()?;
                while r.remaining() > 0 {
                    r.read_var_u32()?;
                }
                while ids.remaining() > 0 {
                    let id = ids.read_var_u32()?;
                    self.on_despawn(shared, id);
                }
                // A snapshot from before the despawn, arriving late, would name the node gone:
                // a member naming it would be held back for good.
                self.discard_up_to(tick);
                Ok(true)
            }
            Kind::ToClient(ToClient::Authority) => {
                let id = r.read_var_u32()?;
                let peer = PeerId(r.read_var_u64()?);
                let recursive = r.read_bool()?;
                r.finish()?;
                self.on_authority(shared, id, peer, recursive);
                Ok(true)
            }
            Kind::ToClient(ToClient::Parent) => {
                let first = r.read_var_u32()?;
                let parent = r.read_var_u32()?;
                let path = match parent {
                    0 => r.read_str_max(MAX_NAME_BYTES)?,
                    _ => "",
                };
                r.finish()?;
                self.on_parent(shared, first, (parent, path));
                Ok(true)
            }
            Kind::ToClient(ToClient::Snapshot) => self.on_snapshot(shared, tick, r),
            // A held RPC goes to the RPC dispatch before it could come here.
            Kind::ToServer(_) | Kind::Rpc | Kind::ToClient(ToClient::HeldRpc) => {
                Err(DecodeError::Protocol(ProtocolViolation::WrongDirection))
            }
        }
    }

    /// Snapshots up to `floor` are stale from now on: captured before something the client
    /// applied (a server RPC sent at `floor`, a spawn's state as of the tick after it); one
    /// arriving later, out of order, would undo it, and is discarded unacknowledged. A floor
    /// more than two seconds of ticks past the newest snapshot applied is not believed (a
    /// broken or hostile server would otherwise make the client discard every snapshot).
    pub(crate) fn discard_up_to(&mut self, floor: u32) {
        let plausible = i32::from(self.tick_rate.max(1)) * 2;
        if tick_diff(floor, self.newest_applied) <= plausible {
            self.stale_floor = tick_max(self.stale_floor, floor);
        }
    }

    fn on_spawn(
        &mut self,
        shared: &mut Shared,
        tick: u32,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        let header = SpawnHeader::read(r)?;
        match self.apply_spawn(shared, &header, tick, r) {
            Ok(()) => {
                // The spawn holds the state as of `tick`, from which a byte-format server
                // sends only what changes: a snapshot from before it (from before the group
                // left us, delayed past its return) would set older values for good.
                self.discard_up_to(tick.wrapping_sub(1));
                Ok(true)
            }
            Err(reason) => {
                warn!(first = header.first_net_id, reason, "cannot apply spawn");
                shared.stats.spawn_failures += 1;
                // Its ids are gone locally: the server sends entries for them, which the
                // client skips without holding back its acknowledgements.
                if self.failed.len() == MAX_FAILED_SPAWNS {
                    self.failed.remove(0);
                }
                self.failed.push(FailedSpawn {
                    first: header.first_net_id,
                    count: header.count,
                    parent: match header.parent {
                        ParentRef::Net(id) => id,
                        ParentRef::Path(_) => 0,
                    },
                });
                if let Some(net_id) = NetId::new(header.first_net_id) {
                    shared.events.push(MultiplayerEvent::SpawnFailed { net_id });
                }
                Ok(true)
            }
        }
    }

    /// The root of a spawn of a scene, a spawner or a bind, made (or, bound, found) under its
    /// parent in the scene, and whether it is bound.
    fn scene_root(
        &mut self,
        shared: &mut Shared,
        header: &SpawnHeader,
    ) -> Result<(NodeId, bool), &'static str> {
        let parent = match &header.parent {
            ParentRef::Net(id) => self.node_of(*id),
            ParentRef::Path(path) => shared.scene().and_then(|s| s.find(path)),
        }
        .ok_or("parent not found")?;
        let Shared {
            store,
            library,
            spawners,
            ..
        } = shared;
        let scene = as_scene_mut(&mut **store).ok_or("the storage has no scene")?;
        if header.scene == SCENE_BIND {
            let node = scene
                .child(parent, &header.name)
                .ok_or("bound node not found")?;
            if self.by_node.contains(node) {
                return Err("bound node is networked already");
            }
            return Ok((node, true));
        }
        let root = if header.scene == protocol::SCENE_SPAWNER {
            let payload = header
                .spawner
                .as_ref()
                .ok_or("spawner spawn without data")?;
            spawners.spawn_remote((scene, &self.by_node), parent, &header.name, payload)?
        } else {
            let index = u16::try_from(header.scene).map_err(|_| "unknown scene index")?;
            library
                .instantiate(SceneIndex::new(index), scene, parent, &header.name)
                .map_err(|_| "cannot instantiate the scene")?
        };
        Ok((root, false))
    }

    fn apply_spawn(
        &mut self,
        shared: &mut Shared,
        header: &SpawnHeader,
        tick: u32,
        r: &mut NetReader<'_>,
    ) -> Result<(), &'static str> {
        let end = header.first_net_id.saturating_add(header.count);
        if header.count == 0
            || self
                .nodes
                .in_range(header.first_net_id, end)
                .iter()
                .any(|n| exists(&*shared.store, n.node))
        {
            return Err("net ids already in use");
        }
        let typed = match header.scene {
            SCENE_TYPED => {
                let under = match header.parent {
                    ParentRef::Net(id) => Some(self.node_of(id).ok_or("parent not found")?),
                    ParentRef::Path(_) => None,
                };
                Some(spawn_typed(&mut *shared.store, &header.typed, under)?)
            }
            _ => None,
        };
        let (root, bound) = match &typed {
            Some(nodes) => (nodes[0], false),
            None => self.scene_root(shared, header)?,
        };
        let undo = |shared: &mut Shared| {
            if !bound {
                shared.store.despawn(root);
            }
        };
        let nodes = match (typed, shared.scene()) {
            (Some(nodes), _) => nodes,
            (None, Some(scene)) => instance_nodes(scene, root),
            (None, None) => vec![root],
        };
        if nodes.len() != header.count as usize {
            undo(shared);
            return Err("the instance has another number of networked nodes");
        }
        // Nothing is applied unless the whole message reads: absent nodes are removed only at
        // the end, and a bound node's previous state is kept (its full state, as bytes) and
        // restored if a later read fails, so a malformed spawn never leaves a bound node (one
        // the client owns) partly updated. A spawned instance is simply removed again.
        // A set: a hostile list may repeat ids (as many as the packet has bytes).
        let mut absent = HashSet::new();
        let mut backup = NetWriter::new();
        let mut backed_up = Vec::new();
        // `on_change` members the spawn changed: per node with hooks, where its states' masks
        // start in `changed`. The hooks run once the whole spawn is applied.
        let mut hooked: Vec<(NodeId, usize)> = Vec::new();
        let mut changed: Vec<u64> = Vec::new();
        // What the states' node references named, by net id: (naming node, node named).
        let mut named: Vec<(u32, u32)> = Vec::new();
        // Where each node's state lies in the message: a bit-packed client's first baselines.
        let mut states: Vec<(u32, NodeId, usize, usize)> = Vec::new();
        let result = (|| -> Result<(), DecodeError> {
            for _ in 0..r.read_count(1)? {
                let id = r.read_var_u32()?;
                let offset = id
                    .checked_sub(header.first_net_id)
                    .filter(|&o| o > 0 && o < header.count)
                    .ok_or(DecodeError::Protocol(ProtocolViolation::AbsentOutsideSpawn))?;
                absent.insert(nodes[offset as usize]);
            }
            for (offset, &node) in (0u32..).zip(&nodes) {
                // Absent, or under an absent node: no state follows.
                let mut up = Some(node);
                while let Some(n) = up.filter(|n| !absent.contains(n)) {
                    up = (n != root).then(|| parent(&*shared.store, n)).flatten();
                }
                if up.is_some() {
                    continue;
                }
                let Some(ty) = value_info(&*shared.store, node) else {
                    continue;
                };
                if bound && write_value(&mut *shared.store, node, &mut backup) {
                    backed_up.push(node);
                }
                let (replicas, scene) = (&mut self.replicas, &mut *shared.store);
                let start = r.position();
                if ty.has_on_change() {
                    let start = changed.len();
                    changed.resize(start + ty.state_count(), 0);
                    replicas.read_state(scene, node, r, &mut changed[start..])?;
                    hooked.push((node, start));
                } else {
                    replicas.read_state(scene, node, r, &mut [])?;
                }
                let referrer = header.first_net_id + offset;
                if self.bits {
                    states.push((referrer, node, start, r.position()));
                }
                if refs::take_named(|target| named.push((referrer, target))) {
                    shared.stats.references_held += 1;
                }
            }
            r.finish()
        })();
        if result.is_err() {
            let mut restore = NetReader::new(backup.as_slice());
            for &node in &backed_up {
                let _ = self
                    .replicas
                    .read_state(&mut *shared.store, node, &mut restore, &mut []);
            }
            undo(shared);
            return Err("malformed spawn state");
        }
        for &node in &absent {
            shared.store.despawn(node);
        }
        for &(node, start) in &hooked {
            if let Some(ty) = value_info(&*shared.store, node) {
                let n = ty.state_count();
                if let Some(masks) = changed.get(start..start + n) {
                    self.replicas.run_on_change(&mut *shared.store, node, masks);
                }
                if self.changed.len() < n {
                    self.changed.resize(n, 0);
                }
            }
        }
        // Ids in its range still listed were freed locally, and are no longer: forget them (and
        // failed spawns over the range).
        let (by_node, replicas, named_by) =
            (&mut self.by_node, &mut self.replicas, &mut self.named_by);
        self.nodes.forget_range(header.first_net_id, end, |n| {
            by_node.remove(n.node);
            replicas.remove(n.node);
            named_by.forget(n.net_id);
        });
        self.failed
            .retain(|f| f.first >= end || f.first.saturating_add(f.count) <= header.first_net_id);
        let authority = PeerId(header.authority);
        for (offset, &node) in (0u32..).zip(&nodes) {
            if !exists(&*shared.store, node) {
                continue;
            }
            let net_id = header.first_net_id + offset;
            let linked = header.typed.get(offset as usize).and_then(|t| t.link.to());
            // Ancestors come first (depth-first order), so they are listed already. A root under
            // a plain node goes with the networked node that is inside of, as on the server.
            let parent = match (node == root, &header.parent, linked) {
                (true, ParentRef::Net(id), _) => *id,
                (false, _, Some(&j)) => header.first_net_id + j,
                _ => match (shared.scene(), parent(&*shared.store, node)) {
                    (Some(scene), Some(up)) => self.by_node.networked_up(scene, up),
                    _ => 0,
                },
            };
            self.nodes
                .insert(ClientNode::new(net_id, node, authority, parent));
            self.by_node
                .insert(node, net_id, shared.store.value_type(node));
            let scene = &mut *shared.store;
            if let Some(at) = self.replicas.add(scene, node) {
                self.nodes.moved(net_id, at);
            }
            self.interp.spawned(&mut self.replicas, scene, node, tick);
            let ours = authority == self.local_peer;
            self.predict
                .spawned(&mut self.replicas, scene, node, ours, tick);
            if ours {
                self.watch_unsimulated(shared, node);
            }
        }
        let message = r.data();
        for &(net_id, node, start, end) in &states {
            if let (Some(ty), Some(state)) =
                (self.replicas.state_type_of(node), message.get(start..end))
            {
                self.bit_snapshots.spawned((net_id, tick), ty.layout, state);
            }
        }
        // States that named a node of this spawn before it was here (in this spawn or an
        // earlier message) are asked for again.
        for (referrer, target) in named {
            self.named_by.note(referrer, target);
        }
        for offset in 0..header.count {
            let net_id = header.first_net_id + offset;
            self.named_by.arrived(net_id, &mut self.resend);
        }
        self.groups.push(ClientGroup {
            first: header.first_net_id,
            root,
            bound,
        });
        shared.stats.spawns += 1;
        shared.stats.networked_nodes = self.nodes.len();
        debug!(
            first = header.first_net_id,
            count = header.count,
            "spawn applied"
        );
        if let Some(net_id) = NetId::new(header.first_net_id) {
            shared
                .events
                .push(MultiplayerEvent::NodeSpawned { node: root, net_id });
        }
        Ok(())
    }

    /// A despawn of `id`: removes its node and forgets it and every node spawned under it (its
    /// subtree on the server), whether still in the scene or freed locally; other nodes freed
    /// locally stay listed (gone locally).
    fn on_despawn(&mut self, shared: &mut Shared, id: u32) {
        let node = self.node_of(id);
        let failed = self.failed.iter().any(|f| f.first == id);
        if node.is_none() && !failed {
            // A node this client never had, despawned (the server tells clients of a node a
            // reference named): a member held back for it asks for its state again, which
            // names nothing now.
            self.named_by.arrived(id, &mut self.resend);
            return;
        }
        if let Some(node) = node {
            shared.store.despawn(node);
        }
        let (by_node, replicas) = (&mut self.by_node, &mut self.replicas);
        self.nodes.remove_subtree(id, |n| {
            by_node.remove(n.node);
            replicas.remove(n.node);
        });
        // Failed spawns under a removed node, or under a failed spawn removed so (or the failed
        // spawn despawned itself), are forgotten: their ids are no longer gone locally.
        if !self.failed.is_empty() {
            let mut dropped = 0;
            loop {
                let before = dropped;
                let mut k = dropped;
                while k < self.failed.len() {
                    let f = self.failed[k];
                    let under_dropped = self.failed[..dropped]
                        .iter()
                        .any(|d| f.parent >= d.first && f.parent < d.first.saturating_add(d.count));
                    if f.first == id
                        || (f.parent != 0
                            && (self.nodes.removed().binary_search(&f.parent).is_ok()
                                || under_dropped))
                    {
                        self.failed.swap(dropped, k);
                        dropped += 1;
                    }
                    k += 1;
                }
                if dropped == before {
                    break;
                }
            }
            // The rest stay (their order only decides which is forgotten first).
            self.failed.drain(..dropped);
        }
        let removed = self.nodes.removed();
        self.bit_snapshots.forget(removed);
        for &referrer in removed {
            self.named_by.forget(referrer);
        }
        self.groups
            .retain(|g| removed.binary_search(&g.first).is_err());
        shared.stats.despawns += 1;
        shared.stats.networked_nodes = self.nodes.len();
        debug!(net_id = id, "despawn applied");
        if let Some(net_id) = NetId::new(id) {
            shared
                .events
                .push(MultiplayerEvent::NodeDespawned { net_id });
        }
    }

    fn on_authority(&mut self, shared: &mut Shared, id: u32, peer: PeerId, recursive: bool) {
        let Some(node) = self.node_of(id) else {
            return;
        };
        let ours = peer == self.local_peer;
        let tick = self.newest_applied;
        let set = |this: &mut Self, shared: &mut Shared, i: usize| {
            let Some(target) = this.nodes.set_authority(i, peer) else {
                return;
            };
            let (replicas, scene) = (&mut this.replicas, &mut *shared.store);
            if this
                .predict
                .authority_changed(replicas, scene, target, ours, tick)
            {
                this.interp.spawned(replicas, scene, target, tick);
            }
        };
        if recursive {
            // The scene's descendants; in another storage, the nodes spawned under it.
            let targets: Vec<u32> = match shared.scene() {
                Some(scene) => scene
                    .depth_first(node)
                    .filter_map(|n| self.by_node.get(n))
                    .collect(),
                None => self.nodes.subtree(id),
            };
            for target in targets {
                if let Some(i) = self.nodes.index_of(target) {
                    set(self, shared, i);
                }
            }
        } else if let Some(i) = self.nodes.index_of(id) {
            set(self, shared, i);
        }
        if ours {
            self.watch_unsimulated(shared, node);
        }
        shared
            .events
            .push(MultiplayerEvent::AuthorityChanged { node, peer });
    }

    /// `node` became ours: if it has predicted members and no simulation runs, the runtime
    /// watches whether one starts ([`Misconfiguration::PredictedNodeNotSimulated`]).
    ///
    /// [`Misconfiguration::PredictedNodeNotSimulated`]: crate::replication::multiplayer::Misconfiguration::PredictedNodeNotSimulated
    fn watch_unsimulated(&self, shared: &mut Shared, node: NodeId) {
        if self.predict.active {
            return;
        }
        if let (Some(net_id), Some(type_name)) =
            (self.net_id(node), self.replicas.predicted_type(node))
        {
            shared.misuse.owned_predicted(shared.now, net_id, type_name);
        }
    }

    /// An input ack from the server: steers the simulation clock.
    pub(crate) fn on_input_ack(&mut self, r: &mut NetReader<'_>) -> Result<bool, DecodeError> {
        let (newest, lead) = crate::replication::shared::input_wire::read_input_ack(r)?;
        if self.predict.active {
            self.predict.sync.on_ack(newest, lead);
        }
        Ok(true)
    }

    /// Applies a snapshot unless it is stale; acknowledges it if every entry could be applied.
    fn on_snapshot(
        &mut self,
        shared: &mut Shared,
        tick: u32,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        self.last_snapshot_at = shared.now;
        let interval = Duration::from_secs(1) / u32::from(self.tick_rate.max(1));
        self.link.arrival(tick, shared.now, interval);
        let size = MessageHeader::SIZE + r.remaining();
        shared.stats.last_snapshot_bytes = size;
        shared.stats.largest_snapshot_bytes = shared.stats.largest_snapshot_bytes.max(size);
        if !tick_after(tick, self.newest_applied) || !tick_after(tick, self.stale_floor) {
            shared.stats.snapshots_discarded += 1;
            return Ok(true);
        }
        let flags = r.read_u8()?;
        if self
            .interp
            .begin_snapshot(&mut self.replicas, &mut *shared.store, tick)
        {
            shared.stats.clock_snaps += 1;
        }
        if !self.bits {
            return self.apply_entries(shared, tick, flags, r, (true, None));
        }
        let mut bits = std::mem::take(&mut self.bit_snapshots);
        let body = (r.rest(), tick, self.nodes.len());
        let transcoded = bits.transcode(body, |id| self.known(id), layout_of_type);
        let mut entries = NetReader::new(bits.bytes());
        let read = (transcoded.complete, transcoded.broken);
        let applied = self.apply_entries(shared, tick, flags, &mut entries, read);
        self.bit_snapshots = bits;
        applied
    }

    /// What the client has of `net_id`, as a bit-packed entry needs it.
    fn known(&self, net_id: u32) -> Known {
        let Some(l) = self.nodes.locate(net_id) else {
            return Known::Absent;
        };
        // The column found before, else the table of rows by node (one more line to wait for).
        if let Some(ty) = self.replicas.column_type(l.at.column) {
            debug_assert!(
                self.replicas
                    .state_type_of(l.node)
                    .is_some_and(|own| own.number == ty.number),
                "a node keeps the column it was found in"
            );
            return Known::State(ty);
        }
        self.replicas
            .state_type_of(l.node)
            .map_or(Known::Stateless, Known::State)
    }

    /// Applies the snapshot entries of `r` (the byte form), and the snapshot of `tick` with
    /// `flags`: acknowledges it if every entry could be applied and `complete` (a bit-packed
    /// body whose every entry had its baseline). `broken`: the error that cut a bit-packed
    /// body short (its entries before it are applied all the same).
    fn apply_entries(
        &mut self,
        shared: &mut Shared,
        tick: u32,
        flags: u8,
        r: &mut NetReader<'_>,
        (mut complete, broken_bits): (bool, Option<DecodeError>),
    ) -> Result<bool, DecodeError> {
        let snapshot = r.data();
        self.batch.clear();
        let mut broken = None;
        loop {
            let (id, bytes) = match protocol::read_entry(r) {
                Ok(Some(entry)) => entry,
                Ok(None) => break,
                Err(error) => {
                    broken = Some(error);
                    break;
                }
            };
            let Some(Located { node, at }) = self.nodes.locate(id) else {
                // Gone locally (a failed spawn): skip. Otherwise never received, or despawned
                // by the server: its spawn may still be in flight (a re-spawn for interest
                // management reuses ids), so this snapshot must not be acknowledged; a later
                // one carries the entry again, or not at all once the server knows it is gone.
                if !self
                    .failed
                    .iter()
                    .any(|f| id >= f.first && id < f.first.saturating_add(f.count))
                {
                    complete = false;
                }
                continue;
            };
            let end = r.position();
            let entry = EntryRef {
                row: at.row,
                node,
                tag: id,
                start: u32::try_from(end - bytes.len()).unwrap_or(u32::MAX),
                end: u32::try_from(end).unwrap_or(u32::MAX),
            };
            self.batch.push(at, entry);
        }
        // The entries read before a break in the framing are applied all the same.
        self.apply_batch(shared, snapshot, tick);
        if let Some(error) = broken.or(broken_bits) {
            return Err(error);
        }
        r.finish()?;
        self.newest_applied = tick;
        self.stale_floor = tick;
        self.last_truncated = flags & protocol::SNAPSHOT_TRUNCATED != 0;
        self.interp.end_snapshot(tick, self.last_truncated);
        if complete {
            shared.stats.snapshots_applied += 1;
            self.newest_acked = tick_max(self.newest_acked, tick);
            if self.ack_count == MAX_PENDING_ACKS {
                self.acks.copy_within(1.., 0);
                self.ack_count -= 1;
            }
            self.acks[self.ack_count] = tick;
            self.ack_count += 1;
        } else {
            shared.stats.snapshots_partial += 1;
        }
        Ok(true)
    }

    /// Applies the snapshot's entries, one pass per column; an entry whose value moved is found
    /// again. An entry that does not read (the entries are length-prefixed, so the rest still
    /// can) is skipped, raised and counted, and the snapshot is still acknowledged: not
    /// acknowledging it would have the server resend the same entry forever and time the
    /// client out. The node keeps what it read until a later entry for it reads.
    fn apply_batch(&mut self, shared: &mut Shared, snapshot: &[u8], tick: u32) {
        let at = self.interp.entry_at(tick);
        let (replicas, scene) = (&mut self.replicas, &mut *shared.store);
        self.batch
            .apply(replicas, scene, snapshot, at, &mut self.changed);
        let mut misses = std::mem::take(&mut self.batch.misses);
        for e in misses.stale.drain(..) {
            match self.replicas.apply_entry_found(
                &mut *shared.store,
                e.node,
                e.bytes(snapshot),
                at,
                &mut self.changed,
            ) {
                Ok(Some(found)) => self.nodes.moved(e.tag, found),
                Ok(None) => {}
                Err(error) => misses.rejected.push((e.tag, error)),
            }
            let named = &mut misses.named;
            if refs::take_named(|target| named.push((e.tag, target))) {
                misses.held += 1;
            }
        }
        shared.stats.references_held += misses.held;
        for (referrer, target) in misses.named.drain(..) {
            self.named_by.note(referrer, target);
        }
        for (id, error) in misses.rejected.drain(..) {
            shared.stats.entries_rejected += 1;
            if let Some(net_id) = NetId::new(id) {
                shared
                    .events
                    .push(MultiplayerEvent::EntryRejected { net_id, error });
            }
        }
        self.batch.misses = misses;
    }

    /// End of frame: timeouts, then acks (and the heartbeat at the server's tick rate).
    pub(crate) fn end_frame(&mut self, core: &mut Outbox, shared: &mut Shared) {
        if self.finished.is_some() {
            return;
        }
        let now = shared.now;
        if !self.welcomed {
            if now.saturating_sub(self.started_at) > shared.config.handshake_timeout {
                // Never connected (nobody listens there): say so, rather than `Timeout`.
                let reason = if core.is_connected(self.server) {
                    DisconnectReason::Timeout
                } else {
                    DisconnectReason::ConnectFailed
                };
                warn!(%reason, "no welcome from the server in time");
                self.end(core, shared, reason, true);
            }
            return;
        }
        if now.saturating_sub(self.last_snapshot_at) > shared.config.peer_timeout {
            warn!("no snapshot from the server in time");
            self.end(core, shared, DisconnectReason::Timeout, true);
            return;
        }
        core.set_tick(self.newest_applied);
        let interval = Duration::from_secs(1) / u32::from(self.tick_rate.max(1));
        // Due one interval after the last, on the runtime's one frame time; never more than one
        // interval behind it (a long frame sends one heartbeat, not a burst).
        let at = *self
            .heartbeat_at
            .get_or_insert(now.saturating_sub(shared.frame_dt) + interval);
        let heartbeat_due = now >= at;
        if heartbeat_due {
            self.heartbeat_at = Some((at + interval).max(now));
        }
        if self.ack_count == 0 && heartbeat_due {
            self.acks[0] = self.newest_acked;
            self.ack_count = 1;
        }
        for k in 0..self.ack_count {
            let tick = self.acks[k];
            // Unreliable: a refused ack is as good as a lost one.
            let _ = core.send_with(self.server, ACK, Channel::Unreliable, |w| {
                w.write_var_u32(tick);
            });
        }
        self.ack_count = 0;
        self.ask_resends(core);
    }

    /// Asks the server to send again the states that named a node that arrived this frame (see
    /// [`RESEND`]), reliably, at most [`MAX_RESEND_IDS`] a message; a request refused by the
    /// transport is asked again next frame.
    fn ask_resends(&mut self, core: &mut Outbox) {
        while !self.resend.is_empty() {
            let n = self.resend.len().min(MAX_RESEND_IDS);
            let ids = &self.resend[..n];
            let sent = core.send_with(self.server, RESEND, Channel::Reliable, |w| {
                w.write_var_u32(n as u32);
                for &id in ids {
                    w.write_var_u32(id);
                }
            });
            if sent.is_err() {
                return;
            }
            self.resend.drain(..n);
        }
    }
}

/// The nodes a typed spawn makes, in its order: `store` creates each from the registered type
/// whose schema hash the spawn names, placed by its link (the root under `under`, the node of
/// the group's networked parent, if it has one, or beside it if the spawn says so). If one
/// cannot be made, the root is despawned again (taking what the store attached to it).
fn spawn_typed(
    store: &mut dyn Store,
    typed: &[TypedNode],
    under: Option<NodeId>,
) -> Result<Vec<NodeId>, &'static str> {
    let mut made: Vec<NodeId> = Vec::with_capacity(typed.len());
    for node in typed {
        let made_one = registered_type(node.schema).and_then(|ty| {
            let link = match (made.is_empty(), under, node.link) {
                (true, Some(parent), Link::Beside(_)) => Link::Beside(parent),
                (true, Some(parent), _) => Link::ChildOf(parent),
                (true, None, Link::Beside(_)) => return Err("a spawn beside no parent"),
                // Every link of a node after the root names one made before it (checked as
                // the spawn was read).
                _ => node.link.map(|j| made[j as usize]),
            };
            store
                .spawn_linked(ty, link)
                .ok_or("the storage makes no node of the type")
        });
        match made_one {
            Ok(node) => made.push(node),
            Err(error) => {
                if let Some(&root) = made.first() {
                    store.despawn(root);
                }
                return Err(error);
            }
        }
    }
    if made.is_empty() {
        return Err("a typed spawn without nodes");
    }
    Ok(made)
}

/// The registered type whose schema hash is `schema`.
fn registered_type(schema: u64) -> Result<std::any::TypeId, &'static str> {
    crate::replication::ReplicationRegistry::global()
        .iter()
        .find(|(_, ty)| ty.schema_hash() == schema)
        .map(|(_, ty)| ty.type_id())
        .ok_or("no registered type has the spawn's schema hash")
}
