//! [`SecureServer`]: the server end of the secure layer, decorating any [`Transport`].

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

use crate::challenge::Challenger;
use crate::config::ConfigError;
use crate::key::random_bytes;
use crate::pending::{Pending, Presented, Stage};
use crate::session::{Dropped, Session};
use crate::used::UsedTokens;
use crate::wire::{KIND_KEEPALIVE, KIND_PAYLOAD};
use crate::{ClientIdentity, SecureStats, ServerConfig};

/// The earliest plausible wall-clock time (2020-01-01), in seconds since the UNIX epoch.
const EARLIEST_CLOCK: u64 = 1_577_836_800;
/// The latest plausible wall-clock time (2500-01-01).
const LATEST_CLOCK: u64 = 16_725_225_600;

/// A [`Transport`] decorator admitting only clients with a valid
/// [`ConnectToken`](crate::ConnectToken), and sealing every packet after that.
///
/// The handshake, after netcode.io's:
/// 1. A peer the inner transport connects is **not** reported yet. Its first packet must be a
///    connection request. One that is not, or whose token does not open under the shared key,
///    gets no answer: the peer is dropped. A plain mf-net client (no token at all) is refused
///    with [`SecureRequired`](DisconnectReason::SecureRequired).
/// 2. An opened token that cannot be admitted is refused with a reason sealed for the token
///    holder alone: [`ProtocolMismatch`](DisconnectReason::ProtocolMismatch),
///    [`TokenExpired`](DisconnectReason::TokenExpired),
///    [`TokenWrongServer`](DisconnectReason::TokenWrongServer),
///    [`TokenReplayed`](DisconnectReason::TokenReplayed),
///    [`ServerFull`](DisconnectReason::ServerFull) or
///    [`ClientIdInUse`](DisconnectReason::ClientIdInUse).
/// 3. Otherwise the server sends a challenge, sealed under a key it drew at start, inside a
///    packet sealed with the connection's keys. These are derived from the token's keys and
///    fresh salts from both sides, so a token used on two servers, or before and after a
///    restart, never gives the same keys. Only a client that receives at its address and
///    holds the token's keys can answer it.
/// 4. On the answer the peer is admitted: the server records the token as used, sends a sealed
///    "accepted" packet and reports [`Connected`](TransportEvent::Connected) with the inner
///    transport's connect data. Nothing of the game is sealed or passed up before that.
///
/// A peer that does not complete the handshake within the
/// [handshake timeout](ServerConfig::handshake_timeout) is dropped; at most
/// [`max_pending`](ServerConfig::max_pending) peers may be in the handshake at once. An admitted
/// peer from which nothing authenticates for [`timeout`](ServerConfig::timeout) is disconnected
/// with [`Timeout`](DisconnectReason::Timeout) (both ends send keep-alives when idle). Packets
/// that fail to authenticate, repeat a sequence number or are too old are dropped and counted
/// in [`secure_stats`](Self::secure_stats), never passed up.
///
/// Time: expiry is checked against the time given to [`new`](Self::new) plus every `dt` given
/// to [`advance`](Transport::advance) (or set again with [`set_time`](Self::set_time)); the
/// layer reads no clock, and its clock never goes back. Once every admitted peer's buffers have
/// grown to the largest packet, sending and receiving allocate nothing.
pub struct SecureServer<T: Transport> {
    pub(crate) inner: T,
    pub(crate) config: ServerConfig,
    /// The configured addresses as the issuer writes them.
    pub(crate) addresses: Vec<String>,
    pub(crate) now: Duration,
    /// When the server started, in seconds since the UNIX epoch.
    pub(crate) started: u64,
    /// Peers connected on the inner transport that are not admitted yet.
    pub(crate) pending: Vec<Pending>,
    /// Admitted peers, sorted by id.
    pub(crate) peers: Vec<Admitted>,
    pub(crate) used: UsedTokens,
    pub(crate) challenger: Challenger,
    pub(crate) events: VecDeque<Upward>,
    /// Opened requests and sealed outgoing packets.
    pub(crate) scratch: Vec<u8>,
    /// The payload of the last `Received` event, lent until the next poll.
    pub(crate) opened: Vec<u8>,
    /// Scratch: the challenged peers' tokens, when room is made (see [`crate::room`]).
    pub(crate) repeated: Vec<Presented>,
    pub(crate) stats: SecureStats,
}

/// One admitted connection.
pub(crate) struct Admitted {
    pub(crate) peer: PeerId,
    pub(crate) identity: ClientIdentity,
    pub(crate) session: Session,
    /// When the last authenticated packet arrived.
    pub(crate) heard: Duration,
    /// When the last packet went out.
    pub(crate) sent: Duration,
}

