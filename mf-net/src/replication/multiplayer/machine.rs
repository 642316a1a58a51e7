//! The replication state machine: the server or client half and what both share, not generic
//! over the transport. It handles what the bus receives ([`Replication::handle_message`],
//! [`Replication::handle_event`]) and produces what goes out through an [`Outbox`] (the bus
//! as any transport's); [`Multiplayer`](crate::replication::multiplayer::Multiplayer) owns the bus and pumps it through
//! the machine each frame.

use std::time::Duration;

use super::role::{Replication, Role};
use crate::bus::BusEvent;
use crate::refs::{with_scope, Resolve};
use crate::replication::client::state::ClientState;
use crate::replication::multiplayer::rpc;
use crate::replication::server::state::ServerState;
use crate::replication::shared::config::{MultiplayerConfig, TickSource};
use crate::replication::shared::events::EventQueue;
use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::misuse::MisuseWatch;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::protocol::snapshot_memory;
use crate::replication::shared::protocol::{self, Kind, ToClient, ToServer};
use crate::replication::shared::rpc_state::RpcState;
use crate::replication::shared::spawners::SpawnerTable;
use crate::replication::shared::state::Shared;
use crate::replication::shared::stats::Bandwidth;
use crate::replication::shared::stats::NetworkStats;
use crate::scene::SceneLibrary;
use crate::store::Store;
use crate::transport::PeerId;
use crate::wire::{DecodeError, NetReader, ProtocolViolation};

impl Replication {
    /// Offline (a server without a bus), replicating the values of `store`.
    pub(crate) fn new(
        store: Box<dyn Store>,
        scenes: SceneLibrary,
        config: MultiplayerConfig,
    ) -> Self {
        let (first_tick, first_net_id) = (config.first_tick, config.first_net_id);
        Self {
            shared: Shared {
                store,
                library: scenes,
                config,
                events: EventQueue::new(),
                stats: NetworkStats::default(),
                bandwidth: Bandwidth::default(),
                now: Duration::ZERO,
                frame_dt: Duration::ZERO,
                shapes: Vec::new(),
                fingerprint: 0,
                refusal: None,
                spawners: SpawnerTable::default(),
                rpc: RpcState::default(),
                misuse: MisuseWatch::default(),
            },
            role: Role::Server(ServerState::new(
                first_tick,
                first_net_id,
                Duration::ZERO,
                snapshot_memory(config.tick_rate),
            )),
            before_client: None,
        }
    }

    /// A client session starts in place of the server half (offline, or stopped), which is
    /// kept if it ran.
    pub(crate) fn become_client(&mut self, client: ClientState) {
        if let Role::Server(server) = std::mem::replace(&mut self.role, Role::Client(client)) {
            if server.has_run() {
                self.before_client = Some(Box::new(server));
            }
        }
    }

    /// Offline again: a fresh server half at the configured first tick and net id, or going
    /// on from the tick and net ids of the server half a client session took the place of
    /// (as after a server's stop: the nodes it networked, plain nodes now, keep their instance
    /// names, which new spawns must not take again).
    pub(crate) fn go_offline(&mut self) {
        let mut fresh = self.offline_server();
        if let Some(before) = self.before_client.take() {
            fresh.go_on_from(*before);
        }
        self.role = Role::Server(fresh);
    }

    /// A server stops serving: a fresh server half that goes on from its tick and net ids
    /// (its networked nodes, plain nodes now, keep their instance names, which new spawns
    /// must not take again).
    pub(crate) fn stop_serving(&mut self) {
        let fresh = self.offline_server();
        if let Role::Server(server) = &mut self.role {
            let stopped = std::mem::replace(server, fresh);
            server.go_on_from(stopped);
        }
    }

    /// A server half at the configured first tick and net id, its clock starting with this
    /// frame.
    fn offline_server(&self) -> ServerState {
        let config = &self.shared.config;
        let frame_start = self.shared.now.saturating_sub(self.shared.frame_dt);
        let ring = snapshot_memory(config.tick_rate);
        ServerState::new(config.first_tick, config.first_net_id, frame_start, ring)
    }

