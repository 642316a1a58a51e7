//! The client's half of [`Simulation::run`]: start predicting, roll back when a snapshot
//! found a misprediction, simulate this frame's ticks (each one's input kept and sent), run the
//! determinism check, and show what is left of the corrections.

use std::time::Duration;

use super::simulation::{Divergence, Frame, Simulation, TickInput};
use super::step::{Owners, PeerInput, Step};
use crate::codec::NetCodec;
use crate::replication::client::prediction::tick_sync::Advance;
use crate::replication::client::prediction::Misprediction;
use crate::replication::client::state::ClientState;
use crate::replication::shared::input_wire::{
    write_inputs, ViewAt, MAX_INPUT_BYTES, MAX_INPUT_REDUNDANCY,
};
use crate::replication::shared::outbox::Outbox;
use crate::replication::shared::prediction_config::PredictionConfig;
use crate::replication::shared::protocol::{snapshot_memory, INPUT};
use crate::store::Store;
use crate::tick::tick_diff;
use crate::transport::Channel;

/// Ticks a client's clock starts ahead of its estimate beyond the margin: the frame the
/// estimate cannot see. (More slack would spare the first loss bursts, but the clock would then
/// spend its first seconds slowing down, running some frames without a tick.)
const STARTUP_SLACK: u32 = 1;

impl<I: NetCodec + Clone + Default> Simulation<I> {
    /// Client: starts predicting if it has not, rolls back if a snapshot called for it, then
    /// simulates this frame's ticks (sending each tick's input), and shows what is left of
    /// the corrections.
    pub(super) fn run_client(
        &mut self,
        mut outbox: Option<&mut Outbox>,
        client: &mut ClientState,
        frame: Frame<'_>,
        sample: &mut impl FnMut(u32) -> I,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        let Frame { scene, config, dt } = frame;
        if !client.predict.active {
            self.start(client, scene, config);
        }
        // Apart from starting: a Simulation made after prediction started (a level reload)
        // has no ring yet, and goes on from the Multiplayer's clock.
        self.fit_ring(client.predict.history, config);
        if let Some(mismatch) = client.predict.pending.take() {
            let smoothing = config.smoothing > Duration::ZERO;
            self.roll_back(client, scene, mismatch, smoothing, step);
        }
        let interval = Duration::from_secs(1) / u32::from(client.tick_rate.max(1));
        let margin = i32::from(config.lead_margin);
        let snapshot = client.newest_applied;
        client.predict.sync.set_input_delay(config.input_delay);
        let Advance { skipped, due } = client.predict.sync.advance(dt, interval, margin, snapshot);
        let Some(present) = client.predict.sync.present() else {
            return;
        };
        if skipped > 0 {
            Self::skip(client, scene, present.wrapping_sub(due), skipped, config);
        }
        let fade = if config.smoothing.is_zero() {
            1.0
        } else {
            dt.as_secs_f32() / config.smoothing.as_secs_f32()
        };
        let ends_correction = skipped > 0 && config.smoothing > Duration::ZERO;
        // The corrections are shown in the pass that records the last tick, when nothing comes
        // between them.
        let mut shown = false;
        let redundancy = usize::from(config.input_redundancy).clamp(1, MAX_INPUT_REDUNDANCY);
        for k in (0..due).rev() {
            let tick = present.wrapping_sub(k);
            let stamped = tick.wrapping_add(config.input_delay);
            self.store_input(client, stamped, sample(tick));
            if let Some(outbox) = outbox.as_deref_mut() {
                self.send_inputs(outbox, client, stamped, redundancy);
            }
            self.simulate(client, scene, tick, false, step);
            shown = k == 0 && !config.check_determinism && !ends_correction;
            let show = shown.then_some(fade);
            client.replicas.record_predicted(scene, tick, show);
            client.predict.stats.ticks_predicted += 1;
            if config.check_determinism {
                self.check(client, scene, tick, step);
            }
        }
        if ends_correction {
            client.replicas.end_correction(scene, present);
        }
        let p = &mut client.predict;
        if let Some(lead) = p.sync.lowest_lead() {
            p.stats.input_lead = lead;
        }
        p.stats.clock_jumps = p.sync.jumps;
        if !shown {
            client.replicas.show_predicted(scene, fade);
        }
    }

