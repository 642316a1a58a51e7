//! [`Simulation`]: runs a game's fixed-tick step on the server and, predicted, on its clients,
//! with tick-stamped inputs. The server's half is here, the client's in
//! [`client_run`](super::client_run).

use std::fmt;
use std::time::Duration;

use super::step::{Owners, PeerInput, Step};
use crate::codec::NetCodec;
use crate::replication::client::prediction::Misprediction;
use crate::replication::client::prediction::{debug_node, write_node};
use crate::replication::multiplayer::role::{Replication, Role};
use crate::replication::multiplayer::{Multiplayer, TickSource};
use crate::replication::server::input_buffer::Taken;
use crate::replication::server::state::ServerState;
use crate::replication::shared::input_wire::{write_input_ack, ViewAt};
use crate::replication::shared::misconfiguration::Misconfiguration;
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::prediction_config::MissingInput;
use crate::replication::shared::prediction_config::PredictionConfig;
use crate::replication::shared::protocol::INPUT_ACK;
use crate::replication::NetId;
use crate::scene::NodeId;
use crate::store::Store;
use crate::transport::{Channel, PeerId, Transport};
use crate::wire::{NetReader, NetWriter};

/// Where the determinism check found two runs of one tick to differ
/// ([`Simulation::divergence`]). `Debug` and `Display` name the node by net id and type.
#[derive(Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Divergence {
    /// The tick whose second run differed from its first.
    pub tick: u32,
    /// The first node that differed (this client's handle of it).
    pub node: NodeId,
    /// Its net id, the same on every peer.
    pub net_id: Option<NetId>,
    /// Its replicated type's name.
    pub type_name: &'static str,
    /// Its first predicted member that differed.
    pub member: &'static str,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tick {}: member `{}` of ", self.tick, self.member)?;
        write_node(f, self.type_name, self.net_id)?;
        f.write_str(" differs between two runs of the step")
    }
}

impl fmt::Debug for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_node(
            f,
            "Divergence",
            self.tick,
            self.type_name,
            self.net_id,
            self.member,
        )
    }
}

/// A client's input of one tick, kept to send again and to re-simulate.
#[derive(Debug, Clone, Default)]
pub(super) struct TickInput<I> {
    pub(super) tick: Option<u32>,
    pub(super) input: I,
    pub(super) bytes: NetWriter,
    pub(super) view: Option<ViewAt>,
}

/// What a client's frame lends the simulation.
pub(super) struct Frame<'a> {
    pub(super) scene: &'a mut dyn Store,
    pub(super) config: PredictionConfig,
    pub(super) dt: Duration,
}

/// Runs a game's simulation at the server's fixed tick rate, with inputs stamped by tick: the
/// server applies each client's input of tick *t* at tick *t*; a client predicts its own
/// nodes' `#[replicated(predict)]` members ahead of the server with the same step function,
/// and when a snapshot shows that its prediction of a tick was wrong, it restores the server's
/// state and re-simulates its stored inputs to the present, in one pass.
///
/// Call [`run`](Self::run) every frame between
/// [`begin_frame`](crate::replication::Multiplayer::begin_frame) and
/// [`end_frame`](crate::replication::Multiplayer::end_frame), on both ends, with the same
/// step function. Settings are in
/// [`MultiplayerConfig::prediction`](crate::replication::MultiplayerConfig::prediction).
pub struct Simulation<I> {
    /// Client: the inputs of recent ticks, by tick (a power of two).
    pub(super) ring: Box<[TickInput<I>]>,
    /// This tick's inputs, by peer.
    pub(super) peers: Vec<PeerInput<I>>,
    pub(super) divergence: Option<Divergence>,
    pub(super) last_misprediction: Option<Misprediction>,
}

impl<I> fmt::Debug for Simulation<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("divergence", &self.divergence)
            .finish_non_exhaustive()
    }
}

impl<I> Default for Simulation<I> {
    fn default() -> Self {
        Self::new()
    }
}

// Only `run` asks for the input's traits (as a where clause of its own), so that an input type
// without `NetCodec` is one error, at the call, with `NetCodec`'s message (a bound on the impl
// made it a "method exists but its trait bounds were not satisfied" error pointing into mf-net).
impl<I> Simulation<I> {
    /// A simulation with no input yet.
    pub fn new() -> Self {
        Self {
            ring: Box::new([]),
            peers: Vec::new(),
            divergence: None,
            last_misprediction: None,
        }
    }

    /// The first divergence the determinism check found
    /// ([`check_determinism`](super::PredictionConfig::check_determinism)), if any: the tick,
    /// node and member whose second run of the step differed from the first.
    pub fn divergence(&self) -> Option<Divergence> {
        self.divergence
    }

    /// Where the last rollback went back to, on a client: the tick, node and predicted member
    /// whose confirmed state differed from the prediction (to find what a game mispredicts).
    pub fn last_misprediction(&self) -> Option<Misprediction> {
        self.last_misprediction
    }

