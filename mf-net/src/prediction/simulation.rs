//! [`Simulation`]: runs a game's fixed-tick step on the server and, predicted, on its clients,
//! with tick-stamped inputs; and [`Step`], what the step function sees of one tick.

use std::fmt;
use std::time::Duration;

use super::input_buffer::Taken;
use super::input_wire::{write_inputs, ViewAt, MAX_INPUT_BYTES, MAX_INPUT_REDUNDANCY};
use super::{MissingInput, PredictionConfig};
use crate::codec::NetCodec;
use crate::replication::multiplayer::machine::{Replication, Role};
use crate::replication::multiplayer::{ClientState, Multiplayer, Outbox, ServerState};
use crate::replication::protocol::{INPUT, INPUT_ACK};
use crate::replication::Replicated;
use crate::scene::{NodeId, Scene};
use crate::tick::tick_diff;
use crate::transport::{Channel, PeerId, Transport};
use crate::wire::{NetReader, NetWriter};

/// Where the determinism check found two runs of one tick to differ
/// ([`Simulation::divergence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divergence {
    /// The tick whose second run differed from its first.
    pub tick: u32,
    /// The first node that differed.
    pub node: NodeId,
    /// Its first predicted member that differed.
    pub member: &'static str,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tick {}: member `{}` of node {:?} differs between two runs of the step",
            self.tick, self.member, self.node
        )
    }
}

/// One peer's input for the tick a step simulates.
#[derive(Debug, Clone)]
struct PeerInput<I> {
    peer: PeerId,
    input: I,
    /// The render tick the peer showed remote nodes at when it sampled the input.
    view: Option<f64>,
}

/// A client's input of one tick, kept to send again and to re-simulate.
#[derive(Debug, Clone, Default)]
struct TickInput<I> {
    tick: Option<u32>,
    input: I,
    bytes: Vec<u8>,
    view: Option<ViewAt>,
}

/// Who owns the nodes, as the side running the step sees it.
#[derive(Clone, Copy)]
enum Owners<'a> {
    Server(&'a ServerState),
    Client(&'a ClientState),
}

impl Owners<'_> {
    fn of(self, node: NodeId) -> Option<PeerId> {
        match self {
            Self::Server(server) => server.authority_of(node),
            Self::Client(client) => client.authority_of(node),
        }
    }
}

/// What a game's step function sees of one tick: the scene, the tick, and every input of it
/// (on the server, each client's that sends input and its own; on a client, its own).
///
/// A step advances the whole world, not one node: use
/// [`simulated_mut`](Self::simulated_mut) to walk the nodes this side simulates (the server:
/// all of them; a client: the ones it predicts), and [`scene`](Self::scene) to look at the
/// rest (obstacles, other players).
pub struct Step<'a, I> {
    scene: &'a mut Scene,
    tick: u32,
    resimulating: bool,
    inputs: &'a [PeerInput<I>],
    owners: Owners<'a>,
    server: bool,
}

impl<I> fmt::Debug for Step<'_, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Step")
            .field("tick", &self.tick)
            .field("resimulating", &self.resimulating)
            .field("inputs", &self.inputs.len())
            .finish_non_exhaustive()
    }
}

impl<'a, I> Step<'a, I> {
    /// The tick being simulated (the server's tick numbering, on both ends).
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// Whether this run re-simulates a tick after a rollback (or for the determinism check):
    /// play no sounds, spawn no effects.
    pub fn is_resimulation(&self) -> bool {
        self.resimulating
    }

    /// Whether this is the server (authoritative) side.
    pub fn is_server(&self) -> bool {
        self.server
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        self.scene
    }

    /// The scene, mutably. On a client, only predicted nodes keep what the step writes; the
    /// next snapshot or blend overwrites the others.
    pub fn scene_mut(&mut self) -> &mut Scene {
        self.scene
    }

    /// `peer`'s input for this tick (on the server, the [`MissingInput`] policy's when it did
    /// not arrive), or `None` if it sends none.
    pub fn input(&self, peer: PeerId) -> Option<&I> {
        self.inputs
            .iter()
            .find(|p| p.peer == peer)
            .map(|p| &p.input)
    }

