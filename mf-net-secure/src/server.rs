//! [`SecureServer`]: the server end of the secure layer, decorating any [`Transport`].

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

use crate::admission::{self, Ticket};
use crate::session::{Dropped, Session};
use crate::used::{NotRecorded, UsedTokens};
use crate::wire::{KIND_ACCEPT, KIND_PAYLOAD, KIND_REQUEST};
use crate::{ClientIdentity, DuplicatePolicy, SecureStats, ServerConfig};

/// A [`Transport`] decorator admitting only clients with a valid
/// [`ConnectToken`](crate::ConnectToken), and sealing every packet after that.
///
/// - A peer the inner transport connects is **not** reported yet. Its first packet must be a
///   connection request; the server checks it without keeping anything for it and either
///   refuses it — disconnecting the inner peer with the named reason (see
///   [`DisconnectReason`]: `TokenMalformed`, `ProtocolMismatch`, `TokenExpired`,
///   `TokenInvalid`, `TokenWrongServer`, `TokenReplayed`, `ServerFull`, `ClientIdInUse`) and
///   reporting nothing — or admits it: it answers with a sealed "accepted" packet and reports
///   [`Connected`](TransportEvent::Connected) with the inner transport's connect data.
/// - A peer that sends no request within the
///   [handshake timeout](ServerConfig::handshake_timeout) is disconnected
///   ([`Timeout`](DisconnectReason::Timeout)).
/// - Admitted peers' packets are opened before they are passed up; a packet that fails to
///   authenticate, repeats a sequence number or is too old is dropped and counted in
///   [`secure_stats`](Self::secure_stats), never passed up.
/// - [`identity`](Self::identity) gives the client id and user data of an admitted peer.
///
/// Time: expiry is checked against the time given to [`new`](Self::new) plus every `dt` given
/// to [`advance`](Transport::advance) (or set again with [`set_time`](Self::set_time)); the
/// layer reads no clock. Once every admitted peer's buffers have grown to the largest packet,
/// sending and receiving allocate nothing.
pub struct SecureServer<T: Transport> {
    inner: T,
    config: ServerConfig,
    /// The configured addresses as the issuer writes them.
    addresses: Vec<String>,
    now: Duration,
    /// Peers connected on the inner transport whose request has not come yet.
    pending: Vec<Pending>,
    /// Admitted peers, sorted by id.
    peers: Vec<Admitted>,
    used: UsedTokens,
    events: VecDeque<Upward>,
    /// Opened requests and sealed outgoing packets.
    scratch: Vec<u8>,
    /// The payload of the last `Received` event, lent until the next poll.
    opened: Vec<u8>,
    stats: SecureStats,
}

struct Pending {
    peer: PeerId,
    connect_data: u32,
    since: Duration,
}

struct Admitted {
    peer: PeerId,
    identity: ClientIdentity,
    session: Session,
}

/// An event for the layer above, waiting behind another.
#[derive(Debug, Clone, Copy)]
enum Upward {
    Connected(PeerId, u32),
    Disconnected(PeerId, DisconnectReason),
}

