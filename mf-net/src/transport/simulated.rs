//! A seeded bad-network decorator for any [`Transport`].
//!
//! [`SimulatedTransport`] sits in front of a transport and degrades what **this endpoint sends**
//! according to [`NetworkConditions`]:
//!
//! - **Loss** and **duplication** hit the [`Unreliable`](Channel::Unreliable) channel only. A
//!   reliable packet is never lost or doubled: a real transport resends what is lost, which
//!   looks like delay.
//! - **Latency** plus **jitter** (an extra delay drawn uniformly from `0..=jitter` for every
//!   packet) apply to both channels. A reliable packet is never delivered before the reliable
//!   packet sent before it to the same peer, so reliable packets stay in order.
//! - **Reordering** holds an unreliable packet back by a further delay (drawn uniformly from
//!   [`NetworkConditions::REORDER_MIN_HOLD`]` ..= REORDER_MIN_HOLD + latency + jitter`), so
//!   packets sent after it overtake it.
//!
//! Conditions on one end add their latency to the round trip once; wrap both ends for a
//! symmetric link. Received packets pass through untouched.
//!
//! # Time and determinism
//!
//! The decorator reads no clock: time moves only with [`advance`](Transport::advance). Each
//! accepted packet gets a due time and waits in a queue sorted by due time (ties by send order).
//! [`advance`](Transport::advance) and [`flush`](Transport::flush) hand every packet that is due
//! to the inner transport's `send`; `flush` then flushes the inner transport. A packet that is
//! due at once (no latency) and has nothing due ahead of it goes straight to the inner transport,
//! so with [`NetworkConditions::perfect`] the decorator is transparent.
//!
//! Every random draw comes from one [`fastrand::Rng`] seeded with the seed given to
//! [`new`](SimulatedTransport::new), never from the game's random numbers: the same seed and the
//! same calls give the same deliveries on every run.
//!
//! # Peers
//!
//! Like a real transport it only accepts packets for connected peers: it learns them from the
//! inner transport's [`Connected`](TransportEvent::Connected) and
//! [`Disconnected`](TransportEvent::Disconnected) events as they pass through
//! [`poll_event`](Transport::poll_event). Sending to any other peer fails with
//! [`SendError::UnknownPeer`]. When a peer leaves, the packets still waiting for it are
//! discarded. [`disconnect`](Transport::disconnect) first hands the peer's waiting reliable
//! packets to the inner transport (in order, at once), drops its waiting unreliable ones, then
//! disconnects it.
//!
//! # Allocation
//!
//! Waiting packets are copied into buffers from the decorator's own pool and the queue keeps its
//! capacity, so once warmed up (or after [`reserve`](SimulatedTransport::reserve)) the
//! decorator allocates nothing.
//!
//! ```
//! use std::time::Duration;
//! use mf_net::transport::loopback::LoopbackNetwork;
//! use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
//! use mf_net::transport::{Channel, PeerId, Transport, TransportEvent};
//!
//! let network = LoopbackNetwork::new();
//! let (mut server, client) = network.pair(0);
//! let conditions = NetworkConditions::default().with_latency(Duration::from_millis(100));
//! let mut client = SimulatedTransport::new(client, conditions, 1234);
//! assert!(server.poll_event().is_some()); // Connected
//! assert!(client.poll_event().is_some()); // Connected: now the client may send
//!
//! client.send(PeerId::SERVER, Channel::Reliable, b"late").unwrap();
//! client.advance(Duration::from_millis(99));
//! client.flush();
//! assert_eq!(server.poll_event(), None);
//! client.advance(Duration::from_millis(1));
//! client.flush();
//! assert!(matches!(server.poll_event(), Some(TransportEvent::Received { data: b"late", .. })));
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use super::pool::PacketPool;
use super::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

/// How bad a simulated network is. [`Default`] is a perfect network.
///
/// Probabilities are clamped to `0.0..=1.0` (NaN reads as 0) when given to a
/// [`SimulatedTransport`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NetworkConditions {
    /// Probability that an unreliable packet is lost.
    pub loss: f32,
    /// Probability that an unreliable packet that was not lost arrives twice.
    pub duplication: f32,
    /// Delay added to every packet.
    pub latency: Duration,
    /// Largest extra delay drawn (uniformly, per packet) on top of `latency`.
    pub jitter: Duration,
    /// Probability that an unreliable packet is held back by a further delay, so that packets
    /// sent after it overtake it (see [`REORDER_MIN_HOLD`](Self::REORDER_MIN_HOLD)).
    pub reorder: f32,
}

