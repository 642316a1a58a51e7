//! The server (and offline) side: networked node records, spawn groups, clients, handshake,
//! despawn detection, capture and snapshots.

use crate::refs::NetIdMap;
use crate::replication::multiplayer::rpc::limits::PeerRpcState;
use std::time::Duration;

use tracing::{debug, info, warn};

use crate::replication::server::bit_entries::BitEntries;
use crate::replication::server::changed_marks::ChangedMarks;
use crate::replication::server::client_list::ClientList;
use crate::replication::server::client_slot::ClientSlot;
use crate::replication::server::control_queue::QueuedMessage;
use crate::replication::server::entry_cache::EntryCache;
use crate::replication::server::group_vis::{next_slot, GroupVis, Vis};
use crate::replication::server::interest_state::Interest;
use crate::replication::server::net_ids::NetIds;
use crate::replication::server::node_table::{
    self, group_keys, group_nodes, Group, GroupKey, GroupTable, NetNode, NodeKey, NodeTable, STILL,
};
use crate::replication::server::shadow_column::{Changed, LastChanged};
use crate::replication::server::shadows::Shadows;
use crate::replication::server::shared_body::SharedBody;
use crate::replication::server::shared_snapshot::SharedSnapshot;
use crate::replication::server::viewers::Viewers;
use crate::replication::server::{snapshot, snapshot_bits};
use crate::replication::shared::columns::ValueAt;
use crate::replication::shared::config::{
    MultiplayerConfig, MultiplayerError, SnapshotEncoding, TickSource,
};
use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::instance::{
    as_scene, exists, instance_nodes, value_info, value_type,
};
use crate::replication::shared::net_id::NetId;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::{
    self, baseline_depth, snapshot_memory, ParentRef, SpawnHeaderRef, SpawnerPayload, ToServer,
    TypedNode, AUTHORITY, DESPAWN, MAX_NAME_BYTES, PARENT, SCENE_TYPED, SPAWN,
};
use crate::replication::shared::state::Shared;
use crate::replication::shared::subtree::subtree;
use crate::replication::shared::write_value::write_value;
use crate::replication::Audience;
use crate::scene::{NodeId, Scene};
use crate::store::{Link, Store};
use crate::tick::HORIZON;
use crate::transport::{Channel, DisconnectReason, PeerId};
use crate::wire::{BitWriter, DecodeError, NetReader, NetWriter};

/// A spawn made this frame, sent at the end of it.
pub(crate) struct Pending {
    pub(crate) group: Group,
    /// Node, authority and nearest networked ancestor of each id `first + i`.
    pub(crate) nodes: Vec<(NodeId, PeerId, u32)>,
}

/// How many nodes the aging sweep visits per capture ([`ServerState::age_some`]).
const AGED_PER_TICK: usize = 4;

/// How many distinct acknowledged ticks [`ServerState::acknowledged`] tells apart: the
/// distances (in ticks) clients stand at from the server, as many as commonly differ at once.
const ACK_CLASSES: usize = 6;

/// The clients that acknowledged one tick last ([`ServerState::acknowledged`]).
#[derive(Clone, Copy, Default)]
struct AckClass {
    tick: u32,
    /// How many.
    clients: usize,
    /// How many nodes with state they have between them.
    nodes: usize,
}

/// The server's replication state (also used offline).
pub(crate) struct ServerState {
    /// The tick of the latest capture. It wraps after 2³² ticks; every comparison with it is
    /// by serial-number arithmetic ([`crate::tick`]).
    pub(crate) tick: u32,
    /// Where the aging sweep ([`age_some`](Self::age_some)) is in the node table.
    age_cursor: usize,
    /// When the tick clock started: the beginning of the frame the server was made in.
    clock_from: Duration,
    /// When the next network tick is due, on the runtime's frame time (`None` until the first
    /// end of frame: one interval after `clock_from`, at the tick rate of then).
    next_tick_at: Option<Duration>,
    /// Whether the server has run: a frame ended or a tick passed since it was made, or it
    /// goes on from a stopped server's tick. Until then, a start takes the configured first
    /// tick and net id ([`start_at`](Self::start_at)).
    ran: bool,
    /// Fresh and freed net ids.
    pub(crate) ids: NetIds,
    /// How many sent snapshots the server remembers per client (from the tick rate:
    /// [`snapshot_memory`]).
    ring: usize,
    /// The tick rate the server started with (`None` offline: the configured one). Clients
    /// learn it in their welcome, and the snapshot memory and baseline reach derive from it:
    /// a rate changed in the settings while serving applies from the next start.
    serving_rate: Option<u8>,
    /// Scratch for [`check_states`](Self::check_states).
    pub(crate) scratch: NetWriter,
    /// The networked nodes, in stable slots (per-client state is kept per slot).
    pub(crate) nodes: NodeTable,
    /// The flushed spawn groups, in stable slots (per-client visibility is kept per slot).
    pub(crate) groups: GroupTable,
    /// The nodes whose state changed at the last capture, in net id order.
    pub(crate) changed: Vec<NodeKey>,
    /// Those of the capture before, and a number that changes whenever `changed` is not the
    /// same list as they are: a client whose pending list is a copy of `changed` keeps it
    /// while the same nodes go on changing, without comparing them.
    previous_changed: Vec<NodeKey>,
    changed_version: u64,
    /// This tick's snapshot entries, encoded once and copied into every client's snapshot.
    entries: EntryCache,
    /// This tick's snapshot sent to every client standing where it was written from.
    shared_snapshot: SharedSnapshot,
    /// The nodes' recent values and this tick's bit-packed states.
    bit_entries: BitEntries,
    /// Whether `bit_entries` records every change (the configured encoding is bit-packed).
    recording: bool,
    /// Scratch: a bit-packed snapshot's body; and the last one kept this tick.
    bit_body: BitWriter,
    shared_body: SharedBody,
    pub(crate) pending: Vec<Pending>,
    pub(crate) by_node: NetIdMap,
    pub(crate) clients: ClientList,
    pub(crate) joined: Vec<PeerId>,
    /// Peers whose control messages failed during the current operation.
    pub(crate) failed: Vec<PeerId>,
    /// Spawns withheld from a client, by group and client (see [`crate::replication::server::withheld`]).
    pub(crate) withheld: Vec<(GroupKey, PeerId)>,
    /// Interest management: policy, manual settings, evaluation schedule.
    pub(crate) interest: Interest,
    /// The storage's [`removals`](Store::removals) when every node in `nodes` was last found
    /// alive and holding a value of its shadow state's type: while the storage still has it,
    /// nothing can have been freed or retyped (nodes are only added alive), so the despawn
    /// check skips its scan.
    all_alive_at: Option<u64>,
    /// The shadow states' changed rows at the last capture (scratch, capacity kept).
    changed_rows: Vec<Changed>,
    /// The nodes whose references encode otherwise than when the states naming them were last
    /// sent ([`NetIdMap::take_renamed`]), at the last capture (scratch, capacity kept).
    renamed: Vec<NodeId>,
    /// The groups moved under a parent whose spawn had not gone out yet, by first net id: the
    /// clients are told after the frame's spawns (see `reparent`).
    pub(crate) moved: Vec<u32>,
    /// The shadow state of every networked node.
    pub(crate) shadows: Shadows,
    /// Which clients have each group.
    pub(crate) viewers: Viewers,
    /// Scratch for [`send_snapshots`](Self::send_snapshots): ready clients by view signature.
    by_view: Vec<(u64, usize)>,
    /// This tick's changed nodes by slot, when most nodes changed (see
    /// [`scatter_changes`](Self::scatter_changes)).
    pub(crate) changed_marks: ChangedMarks,
    /// The rate limits of the server's own calls to itself (the host's, or singleplayer's).
    pub(crate) host_rpc: PeerRpcState,
}

