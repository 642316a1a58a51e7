//! [`SelectingTransport`]: the state machine that walks a connect string, one attempt at a
//! time (see the [module documentation](super)).

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use super::{
    AttemptError, AttemptFailure, OpenError, SelectError, TransportFactory, TransportSelector,
};
use crate::transport::address::{split_list, AddressError, NetworkAddress};
use crate::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

/// A client [`Transport`] that walks a connect string. Made by [`TransportSelector::connect`];
/// see the [module docs](super).
pub struct SelectingTransport {
    factories: Vec<Box<dyn TransportFactory>>,
    handshake_timeout: Duration,
    establish_on_connect: bool,
    /// The entries of the connect string, parsed.
    addresses: Vec<(String, Result<NetworkAddress, AddressError>)>,
    /// The next address to try.
    next: usize,
    connect_data: u32,
    current: Option<Attempt>,
    attempts_opened: u64,
    failures: Vec<AttemptFailure>,
    /// Events made up by the selector (fallback disconnects, the final failure).
    pending: VecDeque<TransportEvent<'static>>,
    deferred: Option<Deferred>,
    /// No more attempts will be made (established, refused for good, or all failed).
    finished: bool,
    retired_stats: TransportStats,
}

impl fmt::Debug for SelectingTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectingTransport")
            .field("current", &self.current_address())
            .field("established", &self.is_established())
            .field("failures", &self.failures)
            .finish_non_exhaustive()
    }
}

/// One address being tried: its transport and how far it got.
struct Attempt {
    transport: Box<dyn Transport>,
    /// Index into `addresses`.
    index: usize,
    /// Added to the inner transport's peer ids.
    offset: u64,
    elapsed: Duration,
    /// Its `Connected` was passed on.
    surfaced: bool,
    established: bool,
}

/// A failure of the current attempt noticed while its transport was borrowed.
#[derive(Debug, Clone, Copy)]
struct Deferred {
    error: AttemptErrorKind,
    /// The inner peer id of the failed connection.
    inner_peer: PeerId,
}

/// How the current attempt failed (becomes an [`AttemptError`]).
#[derive(Debug, Clone, Copy)]
enum AttemptErrorKind {
    Disconnected(DisconnectReason),
    HandshakeTimeout,
    Abandoned,
}

impl AttemptErrorKind {
    fn to_error(self) -> AttemptError {
        match self {
            AttemptErrorKind::Disconnected(r) => AttemptError::Disconnected(r),
            AttemptErrorKind::HandshakeTimeout => AttemptError::HandshakeTimeout,
            AttemptErrorKind::Abandoned => AttemptError::Abandoned,
        }
    }

    /// The reason reported for a passed-on connection that this ends.
    fn reason(self) -> DisconnectReason {
        match self {
            AttemptErrorKind::Disconnected(r) => r,
            AttemptErrorKind::HandshakeTimeout | AttemptErrorKind::Abandoned => {
                DisconnectReason::Timeout
            }
        }
    }
}

fn add_stats(a: TransportStats, b: TransportStats) -> TransportStats {
    TransportStats {
        bytes_sent: a.bytes_sent + b.bytes_sent,
        bytes_received: a.bytes_received + b.bytes_received,
        packets_sent: a.packets_sent + b.packets_sent,
        packets_received: a.packets_received + b.packets_received,
    }
}

impl SelectingTransport {
    /// Parses `connect_string` and opens its first address that a factory of `selector` opens
    /// (see [`TransportSelector::connect`]).
    pub(super) fn start(
        selector: TransportSelector,
        connect_string: &str,
        connect_data: u32,
    ) -> Result<Self, SelectError> {
        let addresses: Vec<(String, Result<NetworkAddress, AddressError>)> =
            split_list(connect_string)
                .map(|entry| (entry.to_owned(), NetworkAddress::parse(entry)))
                .collect();
        let mut selecting = SelectingTransport {
            factories: selector.factories,
            handshake_timeout: selector.handshake_timeout,
            establish_on_connect: selector.establish_on_connect,
            addresses,
            next: 0,
            connect_data,
            current: None,
            attempts_opened: 0,
            failures: Vec::new(),
            pending: VecDeque::with_capacity(2),
            deferred: None,
            finished: false,
            retired_stats: TransportStats::default(),
        };
        if selecting.open_next() {
            Ok(selecting)
        } else {
            Err(SelectError {
                failures: selecting.failures,
            })
        }
    }