/// An event for the layer above, waiting behind another.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Upward {
    Connected(PeerId, u32),
    Disconnected(PeerId, DisconnectReason),
}

impl<T: Transport> SecureServer<T> {
    /// Wraps the accepting transport `inner`. `now` is the current time since the UNIX epoch,
    /// on the clock the token issuer uses. Draws the challenge key.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the field out of range, a `now` that is no wall-clock time, or
    /// the random number generator failing.
    pub fn new(inner: T, config: ServerConfig, now: Duration) -> Result<Self, ConfigError> {
        config.check()?;
        if !(EARLIEST_CLOCK..LATEST_CLOCK).contains(&now.as_secs()) {
            return Err(ConfigError::Clock(now));
        }
        let key = zeroize::Zeroizing::new(random_bytes().map_err(|_| ConfigError::Randomness)?);
        let addresses = config.addresses.iter().map(ToString::to_string).collect();
        Ok(Self {
            inner,
            used: UsedTokens::new(config.used_token_capacity),
            challenger: Challenger::new(&key),
            config,
            addresses,
            now,
            started: now.as_secs(),
            pending: Vec::new(),
            peers: Vec::new(),
            events: VecDeque::with_capacity(4),
            scratch: Vec::new(),
            opened: Vec::new(),
            repeated: Vec::new(),
            stats: SecureStats::default(),
        })
    }

    /// Who the admitted `peer` is, as its token says; `None` for a peer not admitted.
    pub fn identity(&self, peer: PeerId) -> Option<&ClientIdentity> {
        self.admitted(peer).map(|p| &p.identity)
    }

    /// The admitted peer holding a token for `client_id`, if any.
    pub fn peer_of(&self, client_id: u64) -> Option<PeerId> {
        self.peers
            .iter()
            .find(|p| p.identity.client_id() == client_id)
            .map(|p| p.peer)
    }

    /// How many peers are admitted.
    pub fn admitted_count(&self) -> usize {
        self.peers.len()
    }

    /// How many peers are in the handshake (connected on the inner transport, not admitted).
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// What the layer admitted, refused and dropped.
    pub fn secure_stats(&self) -> SecureStats {
        self.stats
    }