impl ServerState {
    /// A server at `tick` whose first spawn takes net id `first_net_id`, its tick clock
    /// starting at `clock_from` (the beginning of the current frame), remembering the last
    /// `ring` snapshots sent to each client
    /// ([`snapshot_memory`]).
    pub(crate) fn new(tick: u32, first_net_id: u32, clock_from: Duration, ring: usize) -> Self {
        Self {
            tick,
            age_cursor: 0,
            clock_from,
            next_tick_at: None,
            ran: false,
            ids: NetIds::new(first_net_id, ring),
            ring,
            serving_rate: None,
            nodes: NodeTable::default(),
            groups: GroupTable::default(),
            changed: Vec::new(),
            previous_changed: Vec::new(),
            changed_version: 0,
            entries: EntryCache::default(),
            shared_snapshot: SharedSnapshot::default(),
            bit_entries: BitEntries::default(),
            recording: false,
            bit_body: BitWriter::new(),
            shared_body: SharedBody::default(),
            pending: Vec::new(),
            by_node: NetIdMap::noting_names(),
            scratch: NetWriter::new(),
            clients: ClientList::default(),
            joined: Vec::new(),
            failed: Vec::new(),
            withheld: Vec::new(),
            interest: Interest::default(),
            all_alive_at: None,
            changed_rows: Vec::new(),
            renamed: Vec::new(),
            moved: Vec::new(),
            shadows: Shadows::default(),
            viewers: Viewers::default(),
            by_view: Vec::new(),
            changed_marks: ChangedMarks::default(),
            host_rpc: PeerRpcState::default(),
        }
    }

    /// The scene node of `net_id` (flushed or pending).
    pub(crate) fn node_of(&self, net_id: u32) -> Option<NodeId> {
        if let Some(n) = self.nodes.by_id(net_id) {
            return Some(n.node);
        }
        self.pending_node(net_id).map(|n| n.0)
    }

    /// The authority of a networked node.
    pub(crate) fn authority_of(&self, node: NodeId) -> Option<PeerId> {
        let id = self.by_node.get(node)?;
        if let Some(n) = self.nodes.by_id(id) {
            return Some(n.authority);
        }
        self.pending_node(id).map(|n| n.1)
    }

    /// The node `net_id` of a spawn still to go out: its node, authority and net parent.
    pub(crate) fn pending_node(&self, net_id: u32) -> Option<&(NodeId, PeerId, u32)> {
        self.pending.iter().find_map(|p| {
            let offset = net_id.checked_sub(p.group.first)?;
            p.nodes.get(offset as usize)
        })
    }

    /// The number the next spawned instance is named with (see [`NetIds::name_number`]).
    pub(crate) fn name_number(&self) -> u64 {
        self.ids.name_number()
    }

    /// Bit-packed: codes this tick's changed states against the ticks bit-packed clients
    /// acknowledged, before their snapshots ask (see [`BitEntries::precode`]): against the tick
    /// most of them acknowledged, only those of groups some client sees with `scatter`; and,
    /// when snapshots carry every change (no `budget`), against each of the other first few
    /// distinct ticks acknowledged too: the walks would code them against it. Under interest,
    /// only a tick whose clients have between them as many nodes as there are (then most
    /// changed nodes are seen by one of them, and coding the rest ahead in a stream costs less
    /// than the walks' coding of the others, one cache miss at a time); without, every client
    /// has every node.
    fn precode_changes(&mut self, scatter: bool, budget: usize) {
        // The most clients' first: a node's codings are found in the order made.
        let mut classes = self.acknowledged(true);
        classes.sort_unstable_by_key(|c| std::cmp::Reverse(c.clients));
        let mut acknowledged = classes.into_iter().filter(|c| c.clients > 0);
        let Some(most) = acknowledged.next().map(|c| c.tick) else {
            return;
        };
        let enough = self.nodes.len();
        let others = acknowledged.filter(|c| budget == 0 && (!scatter || c.nodes >= enough));
        let (groups, viewers) = (&self.groups, &self.viewers);
        let seen = |n: &NetNode| !scatter || seen_by_a_client(n, viewers, groups);
        let tables = (&self.nodes, &self.changed[..]);
        let states = &self.shadows;
        for (i, acked) in std::iter::once(most)
            .chain(others.map(|c| c.tick))
            .enumerate()
        {
            // The tick's first coding of each changed node needs no look for another.
            let first = i == 0;
            self.bit_entries
                .precode(states, tables, (acked, self.tick), (&seen, first));
        }
    }

    /// Byte format, while something restricts what clients see: encodes this tick's changed
    /// states that some client sees for the tick most byte-format clients acknowledged (see
    /// [`snapshot::prepare_changed`]). No one client's snapshot carries them all, as the first
    /// one's does when every client sees everything.
    fn prepare_changes(&mut self) {
        let Some(acked) = self.most_acknowledged(false) else {
            return;
        };
        let (groups, viewers) = (&self.groups, &self.viewers);
        let seen = |n: &NetNode| seen_by_a_client(n, viewers, groups);
        let tables = (&self.nodes, &self.changed[..]);
        snapshot::prepare_changed(&self.shadows, tables, acked, &mut self.entries, seen);
    }

    /// The tick the most ready clients of the encoding (`bits`: bit-packed) acknowledged last
    /// (among the first few distinct ones), if any is ready.
    fn most_acknowledged(&self, bits: bool) -> Option<u32> {
        let classes = self
            .acknowledged(bits)
            .into_iter()
            .filter(|c| c.clients > 0);
        classes.max_by_key(|c| c.clients).map(|c| c.tick)
    }

    /// The first few distinct ticks the ready clients of the encoding (`bits`: bit-packed)
    /// acknowledged last, in the order met, each with how many did and how many nodes they
    /// have between them; no clients past the last.
    fn acknowledged(&self, bits: bool) -> [AckClass; ACK_CLASSES] {
        let mut seen = [AckClass::default(); ACK_CLASSES];
        for c in self.clients.iter().filter(|c| c.ready && c.bits == bits) {
            let tick = c.stats.acknowledged_tick;
            if let Some(class) = seen.iter_mut().find(|k| k.clients == 0 || k.tick == tick) {
                class.tick = tick;
                class.clients += 1;
                class.nodes += c.send.node_count();
            }
        }
        seen
    }

    /// The oldest tick every ready client has acknowledged (the current tick without any).
    fn acked_by_all(&self) -> u32 {
        let ready = self.clients.iter().filter(|c| c.ready);
        // The oldest in serial order (ticks wrap).
        ready
            .map(|c| c.stats.acknowledged_tick)
            .min_by_key(|&t| crate::tick::tick_diff(t, self.tick))
            .unwrap_or(self.tick)
    }

    pub(crate) fn valid_authority(&self, peer: PeerId) -> bool {
        peer == PeerId::SERVER || self.joined.contains(&peer)
    }

    /// Registers a new instance rooted at `root` (already in the scene) as a pending spawn.
    /// Checks that clients can read the spawn of a node named `name` under `parent`: the name,
    /// and the path of a parent that is not networked (it travels by path), fit
    /// [`MAX_NAME_BYTES`].
    pub(crate) fn check_names(
        &self,
        scene: &Scene,
        parent: NodeId,
        name: &str,
    ) -> Result<(), MultiplayerError> {
        let path_len = match self.by_node.contains(parent) {
            true => 0,
            false => scene.path(parent).map_or(0, |p| p.len()),
        };
        match name.len().max(path_len) {
            len if len > MAX_NAME_BYTES => Err(MultiplayerError::NameTooLong {
                len,
                limit: MAX_NAME_BYTES,
            }),
            _ => Ok(()),
        }
    }