    /// Client: prediction starts (a new session): the nodes it owns are predicted from the
    /// newest snapshot on, and the inputs kept from an earlier session are forgotten (the ring
    /// is sized by [`fit_ring`](Self::fit_ring), then). The clock starts a round trip
    /// (as the handshake measured it) plus the margin and [`STARTUP_SLACK`] ahead of the
    /// newest snapshot:
    /// the snapshot left the server half a round trip ago, and an input sent now arrives half
    /// a round trip from now. The server's input acks steer it from there.
    fn start(&mut self, client: &mut ClientState, scene: &mut dyn Store, config: PredictionConfig) {
        let local = client.local_peer;
        let owned = client
            .nodes
            .iter()
            .filter(|n| n.authority == local)
            .map(|n| n.node);
        let tick = client.newest_applied;
        // A confirmation can be as old as the snapshots the server remembers: a shorter history
        // would never compare it, and a misprediction would stand.
        let memory = u32::try_from(snapshot_memory(client.tick_rate)).unwrap_or(u32::MAX);
        let p = &mut client.predict;
        p.activate(
            &mut client.replicas,
            scene,
            owned,
            tick,
            config.history_ticks.max(memory),
        );
        let interval = Duration::from_secs(1) / u32::from(client.tick_rate.max(1));
        let rtt = client.handshake_rtt.unwrap_or(interval * 2);
        let rtt_ticks = u32::try_from(rtt.as_nanos().div_ceil(interval.as_nanos())).unwrap_or(0);
        let ahead =
            rtt_ticks.min(u32::from(u8::MAX)) + u32::from(config.lead_margin) + STARTUP_SLACK;
        p.sync.start(tick.wrapping_add(ahead));
        for slot in &mut self.ring {
            slot.tick = None;
        }
    }

    /// Client: makes the input ring hold `history` ticks and the inputs sent and delayed by
    /// `config`, if it is smaller (the first frame of a session, of a new `Simulation`, or of
    /// larger settings), keeping the inputs it holds. In steady state it is big enough: nothing
    /// is allocated.
    fn fit_ring(&mut self, history: usize, config: PredictionConfig) {
        let redundancy = usize::from(config.input_redundancy).clamp(1, MAX_INPUT_REDUNDANCY);
        let needed = (redundancy + config.input_delay as usize + 1).next_power_of_two();
        let capacity = history.max(needed).next_power_of_two();
        if self.ring.len() >= capacity {
            return;
        }
        let mut ring: Box<[TickInput<I>]> = (0..capacity).map(|_| TickInput::default()).collect();
        // Ticks apart in the smaller power-of-two ring are apart in the larger one.
        for slot in std::mem::take(&mut self.ring).into_vec() {
            if let Some(tick) = slot.tick {
                ring[tick as usize & (capacity - 1)] = slot;
            }
        }
        self.ring = ring;
    }

    /// Client: the clock skipped `skipped` ticks up to `base` (a stall): the predicted rows go on from the
    /// server's newest confirmed state as of `base` (their inputs of the ticks skipped were not
    /// simulated, here or, mostly, on the server: the confirmations that follow correct what
    /// differs).
    fn skip(
        client: &mut ClientState,
        scene: &mut dyn Store,
        base: u32,
        skipped: u32,
        config: PredictionConfig,
    ) {
        // `base` is past every tick predicted so far: each row goes back to its confirmed state.
        client
            .replicas
            .roll_back_to(scene, base, config.smoothing > Duration::ZERO);
        client.predict.stats.ticks_skipped += u64::from(skipped);
    }