    /// The address of the current attempt (or of the established connection).
    pub fn current_address(&self) -> Option<&NetworkAddress> {
        let attempt = self.current.as_ref()?;
        self.addresses
            .get(attempt.index)
            .and_then(|(_, a)| a.as_ref().ok())
    }

    /// Whether the current attempt is established (see the [module docs](super)).
    pub fn is_established(&self) -> bool {
        self.current.as_ref().is_some_and(|a| a.established)
    }

    /// Whether addresses are still being tried: not established, not refused, not given up.
    pub fn is_selecting(&self) -> bool {
        !self.finished
    }

    /// The addresses that did not work so far, in order, and why.
    pub fn failures(&self) -> &[AttemptFailure] {
        &self.failures
    }

    /// The transport of the current attempt.
    pub fn inner(&self) -> Option<&dyn Transport> {
        self.current.as_ref().map(|a| &*a.transport)
    }

    /// The transport of the current attempt, mutably.
    pub fn inner_mut(&mut self) -> Option<&mut (dyn Transport + 'static)> {
        self.current.as_mut().map(|a| &mut *a.transport)
    }

    /// Marks the current attempt established (its handshake completed): no more fallback.
    pub fn mark_established(&mut self) {
        if let Some(attempt) = &mut self.current {
            attempt.established = true;
            self.finished = true;
        }
    }

    /// Gives up on the current attempt (for example: connected, but no handshake reply) and
    /// moves on to the next address. Does nothing once established. If the attempt's
    /// [`Connected`](TransportEvent::Connected) was passed on, a
    /// [`Disconnected`](TransportEvent::Disconnected)`{ Timeout }` for that peer follows.
    pub fn abandon_attempt(&mut self) {
        self.fail_current(AttemptErrorKind::Abandoned, PeerId::SERVER);
    }

    /// Applies a failure noticed during `poll_event`.
    fn settle(&mut self) {
        if let Some(deferred) = self.deferred.take() {
            self.fail_current(deferred.error, deferred.inner_peer);
        }
    }

    /// Drops the current attempt (if not established) and opens the next address; raises the
    /// final failure when none is left.
    fn fail_current(&mut self, error: AttemptErrorKind, inner_peer: PeerId) {
        if self.finished {
            return;
        }
        let Some(attempt) = self.current.take_if(|a| !a.established) else {
            return;
        };
        let entry = self
            .addresses
            .get(attempt.index)
            .map(|(e, _)| e.clone())
            .unwrap_or_default();
        tracing::info!(%entry, error = %error.to_error(), "connect attempt failed");
        self.retired_stats = add_stats(self.retired_stats, attempt.transport.stats());
        self.failures.push(AttemptFailure {
            entry,
            error: error.to_error(),
        });
        let peer = PeerId(inner_peer.0.wrapping_add(attempt.offset));
        let surfaced = attempt.surfaced;
        // Dropping the transport tells its peer (if any) that we left.
        drop(attempt);
        if surfaced {
            self.pending.push_back(TransportEvent::Disconnected {
                peer,
                reason: error.reason(),
            });
        }
        if !self.open_next() {
            self.finished = true;
            if !surfaced {
                self.pending.push_back(TransportEvent::Disconnected {
                    peer,
                    reason: DisconnectReason::ConnectFailed,
                });
            }
        }
    }

    /// Opens the next address a factory accepts. Returns false when none is left.
    fn open_next(&mut self) -> bool {
        while let Some((entry, parsed)) = self.addresses.get(self.next) {
            let index = self.next;
            self.next += 1;
            let address = match parsed {
                Ok(address) => address,
                Err(e) => {
                    tracing::warn!(%entry, error = %e, "skipping connect string entry");
                    self.failures.push(AttemptFailure {
                        entry: entry.clone(),
                        error: AttemptError::Invalid(e.clone()),
                    });
                    continue;
                }
            };
            let mut error = AttemptError::Unsupported;
            for factory in &mut self.factories {
                match factory.open_client(address, self.connect_data) {
                    Ok(transport) => {
                        tracing::info!(%entry, factory = factory.name(), "trying address");
                        let offset = self.attempts_opened << 48;
                        self.attempts_opened += 1;
                        self.current = Some(Attempt {
                            transport,
                            index,
                            offset,
                            elapsed: Duration::ZERO,
                            surfaced: false,
                            established: false,
                        });
                        return true;
                    }
                    Err(OpenError::Unsupported) => continue,
                    Err(e) => {
                        error = AttemptError::Open(e);
                        break;
                    }
                }
            }
            tracing::info!(%entry, %error, "skipping address");
            self.failures.push(AttemptFailure {
                entry: entry.clone(),
                error,
            });
        }
        false
    }
}