    /// Networks the group rooted at `root` (under `parent`, if the storage has a tree) as a
    /// spawn group of kind `kind` (a scene index, or one of the `SCENE_*` kinds) sent at the
    /// end of the frame: its nodes take a run of net ids. In the scene, a group is the instance
    /// (the root and its networked descendants); a [`SCENE_TYPED`] group, and any group of
    /// another storage, is its root alone. Returns the first id.
    ///
    /// # Errors
    ///
    /// [`NetIdsExhausted`](MultiplayerError::NetIdsExhausted): no run of free ids is long
    /// enough.
    pub(crate) fn add_group(
        &mut self,
        store: &dyn Store,
        root: NodeId,
        kind: i32,
        parent: Option<NodeId>,
        authority: PeerId,
    ) -> Result<u32, MultiplayerError> {
        let scene = as_scene(store).filter(|_| kind != SCENE_TYPED);
        let (nodes, mut typed) = match scene {
            Some(scene) => (instance_nodes(scene, root), Vec::new()),
            None => typed_group(store, root),
        };
        let count = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
        let acked = self.acked_by_all();
        let first = self
            .ids
            .allocate(count, self.tick, acked)
            .ok_or(MultiplayerError::NetIdsExhausted)?;
        let parent_ref = match parent.map(|p| (p, self.by_node.get(p))) {
            Some((_, Some(id))) => ParentRef::Net(id),
            Some((p, None)) => ParentRef::Path(scene.and_then(|s| s.path(p)).unwrap_or_default()),
            None => ParentRef::Path(String::new()),
        };
        // A typed group's root hangs under its networked parent, if it has one.
        let root_parent = match parent_ref {
            ParentRef::Net(id) => id,
            ParentRef::Path(_) => 0,
        };
        // Beside it, if the store says its root is another value of the parent's object.
        if root_parent != 0 && store.beside_parent(root) {
            if let Some(root) = typed.first_mut() {
                root.link = Link::Beside(0);
            }
        }
        let mut entries = Vec::with_capacity(nodes.len());
        for (offset, &node) in (0u32..).zip(&nodes) {
            // In a typed group, a node's parent is the node it is linked to (the root's, the
            // group's parent); in a scene, the nearest networked node up from it.
            let linked = typed
                .get(offset as usize)
                .filter(|_| offset != 0)
                .and_then(|t| t.link.to().copied());
            let unlinked = if offset == 0 { root_parent } else { 0 };
            let mut net_parent = linked.map_or(unlinked, |j| first + j);
            if let Some((scene, up)) = scene.and_then(|s| Some((s, s.parent(node)?))) {
                match self.by_node.networked_up(scene, up) {
                    0 => {}
                    id => net_parent = id,
                }
            }
            self.by_node
                .insert(node, first + offset, store.value_type(node));
            entries.push((node, authority, net_parent));
        }
        debug!(first, count, kind, "spawn queued");
        self.pending.push(Pending {
            group: Group {
                first,
                count,
                scene: kind,
                parent: parent_ref,
                up: entries.first().map_or(0, |n| n.2),
                name: scene
                    .and_then(|s| s.name(root))
                    .unwrap_or_default()
                    .to_owned(),
                authority,
                root,
                spawner: None,
                typed,
                client_owned: false,
                single: None,
            },
            nodes: entries,
        });
        Ok(first)
    }

    /// Attaches a spawner's payload to the pending spawn whose first net id is `first`.
    pub(crate) fn set_spawner_payload(&mut self, first: u32, payload: SpawnerPayload) {
        if let Some(p) = self.pending.iter_mut().find(|p| p.group.first == first) {
            p.group.spawner = Some(payload);
        }
    }

    /// Sets the authority of the networked `node` (and its networked descendants if
    /// `recursive`), and tells joined clients.
    pub(crate) fn set_authority(
        &mut self,
        core: Option<&mut Outbox>,
        shared: &mut Shared,
        node: NodeId,
        peer: PeerId,
        recursive: bool,
    ) -> Option<()> {
        let top = self.by_node.get(node)?;
        // The scene's descendants; in another storage, the nodes spawned under it (and the
        // flushed ones clients also find under it, through nodes no longer alive).
        let (targets, kept) = match (recursive, shared.scene()) {
            (false, _) => (vec![node], Vec::new()),
            (true, Some(scene)) => (scene.depth_first(node).collect(), Vec::new()),
            (true, None) => self.spawned_under(top, &*shared.store),
        };
        let mut top_flushed = false;
        for target in targets {
            let Some(id) = self.by_node.get(target) else {
                continue;
            };
            top_flushed |= self.assign_authority(id, peer) && id == top;
            // Owned groups are always relevant to their owner: decided again at the frame's end.
            if let Some(g) = self.group_of(id) {
                self.interest.groups_due.push(g.id());
            }
        }
        shared
            .events
            .push(MultiplayerEvent::AuthorityChanged { node, peer });
        if top_flushed {
            if let Some(core) = core {
                self.tell_authority(core, shared, (top, peer, recursive));
                // Clients walk the subtree as they were told it: those it passed by keep their
                // own authority, told after.
                for (id, authority) in kept {
                    self.tell_authority(core, shared, (id, authority, false));
                }
                self.drop_failed(core, shared);
            }
        }
        Some(())
    }

    /// Tells every joined client that `peer` has authority over the node `id` (and over the
    /// nodes spawned under it, `recursive`).
    fn tell_authority(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        (id, peer, recursive): (u32, PeerId, bool),
    ) {
        let encode = |w: &mut NetWriter| {
            w.write_var_u32(id);
            w.write_var_u64(peer.0);
            w.write_bool(recursive);
        };
        // Every joined client gets it (one that lacks the node ignores it). When every
        // connection has joined, that is every connection: encode once.
        let all_joined = self.joined.len() == core.peers().len()
            && core.peers().iter().all(|p| self.joined.contains(p));
        if !all_joined {
            for c in 0..self.clients.len() {
                if self.clients[c].ready {
                    let to = self.clients[c].peer;
                    self.send_control(core, shared, to, AUTHORITY, encode);
                }
            }
            return;
        }
        let mut refused = Vec::new();
        let (_, len) =
            core.broadcast_with_failures(AUTHORITY, Channel::Reliable, &mut refused, encode);
        for c in self.clients.iter_mut().filter(|c| c.ready) {
            if !refused.contains(&c.peer) {
                c.stats.bytes_sent += len as u64;
            }
        }
        for to in refused {
            warn!(%to, id = AUTHORITY, "control message refused; disconnecting the client");
            shared.stats.control_send_failures += 1;
            if !self.failed.contains(&to) {
                self.failed.push(to);
            }
        }
    }

    /// Makes `peer` the authority of the node `id` (flushed or pending); returns whether it is
    /// flushed. A flushed node with owner conditions owes its old and new owner a resync:
    /// `owner_only` / `skip_owner` members became visible to them, so their next entries carry
    /// everything they receive.
    fn assign_authority(&mut self, id: u32, peer: PeerId) -> bool {
        let tick = self.tick;
        let Some(key) = self.nodes.find(id) else {
            for p in &mut self.pending {
                if let Some(entry) = id
                    .checked_sub(p.group.first)
                    .and_then(|o| p.nodes.get_mut(o as usize))
                {
                    entry.1 = peer;
                }
            }
            return false;
        };
        let Some(n) = self.nodes.get_mut(key) else {
            return false;
        };
        let old = std::mem::replace(&mut n.authority, peer);
        let conditional = n.has_state() && n.owner_conditions;
        let g = n.group;
        if peer != PeerId::SERVER {
            if let Some(group) = self.groups.get_mut(g) {
                group.client_owned = true;
            }
        }
        if old != peer && conditional {
            for c in &mut self.clients {
                if c.ready && (c.peer == old || c.peer == peer) {
                    c.send.owe_resync(key, tick);
                }
            }
        }
        true
    }

    /// Sends a reliable control message; a refusal marks the client for disconnection.
    pub(crate) fn send_control(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        peer: PeerId,
        id: u16,
        encode: impl FnOnce(&mut NetWriter),
    ) -> bool {
        let c = self.clients.index_of(peer);
        self.send_control_to(core, shared, peer, c, id, encode)
    }

    /// [`send_control`](Self::send_control) to the client at `c`.
    pub(crate) fn send_control_at(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        c: usize,
        id: u16,
        encode: impl FnOnce(&mut NetWriter),
    ) -> bool {
        let peer = self.clients[c].peer;
        self.send_control_to(core, shared, peer, Some(c), id, encode)
    }

