//! [`SecureClient`]: the client end of the secure layer, decorating any [`Transport`].

use std::fmt;
use std::time::Duration;

use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

use crate::key::random_bytes;
use crate::keys::{ConnectionKeys, Salts};
use crate::session::{self, Dropped, End, Session};
use crate::wire::{
    KIND_ACCEPT, KIND_CHALLENGE, KIND_DENIED, KIND_KEEPALIVE, KIND_PAYLOAD, KIND_RESPONSE, SALT_LEN,
};
use crate::{ConnectToken, SecureStats};

/// Where the handshake is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The inner transport is connecting.
    Connecting,
    /// The request went out at this time; waiting for the server's challenge.
    Requesting(Duration),
    /// The answer to the challenge went out; waiting for the server's acceptance (the time is
    /// still the request's).
    Responding(Duration),
    /// The server accepted the token.
    Admitted,
    /// Refused, timed out or disconnected.
    Closed,
}

/// A [`Transport`] decorator presenting a [`ConnectToken`] to a
/// [`SecureServer`](crate::SecureServer) and sealing every packet with keys bound to this
/// connection.
///
/// Wrap the client transport right after creating it (it connects to one of the token's
/// [`servers`](ConnectToken::servers), with the connect data mf-net asks for). When the inner
/// transport connects, the client sends its connection request, answers the server's
/// challenge, and reports [`Connected`](TransportEvent::Connected) only once the server's
/// sealed acceptance arrives; [`send`](Transport::send) fails with
/// [`SendError::NotConnected`] until then. A refusal arrives as
/// [`Disconnected`](TransportEvent::Disconnected) with the server's reason (for example
/// [`TokenExpired`](DisconnectReason::TokenExpired)), sealed so that only the token holder
/// reads it; no acceptance within the [handshake timeout](Self::with_handshake_timeout) is
/// [`ConnectFailed`](DisconnectReason::ConnectFailed). Once admitted, nothing that
/// authenticates from the server for the [timeout](Self::with_timeout) is
/// [`Timeout`](DisconnectReason::Timeout); the client sends a keep-alive when it has sent
/// nothing for a second. Packets from the server that fail to authenticate or repeat are
/// dropped and counted in [`secure_stats`](Self::secure_stats).
pub struct SecureClient<T: Transport> {
    inner: T,
    token: ConnectToken,
    /// This connection's salt, drawn when the request goes out.
    salt: [u8; SALT_LEN],
    /// The connection's keys and counters, once the server's challenge arrived.
    session: Option<Session>,
    state: State,
    now: Duration,
    handshake_timeout: Duration,
    timeout: Duration,
    /// When the last authenticated packet arrived, and the last packet went out.
    heard: Duration,
    sent: Duration,
    /// A disconnect to report on the next poll (the handshake timed out).
    closed: Option<DisconnectReason>,
    /// The request, then sealed outgoing packets.
    scratch: Vec<u8>,
    /// The payload of the last `Received` event, lent until the next poll.
    opened: Vec<u8>,
    stats: SecureStats,
}

impl<T: Transport> SecureClient<T> {
    /// The default handshake timeout: 5 s from the request going out.
    pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
    /// The default timeout once admitted: 15 s without an authenticated packet (mf-net's own
    /// peer timeout).
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
    /// How long the client stays silent before it sends a keep-alive (or half the timeout if
    /// that is shorter).
    pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(1);

    /// Wraps the connecting client transport `inner`, presenting `token`.
    pub fn new(inner: T, token: ConnectToken) -> Self {
        Self {
            inner,
            token,
            salt: [0; SALT_LEN],
            session: None,
            state: State::Connecting,
            now: Duration::ZERO,
            handshake_timeout: Self::DEFAULT_HANDSHAKE_TIMEOUT,
            timeout: Self::DEFAULT_TIMEOUT,
            heard: Duration::ZERO,
            sent: Duration::ZERO,
            closed: None,
            scratch: Vec::new(),
            opened: Vec::new(),
            stats: SecureStats::default(),
        }
    }

    /// This client giving up after `timeout` without the server's acceptance (time moves with
    /// [`advance`](Transport::advance)).
    #[must_use]
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// This client closing the connection after `timeout` without an authenticated packet from
    /// the server (keep it at least the server's keep-alive interval, 1 s by default, plus the
    /// round trip).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Whether the server accepted the token and the connection is open.
    pub fn is_admitted(&self) -> bool {
        self.state == State::Admitted
    }