    /// Every input of this tick, by peer.
    pub fn inputs(&self) -> impl Iterator<Item = (PeerId, &I)> + '_ {
        self.inputs.iter().map(|p| (p.peer, &p.input))
    }

    /// The input of `node`'s authority for this tick (see [`input`](Self::input)).
    pub fn input_of(&self, node: NodeId) -> Option<&I> {
        self.input(self.owners.of(node)?)
    }

    /// Server: the render tick `peer` was showing remote nodes at when it sampled this tick's
    /// input, for lag compensation (see [`LagHistory`](super::LagHistory)); `None` if it did
    /// not say (it does not interpolate) or sent no input for this tick.
    pub fn view_tick(&self, peer: PeerId) -> Option<f64> {
        self.inputs
            .iter()
            .find(|p| p.peer == peer)
            .and_then(|p| p.view)
    }

    /// The nodes holding a `T` this side simulates, with their values and their authority's
    /// input for this tick: every one on the server, the predicted ones on a client.
    pub fn simulated_mut<T: Replicated>(
        &mut self,
    ) -> impl Iterator<Item = (NodeId, &mut T, Option<&I>)> + '_ {
        let (inputs, owners) = (self.inputs, self.owners);
        self.scene
            .simulated_mut::<T>(self.server)
            .map(move |(node, value)| {
                let input = owners
                    .of(node)
                    .and_then(|peer| inputs.iter().find(|p| p.peer == peer))
                    .map(|p| &p.input);
                (node, value, input)
            })
    }
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
    ring: Box<[TickInput<I>]>,
    /// This tick's inputs, by peer.
    peers: Vec<PeerInput<I>>,
    scratch: NetWriter,
    divergence: Option<Divergence>,
}

impl<I> fmt::Debug for Simulation<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("divergence", &self.divergence)
            .finish_non_exhaustive()
    }
}

impl<I: NetCodec + Clone + Default> Default for Simulation<I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: NetCodec + Clone + Default> Simulation<I> {
    /// A simulation with no input yet.
    pub fn new() -> Self {
        Self {
            ring: Box::new([]),
            peers: Vec::new(),
            scratch: NetWriter::new(),
            divergence: None,
        }
    }

    /// The first divergence the determinism check found
    /// ([`check_determinism`](super::PredictionConfig::check_determinism)), if any: the tick,
    /// node and member whose second run of the step differed from the first.
    pub fn divergence(&self) -> Option<Divergence> {
        self.divergence
    }