    /// [`send_control`](Self::send_control) to `peer`, whose slot is at `c` if it has one
    /// (after what is queued for it).
    fn send_control_to(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        peer: PeerId,
        c: Option<usize>,
        id: u16,
        encode: impl FnOnce(&mut NetWriter),
    ) -> bool {
        if let Some(c) = c {
            self.flush_queued(core, shared, c);
        }
        self.send_reliable_to(core, shared, peer, c, id, encode)
    }

    /// Queues the despawn of the group whose first net id is `first` for the client at `c`.
    pub(crate) fn queue_despawn(&mut self, c: usize, first: u32) {
        self.clients[c].queue.despawn(first);
    }

    /// Sends what is queued for the client at `c`, in order, as
    /// [`ControlQueue::messages`](crate::replication::server::control_queue::ControlQueue::messages)
    /// gives it. Called before any other control message to the client, so the order of what
    /// it is sent stays the order of what was decided. Stops at a message the transport
    /// refuses (the client is then marked failed).
    pub(crate) fn flush_queued(&mut self, core: &mut Outbox, shared: &mut Shared, c: usize) {
        let Some(client) = self.clients.get_mut(c) else {
            return;
        };
        if client.queue.is_empty() {
            return;
        }
        let (peer, mut queue) = (client.peer, std::mem::take(&mut client.queue));
        for message in queue.messages() {
            let sent = match message {
                QueuedMessage::Despawns(ids) => {
                    self.send_reliable_to(core, shared, peer, Some(c), DESPAWN, |w| {
                        ids.for_each(|first| w.write_var_u32(first));
                    })
                }
                QueuedMessage::Spawns(bytes) => {
                    self.send_reliable_to(core, shared, peer, Some(c), SPAWN, |w| {
                        w.write_bytes(bytes);
                    })
                }
                QueuedMessage::Parent(bytes) => {
                    self.send_reliable_to(core, shared, peer, Some(c), PARENT, |w| {
                        w.write_bytes(bytes);
                    })
                }
            };
            if !sent {
                break;
            }
        }
        queue.clear();
        self.clients[c].queue = queue;
    }

    /// [`flush_queued`](Self::flush_queued) for every client.
    pub(crate) fn flush_all_queued(&mut self, core: &mut Outbox, shared: &mut Shared) {
        for c in 0..self.clients.len() {
            self.flush_queued(core, shared, c);
        }
    }

    /// Sends a reliable control message to `peer` (slot `c`), counting its bytes; a refusal
    /// marks the client failed.
    fn send_reliable_to(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        peer: PeerId,
        c: Option<usize>,
        id: u16,
        encode: impl FnOnce(&mut NetWriter),
    ) -> bool {
        let before = core.stats().bytes_sent;
        match core.send_with(peer, id, Channel::Reliable, encode) {
            Ok(()) => {
                let sent = core.stats().bytes_sent - before;
                if let Some(client) = c.and_then(|c| self.clients.get_mut(c)) {
                    client.stats.bytes_sent += sent;
                }
                true
            }
            Err(error) => {
                warn!(%peer, id, %error, "control message refused; disconnecting the client");
                shared.stats.control_send_failures += 1;
                if !self.failed.contains(&peer) {
                    self.failed.push(peer);
                }
                false
            }
        }
    }

    /// Disconnects every client whose control messages failed
    /// ([`ReliableSendFailed`](DisconnectReason::ReliableSendFailed)).
    pub(crate) fn drop_failed(&mut self, core: &mut Outbox, shared: &mut Shared) {
        while let Some(peer) = self.failed.pop() {
            let reason = DisconnectReason::ReliableSendFailed;
            core.disconnect(peer, reason);
            self.peer_left(Some(&mut *core), shared, peer, reason);
        }
    }

    /// The server starts with `config` as it is now (it may have changed since the server was
    /// made offline): it remembers the tick rate's [`snapshot_memory`] of snapshots for each
    /// client, and holds freed net ids as long; bit-packed entries' baselines reach back its
    /// [`baseline_depth`]. A server that has neither run a frame nor
    /// spawned anything yet starts at the configured first tick and net id.
    pub(crate) fn start_at(&mut self, config: &MultiplayerConfig) {
        let rate = config.tick_rate.max(1);
        self.serving_rate = Some(rate);
        self.ring = snapshot_memory(rate);
        self.bit_entries.set_depth(baseline_depth(rate));
        if !self.ran && self.nodes.len() == 0 && self.pending.is_empty() {
            self.tick = config.first_tick;
            self.ids = NetIds::new(config.first_net_id, self.ring);
        }
        self.ids.set_hold(self.ring);
    }

    /// Whether the server has run (see `ran`).
    pub(crate) fn has_run(&self) -> bool {
        self.ran
    }

    /// A fresh server goes on from a `stopped` one: from its tick and net ids, as a server
    /// that has run (see [`start_at`](Self::start_at)), with its interest policy (its index
    /// built anew for the nodes networked from now on).
    pub(crate) fn go_on_from(&mut self, stopped: ServerState) {
        self.tick = stopped.tick;
        self.ids = stopped.ids;
        self.ran = true;
        self.interest.policy = stopped.interest.policy;
        self.interest.every = stopped.interest.every;
        self.interest.all_due = true;
    }

    /// A transport-level connection: the client must say hello within the handshake timeout.
    pub(crate) fn peer_connected(&mut self, peer: PeerId, now: Duration) {
        if self.clients.index_of(peer).is_none() {
            self.clients.push(ClientSlot::new(peer, now, self.ring));
        }
    }

    /// A client is gone (disconnected, kicked, timed out).
    pub(crate) fn peer_left(
        &mut self,
        core: Option<&mut Outbox>,
        shared: &mut Shared,
        peer: PeerId,
        reason: DisconnectReason,
    ) {
        let Some(index) = self.clients.index_of(peer) else {
            return;
        };
        let last = self.clients.len() - 1;
        let slot = self.clients.swap_remove(index);
        self.viewers.move_client(last, index);
        self.interest.forget_peer(peer);
        if !slot.ready {
            debug!(%peer, %reason, "client left before joining");
            return;
        }
        self.joined.retain(|&p| p != peer);
        info!(%peer, %reason, "client left");
        shared
            .events
            .push(MultiplayerEvent::PeerLeft { peer, reason });
        let owned: Vec<NodeId> = self
            .nodes
            .values()
            .filter(|n| n.authority == peer)
            .map(|n| n.node)
            .chain(
                self.pending
                    .iter()
                    .flat_map(|p| p.nodes.iter().filter(|n| n.1 == peer).map(|n| n.0)),
            )
            .collect();
        if shared.config.despawn_owned_on_disconnect {
            // Freed nodes are despawned at the end of the frame.
            for node in owned {
                shared.store.despawn(node);
            }
        } else {
            let mut core = core;
            for node in owned {
                self.set_authority(core.as_deref_mut(), shared, node, PeerId::SERVER, false);
            }
        }
    }

    /// A replication message from a client, to its handler. Inputs past the flood threshold
    /// are dropped unread.
    pub(crate) fn on_message(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        peer: PeerId,
        kind: ToServer,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        match kind {
            ToServer::Hello => self.on_hello(core, shared, peer, r),
            ToServer::Input => {
                if self.input_flood(core, shared, peer) {
                    return Ok(true);
                }
                shared.misuse.input(shared.now, peer);
                self.on_input(peer, r)
            }
            ToServer::Resend => self.on_resend(shared, peer, r),
            ToServer::Ack => {
                let tick = r.read_var_u32()?;
                r.finish()?;
                let now = shared.now;
                let Some(c) = self.clients.ready_index_of(peer) else {
                    shared.stats.control_dropped += 1;
                    return Ok(true);
                };
                let c = &mut self.clients[c];
                c.last_heard = now;
                if let Some(rtt) = c.send.receive_ack(tick, now) {
                    c.stats.add_round_trip(rtt);
                    if crate::tick::tick_after(tick, c.stats.acknowledged_tick) {
                        c.stats.acknowledged_tick = tick;
                        c.last_progress = now;
                    }
                }
                Ok(true)
            }
        }
    }