    /// The layer's time since the UNIX epoch.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Sets the layer's time since the UNIX epoch (to follow the wall clock over a long run).
    /// A time before the layer's is ignored: its clock never goes back, so stepping the wall
    /// clock back cannot make a used or expired token valid again.
    pub fn set_time(&mut self, now: Duration) {
        self.now = self.now.max(now);
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The wrapped transport, mutably. Packets sent through it directly are not sealed (and
    /// the client drops them).
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    fn admitted(&self, peer: PeerId) -> Option<&Admitted> {
        let i = self.peers.binary_search_by_key(&peer, |p| p.peer).ok()?;
        self.peers.get(i)
    }

    /// Forgets `peer`; true if it was admitted.
    pub(crate) fn forget(&mut self, peer: PeerId) -> bool {
        if let Some(i) = self.pending.iter().position(|p| p.peer == peer) {
            self.pending.swap_remove(i);
        }
        match self.peers.binary_search_by_key(&peer, |p| p.peer) {
            Ok(i) => {
                self.peers.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Disconnects admitted peers silent for longer than the timeout, and sends a keep-alive
    /// to those the server has sent nothing for a keep-alive interval.
    fn tend_connections(&mut self) {
        let mut i = 0;
        while let Some(p) = self.peers.get_mut(i) {
            if self.now.saturating_sub(p.heard) >= self.config.timeout {
                let peer = p.peer;
                self.peers.remove(i);
                self.stats.timeouts += 1;
                self.inner.disconnect(peer, DisconnectReason::Timeout);
                self.events
                    .push_back(Upward::Disconnected(peer, DisconnectReason::Timeout));
                continue;
            }
            if self.now.saturating_sub(p.sent) >= self.config.keepalive_interval
                && p.session
                    .seal(KIND_KEEPALIVE, Channel::Unreliable, &[], &mut self.scratch)
            {
                p.sent = self.now;
                let _ = self.inner.send(p.peer, Channel::Unreliable, &self.scratch);
            }
            i += 1;
        }
    }
}

impl Upward {
    fn event(self) -> TransportEvent<'static> {
        match self {
            Upward::Connected(peer, connect_data) => {
                TransportEvent::Connected { peer, connect_data }
            }
            Upward::Disconnected(peer, reason) => TransportEvent::Disconnected { peer, reason },
        }
    }
}

/// What [`open`] did with a packet.
enum Receipt {
    /// A payload of an admitted peer, opened into the buffer.
    Opened,
    /// A packet of an admitted peer that does not get through (a keep-alive, or counted).
    Dropped,
    /// The peer is not admitted.
    NotAdmitted,
}

/// Opens `data` from `peer` into `opened` if the peer is admitted, counting what is dropped.
fn open(
    peers: &mut [Admitted],
    stats: &mut SecureStats,
    opened: &mut Vec<u8>,
    now: Duration,
    (peer, channel, data): (PeerId, Channel, &[u8]),
) -> Receipt {
    let Ok(i) = peers.binary_search_by_key(&peer, |p| p.peer) else {
        return Receipt::NotAdmitted;
    };
    let Some(admitted) = peers.get_mut(i) else {
        return Receipt::NotAdmitted;
    };
    let opened = admitted.session.open(channel, data, opened);
    if opened.is_ok() {
        admitted.heard = now;
    }
    match opened {
        Ok(KIND_PAYLOAD) => return Receipt::Opened,
        Ok(KIND_KEEPALIVE) => {}
        // The accepted packet goes the other way.
        Ok(_) => stats.dropped_unexpected += 1,
        Err(Dropped::Tampered) => stats.dropped_tampered += 1,
        Err(Dropped::Replayed) => stats.dropped_replayed += 1,
    }
    Receipt::Dropped
}

impl<T: Transport> Transport for SecureServer<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        let Ok(i) = self.peers.binary_search_by_key(&peer, |p| p.peer) else {
            return Err(if self.pending.iter().any(|p| p.peer == peer) {
                SendError::NotConnected
            } else {
                SendError::UnknownPeer
            });
        };
        let admitted = self.peers.get_mut(i).ok_or(SendError::UnknownPeer)?;
        if !admitted
            .session
            .seal(KIND_PAYLOAD, channel, data, &mut self.scratch)
        {
            return Err(SendError::TooLarge);
        }
        admitted.sent = self.now;
        self.inner.send(peer, channel, &self.scratch)
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        loop {
            if let Some(up) = self.events.pop_front() {
                return Some(up.event());
            }
            let clock = self.clock();
            match self.inner.poll_event()? {
                TransportEvent::Connected { peer, connect_data } => {
                    self.on_connected(peer, connect_data);
                }
                TransportEvent::Disconnected { peer, reason } => {
                    if self.forget(peer) {
                        return Some(TransportEvent::Disconnected { peer, reason });
                    }
                }
                TransportEvent::Received {
                    peer,
                    channel,
                    data,
                } => match open(
                    &mut self.peers,
                    &mut self.stats,
                    &mut self.opened,
                    self.now,
                    (peer, channel, data),
                ) {
                    Receipt::Opened => {
                        return Some(TransportEvent::Received {
                            peer,
                            channel,
                            data: &self.opened,
                        })
                    }
                    Receipt::Dropped => {}
                    Receipt::NotAdmitted => {
                        match self.pending.iter().position(|p| p.peer == peer) {
                            Some(i) => match &mut self.pending[i].stage {
                                Stage::AwaitingRequest => {
                                    let checked = crate::admission::check_request(
                                        &self.config,
                                        &self.addresses,
                                        clock,
                                        data,
                                        &mut self.scratch,
                                    );
                                    self.on_request(i, checked);
                                }
                                Stage::Challenged(challenged) => {
                                    let answer =
                                        challenged.session.open_handshake(data, &mut self.opened);
                                    self.on_response(i, answer);
                                }
                            },
                            None => self.stats.dropped_unexpected += 1,
                        }
                    }
                },
            }
        }
    }

    fn advance(&mut self, dt: Duration) {
        self.now = self.now.saturating_add(dt);
        self.inner.advance(dt);
        self.expire_handshakes();
        self.tend_connections();
    }

    fn flush(&mut self) {
        self.inner.flush();
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.forget(peer);
        self.inner.disconnect(peer, reason);
    }

    /// The inner transport's totals: sealed bytes, requests included.
    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }

    /// The admitted clients at most ([`max_clients`](ServerConfig::max_clients)).
    fn capacity(&self) -> Option<usize> {
        Some(self.config.max_clients)
    }
}

impl<T: Transport + fmt::Debug> fmt::Debug for SecureServer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecureServer")
            .field("inner", &self.inner)
            .field("admitted", &self.peers.len())
            .field("pending", &self.pending.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}