    /// Client: the prediction of `mismatch.tick` was wrong: every predicted row back to its
    /// state then (the server's where confirmed), and the stored inputs re-simulated to the
    /// present.
    fn roll_back(
        &mut self,
        client: &mut ClientState,
        scene: &mut dyn Store,
        mismatch: Misprediction,
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
        client.replicas.roll_back_to(scene, from, smoothing);
        for k in (0..depth).rev() {
            let tick = present.wrapping_sub(k);
            self.simulate(client, scene, tick, true, step);
            client.replicas.record_predicted(scene, tick, None);
        }
        if smoothing {
            client.replicas.end_correction(scene, present);
        }
        let stats = &mut client.predict.stats;
        stats.rollbacks += 1;
        stats.resimulated_ticks += u64::from(depth);
        stats.deepest_rollback = stats.deepest_rollback.max(depth);
        self.last_misprediction =
            Some(mismatch.named(client.net_id(mismatch.node), &client.replicas));
    }

    /// Client: the determinism check of `tick`: runs it again from the tick before and compares.
    fn check(
        &mut self,
        client: &mut ClientState,
        scene: &mut dyn Store,
        tick: u32,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        client.replicas.restore_history(scene, tick.wrapping_sub(1));
        self.simulate(client, scene, tick, true, step);
        if let Some((node, member)) = client.replicas.check_predicted(scene, tick) {
            client.predict.stats.divergences += 1;
            if self.divergence.is_none() {
                let found = Divergence {
                    tick,
                    node,
                    net_id: client.net_id(node),
                    type_name: client.replicas.predicted_type(node).unwrap_or(""),
                    member,
                };
                tracing::warn!(%found, "the step function is not deterministic");
                self.divergence = Some(found);
            }
        }
        client.replicas.restore_history(scene, tick);
    }

    /// Client: runs `step` for `tick` with the stored input of that tick.
    fn simulate(
        &mut self,
        client: &ClientState,
        scene: &mut dyn Store,
        tick: u32,
        resimulating: bool,
        step: &mut impl FnMut(&mut Step<'_, I>),
    ) {
        let input = self
            .kept(tick)
            .map_or_else(I::default, |slot| slot.input.clone());
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
        let Some(slot) = self.slot_mut(tick) else {
            return;
        };
        slot.tick = Some(tick);
        slot.input = input;
        slot.view = view;
        slot.bytes.clear();
        slot.input.encode(&mut slot.bytes);
    }

    /// Client: sends the inputs up to `newest`, the `redundancy` newest that are kept.
    fn send_inputs(
        &self,
        outbox: &mut Outbox,
        client: &mut ClientState,
        newest: u32,
        redundancy: usize,
    ) {
        let mut batch: [(&[u8], Option<ViewAt>); MAX_INPUT_REDUNDANCY] =
            [(&[], None); MAX_INPUT_REDUNDANCY];
        let mut n = 0;
        for back in (0..redundancy).rev() {
            // `back < MAX_INPUT_REDUNDANCY`.
            #[allow(clippy::cast_possible_truncation)]
            let tick = newest.wrapping_sub(back as u32);
            let Some(slot) = self.kept(tick).filter(|s| s.bytes.len() <= MAX_INPUT_BYTES) else {
                // Not sampled (before the first) or over the limit: the ones after it go.
                n = 0;
                continue;
            };
            batch[n] = (slot.bytes.as_slice(), slot.view);
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

    /// Client: the ring's slot of `tick` (`None` while the ring is empty).
    fn slot_mut(&mut self, tick: u32) -> Option<&mut TickInput<I>> {
        let mask = self.ring.len().wrapping_sub(1);
        self.ring.get_mut(tick as usize & mask)
    }

    /// Client: the input kept for `tick`, if its slot still holds it.
    fn kept(&self, tick: u32) -> Option<&TickInput<I>> {
        let mask = self.ring.len().wrapping_sub(1);
        self.ring
            .get(tick as usize & mask)
            .filter(|slot| slot.tick == Some(tick))
    }
}