    /// Checks that every client can read the states of the group at `root` (no string
    /// member over [`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)): in the scene the
    /// instance, elsewhere the root alone.
    pub(crate) fn check_states(
        &mut self,
        store: &mut dyn Store,
        root: NodeId,
    ) -> Result<(), MultiplayerError> {
        let nodes = match as_scene(store) {
            Some(scene) => instance_nodes(scene, root),
            None => typed_group(store, root).0,
        };
        for node in nodes {
            self.scratch.clear();
            if write_value(store, node, &mut self.scratch) && self.scratch.over_limit() {
                return Err(MultiplayerError::StateOverLimit(node));
            }
        }
        Ok(())
    }

    /// Queues group `g`'s spawn, with its state as of now, for the client at `c` (see
    /// [`ControlQueue`](crate::replication::server::control_queue::ControlQueue)), then sends
    /// the authority of every node whose authority differs from the group's. Returns whether
    /// the spawn is queued (it is withheld from the client while a state does not fit the
    /// wire, see [`crate::replication::server::withheld`]).
    pub(crate) fn queue_group(
        &mut self,
        core: &mut Outbox,
        shared: &mut Shared,
        g: GroupKey,
        c: usize,
    ) -> bool {
        let peer = self.clients[c].peer;
        let Some(group) = self.groups.get(g) else {
            return false;
        };
        let header = SpawnHeaderRef {
            first_net_id: group.first,
            scene: group.scene,
            parent: &group.parent,
            name: &group.name,
            authority: group.authority.0,
            count: group.count,
            spawner: group.spawner.as_ref(),
            typed: &group.typed,
        };
        // A group of one node knows its key (the loop below runs once, with it); the keys of
        // the others are found by their span of the node table's ids.
        let (group_authority, single) = (group.authority, group.single);
        let span = match single {
            Some(_) => 0..1,
            None => self.nodes.span(group.first, group.end()),
        };
        let nodes = group_nodes(&self.nodes, group);
        let (store, shadows) = (&*shared.store, &self.shadows);
        let queued = self.clients[c].queue.spawn(&mut self.scratch, |w| {
            write_spawn(w, &header, nodes, store, shadows, peer);
        });
        if !queued {
            self.withhold_group(shared, g, peer);
            return false;
        }
        for i in span {
            let key = single.unwrap_or_else(|| self.nodes.keys()[i]);
            let Some(n) = self.nodes.get(key) else {
                continue;
            };
            if n.authority != group_authority && exists(&*shared.store, n.node) {
                let (id, authority) = (n.net_id, n.authority);
                self.send_control_at(core, shared, c, AUTHORITY, |w| {
                    w.write_var_u32(id);
                    w.write_var_u64(authority.0);
                    w.write_bool(false);
                });
            }
        }
        true
    }

    /// Network ticks per second: the rate the server started with, or offline the one in
    /// `config`.
    pub(crate) fn tick_rate(&self, config: &MultiplayerConfig) -> u8 {
        self.serving_rate.unwrap_or(config.tick_rate).max(1)
    }

    /// How many ticks the coming [`end_frame`](Self::end_frame) advances by at `now` under
    /// `config` (what a simulation steps this frame), and when the tick after them is due.
    /// The tick clock derives from the frame time alone, at the [rate](Self::tick_rate).
    pub(crate) fn ticks_due(&self, now: Duration, config: &MultiplayerConfig) -> (u32, Duration) {
        let interval = Duration::from_secs(1) / u32::from(self.tick_rate(config));
        let at = self.next_tick_at.unwrap_or(self.clock_from + interval);
        if now < at {
            return (0, at);
        }
        let ticks = (now - at).as_nanos() / interval.as_nanos() + 1;
        let ticks = u32::try_from(ticks).unwrap_or(u32::MAX);
        (ticks, at + interval.saturating_mul(ticks))
    }

    /// An input message from `sender`: its inputs go into the client's buffer (a client that
    /// has not joined is not listening to yet: dropped).
    pub(crate) fn on_input(
        &mut self,
        sender: PeerId,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        let Some(client) = self
            .clients
            .ready_index_of(sender)
            .map(|c| &mut self.clients[c])
        else {
            return Ok(true);
        };
        let buffer = client.inputs.get_or_insert_with(Default::default);
        crate::replication::shared::input_wire::read_inputs(r, |input| buffer.receive(input))?;
        Ok(true)
    }

    /// End of frame: despawns, spawns, timeouts, and on a net tick capture and snapshots.
    pub(crate) fn end_frame(&mut self, mut core: Option<&mut Outbox>, shared: &mut Shared) {
        self.ran = true;
        if let Some(core) = core.as_deref_mut() {
            core.set_tick(self.tick);
        }
        if self.all_alive_at != Some(shared.store.removals()) {
            self.free_retyped(shared);
            let store = &*shared.store;
            if self.nodes.values().any(|n| !store.alive(n.node)) {
                self.despawn_freed(core.as_deref_mut(), shared);
            }
            // Every node left is alive and of its type (despawn_freed forgets the others); if
            // the storage removed more meanwhile its value changed too, and the next frame
            // scans again.
            self.all_alive_at = Some(shared.store.removals());
        }
        if !self.pending.is_empty() {
            self.flush_spawns(core.as_deref_mut(), shared);
        }
        match core.as_deref_mut() {
            Some(core) => {
                if !self.moved.is_empty() {
                    self.tell_moved_late(core, shared);
                }
                self.check_timeouts(core, shared);
                self.update_interest(core, shared);
            }
            None => self.moved.clear(),
        }
        if shared.config.tick_source == TickSource::OwnClock {
            let (ticks, next) = self.ticks_due(shared.now, &shared.config);
            self.next_tick_at = Some(next);
            if ticks > 0 {
                self.advance_ticks(ticks, core, shared);
            }
        }
        shared.stats.networked_nodes = self.nodes.len();
    }

    /// Advances the tick by `ticks`: one capture of every value, stamped with the new tick,
    /// and one snapshot for every client (through `core`; none offline).
    pub(crate) fn advance_ticks(
        &mut self,
        ticks: u32,
        core: Option<&mut Outbox>,
        shared: &mut Shared,
    ) {
        self.ran = true;
        self.tick = self.tick.wrapping_add(ticks);
        // States naming a node whose references encode otherwise now go out again whole.
        self.by_node.take_renamed(&mut self.renamed);
        self.renamed.sort_unstable();
        std::mem::swap(&mut self.changed, &mut self.previous_changed);
        let restamped = node_table::capture(
            &mut self.nodes,
            &mut self.shadows,
            &mut *shared.store,
            self.tick,
            &self.renamed,
            &mut self.changed,
            &mut self.changed_rows,
        );
        if restamped < self.changed_rows.len() {
            self.owe_whole_naming(restamped);
        }
        if self.changed != self.previous_changed {
            self.changed_version = self.changed_version.wrapping_add(1);
        }
        self.record_values(shared);
        self.age_some();
        if let Some(core) = core {
            core.set_tick(self.tick);
            if !self.withheld.is_empty() {
                self.retry_withheld(core, shared);
            }
            self.send_snapshots(core, shared);
        }
        if self.recording {
            let changed = &self.changed;
            let (states, nodes) = (&self.shadows, &self.nodes);
            self.bit_entries
                .record_owed(states, nodes, changed, self.tick);
        }
    }

    /// With the bit-packed encoding configured, or a client joined with it (the encoding is
    /// each client's from its handshake on, whatever the setting became since), notes that the
    /// values of every node that changed at this tick's capture are to be recorded, by the
    /// tick's snapshots or after them (from nothing when recording starts, so that no gap goes
    /// unseen).
    fn record_values(&mut self, shared: &Shared) {
        let on = shared.config.snapshot_encoding == SnapshotEncoding::Bits
            || self.clients.iter().any(|c| c.bits);
        if on != self.recording {
            self.bit_entries.clear();
            self.recording = on;
        }
        if !on {
            return;
        }
        // Every changed node came from a shadow state's row; a node without one is never
        // recorded (`BitEntries::record` passes over it), so no lookup sorts them out here.
        self.bit_entries.owe_all(&self.changed);
    }