impl NetworkConditions {
    /// The shortest further delay of a reordered packet. The hold is drawn uniformly from
    /// `REORDER_MIN_HOLD ..= REORDER_MIN_HOLD + latency + jitter`, so a reordered packet is
    /// overtaken even on a network without latency (by what is sent in the next frame or two).
    pub const REORDER_MIN_HOLD: Duration = Duration::from_millis(20);

    /// A perfect network: nothing lost, doubled, delayed or reordered.
    pub const fn perfect() -> Self {
        Self {
            loss: 0.0,
            duplication: 0.0,
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            reorder: 0.0,
        }
    }

    /// A network that loses `loss` of the unreliable packets and is otherwise perfect.
    pub const fn lossy(loss: f32) -> Self {
        Self::perfect().with_loss(loss)
    }

    /// A network that delays every packet by `latency` plus up to `jitter`, and is otherwise
    /// perfect.
    pub const fn laggy(latency: Duration, jitter: Duration) -> Self {
        Self::perfect().with_latency(latency).with_jitter(jitter)
    }

    /// A poor connection, for convergence tests: 20 % loss, 5 % duplication, 80 ms latency with
    /// 40 ms jitter, 5 % reordering.
    pub const fn poor() -> Self {
        Self {
            loss: 0.2,
            duplication: 0.05,
            latency: Duration::from_millis(80),
            jitter: Duration::from_millis(40),
            reorder: 0.05,
        }
    }

    /// These conditions with `loss` as the unreliable loss probability.
    #[must_use]
    pub const fn with_loss(mut self, loss: f32) -> Self {
        self.loss = loss;
        self
    }

    /// These conditions with `duplication` as the unreliable duplication probability.
    #[must_use]
    pub const fn with_duplication(mut self, duplication: f32) -> Self {
        self.duplication = duplication;
        self
    }

    /// These conditions with `latency` as the base delay.
    #[must_use]
    pub const fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// These conditions with `jitter` as the largest extra delay.
    #[must_use]
    pub const fn with_jitter(mut self, jitter: Duration) -> Self {
        self.jitter = jitter;
        self
    }

    /// These conditions with `reorder` as the unreliable reordering probability.
    #[must_use]
    pub const fn with_reorder(mut self, reorder: f32) -> Self {
        self.reorder = reorder;
        self
    }

    /// These conditions with every probability clamped to `0.0..=1.0` (NaN becomes 0).
    #[must_use]
    pub fn sanitized(self) -> Self {
        fn clamp(p: f32) -> f32 {
            if p.is_nan() {
                0.0
            } else {
                p.clamp(0.0, 1.0)
            }
        }
        Self {
            loss: clamp(self.loss),
            duplication: clamp(self.duplication),
            reorder: clamp(self.reorder),
            ..self
        }
    }
}

/// What a [`SimulatedTransport`] did to the packets it was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimulationStats {
    /// Packets `send` accepted (before loss and duplication).
    pub accepted: u64,
    /// Unreliable packets lost on purpose.
    pub dropped: u64,
    /// Extra copies of unreliable packets made on purpose.
    pub duplicated: u64,
    /// Unreliable packets (copies included) held back to be reordered.
    pub reordered: u64,
    /// Packets (copies included) handed to the inner transport, which accepted them.
    pub delivered: u64,
    /// Packets the inner transport refused when they became due.
    pub send_failures: u64,
    /// Packets still waiting when their peer left (or unreliable ones waiting when it was
    /// disconnected), which were thrown away.
    pub discarded: u64,
}

/// A [`Transport`] decorator that loses, duplicates, delays and reorders what its endpoint sends,
/// deterministically. See the [module documentation](self).
pub struct SimulatedTransport<T: Transport> {
    inner: T,
    conditions: NetworkConditions,
    rng: fastrand::Rng,
    now: Duration,
    next_seq: u64,
    /// Sorted by `(due, seq)`.
    queue: VecDeque<Pending>,
    /// Sorted by `id`.
    peers: Vec<SimPeer>,
    pool: PacketPool,
    stats: SimulationStats,
}