    /// A frame of `dt` starts: the only clock moves.
    pub(crate) fn advance(&mut self, dt: Duration) {
        let shared = &mut self.shared;
        shared.now += dt;
        shared.frame_dt = dt;
        shared.misuse.frame(dt, &mut shared.events);
        if let Role::Client(client) = &mut self.role {
            client.interp.advance_to(shared.now);
            let written = client
                .predict
                .before_receive(&mut client.replicas, &mut *shared.store);
            if client.predict.active {
                let written =
                    written.and_then(|(node, type_name)| Some((client.net_id(node)?, type_name)));
                shared.misuse.plain_write(written, &mut shared.events);
            }
        }
    }

    /// Everything of this frame was received: a client that interpolates blends its members
    /// at the render tick.
    pub(crate) fn received(&mut self) {
        if let Role::Client(client) = &mut self.role {
            // One pass per column: interpolated rows blend, predicted rows are confirmed.
            let blend = client.interp.blend_at();
            let confirm = client.predict.confirm_at(client.interp.known_floor());
            let store = &mut *self.shared.store;
            let found = client.replicas.after_receive(store, blend, confirm);
            client.predict.confirmed(found);
        }
    }

    /// End of frame (see [`Multiplayer::end_frame`](crate::replication::multiplayer::Multiplayer::end_frame)): the
    /// server's despawns, spawns, timeouts and snapshots and its deferred RPCs, or the
    /// client's acks and heartbeat, out through `core` (none while offline), then flushed.
    pub(crate) fn end_frame(&mut self, mut core: Option<&mut Outbox>) {
        let Self { shared, role, .. } = self;
        let net_ids = role.net_ids().clone();
        with_scope(Some(&net_ids), Resolve::Member, || match role {
            Role::Server(server) => {
                server.end_frame(core.as_deref_mut(), shared);
                rpc::flush_deferred(core.as_deref_mut(), server, shared);
            }
            Role::Client(client) => {
                if let Some(core) = core.as_deref_mut() {
                    client.end_frame(core, shared);
                }
            }
        });
        if let Some(core) = core {
            core.flush();
            let totals = core.stats();
            let (sent, received) = (totals.bytes_sent, totals.bytes_received);
            shared.stats.bytes_sent = sent;
            shared.stats.bytes_received = received;
            let (sent_rate, received_rate) = shared.bandwidth.update(shared.now, sent, received);
            shared.stats.bytes_sent_per_second = sent_rate;
            shared.stats.bytes_received_per_second = received_rate;
        }
        let simulating = match role {
            Role::Server(_) => true,
            Role::Client(client) => client.predict.active,
        };
        shared
            .misuse
            .end_frame(shared.now, simulating, &mut shared.events);
        shared.stats.events_lost = shared.events.lost;
    }

    /// One network tick of an engine's fixed step ([`TickSource::External`]): a server
    /// captures and sends its snapshots for it. A client, or a server on its own clock, does
    /// nothing.
    pub(crate) fn tick_now(&mut self, core: Option<&mut Outbox>) {
        let Self { shared, role, .. } = self;
        let Role::Server(server) = role else {
            return;
        };
        if shared.config.tick_source != TickSource::External {
            return;
        }
        let net_ids = server.by_node.clone();
        with_scope(Some(&net_ids), Resolve::Member, || {
            server.advance_ticks(1, core, shared);
        });
    }

    /// Whether this is a client whose connection ended (it goes offline).
    pub(crate) fn finished(&self) -> bool {
        matches!(&self.role, Role::Client(client) if client.finished.is_some())
    }

    /// Handles a replication message (a reserved id) the bus received from `sender`: finds it
    /// in the protocol table ([`protocol::MESSAGES`]) and routes it by its kind to the server
    /// or client half, refusing it when it travels the wrong way. `Ok(false)`: not in the table,
    /// not ours (the bus drops it); an error: malformed or unexpected (the bus drops and counts
    /// it).
    ///
    /// # Errors
    ///
    /// The message does not decode, or breaks the protocol.
    pub(crate) fn handle_message(
        &mut self,
        core: &mut Outbox,
        sender: PeerId,
        message_id: u16,
        tick: u32,
        r: &mut NetReader<'_>,
    ) -> Result<bool, DecodeError> {
        let Some(message) = protocol::lookup(message_id) else {
            return Ok(false);
        };
        let Self { shared, role, .. } = self;
        // Node references in the states this message sends or carries are net ids.
        let net_ids = role.net_ids().clone();
        let result = with_scope(Some(&net_ids), Resolve::Member, || {
            route(message.kind, role, core, shared, sender, tick, r)
        });
        // Undecodable or unexpected: the bus drops it (`dropped_malformed`); counted here too. A
        // snapshot whose framing breaks after valid entries lands here: those entries stay applied
        // (each carries the server's values), but it is neither acknowledged nor recorded as the
        // newest applied tick.
        if result.is_err() {
            shared.stats.control_dropped += 1;
        }
        result
    }