    /// Ages the next [`AGED_PER_TICK`] nodes of the table (round robin), once per capture:
    /// every tick stored for one (its shadow state's change ticks, each client's acknowledged
    /// tick and resync) that is older than [`HORIZON`] moves up to that age, so that no stored
    /// tick gets 2³¹ ticks behind the server's, where serial-number arithmetic would take it
    /// for a newer one. A node is visited every `nodes / AGED_PER_TICK` captures, far within
    /// the 2³⁰ ticks of slack (one capture per frame that reaches a network tick: a frame
    /// spanning several ticks captures once). Costs a few nodes per capture, and allocates
    /// nothing.
    fn age_some(&mut self) {
        let floor = self.tick.wrapping_sub(HORIZON);
        for c in self.clients.iter_mut().filter(|c| c.ready) {
            c.send.age_all_acked(floor);
        }
        let len = self.nodes.keys().len();
        for _ in 0..AGED_PER_TICK.min(len) {
            if self.age_cursor >= len {
                self.age_cursor = 0;
            }
            let key = self.nodes.keys()[self.age_cursor];
            self.age_cursor += 1;
            let Some(n) = self.nodes.get(key) else {
                continue;
            };
            if !n.carries_state() {
                continue;
            }
            let stale = |t: u32| crate::tick::tick_after(floor, t);
            let acks_stale = self
                .clients
                .iter()
                .any(|c| c.ready && c.send.stale(key, floor));
            if !(n.last_changed.last.into_iter().any(stale) || acks_stale) {
                continue;
            }
            for c in self.clients.iter_mut().filter(|c| c.ready) {
                c.send.age(key, n, floor, self.tick, c.peer);
            }
            let node = n.node;
            if let (Some(last_changed), Some(n)) =
                (self.shadows.age(node, floor), self.nodes.get_mut(key))
            {
                n.last_changed = last_changed;
            }
        }
    }

    /// The states this tick's capture gave new stamps because they name a node named
    /// otherwise now (the rows of `changed_rows` from `from` on) go out again whole to every
    /// client that has them, `initial_only` members included (a reference among them may have
    /// gone as none): each is owed a resync that this tick's snapshot carries
    /// ([`SendState::owe_whole_resync`](crate::replication::server::send_state::SendState::owe_whole_resync)).
    fn owe_whole_naming(&mut self, from: usize) {
        let after = self.tick.wrapping_sub(1);
        for row in self.changed_rows.get(from..).unwrap_or_default() {
            let Some(key) = self.nodes.key_at_slot(row.tag as usize) else {
                continue;
            };
            for c in self.clients.iter_mut().filter(|c| c.ready) {
                c.send.owe_whole_resync(key, after);
            }
        }
    }

    fn send_snapshots(&mut self, core: &mut Outbox, shared: &mut Shared) {
        let budget = shared.config.max_snapshot_bytes;
        let (tick, now) = (self.tick, shared.now);
        let readers = self.clients.iter().filter(|c| c.ready).count();
        self.entries.begin(self.nodes.slot_count(), readers > 1);
        if self.recording {
            // (Bit-packed clients only: a byte-format server keeps no table of them.)
            self.bit_entries.begin(self.nodes.slot_count());
        }
        let mut prepared = !self.entries.sharing();
        self.shared_snapshot.clear();
        // While something restricts what clients see, each walks only the changes it sees.
        let scatter = !self.interest.unrestricted();
        if scatter {
            let changed = std::mem::take(&mut self.changed);
            self.scatter_changes(&changed);
            self.changed = changed;
        }
        if self.recording {
            self.precode_changes(scatter, budget);
        }
        if scatter && self.entries.sharing() {
            self.prepare_changes();
        }
        // Clients that see the same groups one after the other, so that they can share a
        // snapshot; one that sees what no other does does not try.
        let mut by_view = std::mem::take(&mut self.by_view);
        by_view.clear();
        by_view.extend(
            self.clients
                .iter()
                .enumerate()
                .filter(|(_, c)| c.ready)
                .map(|(i, c)| (c.view, i)),
        );
        if scatter {
            by_view.sort_unstable();
        }
        for (at, &(view, c)) in by_view.iter().enumerate() {
            let alone = !(at > 0 && by_view[at - 1].0 == view)
                && by_view.get(at + 1).map_or(true, |next| next.0 != view);
            let client = &mut self.clients[c];
            let peer = client.peer;
            let (nodes, groups) = (&self.nodes, &self.groups);
            let ClientSlot {
                send,
                visible_changed,
                ..
            } = client;
            match scatter {
                true => send.refresh_seen((visible_changed, None), nodes, peer),
                // Without restrictions, a client that has every node sees every change.
                false if send.has_every(nodes) => {
                    let changed = (&self.changed[..], Some(self.changed_version));
                    send.refresh_seen(changed, nodes, peer);
                }
                false => send.refresh(&self.changed, nodes, peer),
            }
            let (scene, entries) = (&self.shadows, &mut self.entries);
            let at = snapshot::SnapshotAt { budget, tick, now };
            if !prepared && !client.bits {
                // The first byte-format snapshot's entries, one pass per type: most clients
                // acknowledged what this one did, and find them encoded. (Bit-packed snapshots
                // code their own entries.)
                snapshot::prepare(scene, nodes, groups, client, entries, at);
                prepared = true;
            }
            let common = &mut self.shared_snapshot;
            // Entries carrying `initial_only` members are this client's alone.
            let apart = client.send.owes_whole();
            let shares = budget == 0
                && !alone
                && !apart
                && !client.bits
                && entries.sharing()
                && SharedSnapshot::fits(client);
            if shares && common.rewrite_for(client, nodes) {
                shared.stats.snapshots_shared += common.take_shared();
                common.build(scene, nodes, client, entries);
            }
            let mut size = 0;
            let mut truncated = false;
            let mut copied = false;
            let bits = &mut self.bit_entries;
            let body = (&mut self.bit_body, &mut self.shared_body);
            let result = core.send_with(peer, protocol::SNAPSHOT, Channel::Unreliable, |w| {
                let written = if client.bits {
                    let tables = (scene, nodes, groups);
                    let how = (at, alone, scatter);
                    snapshot_bits::write(w, body, tables, client, entries, bits, how)
                } else {
                    let common =
                        (!apart).then(|| common.write(w, scene, nodes, client, entries, at));
                    match common.flatten() {
                        Some(written) => {
                            copied = true;
                            written
                        }
                        None => snapshot::write(w, scene, nodes, groups, client, entries, at),
                    }
                };
                truncated = written.truncated;
                size = w.len();
            });
            if result.is_ok() && !truncated && client.tiered {
                advance_tiers(client, groups, tick);
            }
            // A snapshot the transport refused was not sent (the bus counts it in
            // `send_failures`); it is not counted here.
            if result.is_ok() {
                let stats = &mut shared.stats;
                stats.snapshots_sent += 1;
                stats.snapshots_truncated += u64::from(truncated);
                if copied {
                    common.note_sent();
                }
                stats.last_snapshot_bytes = size;
                stats.largest_snapshot_bytes = stats.largest_snapshot_bytes.max(size);
                client.stats.snapshots_sent += 1;
                client.stats.bytes_sent += size as u64;
                client.stats.last_snapshot_bytes = size;
            }
        }
        self.by_view = by_view;
        shared.stats.snapshots_shared += self.shared_snapshot.take_shared();
        shared.stats.snapshots_shared += self.shared_body.take_shared();
        // The states coded for bit-packed clients, and the byte entries written for the others.
        shared.stats.entries_encoded +=
            (self.bit_entries.encoded() + self.entries.encoded()) as u64;
        for key in self.entries.take_refused() {
            if let Some(n) = self.nodes.get(key) {
                shared.stats.states_over_limit += 1;
                shared
                    .events
                    .push(MultiplayerEvent::StateOverLimit { node: n.node });
            }
        }
    }

