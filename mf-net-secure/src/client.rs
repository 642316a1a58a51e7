//! [`SecureClient`]: the client end of the secure layer, decorating any [`Transport`].

use std::fmt;
use std::time::Duration;

use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

use crate::session::{Dropped, Session};
use crate::wire::{KIND_ACCEPT, KIND_PAYLOAD};
use crate::{ConnectToken, SecureStats};

/// Where the handshake is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The inner transport is connecting.
    Connecting,
    /// The request went out at this time; waiting for the server's answer.
    Requesting(Duration),
    /// The server accepted the token.
    Admitted,
    /// Refused, timed out or disconnected.
    Closed,
}

/// A [`Transport`] decorator presenting a [`ConnectToken`] to a
/// [`SecureServer`](crate::SecureServer) and sealing every packet with the token's keys.
///
/// Wrap the client transport right after creating it (it connects to one of the token's
/// [`servers`](ConnectToken::servers), with the connect data mf-net asks for). When the inner
/// transport connects, the client sends its connection request; it reports
/// [`Connected`](TransportEvent::Connected) only once the server's sealed answer arrives, and
/// [`send`](Transport::send) fails with [`SendError::NotConnected`] until then. A refusal
/// arrives as [`Disconnected`](TransportEvent::Disconnected) with the server's reason (for
/// example [`TokenExpired`](DisconnectReason::TokenExpired)); no answer within the
/// [handshake timeout](Self::with_handshake_timeout) is
/// [`ConnectFailed`](DisconnectReason::ConnectFailed). Packets from the server that fail to
/// authenticate or repeat are dropped and counted in [`secure_stats`](Self::secure_stats).
pub struct SecureClient<T: Transport> {
    inner: T,
    token: ConnectToken,
    session: Session,
    state: State,
    now: Duration,
    handshake_timeout: Duration,
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

    /// Wraps the connecting client transport `inner`, presenting `token`.
    pub fn new(inner: T, token: ConnectToken) -> Self {
        let session = Session::new(
            token.protocol_id,
            &token.client_to_server,
            &token.server_to_client,
        );
        Self {
            inner,
            token,
            session,
            state: State::Connecting,
            now: Duration::ZERO,
            handshake_timeout: Self::DEFAULT_HANDSHAKE_TIMEOUT,
            closed: None,
            scratch: Vec::new(),
            opened: Vec::new(),
            stats: SecureStats::default(),
        }
    }

    /// This client giving up after `timeout` without the server's answer (time moves with
    /// [`advance`](Transport::advance)).
    #[must_use]
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
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
        self.token.write_request(&mut self.scratch);
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
}

impl<T: Transport> Transport for SecureClient<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        if self.state != State::Admitted {
            return Err(SendError::NotConnected);
        }
        if !self
            .session
            .seal(KIND_PAYLOAD, channel, data, &mut self.scratch)
        {
            return Err(SendError::TooLarge);
        }
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
                TransportEvent::Received {
                    peer,
                    channel,
                    data,
                } => {
                    if matches!(self.state, State::Connecting | State::Closed) {
                        self.stats.dropped_unexpected += 1;
                        continue;
                    }
                    match (
                        self.session.open(channel, data, &mut self.opened),
                        self.state,
                    ) {
                        (Ok(KIND_ACCEPT), State::Requesting(_)) => {
                            self.state = State::Admitted;
                            self.stats.admitted += 1;
                            return Some(TransportEvent::Connected {
                                peer,
                                connect_data: 0,
                            });
                        }
                        (Ok(KIND_PAYLOAD), State::Admitted) => {
                            return Some(TransportEvent::Received {
                                peer,
                                channel,
                                data: &self.opened,
                            })
                        }
                        (Ok(_), _) => self.stats.dropped_unexpected += 1,
                        (Err(Dropped::Tampered), _) => self.stats.dropped_tampered += 1,
                        (Err(Dropped::Replayed), _) => self.stats.dropped_replayed += 1,
                    }
                }
            }
        }
    }

    fn advance(&mut self, dt: Duration) {
        self.now = self.now.saturating_add(dt);
        self.inner.advance(dt);
        if let State::Requesting(since) = self.state {
            if self.now.saturating_sub(since) >= self.handshake_timeout {
                self.stats.handshake_timeouts += 1;
                self.give_up(DisconnectReason::ConnectFailed);
            }
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