impl Transport for SelectingTransport {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        match &mut self.current {
            Some(attempt) => {
                let inner = PeerId(peer.0.wrapping_sub(attempt.offset));
                attempt.transport.send(inner, channel, data)
            }
            None => Err(SendError::UnknownPeer),
        }
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        self.settle();
        if let Some(event) = self.pending.pop_front() {
            return Some(event);
        }
        let attempt = self.current.as_mut()?;
        let offset = attempt.offset;
        let remap = |peer: PeerId| PeerId(peer.0.wrapping_add(offset));
        match attempt.transport.poll_event()? {
            TransportEvent::Received {
                peer,
                channel,
                data,
            } => Some(TransportEvent::Received {
                peer: remap(peer),
                channel,
                data,
            }),
            TransportEvent::Connected { peer, connect_data } => {
                attempt.surfaced = true;
                if self.establish_on_connect {
                    attempt.established = true;
                    self.finished = true;
                }
                Some(TransportEvent::Connected {
                    peer: remap(peer),
                    connect_data,
                })
            }
            TransportEvent::Disconnected { peer, reason } => {
                let falls_through = !attempt.established
                    && matches!(
                        reason,
                        DisconnectReason::ConnectFailed | DisconnectReason::Timeout
                    );
                if falls_through {
                    // The next address is opened by the next call (or flush/advance): the
                    // current transport is still borrowed here.
                    self.deferred = Some(Deferred {
                        error: AttemptErrorKind::Disconnected(reason),
                        inner_peer: peer,
                    });
                    None
                } else {
                    // A definitive answer (refused, kicked, or the established connection
                    // ended): no more fallback.
                    self.finished = true;
                    Some(TransportEvent::Disconnected {
                        peer: remap(peer),
                        reason,
                    })
                }
            }
        }
    }

    fn advance(&mut self, dt: Duration) {
        self.settle();
        let timed_out = match &mut self.current {
            Some(attempt) => {
                attempt.transport.advance(dt);
                if attempt.established || self.finished {
                    false
                } else {
                    attempt.elapsed = attempt.elapsed.saturating_add(dt);
                    attempt.elapsed >= self.handshake_timeout
                }
            }
            None => false,
        };
        if timed_out {
            self.fail_current(AttemptErrorKind::HandshakeTimeout, PeerId::SERVER);
        }
    }

    fn flush(&mut self) {
        self.settle();
        if let Some(attempt) = &mut self.current {
            attempt.transport.flush();
        }
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        // The caller gives up (or leaves): no more addresses are tried.
        self.finished = true;
        self.next = self.addresses.len();
        self.deferred = None;
        if let Some(attempt) = &mut self.current {
            let inner = PeerId(peer.0.wrapping_sub(attempt.offset));
            attempt.transport.disconnect(inner, reason);
        }
    }

    fn stats(&self) -> TransportStats {
        match &self.current {
            Some(attempt) => add_stats(self.retired_stats, attempt.transport.stats()),
            None => self.retired_stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::selector::SteamSocketsFactory;

    /// What a mock transport does.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Behaviour {
        /// Connects on the first poll, then echoes.
        Accept,
        /// Reports this reason on the first poll.
        Refuse(DisconnectReason),
        /// Never answers.
        Silent,
    }

    struct MockTransport {
        behaviour: Behaviour,
        polled: bool,
        connected: bool,
        inbox: VecDeque<Vec<u8>>,
        current: Vec<u8>,
        stats: TransportStats,
    }

    impl Transport for MockTransport {
        fn send(&mut self, peer: PeerId, _: Channel, data: &[u8]) -> Result<(), SendError> {
            if !self.connected {
                return Err(SendError::NotConnected);
            }
            if peer != PeerId::SERVER {
                return Err(SendError::UnknownPeer);
            }
            self.stats.packets_sent += 1;
            self.inbox.push_back(data.to_vec());
            Ok(())
        }

        fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
            if !self.polled {
                self.polled = true;
                match self.behaviour {
                    Behaviour::Accept => {
                        self.connected = true;
                        return Some(TransportEvent::Connected {
                            peer: PeerId::SERVER,
                            connect_data: 0,
                        });
                    }
                    Behaviour::Refuse(reason) => {
                        return Some(TransportEvent::Disconnected {
                            peer: PeerId::SERVER,
                            reason,
                        })
                    }
                    Behaviour::Silent => return None,
                }
            }
            self.current = self.inbox.pop_front()?;
            Some(TransportEvent::Received {
                peer: PeerId::SERVER,
                channel: Channel::Reliable,
                data: &self.current,
            })
        }

        fn advance(&mut self, _: Duration) {}
        fn flush(&mut self) {}
        fn disconnect(&mut self, _: PeerId, _: DisconnectReason) {
            self.connected = false;
        }
        fn stats(&self) -> TransportStats {
            self.stats
        }
    }

    /// Opens `loopback:accept`, `loopback:silent`, `loopback:refuse-full`, `loopback:fail`
    /// (connect failed) and refuses to open `loopback:broken`.
    struct MockFactory;

    impl TransportFactory for MockFactory {
        fn name(&self) -> &str {
            "mock"
        }

        fn open_client(
            &mut self,
            address: &NetworkAddress,
            _connect_data: u32,
        ) -> Result<Box<dyn Transport>, OpenError> {
            let NetworkAddress::Loopback { name } = address else {
                return Err(OpenError::Unsupported);
            };
            let behaviour = match name.as_str() {
                "accept" => Behaviour::Accept,
                "silent" => Behaviour::Silent,
                "full" => Behaviour::Refuse(DisconnectReason::ServerFull),
                "fail" => Behaviour::Refuse(DisconnectReason::ConnectFailed),
                _ => return Err(OpenError::Failed(format!("cannot open {name}"))),
            };
            Ok(Box::new(MockTransport {
                behaviour,
                polled: false,
                connected: false,
                inbox: VecDeque::new(),
                current: Vec::new(),
                stats: TransportStats::default(),
            }))
        }
    }

    fn selector() -> TransportSelector {
        TransportSelector::new()
            .with_factory(SteamSocketsFactory)
            .with_factory(MockFactory)
            .handshake_timeout(Duration::from_millis(100))
    }

    /// Polls and advances a few frames, collecting owned events (received data as its length).
    fn run(t: &mut SelectingTransport, frames: usize) -> Vec<TransportEvent<'static>> {
        let mut out = Vec::new();
        for _ in 0..frames {
            while let Some(event) = t.poll_event() {
                out.push(match event {
                    TransportEvent::Received { peer, channel, .. } => TransportEvent::Received {
                        peer,
                        channel,
                        data: &[],
                    },
                    TransportEvent::Connected { peer, connect_data } => {
                        TransportEvent::Connected { peer, connect_data }
                    }
                    TransportEvent::Disconnected { peer, reason } => {
                        TransportEvent::Disconnected { peer, reason }
                    }
                });
            }
            t.advance(Duration::from_millis(20));
            t.flush();
        }
        out
    }

    #[test]
    fn falls_back_from_failing_addresses_to_a_working_one() {
        let mut t = selector()
            .connect(
                "steam:76561198000000001;loopback:broken;quic:x;loopback:fail;loopback:accept",
                7,
            )
            .unwrap();
        let events = run(&mut t, 3);
        let server = PeerId(PeerId::SERVER.0 + (1 << 48));
        assert_eq!(
            events,
            vec![TransportEvent::Connected {
                peer: server,
                connect_data: 0
            }]
        );
        assert!(t.is_established());
        assert!(!t.is_selecting());
        assert_eq!(
            t.current_address(),
            Some(&NetworkAddress::Loopback {
                name: "accept".into()
            })
        );
        let errors: Vec<_> = t.failures().iter().map(|f| f.error.clone()).collect();
        assert!(matches!(
            errors[0],
            AttemptError::Open(OpenError::Unavailable(_))
        ));
        assert!(matches!(
            errors[1],
            AttemptError::Open(OpenError::Failed(_))
        ));
        assert!(matches!(errors[2], AttemptError::Invalid(_)), "{errors:?}");
        assert_eq!(
            errors[3],
            AttemptError::Disconnected(DisconnectReason::ConnectFailed)
        );
        assert_eq!(errors.len(), 4);
        // The established connection passes traffic with the remapped id.
        assert_eq!(
            t.send(PeerId::SERVER, Channel::Reliable, b"x"),
            Err(SendError::UnknownPeer)
        );
        t.send(server, Channel::Reliable, b"hello").unwrap();
        let event = t.poll_event();
        let ok = matches!(event, Some(TransportEvent::Received { peer, data, .. })
            if peer == server && data == b"hello");
        assert!(ok);
        assert_eq!(t.stats().packets_sent, 1);
    }

    #[test]
    fn the_first_address_keeps_plain_peer_ids() {
        let mut t = selector().connect("loopback:accept", 0).unwrap();
        assert_eq!(
            run(&mut t, 1),
            vec![TransportEvent::Connected {
                peer: PeerId::SERVER,
                connect_data: 0
            }]
        );
    }

    #[test]
    fn all_failing_raises_one_connect_failed_at_the_end() {
        let mut t = selector()
            .connect("loopback:fail;loopback:silent;steam:9;loopback:fail", 0)
            .unwrap();
        let events = run(&mut t, 20);
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(matches!(
            events[0],
            TransportEvent::Disconnected {
                reason: DisconnectReason::ConnectFailed,
                ..
            }
        ));
        assert!(!t.is_selecting());
        let errors: Vec<_> = t.failures().iter().map(|f| f.error.clone()).collect();
        assert_eq!(
            errors,
            vec![
                AttemptError::Disconnected(DisconnectReason::ConnectFailed),
                AttemptError::HandshakeTimeout,
                AttemptError::Open(OpenError::Unavailable(
                    "Steam Networking Sockets are not available on this build".into()
                )),
                AttemptError::Disconnected(DisconnectReason::ConnectFailed),
            ]
        );
        assert!(run(&mut t, 5).is_empty());
        assert_eq!(
            t.send(PeerId::SERVER, Channel::Reliable, b"x"),
            Err(SendError::UnknownPeer)
        );
    }

    #[test]
    fn a_silent_address_times_out_by_advanced_time_only() {
        let mut t = selector()
            .connect("loopback:silent;loopback:accept", 0)
            .unwrap();
        for _ in 0..100 {
            assert!(t.poll_event().is_none());
        }
        assert!(t.is_selecting());
        t.advance(Duration::from_millis(99));
        assert!(t.poll_event().is_none());
        t.advance(Duration::from_millis(1));
        assert!(matches!(
            t.poll_event(),
            Some(TransportEvent::Connected { .. })
        ));
        assert_eq!(t.failures()[0].error, AttemptError::HandshakeTimeout);
    }

    #[test]
    fn a_definitive_refusal_does_not_fall_through() {
        let mut t = selector()
            .connect("loopback:full;loopback:accept", 0)
            .unwrap();
        assert_eq!(
            run(&mut t, 5),
            vec![TransportEvent::Disconnected {
                peer: PeerId::SERVER,
                reason: DisconnectReason::ServerFull
            }]
        );
        assert!(!t.is_selecting());
        assert!(t.failures().is_empty());
    }

    #[test]
    fn abandoning_a_connected_attempt_reports_it_and_uses_a_fresh_id() {
        let mut t = selector()
            .establish_manually()
            .handshake_timeout(Duration::from_secs(60))
            .connect("loopback:accept;loopback:accept", 0)
            .unwrap();
        assert_eq!(
            run(&mut t, 1),
            vec![TransportEvent::Connected {
                peer: PeerId::SERVER,
                connect_data: 0
            }]
        );
        assert!(!t.is_established());
        t.abandon_attempt();
        let second = PeerId(PeerId::SERVER.0 + (1 << 48));
        assert_eq!(
            run(&mut t, 1),
            vec![
                TransportEvent::Disconnected {
                    peer: PeerId::SERVER,
                    reason: DisconnectReason::Timeout
                },
                TransportEvent::Connected {
                    peer: second,
                    connect_data: 0
                }
            ]
        );
        t.mark_established();
        t.abandon_attempt(); // no effect once established
        assert!(t.is_established());
        assert!(run(&mut t, 1).is_empty());
    }

    #[test]
    fn nothing_openable_is_an_immediate_error() {
        let err = selector()
            .connect("steam:1; bogus ;udp:1.2.3.4:5;loopback:broken", 0)
            .unwrap_err();
        assert_eq!(err.failures.len(), 4);
        assert_eq!(err.failures[1].entry, "bogus");
        assert!(err.to_string().contains("not available on this build"));
        let empty = selector().connect(" ; ", 0).unwrap_err();
        assert!(empty.failures.is_empty());
        // An enet: address with no ENet factory is unsupported, not a crash.
        let err = TransportSelector::new()
            .connect("enet:127.0.0.1:1", 0)
            .unwrap_err();
        assert_eq!(err.failures[0].error, AttemptError::Unsupported);
    }

    #[test]
    fn disconnecting_while_selecting_stops_the_walk() {
        let mut t = selector()
            .connect("loopback:silent;loopback:accept", 0)
            .unwrap();
        t.disconnect(PeerId::SERVER, DisconnectReason::Closed);
        assert!(run(&mut t, 20).is_empty());
        assert!(!t.is_selecting());
    }
}