    fn check_timeouts(&mut self, core: &mut Outbox, shared: &mut Shared) {
        let now = shared.now;
        let peer_timeout = shared.config.peer_timeout;
        let handshake_timeout = shared.config.handshake_timeout;
        // Not `self.failed`: leaving can send control messages (authority handed back to the
        // server) whose failures drain that list with another reason.
        let mut expired = Vec::new();
        for c in &self.clients {
            let late = if c.ready {
                now.saturating_sub(c.last_heard) > peer_timeout
                    || now.saturating_sub(c.last_progress) > peer_timeout
            } else {
                now.saturating_sub(c.connected_at) > handshake_timeout
            };
            if late {
                expired.push(c.peer);
            }
        }
        for peer in expired {
            info!(%peer, "client timed out");
            core.disconnect(peer, DisconnectReason::Timeout);
            self.peer_left(Some(&mut *core), shared, peer, DisconnectReason::Timeout);
        }
    }

    /// Frees every networked node whose value was cleared or replaced by a value of another
    /// type since its spawn ([`Scene::clear_value`], [`Scene::set_value`]): its shadow state
    /// could no longer capture it, and clients built it with the old type, so it is despawned
    /// like any freed node (with its subtree) instead of going stale. Runs only after the
    /// storage removed something.
    fn free_retyped(&mut self, shared: &mut Shared) {
        let (store, shadows) = (&*shared.store, &self.shadows);
        let retyped: Vec<NodeId> = self
            .nodes
            .values()
            .filter(|n| n.has_state() && exists(store, n.node) && !shadows.matches(store, n.node))
            .map(|n| n.node)
            .collect();
        for node in retyped {
            warn!(
                %node,
                "a networked node's value was cleared or replaced by another type; despawning it"
            );
            shared.store.despawn(node);
        }
    }

    /// Sends one despawn per freed node whose networked parent is still alive, and forgets
    /// every freed node.
    fn despawn_freed(&mut self, mut core: Option<&mut Outbox>, shared: &mut Shared) {
        let store = &*shared.store;
        let (mut explicit, mut named) = (Vec::new(), Vec::new());
        for n in self.nodes.values() {
            if store.alive(n.node) {
                continue;
            }
            if self.by_node.was_named(n.node) {
                named.push(n.net_id);
            }
            let parent = self.nodes.by_id(n.net_parent);
            let parent_alive = parent.is_some_and(|p| store.alive(p.node));
            let parent_gone_now = n.net_parent != 0 && parent.is_some() && !parent_alive;
            if !parent_gone_now {
                explicit.push(n.net_id);
            }
        }
        for &id in &explicit {
            debug!(net_id = id, "despawn");
            shared.stats.despawns += 1;
            if core.is_some() {
                for c in 0..self.clients.len() {
                    if self.clients[c].ready && self.knows(c, id) {
                        self.queue_despawn(c, id);
                    }
                }
            }
        }
        if core.is_some() {
            self.tell_named_gone(&named);
        }
        if let Some(core) = core.as_deref_mut() {
            self.flush_all_queued(core, shared);
        }
        // One pass over each table, not one removal per freed node (quadratic when many nodes
        // go at once); each client's send state then forgets the nodes in one pass too.
        let store = &*shared.store;
        let by_node = &self.by_node;
        let mut dropped = Vec::new();
        let mut gone_ids = Vec::new();
        let groups = &self.groups;
        let (ids, tick, bits) = (&mut self.ids, self.tick, &mut self.bit_entries);
        self.nodes.retain(|key, n| {
            let attached = store.alive(n.node);
            if !attached {
                by_node.remove(n.node);
                dropped.push((key, n.node, n.group));
                gone_ids.push(n.net_id);
                bits.forget(key);
                if groups.get(n.group).is_none() {
                    // Its group went before it: nothing names its id any more.
                    ids.free(n.net_id, 1, tick);
                }
            }
            attached
        });
        for client in &mut self.clients {
            client.send.forget(&gone_ids);
        }
        // Viewers count the nodes they see: those that left, then the groups that go. A group
        // of one whose node left has none: its keys are searched for (and none found).
        for &(key, _, g) in &dropped {
            if let Some(group) = self.groups.get_mut(g).filter(|g| g.single == Some(key)) {
                group.single = None;
            }
            if self
                .groups
                .get(g)
                .is_some_and(|group| store.alive(group.root))
            {
                self.node_left_group(g);
            }
        }
        let leaving: Vec<(GroupKey, usize)> = self
            .groups
            .iter()
            .filter(|(_, g)| !store.alive(g.root))
            .map(|(k, g)| (k, group_keys(&self.nodes, g).len()))
            .collect();
        for (g, nodes) in leaving {
            self.forget_viewers(g, nodes);
            for client in &mut self.clients {
                client.vis.forget(g);
            }
            self.forget_interest(g);
        }
        let mut gone = Vec::new();
        self.groups.retain(|_, g| {
            let attached = store.alive(g.root);
            if !attached {
                gone.push((g.first, g.end()));
            }
            attached
        });
        // A group's ids come back, but for its nodes that live on elsewhere in the tree.
        for (first, end) in gone {
            let mut run = first;
            for id in first..end {
                if self.nodes.by_id(id).is_some() {
                    self.ids.free(run, id - run, tick);
                    run = id + 1;
                }
            }
            self.ids.free(run, end - run, tick);
        }
        // A detached node stays in the scene as a plain node: it is no longer captured.
        for (_, node, _) in dropped {
            self.shadows.stop(node);
        }
        if let Some(core) = core {
            self.drop_failed(core, shared);
        }
    }

    /// The networked node `top` and every node spawned under it, by their net parents, through
    /// nodes still alive in `store` (one freed, or no longer networked by its engine, does not
    /// hold what was spawned under it any more: that goes at the frame's end, or is kept apart
    /// by its engine). Nodes whose spawn is still to go out (networked since the last frame's
    /// end) count too. Besides, the flushed nodes still alive that clients find under `top`
    /// only through nodes no longer alive (the way they were told), with their authorities.
    fn spawned_under(&self, top: u32, store: &dyn Store) -> (Vec<NodeId>, Vec<(u32, PeerId)>) {
        let sent = self
            .nodes
            .values()
            .map(|n| (n.node, n.net_id, n.net_parent));
        let pending = self.pending.iter().flat_map(|p| {
            let ids = p.group.first..;
            ids.zip(&p.nodes).map(|(id, &(node, _, up))| (node, id, up))
        });
        let alive = sent.clone().chain(pending).filter(|n| store.alive(n.0));
        let mut found = Vec::new();
        subtree(
            || alive.clone().map(|(_, id, up)| (id, up)),
            top,
            &mut found,
        );
        let mut told = Vec::new();
        subtree(|| sent.clone().map(|(_, id, up)| (id, up)), top, &mut told);
        let kept = told
            .into_iter()
            .filter(|id| found.binary_search(id).is_err())
            .filter_map(|id| self.nodes.get(self.nodes.find(id)?))
            .filter(|n| store.alive(n.node))
            .map(|n| (n.net_id, n.authority))
            .collect();
        let nodes = found.iter().filter_map(|&id| self.node_of(id)).collect();
        (nodes, kept)
    }

    /// The freed nodes `named` (a reference was encoded to each) go as despawns to the clients
    /// that never had them too: such a client may hold a member back until the node named
    /// arrives, which it never will (it asks for the state that named it again, which now
    /// names nothing).
    fn tell_named_gone(&mut self, named: &[u32]) {
        for &id in named {
            for c in 0..self.clients.len() {
                if self.clients[c].ready && !self.knows(c, id) {
                    self.queue_despawn(c, id);
                }
            }
        }
    }