    /// Handles a bus event: connections and disconnections drive the handshake and leaving;
    /// the rest is passed on to the game.
    pub(crate) fn handle_event(&mut self, core: &mut Outbox, event: BusEvent) {
        let net_ids = self.role.net_ids().clone();
        with_scope(Some(&net_ids), Resolve::Member, || {
            self.on_event(core, event)
        });
    }

    fn on_event(&mut self, core: &mut Outbox, event: BusEvent) {
        let Self { shared, role, .. } = self;
        match (role, event) {
            (Role::Server(server), BusEvent::PeerConnected(peer)) => {
                server.peer_connected(peer, shared.now);
            }
            (Role::Server(server), BusEvent::PeerDisconnected { peer, reason }) => {
                server.peer_left(Some(core), shared, peer, reason);
            }
            (Role::Client(client), BusEvent::PeerConnected(peer)) => {
                client.connected(core, shared, peer);
            }
            (Role::Server(_), BusEvent::PeerRefused { peer, .. }) => {
                shared.events.push(MultiplayerEvent::PeerRefused {
                    peer,
                    refusal: "the message registries differ (types, ids or protocol version)"
                        .to_owned(),
                });
            }
            (Role::Client(client), BusEvent::PeerDisconnected { reason, .. }) => {
                if let Some(text) = core.refusal() {
                    shared.refusal = Some(text.to_owned());
                }
                client.end(core, shared, reason, false);
            }
            (_, event) => shared.events.push(MultiplayerEvent::Bus(event)),
        }
    }
}

/// A replication message of `kind`, to the half that handles it (see
/// [`Replication::handle_message`]).
fn route(
    kind: Kind,
    role: &mut Role,
    core: &mut Outbox,
    shared: &mut Shared,
    sender: PeerId,
    tick: u32,
    r: &mut NetReader<'_>,
) -> Result<bool, DecodeError> {
    if kind == Kind::ToClient(ToClient::HeldRpc) {
        return match role {
            Role::Client(client) if sender == client.server => {
                rpc::on_rpc(role, core, shared, (sender, tick), true, r)
            }
            Role::Client(_) => Err(DecodeError::Protocol(ProtocolViolation::NotFromServer)),
            Role::Server(_) => Err(DecodeError::Protocol(ProtocolViolation::WrongDirection)),
        };
    }
    match (kind, role) {
        (Kind::Rpc, role) => rpc::on_rpc(role, core, shared, (sender, tick), false, r),
        (Kind::ToServer(kind), Role::Server(server)) => {
            server.on_message(core, shared, sender, kind, r)
        }
        (Kind::ToClient(_), Role::Server(_)) => {
            Err(DecodeError::Protocol(ProtocolViolation::WrongDirection))
        }
        (kind, Role::Client(client)) => to_client(client, core, shared, sender, kind, tick, r),
    }
}