    /// Runs this frame's ticks. `sample` is asked for the local input of each tick simulated
    /// (a client's own; the server's for a player it hosts, else return the default);
    /// `step` simulates one tick. A client first re-simulates from a mispredicted tick if this
    /// frame's snapshots found one.
    pub fn run<T: Transport + 'static>(
        &mut self,
        mp: &mut Multiplayer<T>,
        mut sample: impl FnMut(u32) -> I,
        mut step: impl FnMut(&mut Step<'_, I>),
    ) {
        let (outbox, machine) = mp.parts_mut();
        let Replication { shared, role } = machine;
        match role {
            Role::Server(server) => {
                let local = PeerId::SERVER;
                let due = server.ticks_due(shared.frame_dt, shared.config.tick_rate);
                let missing = shared.config.prediction.missing_input;
                for k in 1..=due {
                    let tick = server.tick.wrapping_add(k);
                    self.gather_server_inputs(server, tick, missing);
                    self.peers.push(PeerInput {
                        peer: local,
                        input: sample(tick),
                        view: None,
                    });
                    let mut s = Step {
                        scene: &mut shared.scene,
                        tick,
                        resimulating: false,
                        inputs: &self.peers,
                        owners: Owners::Server(server),
                        server: true,
                    };
                    step(&mut s);
                }
                if let Some(outbox) = outbox {
                    send_input_acks(outbox, server);
                }
            }
            Role::Client(client) => {
                if !client.welcomed {
                    return;
                }
                let frame = Frame {
                    scene: &mut shared.scene,
                    config: shared.config.prediction,
                    dt: shared.frame_dt,
                };
                self.run_client(outbox, client, frame, &mut sample, &mut step);
                shared.stats.prediction = client.predict.stats;
            }
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
                Taken::Missing(last) => match missing {
                    MissingInput::RepeatLast => (last, None),
                    MissingInput::DefaultInput => (None, None),
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

/// What a client's frame lends the simulation.
struct Frame<'a> {
    scene: &'a mut Scene,
    config: PredictionConfig,
    dt: Duration,
}

impl<I: NetCodec + Clone + Default> Simulation<I> {
    /// Client: starts predicting if it has not, rolls back if a snapshot called for it, then
    /// simulates this frame's ticks (sending each tick's input), and shows what is left of
    /// the corrections.
    fn run_client(
        &mut self,
        mut outbox: Option<&mut Outbox>,
        client: &mut ClientState,
        frame: Frame<'_>,
        sample: &mut impl FnMut(u32) -> I,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        let Frame { scene, config, dt } = frame;
        if !client.predict.active {
            // A new session: inputs kept from an earlier one are not this one's.
            self.ring = Box::new([]);
            let local = client.local_peer;
            let owned = client
                .nodes
                .iter()
                .filter(|n| n.authority == local)
                .map(|n| n.node);
            let tick = client.newest_applied;
            client
                .predict
                .activate(scene, owned, tick, config.history_ticks);
            // A first guess of the lead; the server's input acks steer it from there.
            client
                .predict
                .sync
                .start(tick.wrapping_add(2 + u32::from(config.lead_margin)));
        }
        let redundancy = usize::from(config.input_redundancy).clamp(1, MAX_INPUT_REDUNDANCY);
        let needed = (redundancy + config.input_delay as usize + 1).next_power_of_two();
        let capacity = client.predict.history.max(needed);
        if self.ring.len() != capacity {
            self.ring = (0..capacity).map(|_| TickInput::default()).collect();
        }
        if let Some(mismatch) = client.predict.pending.take() {
            self.roll_back(
                client,
                scene,
                mismatch,
                config.smoothing > Duration::ZERO,
                step,
            );
        }
        let before = client.predict.sync.present();
        let interval = Duration::from_secs(1) / u32::from(client.tick_rate.max(1));
        let due = client
            .predict
            .sync
            .advance(dt, interval, i32::from(config.lead_margin));
        let Some(present) = client.predict.sync.present() else {
            return;
        };
        for k in (0..due).rev() {
            let tick = present.wrapping_sub(k);
            let stamped = tick.wrapping_add(config.input_delay);
            self.store_input(client, stamped, sample(tick));
            if let Some(outbox) = outbox.as_deref_mut() {
                self.send_inputs(outbox, client, stamped, redundancy);
            }
            self.simulate(client, scene, tick, false, step);
            scene.record_predicted(tick);
            client.predict.stats.ticks_predicted += 1;
            if config.check_determinism && before.is_some() {
                self.check(client, scene, tick, step);
            }
        }
        let stats = &mut client.predict.stats;
        if let Some(lead) = client.predict.sync.lowest_lead() {
            stats.input_lead = lead;
        }
        stats.clock_jumps = client.predict.sync.jumps;
        let fade = if config.smoothing.is_zero() {
            1.0
        } else {
            dt.as_secs_f32() / config.smoothing.as_secs_f32()
        };
        scene.show_predicted(fade);
    }

    /// Client: the prediction of `mismatch.tick` was wrong: every predicted row back to its
    /// state then (the server's where confirmed), and the stored inputs re-simulated to the
    /// present.
    fn roll_back(
        &mut self,
        client: &mut ClientState,
        scene: &mut Scene,
        mismatch: super::client::Mismatch,
        smoothing: bool,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        let Some(present) = client.predict.sync.present() else {
            return;
        };
        let history = u32::try_from(client.predict.history).unwrap_or(u32::MAX);
        let depth = u32::try_from(tick_diff(present, mismatch.tick))
            .unwrap_or(0)
            .min(history - 1);
        let from = present.wrapping_sub(depth);
        scene.restore_predicted_at(from, smoothing);
        scene.record_predicted(from);
        for k in (0..depth).rev() {
            let tick = present.wrapping_sub(k);
            self.simulate(client, scene, tick, true, step);
            scene.record_predicted(tick);
        }
        if smoothing {
            scene.end_correction(present);
        }
        let stats = &mut client.predict.stats;
        stats.rollbacks += 1;
        stats.resimulated_ticks += u64::from(depth);
        stats.deepest_rollback = stats.deepest_rollback.max(depth);
        client.predict.last_mismatch = Some(mismatch);
    }

    /// Client: the determinism check of `tick`: runs it again from the tick before and compares.
    fn check(
        &mut self,
        client: &mut ClientState,
        scene: &mut Scene,
        tick: u32,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        scene.restore_history(tick.wrapping_sub(1));
        self.simulate(client, scene, tick, true, step);
        if let Some((node, member)) = scene.check_predicted(tick) {
            client.predict.stats.divergences += 1;
            if self.divergence.is_none() {
                let found = Divergence { tick, node, member };
                tracing::warn!(%found, "the step function is not deterministic");
                self.divergence = Some(found);
            }
        }
        scene.restore_history(tick);
    }

    /// Client: runs `step` for `tick` with the stored input of that tick.
    fn simulate(
        &mut self,
        client: &ClientState,
        scene: &mut Scene,
        tick: u32,
        resimulating: bool,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        let slot = &self.ring[tick as usize & (self.ring.len() - 1)];
        let input = if slot.tick == Some(tick) {
            slot.input.clone()
        } else {
            I::default()
        };
        self.peers.clear();
        self.peers.push(PeerInput {
            peer: client.local_peer,
            input,
            view: None,
        });
        let mut s = Step {
            scene,
            tick,
            resimulating,
            inputs: &self.peers,
            owners: Owners::Client(client),
            server: false,
        };
        step(&mut s);
    }

    /// Client: keeps the input for `tick`, encoded, with the render tick it was sampled at.
    fn store_input(&mut self, client: &ClientState, tick: u32, input: I) {
        let view = client
            .interp
            .timeline()
            .and_then(|t| t.render_tick())
            .map(|render| ViewAt::of(tick, render));
        let mask = self.ring.len() - 1;
        let slot = &mut self.ring[tick as usize & mask];
        self.scratch.clear();
        input.encode(&mut self.scratch);
        slot.tick = Some(tick);
        slot.input = input;
        slot.view = view;
        slot.bytes.clear();
        slot.bytes.extend_from_slice(self.scratch.as_slice());
    }

    /// Client: sends the inputs up to `newest`, the `redundancy` newest that are kept.
    fn send_inputs(
        &self,
        outbox: &mut Outbox,
        client: &mut ClientState,
        newest: u32,
        redundancy: usize,
    ) {
        let mask = self.ring.len() - 1;
        let mut batch: [(&[u8], Option<ViewAt>); MAX_INPUT_REDUNDANCY] =
            [(&[], None); MAX_INPUT_REDUNDANCY];
        let mut n = 0;
        for back in (0..redundancy).rev() {
            // `back < MAX_INPUT_REDUNDANCY`.
            #[allow(clippy::cast_possible_truncation)]
            let tick = newest.wrapping_sub(back as u32);
            let slot = &self.ring[tick as usize & mask];
            if slot.tick != Some(tick) || slot.bytes.len() > MAX_INPUT_BYTES {
                // Not sampled (before the first) or over the limit: the ones after it go.
                n = 0;
                continue;
            }
            batch[n] = (&slot.bytes, slot.view);
            n += 1;
        }
        if n == 0 {
            tracing::warn!(
                tick = newest,
                "an input over {MAX_INPUT_BYTES} bytes is not sent"
            );
            return;
        }
        let _ = outbox.send_with(client.server, INPUT, Channel::Unreliable, |w| {
            write_inputs(w, newest, batch[..n].iter().copied());
        });
        client.predict.stats.inputs_sent += 1;
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
            super::input_wire::write_input_ack(w, newest, lead);
        });
    }
}