struct Pending {
    due: Duration,
    seq: u64,
    peer: PeerId,
    channel: Channel,
    buf: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
struct SimPeer {
    id: PeerId,
    /// Due time of the last reliable packet queued for this peer.
    last_reliable_due: Duration,
}

impl<T: Transport> SimulatedTransport<T> {
    /// Wraps `inner`, degrading what it sends by `conditions`, with random draws seeded by
    /// `seed`.
    pub fn new(inner: T, conditions: NetworkConditions, seed: u64) -> Self {
        Self {
            inner,
            conditions: conditions.sanitized(),
            rng: fastrand::Rng::with_seed(seed),
            now: Duration::ZERO,
            next_seq: 0,
            queue: VecDeque::new(),
            peers: Vec::new(),
            pool: PacketPool::new(),
            stats: SimulationStats::default(),
        }
    }

    /// The conditions in force.
    pub fn conditions(&self) -> NetworkConditions {
        self.conditions
    }

    /// Changes the conditions for packets sent from now on (waiting packets keep their due
    /// times).
    pub fn set_conditions(&mut self, conditions: NetworkConditions) {
        self.conditions = conditions.sanitized();
    }

    /// The decorator's time: the sum of every `dt` given to [`advance`](Transport::advance).
    pub fn now(&self) -> Duration {
        self.now
    }

    /// How many packets are waiting for their due time.
    pub fn in_flight(&self) -> usize {
        self.queue.len()
    }

    /// What the decorator did to the packets it was given.
    pub fn simulation_stats(&self) -> SimulationStats {
        self.stats
    }