/// A replication message at a client, checked for its sender: only the server's transport peer
/// speaks for the server. The simulation's messages (input, input ack) are refused as the wrong
/// direction whoever sends them the wrong way; every other message from another peer is not
/// from the server.
fn to_client(
    client: &mut ClientState,
    core: &mut Outbox,
    shared: &mut Shared,
    sender: PeerId,
    kind: Kind,
    tick: u32,
    r: &mut NetReader<'_>,
) -> Result<bool, DecodeError> {
    let from_server = sender == client.server;
    match kind {
        Kind::ToServer(ToServer::Input) => {
            Err(DecodeError::Protocol(ProtocolViolation::WrongDirection))
        }
        Kind::ToClient(ToClient::InputAck) if !from_server => {
            Err(DecodeError::Protocol(ProtocolViolation::WrongDirection))
        }
        _ if !from_server => Err(DecodeError::Protocol(ProtocolViolation::NotFromServer)),
        _ => client.on_message(core, shared, kind, tick, r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::{MessageBus, MessageRegistry};
    use crate::replication::shared::protocol::{Message, MESSAGES};
    use crate::transport::loopback::{LoopbackNetwork, LoopbackTransport};

    /// The client's server peer, and a peer that is not it.
    const SERVER: PeerId = PeerId(1);
    const STRANGER: PeerId = PeerId(9);

    /// A server bus to lend as the outbox (nothing below sends through it).
    fn bus() -> MessageBus<LoopbackTransport> {
        let transport = LoopbackNetwork::new().listen("server", 4).unwrap();
        MessageBus::server(transport, MessageRegistry::new(1))
    }

    /// An offline server, or a welcomed client of [`SERVER`].
    fn machine(client: bool) -> Replication {
        let mut machine = Replication::new(
            Box::new(crate::scene::Scene::new()),
            SceneLibrary::new(),
            MultiplayerConfig::default(),
        );
        if client {
            let mut state = ClientState::new(Duration::ZERO);
            state.server = SERVER;
            state.welcomed = true;
            machine.role = Role::Client(state);
        }
        machine
    }

    /// What `machine` answers to `message` from `sender` with an empty payload, and whether
    /// it counted the message as a dropped control message.
    fn receive(
        machine: &mut Replication,
        sender: PeerId,
        message: &Message,
    ) -> (Result<bool, DecodeError>, bool) {
        let mut bus = bus();
        let core: &mut Outbox = &mut *bus;
        let before = machine.shared.stats.control_dropped;
        let result = machine.handle_message(core, sender, message.id, 0, &mut NetReader::new(&[]));
        (result, machine.shared.stats.control_dropped == before + 1)
    }

    /// A protocol violation, counted.
    fn refused(violation: ProtocolViolation) -> (Result<bool, DecodeError>, bool) {
        (Err(DecodeError::Protocol(violation)), true)
    }

    #[test]
    fn every_row_is_dispatched_and_an_id_outside_the_table_is_not_ours() {
        for message in &MESSAGES {
            // The side that reads it (both, for an RPC) gets it: read, not ignored.
            let (server_reads, client_reads) = match message.kind {
                Kind::ToServer(_) => (true, false),
                Kind::ToClient(_) => (false, true),
                Kind::Rpc => (true, true),
            };
            for (client, sender) in [(false, STRANGER), (true, SERVER)] {
                if (client && client_reads) || (!client && server_reads) {
                    let (result, _) = receive(&mut machine(client), sender, message);
                    assert_ne!(result, Ok(false), "{} (client: {client})", message.name);
                }
            }
        }
        let last = MESSAGES[MESSAGES.len() - 1].id;
        for id in [last + 1, u16::MAX] {
            let mut bus = bus();
            let mut server = machine(false);
            let result =
                server.handle_message(&mut *bus, STRANGER, id, 0, &mut NetReader::new(&[]));
            assert_eq!(result, Ok(false));
        }
    }

    #[test]
    fn every_row_sent_the_wrong_way_is_refused_and_counted() {
        use ProtocolViolation::{NotFromServer, WrongDirection};
        for message in &MESSAGES {
            let name = message.name;
            let simulation = matches!(
                message.kind,
                Kind::ToServer(ToServer::Input) | Kind::ToClient(ToClient::InputAck)
            );
            // From a peer that is not the client's server: the simulation's messages are the
            // wrong direction, the rest not from the server.
            if message.kind != Kind::Rpc {
                let expected = refused(if simulation {
                    WrongDirection
                } else {
                    NotFromServer
                });
                let got = receive(&mut machine(true), STRANGER, message);
                assert_eq!(got, expected, "{name} at a client from a stranger");
            }
            match message.kind {
                Kind::ToClient(_) => {
                    let got = receive(&mut machine(false), STRANGER, message);
                    assert_eq!(got, refused(WrongDirection), "{name} at the server");
                }
                Kind::ToServer(_) => {
                    let got = receive(&mut machine(true), SERVER, message);
                    assert_eq!(got, refused(WrongDirection), "{name} at a client");
                }
                Kind::Rpc => {}
            }
        }
    }
}