    /// Runs this frame's ticks. `sample` is asked for the local input of each tick simulated
    /// (a client's own; the server's for a player it hosts, else return the default);
    /// `step` simulates one tick. A client first re-simulates from a mispredicted tick if this
    /// frame's snapshots found one.
    ///
    /// A server whose ticks come from the engine
    /// ([`TickSource::External`](crate::replication::TickSource)) steps one tick per call: call
    /// it once per fixed step, before [`tick_now`](Multiplayer::tick_now). A client runs once
    /// per frame whatever the server's source (its ticks follow its estimate of the server's
    /// clock).
    pub fn run<T: Transport + 'static, S: Store>(
        &mut self,
        mp: &mut Multiplayer<T, S>,
        mut sample: impl FnMut(u32) -> I,
        mut step: impl FnMut(&mut Step<'_, I>),
    ) where
        I: NetCodec + Clone + Default,
    {
        let (outbox, machine) = mp.parts_mut();
        let Replication { shared, role, .. } = machine;
        if !shared.misuse.began {
            let events = &mut shared.events;
            shared
                .misuse
                .report(events, Misconfiguration::SimulationWithoutFrames);
        }
        match role {
            Role::Server(server) => {
                shared.misuse.server_simulated = true;
                let missing = shared.config.prediction.missing_input;
                // An engine that ticks the server runs one tick per fixed step, before its
                // `tick_now`.
                let due = match shared.config.tick_source {
                    TickSource::External => 1,
                    _ => server.ticks_due(shared.now, &shared.config).0,
                };
                self.run_server(
                    server,
                    &mut *shared.store,
                    due,
                    missing,
                    &mut sample,
                    &mut step,
                );
                if let Some(outbox) = outbox {
                    send_input_acks(outbox, server);
                }
            }
            Role::Client(client) => {
                if !client.welcomed {
                    return;
                }
                let frame = Frame {
                    scene: &mut *shared.store,
                    config: shared.config.prediction,
                    dt: shared.frame_dt,
                };
                self.run_client(outbox, client, frame, &mut sample, &mut step);
                shared.stats.prediction = client.predict.stats;
            }
        }
    }
}

impl<I: NetCodec + Clone + Default> Simulation<I> {
    /// Server: steps the `due` ticks the coming `end_frame` reaches, each with every client's
    /// input of that tick and the server's own.
    fn run_server(
        &mut self,
        server: &mut ServerState,
        scene: &mut dyn Store,
        due: u32,
        missing: MissingInput,
        sample: &mut impl FnMut(u32) -> I,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        for k in 1..=due {
            let tick = server.tick.wrapping_add(k);
            self.gather_server_inputs(server, tick, missing);
            self.peers.push(PeerInput {
                peer: PeerId::SERVER,
                input: sample(tick),
                view: None,
            });
            // By peer, for the step's lookups (and an order that does not depend on the order
            // clients joined and left in).
            self.peers.sort_unstable_by_key(|p| p.peer);
            let mut s = Step {
                scene,
                tick,
                resimulating: false,
                inputs: &self.peers,
                owners: Owners::Server(server),
                server: true,
            };
            step(&mut s);
        }
    }

    /// Server: every client's input of `tick` into `peers`.
    fn gather_server_inputs(&mut self, server: &mut ServerState, tick: u32, missing: MissingInput) {
        self.peers.clear();
        for client in &mut server.clients {
            let Some(buffer) = client.inputs.as_deref_mut() else {
                continue;
            };
            let (bytes, view) = match buffer.take(tick) {
                Taken::Input(bytes, view) => (Some(bytes), view.map(|v| v.render_tick(tick))),
                Taken::Missing(last, run) => match missing {
                    MissingInput::RepeatLast { max_ticks } if run <= max_ticks => (last, None),
                    _ => (None, None),
                },
                Taken::None => continue,
            };
            let input = bytes.and_then(|b| decode_exact::<I>(b)).unwrap_or_default();
            self.peers.push(PeerInput {
                peer: client.peer,
                input,
                view,
            });
        }
    }
}

/// Decodes a whole input, or `None` if the bytes are not one.
fn decode_exact<I: NetCodec>(bytes: &[u8]) -> Option<I> {
    let mut r = NetReader::new(bytes);
    let input = I::decode(&mut r).ok()?;
    r.finish().ok()?;
    Some(input)
}

/// Server: acknowledges the inputs of every client whose input was taken this frame, with the
/// lowest lead they arrived with.
fn send_input_acks(outbox: &mut Outbox, server: &mut ServerState) {
    for client in &mut server.clients {
        let Some(buffer) = client.inputs.as_deref_mut() else {
            continue;
        };
        let (Some(lead), Some(newest)) = (buffer.take_lead(), buffer.newest()) else {
            continue;
        };
        client.stats.inputs = buffer.stats();
        // Unreliable: a lost ack is followed by the next.
        let _ = outbox.send_with(client.peer, INPUT_ACK, Channel::Unreliable, |w| {
            write_input_ack(w, newest, lead);
        });
    }
}