    /// The token this client presents.
    pub fn token(&self) -> &ConnectToken {
        &self.token
    }

    /// What the layer dropped (and whether it was admitted).
    pub fn secure_stats(&self) -> SecureStats {
        self.stats
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// The wrapped transport, mutably. Packets sent through it directly are not sealed (and
    /// the server drops them).
    pub fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    fn send_request(&mut self) {
        let Ok(salt) = random_bytes() else {
            return self.give_up(DisconnectReason::ConnectFailed);
        };
        self.salt = salt;
        self.token.write_request(&self.salt, &mut self.scratch);
        if self
            .inner
            .send(PeerId::SERVER, Channel::Reliable, &self.scratch)
            .is_ok()
        {
            self.state = State::Requesting(self.now);
        } else {
            self.give_up(DisconnectReason::ConnectFailed);
        }
    }

    fn give_up(&mut self, reason: DisconnectReason) {
        self.state = State::Closed;
        self.inner.disconnect(PeerId::SERVER, reason);
        self.closed = Some(reason);
    }

    /// Acts on a handshake packet (in `packet`, copied out of the inner transport).
    fn on_handshake(&mut self, channel: Channel, packet: &[u8]) -> Option<TransportEvent<'static>> {
        match (self.state, packet.first()) {
            (State::Requesting(since), Some(&(KIND_CHALLENGE | KIND_DENIED))) => {
                let Some(server_salt) = session::server_salt(packet) else {
                    self.stats.dropped_tampered += 1;
                    return None;
                };
                let t = &self.token;
                let salts = Salts {
                    client: &self.salt,
                    server: &server_salt,
                };
                let keys = ConnectionKeys::derive(
                    t.protocol_id,
                    &t.client_to_server,
                    &t.server_to_client,
                    &salts,
                );
                let mut session = Session::new(t.protocol_id, &keys, End::Client);
                let opened = session.open_handshake(packet, &mut self.opened);
                match opened {
                    Ok(KIND_CHALLENGE) => self.answer(session, since),
                    Ok(_) => return Some(self.denied()),
                    Err(dropped) => self.count(dropped),
                }
                None
            }
            (State::Responding(_), Some(&KIND_DENIED)) => {
                let opened = self
                    .session
                    .as_mut()?
                    .open_handshake(packet, &mut self.opened);
                match opened {
                    Ok(KIND_DENIED) => return Some(self.denied()),
                    Ok(_) => self.stats.dropped_unexpected += 1,
                    Err(dropped) => self.count(dropped),
                }
                None
            }
            (State::Responding(_), _) => {
                let opened = self
                    .session
                    .as_mut()?
                    .open(channel, packet, &mut self.opened);
                match opened {
                    Ok(KIND_ACCEPT) => {
                        self.state = State::Admitted;
                        self.heard = self.now;
                        self.stats.admitted += 1;
                        return Some(TransportEvent::Connected {
                            peer: PeerId::SERVER,
                            connect_data: 0,
                        });
                    }
                    Ok(_) => self.stats.dropped_unexpected += 1,
                    Err(dropped) => self.count(dropped),
                }
                None
            }
            _ => {
                self.stats.dropped_unexpected += 1;
                None
            }
        }
    }

    /// Answers the challenge in `self.opened` with `session`, the connection's.
    fn answer(&mut self, mut session: Session, since: Duration) {
        let mut out = Vec::new();
        if !session.seal_handshake(KIND_RESPONSE, None, &self.opened, &mut out)
            || self
                .inner
                .send(PeerId::SERVER, Channel::Reliable, &out)
                .is_err()
        {
            return self.give_up(DisconnectReason::ConnectFailed);
        }
        self.sent = self.now;
        self.session = Some(session);
        self.state = State::Responding(since);
    }