    /// Whether `send` to `peer` is accepted (its `Connected` event has passed through
    /// [`poll_event`](Transport::poll_event) and it has not left).
    pub fn is_connected(&self, peer: PeerId) -> bool {
        self.peer_index(peer).is_ok()
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The wrapped transport, mutably. Packets sent through it directly skip the simulation.
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Unwraps the inner transport. Packets still waiting are thrown away.
    pub fn into_inner(self) -> T {
        self.inner
    }

    /// Makes room for `packets` waiting packets of up to `bytes` each, so that a burst of that
    /// size allocates nothing even before the decorator has warmed up.
    pub fn reserve(&mut self, packets: usize, bytes: usize) {
        self.pool.reserve(packets, bytes);
        self.queue.reserve(packets.saturating_sub(self.queue.len()));
    }

    fn peer_index(&self, peer: PeerId) -> Result<usize, usize> {
        self.peers.binary_search_by_key(&peer, |p| p.id)
    }

    fn chance(&mut self, probability: f32) -> bool {
        if probability <= 0.0 {
            false
        } else if probability >= 1.0 {
            true
        } else {
            self.rng.f32() < probability
        }
    }

    fn random_delay(&mut self, max: Duration) -> Duration {
        if max.is_zero() {
            return Duration::ZERO;
        }
        let max_nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(self.rng.u64(0..=max_nanos))
    }

    /// The due time of a packet sent now: latency plus jitter.
    fn delayed(&mut self) -> Duration {
        let jitter = self.random_delay(self.conditions.jitter);
        self.now
            .saturating_add(self.conditions.latency)
            .saturating_add(jitter)
    }

    /// Queues one copy of a packet for `due`, or sends it at once when it is due and nothing
    /// due is waiting ahead of it.
    fn schedule(
        &mut self,
        due: Duration,
        peer: PeerId,
        channel: Channel,
        data: &[u8],
    ) -> Result<(), SendError> {
        let nothing_due_ahead = self.queue.front().map_or(true, |p| p.due > self.now);
        if due <= self.now && nothing_due_ahead {
            let result = self.inner.send(peer, channel, data);
            match result {
                Ok(()) => self.stats.delivered += 1,
                Err(_) => self.stats.send_failures += 1,
            }
            return result;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let at = self.queue.partition_point(|p| (p.due, p.seq) <= (due, seq));
        let buf = self.pool.take(data);
        self.queue.insert(
            at,
            Pending {
                due,
                seq,
                peer,
                channel,
                buf,
            },
        );
        Ok(())
    }

    /// Hands every due packet to the inner transport.
    fn release_due(&mut self) {
        while self.queue.front().is_some_and(|p| p.due <= self.now) {
            let Some(pending) = self.queue.pop_front() else {
                break;
            };
            match self.inner.send(pending.peer, pending.channel, &pending.buf) {
                Ok(()) => self.stats.delivered += 1,
                Err(_) => self.stats.send_failures += 1,
            }
            self.pool.give(pending.buf);
        }
    }
}

/// Throws away every waiting packet for `peer`; returns how many there were.
fn discard_peer(queue: &mut VecDeque<Pending>, pool: &mut PacketPool, peer: PeerId) -> u64 {
    let mut discarded = 0;
    queue.retain_mut(|p| {
        if p.peer != peer {
            return true;
        }
        pool.give(std::mem::take(&mut p.buf));
        discarded += 1;
        false
    });
    discarded
}

impl<T: Transport> Transport for SimulatedTransport<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        let index = self.peer_index(peer).map_err(|_| SendError::UnknownPeer)?;
        self.stats.accepted += 1;
        match channel {
            Channel::Reliable => {
                let last = self
                    .peers
                    .get(index)
                    .map_or(Duration::ZERO, |p| p.last_reliable_due);
                let due = self.delayed().max(last);
                if let Some(p) = self.peers.get_mut(index) {
                    p.last_reliable_due = due;
                }
                self.schedule(due, peer, channel, data)
            }
            Channel::Unreliable => {
                if self.chance(self.conditions.loss) {
                    self.stats.dropped += 1;
                    return Ok(());
                }
                let copies = if self.chance(self.conditions.duplication) {
                    self.stats.duplicated += 1;
                    2
                } else {
                    1
                };
                let mut result = Ok(());
                for copy in 0..copies {
                    let mut due = self.delayed();
                    if self.chance(self.conditions.reorder) {
                        self.stats.reordered += 1;
                        let spread = self
                            .conditions
                            .latency
                            .saturating_add(self.conditions.jitter);
                        let hold = self.random_delay(spread);
                        due = due
                            .saturating_add(NetworkConditions::REORDER_MIN_HOLD)
                            .saturating_add(hold);
                    }
                    let sent = self.schedule(due, peer, channel, data);
                    if copy == 0 {
                        result = sent;
                    }
                }
                result
            }
        }
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        let event = self.inner.poll_event()?;
        match event {
            TransportEvent::Connected { peer, .. } => {
                if let Err(at) = self.peers.binary_search_by_key(&peer, |p| p.id) {
                    self.peers.insert(
                        at,
                        SimPeer {
                            id: peer,
                            last_reliable_due: Duration::ZERO,
                        },
                    );
                }
            }
            TransportEvent::Disconnected { peer, .. } => {
                if let Ok(at) = self.peers.binary_search_by_key(&peer, |p| p.id) {
                    self.peers.remove(at);
                }
                self.stats.discarded += discard_peer(&mut self.queue, &mut self.pool, peer);
            }
            TransportEvent::Received { .. } => {}
        }
        Some(event)
    }

    fn advance(&mut self, dt: Duration) {
        self.now = self.now.saturating_add(dt);
        self.inner.advance(dt);
        self.release_due();
    }

    fn flush(&mut self) {
        self.release_due();
        self.inner.flush();
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        if let Ok(at) = self.peer_index(peer) {
            self.peers.remove(at);
        }
        // The peer's waiting reliable packets go first, in order; unreliable ones are dropped.
        let inner = &mut self.inner;
        let pool = &mut self.pool;
        let stats = &mut self.stats;
        self.queue.retain_mut(|p| {
            if p.peer != peer {
                return true;
            }
            let buf = std::mem::take(&mut p.buf);
            if p.channel == Channel::Reliable {
                match inner.send(peer, p.channel, &buf) {
                    Ok(()) => stats.delivered += 1,
                    Err(_) => stats.send_failures += 1,
                }
            } else {
                stats.discarded += 1;
            }
            pool.give(buf);
            false
        });
        self.inner.disconnect(peer, reason);
    }

    /// The inner transport's totals: what reached the wire, duplicates included and lost
    /// packets excluded. See [`simulation_stats`](SimulatedTransport::simulation_stats) for what
    /// the simulation did.
    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }

    fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }
}

impl<T: Transport + fmt::Debug> fmt::Debug for SimulatedTransport<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimulatedTransport")
            .field("inner", &self.inner)
            .field("conditions", &self.conditions)
            .field("now", &self.now)
            .field("in_flight", &self.queue.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::transport::loopback::{LoopbackNetwork, LoopbackTransport};

    const MS: Duration = Duration::from_millis(1);

    fn setup(
        conditions: NetworkConditions,
        seed: u64,
    ) -> (LoopbackTransport, SimulatedTransport<LoopbackTransport>) {
        let network = LoopbackNetwork::new();
        let (mut server, client) = network.pair(0);
        let mut client = SimulatedTransport::new(client, conditions, seed);
        assert!(matches!(
            server.poll_event(),
            Some(TransportEvent::Connected { .. })
        ));
        assert!(matches!(
            client.poll_event(),
            Some(TransportEvent::Connected { .. })
        ));
        (server, client)
    }

    fn drain(server: &mut LoopbackTransport, out: &mut Vec<Vec<u8>>) {
        while let Some(event) = server.poll_event() {
            if let TransportEvent::Received { data, .. } = event {
                out.push(data.to_vec());
            }
        }
    }

    #[test]
    fn perfect_network_is_transparent() {
        let (mut server, mut client) = setup(NetworkConditions::perfect(), 1);
        client
            .send(PeerId::SERVER, Channel::Unreliable, b"a")
            .unwrap();
        assert_eq!(
            client.in_flight(),
            0,
            "sent straight to the inner transport"
        );
        client.flush();
        let mut got = Vec::new();
        drain(&mut server, &mut got);
        assert_eq!(got, vec![b"a".to_vec()]);
    }

    #[test]
    fn unknown_peers_are_refused() {
        let (_server, mut client) = setup(NetworkConditions::perfect(), 1);
        assert_eq!(
            client.send(PeerId(99), Channel::Reliable, b"x"),
            Err(SendError::UnknownPeer)
        );
    }

    #[test]
    fn latency_holds_packets_until_due() {
        let (mut server, mut client) = setup(NetworkConditions::laggy(10 * MS, Duration::ZERO), 1);
        client
            .send(PeerId::SERVER, Channel::Reliable, b"r")
            .unwrap();
        client.advance(9 * MS);
        client.flush();
        let mut got = Vec::new();
        drain(&mut server, &mut got);
        assert!(got.is_empty());
        client.advance(MS);
        client.flush();
        drain(&mut server, &mut got);
        assert_eq!(got, vec![b"r".to_vec()]);
    }

    #[test]
    fn full_loss_drops_unreliable_only() {
        let (mut server, mut client) = setup(NetworkConditions::lossy(1.0), 1);
        client
            .send(PeerId::SERVER, Channel::Unreliable, b"u")
            .unwrap();
        client
            .send(PeerId::SERVER, Channel::Reliable, b"r")
            .unwrap();
        client.flush();
        let mut got = Vec::new();
        drain(&mut server, &mut got);
        assert_eq!(got, vec![b"r".to_vec()]);
        assert_eq!(client.simulation_stats().dropped, 1);
    }

    #[test]
    fn reorder_is_overtaken() {
        let conditions = NetworkConditions::perfect().with_reorder(1.0);
        let (mut server, mut client) = setup(conditions, 1);
        client
            .send(PeerId::SERVER, Channel::Unreliable, b"first")
            .unwrap();
        client.set_conditions(NetworkConditions::perfect());
        client
            .send(PeerId::SERVER, Channel::Unreliable, b"second")
            .unwrap();
        client.advance(NetworkConditions::REORDER_MIN_HOLD);
        client.flush();
        let mut got = Vec::new();
        drain(&mut server, &mut got);
        assert_eq!(got, vec![b"second".to_vec(), b"first".to_vec()]);
    }

    #[test]
    fn conditions_are_sanitized() {
        let c = NetworkConditions::perfect()
            .with_loss(f32::NAN)
            .with_duplication(2.0)
            .with_reorder(-1.0)
            .sanitized();
        assert_eq!((c.loss, c.duplication, c.reorder), (0.0, 1.0, 0.0));
    }
}