    /// Sends this frame's spawns (in id order) to every joined client, with the state at this
    /// moment (stamped with the tick of the latest capture: the next capture's changes are
    /// after it).
    fn flush_spawns(&mut self, mut core: Option<&mut Outbox>, shared: &mut Shared) {
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            if !shared.store.alive(p.group.root) {
                // Spawned and freed in the same frame: nothing is sent, and no client can
                // know its ids.
                for (node, _, _) in &p.nodes {
                    self.by_node.remove(*node);
                }
                self.ids.free(p.group.first, p.group.count, self.tick);
                continue;
            }
            let (first, count) = (p.group.first, p.group.count);
            let g = self.network_group(shared, p);
            self.note_group(shared, g);
            shared.stats.spawns += 1;
            debug!(first, count, "spawn sent");
            for c in 0..self.clients.len() {
                if !self.clients[c].ready {
                    continue;
                }
                let vis = self.initially_visible(shared, c, g);
                self.set_vis(c, g, vis.unwrap_or(GroupVis::HIDDEN));
                if vis.is_none() {
                    continue;
                }
                self.give_group(c, g, true);
                if let Some(core) = core.as_deref_mut() {
                    self.queue_group(core, shared, g, c);
                }
            }
        }
        let n = self.nodes.len();
        for list in [&mut self.changed, &mut self.previous_changed] {
            list.reserve(n.saturating_sub(list.len()));
        }
        if let Some(core) = core {
            self.flush_all_queued(core, shared);
            self.drop_failed(core, shared);
        }
    }

    /// Adds the pending spawn `p` to the group and node tables (its nodes still attached, each
    /// with a shadow state captured now, stamped with the current tick),
    /// and returns the group's key.
    fn network_group(&mut self, shared: &mut Shared, p: Pending) -> GroupKey {
        let Pending { mut group, nodes } = p;
        group.client_owned = nodes
            .iter()
            .any(|&(_, authority, _)| authority != PeerId::SERVER);
        let first = group.first;
        let g = self.groups.push(first, group);
        for (offset, &(node, authority, net_parent)) in (0u32..).zip(&nodes) {
            if !shared.store.alive(node) {
                self.by_node.remove(node);
                continue;
            }
            let net_id = first + offset;
            let value = value_type(&*shared.store, node);
            let owner_conditions = value.is_some_and(|(_, info)| info.has_owner_conditions());
            let still = value.is_some_and(|(_, info)| info.layout().slots() == 0);
            let ty = value.map_or(0, |(id, _)| id.get());
            debug_assert_eq!(ty & STILL, 0, "type numbers stay below the flag");
            let ty = if still { ty | STILL } else { ty };
            let record = NetNode {
                net_id,
                node,
                owner_conditions,
                ty: 0,
                last_changed: LastChanged::default(),
                value_at: ValueAt::default(),
                authority,
                net_parent,
                group: g,
                over_limit: Default::default(),
            };
            let key = self.nodes.push(net_id, record);
            if let Some(group) = self.groups.get_mut(g).filter(|g| g.count == 1) {
                group.single = Some(key);
            }
            // The shadow's tag is the record's slot: capture names changed nodes by it.
            let tag = u32::try_from(key.slot()).unwrap_or(u32::MAX);
            if let (Some((last_changed, at)), Some(n)) = (
                self.shadows.start(&mut *shared.store, node, tag, self.tick),
                self.nodes.get_mut(key),
            ) {
                debug_assert_ne!(ty, 0, "a shadow state is made for registered types only");
                n.ty = ty;
                n.last_changed = last_changed;
                n.value_at = at;
            }
            if let (true, Some(n)) = (self.recording, self.nodes.get(key)) {
                self.bit_entries.record(&self.shadows, key, n, self.tick);
            }
        }
        g
    }

    /// The client at `c` has the nodes of the group `g` from the current tick: `spawned` if
    /// their spawn goes to it now, with their state as of this tick (else it holds a stale
    /// copy: a dormant bound group).
    pub(crate) fn give_group(&mut self, c: usize, g: GroupKey, spawned: bool) {
        let Some(group) = self.groups.get(g) else {
            return;
        };
        let client = &mut self.clients[c];
        // A client that got the spawn has its state (a snapshot from before the spawn, arriving
        // after it, is discarded): its entries carry what changes after it (a bit-packed
        // client's coded against the spawn's values until it acknowledges a later entry). A
        // dormant copy is stale: resynced at once.
        for &key in group_keys(&self.nodes, group) {
            let stateful = self.nodes.get(key).is_some_and(|n| n.carries_state());
            match spawned {
                true => client.send.add(key, self.tick, stateful),
                false => client.send.show(key, self.tick, stateful),
            }
        }
    }
}

/// After a snapshot of `tick` went out whole to `client`: every tiered group that was due moves
/// on to its next update slot. (A snapshot refused or cut short leaves them due, so they go in
/// the next one.)
fn advance_tiers(client: &mut ClientSlot, groups: &GroupTable, tick: u32) {
    for &g in &client.tiered_groups {
        if groups.get(g).is_none() {
            continue;
        }
        if let Some(vis) = client.vis.get_mut(g) {
            if vis.state == Vis::Visible && vis.period > 1 && vis.due(tick) {
                vis.next = next_slot(tick, vis.period, g.id());
            }
        }
    }
}

/// Writes a spawn payload for `peer`: the header, the absent ids, then the full state of every
/// present node in id order, without the members `peer` does not receive (`owner_only` ones
/// of nodes it does not own, `skip_owner` ones of nodes it owns). `nodes` are the group's
/// records.
fn write_spawn<'a>(
    w: &mut NetWriter,
    header: &SpawnHeaderRef<'_>,
    nodes: impl Iterator<Item = &'a NetNode> + Clone,
    store: &dyn Store,
    shadows: &Shadows,
    peer: PeerId,
) {
    header.write(w);
    let (first, end) = (
        header.first_net_id,
        header.first_net_id.saturating_add(header.count),
    );
    // `nodes` are in net id order, so the present ones (in the header's range and still in
    // the scene) are found in one walk, without a search per id.
    let present = || {
        nodes
            .clone()
            .filter(move |n| n.net_id >= first && n.net_id < end && exists(store, n.node))
    };
    let absent = (end - first) as usize - present().count();
    w.write_len(absent);
    let mut next = present().map(|n| n.net_id).peekable();
    for id in first..end {
        if next.next_if_eq(&id).is_none() {
            w.write_var_u32(id);
        }
    }
    for n in present().filter(|n| n.has_state()) {
        shadows.write_full_for(n.node, Audience::of(n.authority == peer), w);
    }
}

impl ServerState {
    /// Whether group `g` is gone, or its root is no longer in `store` (it is not sent).
    pub(crate) fn group_gone(&self, store: &dyn Store, g: GroupKey) -> bool {
        self.groups
            .get(g)
            .map_or(true, |group| !exists(store, group.root))
    }

    /// The net id of `node`, flushed or pending.
    pub(crate) fn net_id(&self, node: NodeId) -> Option<NetId> {
        self.by_node.get(node).and_then(NetId::new)
    }
}

/// Whether the typed group rooted at `root` ([`Store::group`]) is one clients can build: every
/// node holds a value, is listed once and is not networked yet, and every link but the root's
/// names a node before it.
pub(crate) fn valid_group(store: &dyn Store, root: NodeId, networked: &NetIdMap) -> bool {
    let mut group = vec![(root, Link::Root)];
    store.group(root, &mut group);
    let mut seen = std::collections::HashSet::new();
    group.iter().enumerate().all(|(i, &(node, link))| {
        let linked = match link {
            Link::Root => i == 0,
            Link::ChildOf(j) | Link::Beside(j) => i > 0 && (j as usize) < i,
        };
        linked && seen.insert(node) && store.value_type(node).is_some() && !networked.contains(node)
    })
}

/// The nodes of the typed group rooted at `root` ([`Store::group`]), and each one's type and
/// place as its spawn names them.
fn typed_group(store: &dyn Store, root: NodeId) -> (Vec<NodeId>, Vec<TypedNode>) {
    let mut group = vec![(root, Link::Root)];
    store.group(root, &mut group);
    let typed = group
        .iter()
        .map(|&(node, link)| TypedNode {
            schema: value_info(store, node).map_or(0, |ty| ty.schema_hash()),
            link,
        })
        .collect();
    (group.into_iter().map(|(node, _)| node).collect(), typed)
}

/// Whether some client sees node `n` while interest decides what clients see: a client has its
/// group, or it is in no group (every client gets its changes).
fn seen_by_a_client(n: &NetNode, viewers: &Viewers, groups: &GroupTable) -> bool {
    viewers.any(n.group) || groups.get(n.group).is_none()
}