    /// The server's sealed refusal (its reason's code in `self.opened`).
    fn denied(&mut self) -> TransportEvent<'static> {
        let code = self.opened.get(..4).and_then(|c| c.try_into().ok());
        let reason = code.map_or(DisconnectReason::ConnectFailed, |c| {
            DisconnectReason::from_code(u32::from_le_bytes(c))
        });
        self.state = State::Closed;
        self.inner
            .disconnect(PeerId::SERVER, DisconnectReason::Closed);
        TransportEvent::Disconnected {
            peer: PeerId::SERVER,
            reason,
        }
    }

    fn count(&mut self, dropped: Dropped) {
        match dropped {
            Dropped::Tampered => self.stats.dropped_tampered += 1,
            Dropped::Replayed => self.stats.dropped_replayed += 1,
        }
    }

    /// Times the admitted connection out, or sends a keep-alive if the client has been quiet.
    fn tend_connection(&mut self) {
        if self.now.saturating_sub(self.heard) >= self.timeout {
            self.stats.timeouts += 1;
            return self.give_up(DisconnectReason::Timeout);
        }
        let interval = Self::KEEPALIVE_INTERVAL.min(self.timeout / 2);
        let Some(session) = self.session.as_mut() else {
            return;
        };
        if self.now.saturating_sub(self.sent) >= interval
            && session.seal(KIND_KEEPALIVE, Channel::Unreliable, &[], &mut self.scratch)
        {
            self.sent = self.now;
            let _ = self
                .inner
                .send(PeerId::SERVER, Channel::Unreliable, &self.scratch);
        }
    }
}

impl<T: Transport> Transport for SecureClient<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        let (State::Admitted, Some(session)) = (self.state, self.session.as_mut()) else {
            return Err(SendError::NotConnected);
        };
        if !session.seal(KIND_PAYLOAD, channel, data, &mut self.scratch) {
            return Err(SendError::TooLarge);
        }
        self.sent = self.now;
        self.inner.send(peer, channel, &self.scratch)
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        if let Some(reason) = self.closed.take() {
            return Some(TransportEvent::Disconnected {
                peer: PeerId::SERVER,
                reason,
            });
        }
        loop {
            match self.inner.poll_event()? {
                TransportEvent::Connected { .. } => {
                    if self.state == State::Connecting {
                        self.send_request();
                    }
                    if let Some(reason) = self.closed.take() {
                        return Some(TransportEvent::Disconnected {
                            peer: PeerId::SERVER,
                            reason,
                        });
                    }
                }
                TransportEvent::Disconnected { peer, reason } => {
                    if self.state == State::Closed {
                        continue;
                    }
                    self.state = State::Closed;
                    return Some(TransportEvent::Disconnected { peer, reason });
                }
                TransportEvent::Received { channel, data, .. } => match self.state {
                    State::Admitted => {
                        let Some(session) = self.session.as_mut() else {
                            continue;
                        };
                        match session.open(channel, data, &mut self.opened) {
                            Ok(KIND_PAYLOAD) => {
                                self.heard = self.now;
                                return Some(TransportEvent::Received {
                                    peer: PeerId::SERVER,
                                    channel,
                                    data: &self.opened,
                                });
                            }
                            Ok(KIND_KEEPALIVE) => self.heard = self.now,
                            Ok(_) => self.stats.dropped_unexpected += 1,
                            Err(Dropped::Tampered) => self.stats.dropped_tampered += 1,
                            Err(Dropped::Replayed) => self.stats.dropped_replayed += 1,
                        }
                    }
                    State::Requesting(_) | State::Responding(_) => {
                        let packet = data.to_vec();
                        if let Some(event) = self.on_handshake(channel, &packet) {
                            return Some(event);
                        }
                    }
                    State::Connecting | State::Closed => self.stats.dropped_unexpected += 1,
                },
            }
        }
    }

    fn advance(&mut self, dt: Duration) {
        self.now = self.now.saturating_add(dt);
        self.inner.advance(dt);
        match self.state {
            State::Requesting(since) | State::Responding(since)
                if self.now.saturating_sub(since) >= self.handshake_timeout =>
            {
                self.stats.handshake_timeouts += 1;
                self.give_up(DisconnectReason::ConnectFailed);
            }
            State::Admitted => self.tend_connection(),
            _ => {}
        }
    }

    fn flush(&mut self) {
        self.inner.flush();
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.state = State::Closed;
        self.closed = None;
        self.inner.disconnect(peer, reason);
    }

    /// The inner transport's totals: sealed bytes, the request included.
    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }

    fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }
}

impl<T: Transport + fmt::Debug> fmt::Debug for SecureClient<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecureClient")
            .field("inner", &self.inner)
            .field("state", &self.state)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}