impl<T: Transport> SecureServer<T> {
    /// Wraps the accepting transport `inner`. `now` is the current time since the UNIX epoch,
    /// on the clock the token issuer uses.
    pub fn new(inner: T, config: ServerConfig, now: Duration) -> Self {
        let addresses = config.addresses.iter().map(ToString::to_string).collect();
        Self {
            inner,
            used: UsedTokens::new(config.used_token_capacity),
            config,
            addresses,
            now,
            pending: Vec::new(),
            peers: Vec::new(),
            events: VecDeque::with_capacity(4),
            scratch: Vec::new(),
            opened: Vec::new(),
            stats: SecureStats::default(),
        }
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

    /// What the layer admitted, refused and dropped.
    pub fn secure_stats(&self) -> SecureStats {
        self.stats
    }

    /// The layer's time since the UNIX epoch.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Sets the layer's time since the UNIX epoch (to follow the wall clock over a long run).
    pub fn set_time(&mut self, now: Duration) {
        self.now = now;
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

    fn forget(&mut self, peer: PeerId) -> bool {
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

    /// Acts on a checked request of the pending `peer`.
    fn decide(&mut self, peer: PeerId, checked: Result<Ticket, DisconnectReason>) {
        let Some(i) = self.pending.iter().position(|p| p.peer == peer) else {
            return;
        };
        let pending = self.pending.swap_remove(i);
        match checked.and_then(|ticket| self.admissible(ticket)) {
            Ok((ticket, replacing)) => self.admit(pending, ticket, replacing),
            Err(reason) => {
                self.stats.count_refusal(reason);
                self.inner.disconnect(peer, reason);
            }
        }
    }

    /// The checks that depend on the other connections: replays, duplicates, room. Returns the
    /// connection the ticket replaces, if any.
    fn admissible(&mut self, ticket: Ticket) -> Result<(Ticket, Option<PeerId>), DisconnectReason> {
        if self.used.contains(&ticket.tag) {
            return Err(DisconnectReason::TokenReplayed);
        }
        let replacing = self.peer_of(ticket.identity.client_id());
        if replacing.is_some() && self.config.duplicates == DuplicatePolicy::RefuseNewer {
            return Err(DisconnectReason::ClientIdInUse);
        }
        let others = self.peers.len() - usize::from(replacing.is_some());
        if others >= self.config.max_clients {
            return Err(DisconnectReason::ServerFull);
        }
        let now = self.now.as_secs();
        match self.used.record(ticket.tag, ticket.expires_at, now) {
            Ok(()) => Ok((ticket, replacing)),
            Err(NotRecorded::Replayed) => Err(DisconnectReason::TokenReplayed),
            Err(NotRecorded::Full) => Err(DisconnectReason::ServerFull),
        }
    }

    fn admit(&mut self, pending: Pending, ticket: Ticket, replacing: Option<PeerId>) {
        if let Some(old) = replacing {
            self.forget(old);
            self.inner.disconnect(old, DisconnectReason::Replaced);
            self.stats.replaced += 1;
            self.events
                .push_back(Upward::Disconnected(old, DisconnectReason::Replaced));
        }
        let mut session = Session::new(
            self.config.protocol_id,
            &ticket.server_to_client,
            &ticket.client_to_server,
        );
        let peer = pending.peer;
        let sent = session.seal(KIND_ACCEPT, Channel::Reliable, &[], &mut self.scratch)
            && self
                .inner
                .send(peer, Channel::Reliable, &self.scratch)
                .is_ok();
        if !sent {
            self.inner.disconnect(peer, DisconnectReason::ConnectFailed);
            return;
        }
        let at = self.peers.partition_point(|p| p.peer < peer);
        self.peers.insert(
            at,
            Admitted {
                peer,
                identity: ticket.identity,
                session,
            },
        );
        self.stats.admitted += 1;
        self.events
            .push_back(Upward::Connected(peer, pending.connect_data));
    }

    /// Disconnects pending peers whose request is overdue.
    fn expire_handshakes(&mut self) {
        let mut i = 0;
        while let Some(p) = self.pending.get(i) {
            if self.now.saturating_sub(p.since) >= self.config.handshake_timeout {
                let peer = p.peer;
                self.pending.swap_remove(i);
                self.stats.handshake_timeouts += 1;
                self.inner.disconnect(peer, DisconnectReason::Timeout);
            } else {
                i += 1;
            }
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
    /// A packet of an admitted peer that does not get through (counted).
    Dropped,
    /// The peer is not admitted.
    NotAdmitted,
}

/// Opens `data` from `peer` into `opened` if the peer is admitted, counting what is dropped.
fn open(
    peers: &mut [Admitted],
    stats: &mut SecureStats,
    opened: &mut Vec<u8>,
    peer: PeerId,
    channel: Channel,
    data: &[u8],
) -> Receipt {
    let Ok(i) = peers.binary_search_by_key(&peer, |p| p.peer) else {
        return Receipt::NotAdmitted;
    };
    let Some(admitted) = peers.get_mut(i) else {
        return Receipt::NotAdmitted;
    };
    match admitted.session.open(channel, data, opened) {
        Ok(KIND_PAYLOAD) => return Receipt::Opened,
        // The accepted packet goes the other way; a second request is late.
        Ok(_) => stats.dropped_unexpected += 1,
        Err(_) if data.first() == Some(&KIND_REQUEST) => stats.dropped_unexpected += 1,
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
        self.inner.send(peer, channel, &self.scratch)
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        loop {
            if let Some(up) = self.events.pop_front() {
                return Some(up.event());
            }
            let now = self.now.as_secs();
            match self.inner.poll_event()? {
                TransportEvent::Connected { peer, connect_data } => self.pending.push(Pending {
                    peer,
                    connect_data,
                    since: self.now,
                }),
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
                    peer,
                    channel,
                    data,
                ) {
                    Receipt::Opened => {
                        return Some(TransportEvent::Received {
                            peer,
                            channel,
                            data: &self.opened,
                        })
                    }
                    Receipt::Dropped => {}
                    Receipt::NotAdmitted if self.pending.iter().any(|p| p.peer == peer) => {
                        let checked = admission::check(
                            &self.config,
                            &self.addresses,
                            now,
                            data,
                            &mut self.scratch,
                        );
                        self.decide(peer, checked);
                    }
                    Receipt::NotAdmitted => self.stats.dropped_unexpected += 1,
                },
            }
        }
    }

    fn advance(&mut self, dt: Duration) {
        self.now = self.now.saturating_add(dt);
        self.inner.advance(dt);
        self.expire_handshakes();
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
