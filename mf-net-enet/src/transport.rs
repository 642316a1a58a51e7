//! [`EnetTransport`]: the [`Transport`] over a `rusty_enet` host and a UDP socket.

mod handshake;

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::{Duration, Instant};

use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};
use rusty_enet::error::PeerSendError;
use rusty_enet::{EventNoRef, Host, HostSettings, Packet, PeerID, PeerState};

use crate::diagnostics::enet;
use crate::socket::GuardedSocket;
use crate::wire_reason;

/// The default UDP port of an mf-net server (the spec's 27615).
pub const DEFAULT_PORT: u16 = 27615;

/// ENet channels: 0 reliable, 1 unreliable.
const CHANNEL_COUNT: usize = 2;

/// The most slots one ENet host can have.
const MAX_ENET_PEERS: usize = 4095;

/// ENet's timeout (ms) for a client's connect while a
/// [`connect_timeout`](EnetConfig::connect_timeout) bounds it: never. ENet compares times only
/// within a day (86,400,000 ms), so it never reaches this and leaves the connect to the
/// transport's deadline; its own check comes at CONNECT resends only (0.5, 1.5, 3.5 s…) and
/// before it reads the socket, so it would end a connect late, or one already answered.
const ENET_NEVER: u32 = u32::MAX;

/// The most CONNECTs one [`poll_event`](Transport::poll_event) call hands ENet (one per service
/// call, each handshake looked at before the next); the rest wait in the OS queue for the next
/// frame (and what the OS cannot queue is lost, unanswered).
const MAX_CONNECT_ROUNDS: usize = 1024;

/// Slots looked at per [`poll_event`](Transport::poll_event) call at most, before the rounds
/// stop (each CONNECT costs a look at every slot): a flood costs a frame a bounded time whatever
/// the number of slots (16 CONNECTs a call with 4095 slots, 1024 with 64).
const SLOT_LOOKS_PER_POLL: usize = 65_536;

/// Settings for an [`EnetTransport`]. `EnetConfig::default()` is what [`EnetTransport::listen`]
/// and [`EnetTransport::connect`] use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnetConfig {
    /// Server: ENet slots beyond `max_clients`. A client that connects while the server is full
    /// gets one of these just long enough to be told
    /// [`ServerFull`](DisconnectReason::ServerFull), instead of timing out. Default 4.
    pub overflow_slots: usize,
    /// Client: how long a connect may take before it ends in
    /// [`ConnectFailed`](DisconnectReason::ConnectFailed), reported by the first
    /// [`poll_event`](Transport::poll_event) from then on (an answer that arrived by then still
    /// completes the connection). `None` keeps ENet's adaptive 5 to 30 s.
    pub connect_timeout: Option<Duration>,
    /// Both: ENet's peer timeout once connected, as (minimum, maximum): a peer that acknowledges
    /// nothing for `maximum` (or for `minimum` after many resends) is disconnected with
    /// [`Timeout`](DisconnectReason::Timeout). `None` keeps ENet's 5 s / 30 s.
    pub peer_timeout: Option<(Duration, Duration)>,
    /// Server: ENet peers one IP address may hold at once, in any state (connected, in the
    /// handshake, closing). A CONNECT from an address holding that many is dropped before ENet
    /// sees it, unanswered (the client's connect ends in
    /// [`ConnectFailed`](DisconnectReason::ConnectFailed)). Default
    /// [`DEFAULT_MAX_PEERS_PER_IP`](Self::DEFAULT_MAX_PEERS_PER_IP) (16): enough for a developer's
    /// clients on one machine or a household behind one NAT address; a LAN party, or players
    /// behind a carrier's shared address, may need more. Must be at least 1.
    ///
    /// Handshakes count before they complete, so one host cannot hold more slots than this
    /// with CONNECTs; the price is that CONNECTs forged with someone's address hold that
    /// address's room for up to [`handshake_timeout`](Self::handshake_timeout).
    pub max_peers_per_ip: usize,
    /// Server: how long ENet may wait for a client to acknowledge its VERIFY_CONNECT, the
    /// second step of the handshake. A handshake not completed by then is dropped silently, so
    /// that spoofed CONNECTs (whose source never answers) free their slot at once. Default
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`](Self::DEFAULT_HANDSHAKE_TIMEOUT) (1 s): twice ENet's first
    /// resend timeout (500 ms), above the round trip of any terrestrial or geostationary link
    /// plus a server frame. Raise it only for clients whose round trip comes near it. Must not be
    /// zero.
    ///
    /// ENet's own resends of the VERIFY_CONNECT are never sent (so a spoofed CONNECT gets one
    /// answer, smaller than itself); a client whose VERIFY_CONNECT was lost sends its CONNECT
    /// again (after 0.5, 1.5, 3.5 s…) and is answered anew once its first handshake was dropped.
    pub handshake_timeout: Duration,
}

impl Default for EnetConfig {
    fn default() -> Self {
        EnetConfig {
            overflow_slots: 4,
            connect_timeout: None,
            peer_timeout: None,
            max_peers_per_ip: Self::DEFAULT_MAX_PEERS_PER_IP,
            handshake_timeout: Self::DEFAULT_HANDSHAKE_TIMEOUT,
        }
    }
}

impl EnetConfig {
    /// The default of [`max_peers_per_ip`](Self::max_peers_per_ip).
    pub const DEFAULT_MAX_PEERS_PER_IP: usize = 16;

    /// The default of [`handshake_timeout`](Self::handshake_timeout).
    pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(1);

    /// This config with at most `peers` ENet peers per IP address (see
    /// [`max_peers_per_ip`](Self::max_peers_per_ip)).
    pub fn with_max_peers_per_ip(mut self, peers: usize) -> Self {
        self.max_peers_per_ip = peers;
        self
    }

    /// This config with a handshake timeout (see
    /// [`handshake_timeout`](Self::handshake_timeout)).
    pub fn with_handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// This config with a connect timeout (see
    /// [`connect_timeout`](Self::connect_timeout)).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// This config with a peer timeout (minimum, maximum).
    pub fn with_peer_timeout(mut self, minimum: Duration, maximum: Duration) -> Self {
        self.peer_timeout = Some((minimum, maximum));
        self
    }
}

/// Why an [`EnetTransport`] could not be created.
#[derive(Debug)]
#[non_exhaustive]
pub enum EnetError {
    /// The UDP socket could not be bound.
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: io::Error,
    },
    /// The host name did not resolve to any address.
    Resolve {
        /// What was looked up (its `Debug` form).
        host: String,
        /// The OS error, if the lookup itself failed.
        source: Option<io::Error>,
    },
    /// ENet refused to create the host.
    Host(String),
    /// A setting is out of range (for example `max_clients` 0 or above ENet's 4095 slots).
    InvalidConfig(&'static str),
    /// ENet had no slot for the outgoing connection.
    NoSlot,
}

impl fmt::Display for EnetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EnetError::Bind { addr, source } => write!(f, "cannot bind UDP {addr}: {source}"),
            EnetError::Resolve {
                host,
                source: Some(e),
            } => write!(f, "cannot resolve {host}: {e}"),
            EnetError::Resolve { host, source: None } => {
                write!(f, "{host} resolves to no address")
            }
            EnetError::Host(e) => write!(f, "cannot create the ENet host: {e}"),
            EnetError::InvalidConfig(what) => write!(f, "invalid ENet setting: {what}"),
            EnetError::NoSlot => f.write_str("ENet has no free slot for the connection"),
        }
    }
}

impl std::error::Error for EnetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EnetError::Bind { source, .. } => Some(source),
            EnetError::Resolve {
                source: Some(e), ..
            } => Some(e),
            _ => None,
        }
    }
}

/// The id of a server's first client connection ([`PeerId::SERVER`] is 1).
const FIRST_CLIENT_ID: u64 = 2;

/// What one ENet slot is to us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// No connection we know of.
    Free,
    /// Client: the connect is in flight.
    Connecting,
    /// Connected and reported to the user.
    Connected,
    /// We asked for the disconnect (with this ENet data); the id is dead, ENet is still closing.
    Closing(u32),
    /// A connection over the limit (or during shutdown) being told why it is refused; never
    /// reported to the user.
    Rejecting(u32),
    /// Server: ENet answered a CONNECT from `from` (first seen at `since`) and waits for the
    /// acknowledgement; nothing reported to the user yet.
    Handshake { since: Instant, from: SocketAddr },
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    state: SlotState,
    /// Bumped every time a connection on this slot ends; never 0.
    generation: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Server { max_clients: usize },
    Client,
}

/// A [`Transport`] over ENet (UDP): a server listening for clients, or a client connected to one
/// server.
///
/// See the [crate docs](crate) for how channels, peer ids and disconnect reasons map onto ENet.
///
/// # Closing
///
/// [`disconnect`](Transport::disconnect) delivers what was queued for the peer first (ENet's
/// `disconnect_later`), but only while the host keeps being serviced: ENet throws away the
/// packets of a connection whose host is gone. To close without losing a last message (a goodbye,
/// a kick reason), call [`begin_close`](Self::begin_close) and then
/// [`service_close`](Self::service_close) once a frame until it returns `true` (bounded by a number
/// of frames of your choosing), or [`close_blocking`](Self::close_blocking) at the end of a
/// program. Dropping the transport tells every peer still connected
/// [`Shutdown`](DisconnectReason::Shutdown) at once, without waiting.
pub struct EnetTransport {
    host: Host<GuardedSocket>,
    role: Role,
    slots: Vec<Slot>,
    /// Server: connected clients (slots in `Connected`).
    accepted: usize,
    /// Client: the slot of the server connection.
    server_slot: usize,
    /// Client: when the connect in flight ends in `ConnectFailed` (from the
    /// [`connect_timeout`](EnetConfig::connect_timeout)); cleared once it ended either way.
    connect_deadline: Option<Instant>,
    /// The packet lent by the last `Received` event, released at the next call.
    current: Option<Packet>,
    config: EnetConfig,
    /// `begin_close` was called: new connections are refused with this data.
    closing: Option<u32>,
    stats: TransportStats,
    local_addr: Option<SocketAddr>,
}

impl fmt::Debug for EnetTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnetTransport")
            .field("role", &self.role)
            .field("local_addr", &self.local_addr)
            .field("accepted", &self.accepted)
            .field("closing", &self.closing.is_some())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

fn ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX).max(1)
}

fn bind(addr: SocketAddr) -> Result<UdpSocket, EnetError> {
    UdpSocket::bind(addr).map_err(|source| EnetError::Bind { addr, source })
}

fn new_host(
    socket: UdpSocket,
    peer_limit: usize,
    max_per_ip: usize,
) -> Result<Host<GuardedSocket>, EnetError> {
    enet(|| {
        Host::new(
            GuardedSocket::new(socket, peer_limit, max_per_ip),
            HostSettings {
                peer_limit,
                channel_limit: CHANNEL_COUNT,
                ..HostSettings::default()
            },
        )
    })
    .map_err(|e| EnetError::Host(format!("{e} ({e:?})")))
}

impl EnetTransport {
    /// A server bound to `bind` (port 0 picks a free port, see [`local_addr`](Self::local_addr))
    /// accepting up to `max_clients` clients, with the default [`EnetConfig`].
    ///
    /// # Errors
    ///
    /// The socket cannot be bound, or `max_clients` is 0 or too large for ENet.
    pub fn listen(bind_addr: SocketAddr, max_clients: usize) -> Result<Self, EnetError> {
        Self::listen_with(bind_addr, max_clients, EnetConfig::default())
    }

    /// A server on `port` of every interface: dual-stack `[::]` where the OS makes that accept
    /// IPv4 too (Linux, macOS), `0.0.0.0` on Windows or where IPv6 is unavailable.
    ///
    /// # Errors
    ///
    /// As [`listen`](Self::listen).
    pub fn listen_any(port: u16, max_clients: usize) -> Result<Self, EnetError> {
        let v4 = SocketAddr::from((Ipv4Addr::UNSPECIFIED, port));
        if cfg!(windows) {
            return Self::listen(v4, max_clients);
        }
        match Self::listen(SocketAddr::from((Ipv6Addr::UNSPECIFIED, port)), max_clients) {
            Ok(t) => Ok(t),
            Err(EnetError::Bind { source, .. }) => {
                tracing::debug!("binding [::]:{port} failed ({source}); using 0.0.0.0");
                Self::listen(v4, max_clients)
            }
            Err(e) => Err(e),
        }
    }

    /// [`listen`](Self::listen) with explicit settings.
    ///
    /// # Errors
    ///
    /// As [`listen`](Self::listen).
    pub fn listen_with(
        bind_addr: SocketAddr,
        max_clients: usize,
        config: EnetConfig,
    ) -> Result<Self, EnetError> {
        if max_clients == 0 {
            return Err(EnetError::InvalidConfig("max_clients must be at least 1"));
        }
        if config.max_peers_per_ip == 0 {
            return Err(EnetError::InvalidConfig(
                "max_peers_per_ip must be at least 1",
            ));
        }
        if config.handshake_timeout.is_zero() {
            return Err(EnetError::InvalidConfig(
                "handshake_timeout must not be zero",
            ));
        }
        let peer_limit = max_clients
            .checked_add(config.overflow_slots)
            .filter(|&n| n <= MAX_ENET_PEERS)
            .ok_or(EnetError::InvalidConfig(
                "max_clients + overflow_slots exceeds ENet's 4095 slots",
            ))?;
        let socket = bind(bind_addr)?;
        let host = new_host(socket, peer_limit, config.max_peers_per_ip)?;
        let mut transport = Self::new(host, Role::Server { max_clients }, peer_limit, config);
        tracing::info!(
            addr = ?transport.local_addr,
            max_clients,
            "ENet server listening"
        );
        transport.server_slot = usize::MAX;
        Ok(transport)
    }

    /// A client connecting to `addr` (anything [`ToSocketAddrs`] takes, such as
    /// `"127.0.0.1:7777"`, `("::1", 7777)` or `"example.org:7777"`; a host name is resolved here,
    /// which may block on DNS), sending `connect_data` (mf-net sends its registry fingerprint).
    ///
    /// The connection completes asynchronously:
    /// [`Connected`](TransportEvent::Connected) or
    /// [`Disconnected`](TransportEvent::Disconnected)`{ ConnectFailed }` comes out of
    /// [`poll_event`](Transport::poll_event).
    ///
    /// # Errors
    ///
    /// The address does not resolve, or no local socket can be bound.
    pub fn connect<A: ToSocketAddrs + fmt::Debug>(
        addr: A,
        connect_data: u32,
    ) -> Result<Self, EnetError> {
        Self::connect_with(addr, connect_data, EnetConfig::default())
    }

    /// [`connect`](Self::connect) with explicit settings (for example a connect timeout).
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub fn connect_with<A: ToSocketAddrs + fmt::Debug>(
        addr: A,
        connect_data: u32,
        config: EnetConfig,
    ) -> Result<Self, EnetError> {
        let remote = resolve(addr)?;
        let local = match remote {
            SocketAddr::V4(_) => SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
            SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
        };
        let socket = bind(local)?;
        let host = new_host(socket, 1, usize::MAX)?;
        let mut transport = Self::new(host, Role::Client, 1, config);
        let connect_timeout = transport.config.connect_timeout;
        let host = &mut transport.host;
        let slot = enet(|| {
            let peer = host.connect(remote, CHANNEL_COUNT, connect_data).ok()?;
            if connect_timeout.is_some() {
                peer.set_timeout(0, ENET_NEVER, ENET_NEVER);
            }
            Some(peer.id().0)
        })
        .ok_or(EnetError::NoSlot)?;
        transport.server_slot = slot;
        if let Some(s) = transport.slots.get_mut(slot) {
            s.state = SlotState::Connecting;
        }
        // A timeout too long for the clock is no deadline.
        transport.connect_deadline = connect_timeout.and_then(|t| Instant::now().checked_add(t));
        tracing::info!(%remote, "ENet client connecting");
        Ok(transport)
    }

    fn new(host: Host<GuardedSocket>, role: Role, slots: usize, config: EnetConfig) -> Self {
        let local_addr = host.socket().local_addr().ok();
        EnetTransport {
            host,
            role,
            slots: vec![
                Slot {
                    state: SlotState::Free,
                    generation: 1,
                };
                slots
            ],
            accepted: 0,
            server_slot: 0,
            connect_deadline: None,
            current: None,
            config,
            closing: None,
            stats: TransportStats::default(),
            local_addr,
        }
    }

    /// The local address of the socket (its port is the one to give clients when listening on
    /// port 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    /// Whether this is a server transport (made by `listen`).
    pub fn is_server(&self) -> bool {
        matches!(self.role, Role::Server { .. })
    }

    /// Connected peers that have been reported with
    /// [`Connected`](TransportEvent::Connected) and not yet disconnected.
    pub fn connected_peers(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.state == SlotState::Connected)
            .count()
    }

    /// ENet's smoothed round-trip time to `peer`, if it is connected.
    pub fn round_trip_time(&self, peer: PeerId) -> Option<Duration> {
        let slot = self.live_slot(peer)?;
        enet(|| {
            self.host
                .get_peer(PeerID(slot))
                .map(rusty_enet::Peer::round_trip_time)
        })
    }

    /// The id of the connection on `slot` with its current generation: the first connections
    /// of the slots are 2, 3, 4… (`PeerId::SERVER`, 1, is the server's own), each later one on
    /// a slot one slot count further.
    fn peer_id(&self, slot: usize) -> PeerId {
        match self.role {
            Role::Client => PeerId::SERVER,
            Role::Server { .. } => {
                let generation = self.slots.get(slot).map_or(1, |s| s.generation);
                let round = u64::from(generation.saturating_sub(1)) * self.slots.len() as u64;
                PeerId(FIRST_CLIENT_ID + round + slot as u64)
            }
        }
    }

    /// The slot of `peer` if that id is the slot's current connection (in any state).
    fn slot_of(&self, peer: PeerId) -> Option<usize> {
        match self.role {
            Role::Client => (peer == PeerId::SERVER).then_some(self.server_slot),
            Role::Server { .. } => {
                let n = peer.0.checked_sub(FIRST_CLIENT_ID)?;
                let count = (self.slots.len() as u64).max(1);
                let slot = usize::try_from(n % count).ok()?;
                let generation = u32::try_from(n / count + 1).ok()?;
                let s = self.slots.get(slot)?;
                (s.generation == generation).then_some(slot)
            }
        }
    }

    /// The slot of `peer` if it is connected.
    fn live_slot(&self, peer: PeerId) -> Option<usize> {
        let slot = self.slot_of(peer)?;
        (self.slots.get(slot)?.state == SlotState::Connected).then_some(slot)
    }

    /// Ends the user-visible connection on `slot`: its id is dead from now on.
    fn retire(&mut self, slot: usize, next: SlotState) {
        if let Some(s) = self.slots.get_mut(slot) {
            if s.state == SlotState::Connected && matches!(self.role, Role::Server { .. }) {
                self.accepted = self.accepted.saturating_sub(1);
            }
            if matches!(s.state, SlotState::Connected | SlotState::Connecting) {
                s.generation = s.generation.wrapping_add(1).max(1);
            }
            s.state = next;
        }
    }

    /// Client: whether the connect is still in flight.
    fn connecting(&self) -> bool {
        self.role == Role::Client
            && self
                .slots
                .get(self.server_slot)
                .is_some_and(|s| s.state == SlotState::Connecting)
    }

    /// Client: whether the connect in flight is past its deadline. Read before ENet is serviced,
    /// so that an answer that arrived by then completes the connection first.
    fn connect_overdue(&mut self) -> bool {
        let Some(deadline) = self.connect_deadline else {
            return false;
        };
        if !self.connecting() {
            self.connect_deadline = None;
            return false;
        }
        Instant::now() >= deadline
    }

    /// Client: ends the connect in flight, past its deadline, in `ConnectFailed` (`None` if it
    /// ended otherwise). ENet's `reset` sends nothing (the server has no id of ours to match a
    /// DISCONNECT to yet) and leaves no peer for a late VERIFY_CONNECT, which ENet then drops.
    fn expire_connect(&mut self) -> Option<TransportEvent<'static>> {
        self.connect_deadline = None;
        if !self.connecting() {
            return None;
        }
        let slot = self.server_slot;
        self.with_peer(slot, |peer| peer.reset());
        self.retire(slot, SlotState::Free);
        tracing::info!(timeout = ?self.config.connect_timeout, "ENet connect timed out");
        Some(TransportEvent::Disconnected {
            peer: PeerId::SERVER,
            reason: DisconnectReason::ConnectFailed,
        })
    }

    /// Sets the ENet timeouts of a connected peer from [`EnetConfig::peer_timeout`].
    fn apply_peer_timeout(&mut self, slot: usize) {
        let (min, max) = self
            .config
            .peer_timeout
            .map_or((0, 0), |(min, max)| (ms(min), ms(max)));
        // 0 restores ENet's defaults (undoing a client's connect timeout).
        self.with_peer(slot, |peer| peer.set_timeout(0, min, max));
    }

    fn refuse(&mut self, slot: usize, data: u32) {
        if let Some(s) = self.slots.get_mut(slot) {
            s.state = SlotState::Rejecting(data);
        }
        self.with_peer(slot, |peer| peer.disconnect(data));
    }

    /// Runs `f` on the ENet peer of `slot`, inside [`enet`].
    fn with_peer(&mut self, slot: usize, f: impl FnOnce(&mut rusty_enet::Peer<GuardedSocket>)) {
        let host = &mut self.host;
        enet(|| {
            if let Some(peer) = host.get_peer_mut(PeerID(slot)) {
                f(peer);
            }
        });
    }

    fn on_connect(&mut self, slot: usize, data: u32) -> Option<TransportEvent<'static>> {
        let state = self.slots.get(slot)?.state;
        match self.role {
            Role::Client => {
                if state != SlotState::Connecting {
                    return None;
                }
                if let Some(s) = self.slots.get_mut(slot) {
                    s.state = SlotState::Connected;
                }
                self.apply_peer_timeout(slot);
                tracing::info!("ENet client connected");
                Some(TransportEvent::Connected {
                    peer: PeerId::SERVER,
                    connect_data: 0,
                })
            }
            Role::Server { max_clients } => {
                // A connect on a slot still marked connected: ENet reused the slot without a
                // disconnect event reaching us, so the old connection is retired first.
                if state == SlotState::Connected {
                    self.retire(slot, SlotState::Free);
                }
                if let Some(data) = self.closing {
                    self.refuse(slot, data);
                    return None;
                }
                if self.accepted >= max_clients {
                    tracing::info!(slot, "ENet server full, refusing a client");
                    self.refuse(slot, wire_reason::encode(DisconnectReason::ServerFull));
                    return None;
                }
                if let Some(s) = self.slots.get_mut(slot) {
                    s.state = SlotState::Connected;
                }
                self.accepted += 1;
                self.apply_peer_timeout(slot);
                let peer = self.peer_id(slot);
                tracing::info!(%peer, connect_data = data, "ENet client connected");
                Some(TransportEvent::Connected {
                    peer,
                    connect_data: data,
                })
            }
        }
    }

    fn on_disconnect(&mut self, slot: usize, data: u32) -> Option<TransportEvent<'static>> {
        let state = self.slots.get(slot)?.state;
        let peer = self.peer_id(slot);
        let reason = match state {
            SlotState::Connected => wire_reason::decode(data),
            SlotState::Connecting if wire_reason::is_explicit(data) => wire_reason::decode(data),
            SlotState::Connecting => DisconnectReason::ConnectFailed,
            SlotState::Free
            | SlotState::Closing(_)
            | SlotState::Rejecting(_)
            | SlotState::Handshake { .. } => {
                if let Some(s) = self.slots.get_mut(slot) {
                    s.state = SlotState::Free;
                }
                return None;
            }
        };
        self.retire(slot, SlotState::Free);
        tracing::info!(%peer, %reason, "ENet peer disconnected");
        Some(TransportEvent::Disconnected { peer, reason })
    }

    /// Stops accepting connections and disconnects every peer with `reason`, after what was
    /// queued for it. No [`Disconnected`](TransportEvent::Disconnected) events follow for those
    /// peers. Keep calling [`service_close`](Self::service_close) (or
    /// [`poll_event`](Transport::poll_event)) until [`is_closed`](Self::is_closed), or the
    /// goodbyes may be lost.
    pub fn begin_close(&mut self, reason: DisconnectReason) {
        let data = wire_reason::encode(reason);
        self.closing = Some(data);
        for slot in 0..self.slots.len() {
            match self.slots.get(slot).map(|s| s.state) {
                Some(SlotState::Connected) => {
                    self.retire(slot, SlotState::Closing(data));
                    self.with_peer(slot, |peer| peer.disconnect_later(data));
                }
                Some(SlotState::Connecting) => {
                    self.retire(slot, SlotState::Closing(data));
                    self.with_peer(slot, |peer| peer.disconnect(data));
                }
                _ => {}
            }
        }
        self.flush();
    }

    /// Whether ENet has no connection left in any state: every peer acknowledged its disconnect
    /// (or timed out).
    pub fn is_closed(&self) -> bool {
        enet(|| {
            (0..self.slots.len()).all(|slot| match self.host.get_peer(PeerID(slot)) {
                Some(p) => p.state() == PeerState::Disconnected,
                None => true,
            })
        })
    }

    /// One non-blocking step of a close begun with [`begin_close`](Self::begin_close) (or of
    /// disconnects asked with [`disconnect`](Transport::disconnect)): services ENet, discards
    /// events, and returns [`is_closed`](Self::is_closed). Call it once a frame, for as many
    /// frames as you allow the close.
    pub fn service_close(&mut self) -> bool {
        while self.poll_event().is_some() {}
        self.flush();
        self.is_closed()
    }

    /// Closes with `reason` and waits (sleeping 1 ms between steps) until every peer
    /// acknowledged or `max_wait` passed, then drops the transport. For the end of a program; a
    /// game loop uses [`begin_close`](Self::begin_close) and
    /// [`service_close`](Self::service_close). Returns whether the close completed.
    pub fn close_blocking(mut self, reason: DisconnectReason, max_wait: Duration) -> bool {
        self.begin_close(reason);
        let start = Instant::now();
        loop {
            if self.service_close() {
                return true;
            }
            if start.elapsed() >= max_wait {
                tracing::debug!("ENet close did not complete within {max_wait:?}");
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn resolve<A: ToSocketAddrs + fmt::Debug>(addr: A) -> Result<SocketAddr, EnetError> {
    match addr.to_socket_addrs() {
        Ok(mut addrs) => addrs.next().ok_or_else(|| EnetError::Resolve {
            host: format!("{addr:?}"),
            source: None,
        }),
        Err(e) => Err(EnetError::Resolve {
            host: format!("{addr:?}"),
            source: Some(e),
        }),
    }
}

impl Transport for EnetTransport {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        let slot = match self.slot_of(peer) {
            None => return Err(SendError::UnknownPeer),
            Some(slot) => slot,
        };
        match self.slots.get(slot).map(|s| s.state) {
            Some(SlotState::Connected) => {}
            Some(SlotState::Connecting) => return Err(SendError::NotConnected),
            _ => return Err(SendError::UnknownPeer),
        }
        let host = &mut self.host;
        let result = enet(|| {
            let packet = match channel {
                Channel::Reliable => Packet::reliable(data),
                Channel::Unreliable => Packet::always_unreliable(data),
            };
            match host.get_peer_mut(PeerID(slot)) {
                Some(p) => p.send(channel.index() as u8, &packet),
                None => Err(PeerSendError::NotConnected),
            }
        });
        match result {
            Ok(()) => {
                self.stats.bytes_sent += data.len() as u64;
                self.stats.packets_sent += 1;
                Ok(())
            }
            Err(e) => {
                tracing::debug!(%peer, ?channel, len = data.len(), "ENet refused a packet: {e}");
                Err(match e {
                    PeerSendError::NotConnected => SendError::NotConnected,
                    PeerSendError::PacketTooLarge | PeerSendError::FragmentsExceeded => {
                        SendError::TooLarge
                    }
                    PeerSendError::InvalidChannel | PeerSendError::FailedToQueue => {
                        SendError::Refused
                    }
                })
            }
        }
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        if let Some(packet) = self.current.take() {
            enet(|| drop(packet));
        }
        let overdue = self.connect_overdue();
        let mut rounds = 0;
        let max_rounds =
            (SLOT_LOOKS_PER_POLL / self.slots.len().max(1)).clamp(16, MAX_CONNECT_ROUNDS);
        loop {
            self.look_at_handshakes(false);
            let host = &mut self.host;
            let event = match enet(|| host.service().map(|e| e.map(rusty_enet::Event::no_ref))) {
                Ok(Some(event)) => event,
                Ok(None) if self.host.socket().deferred() && rounds < max_rounds => {
                    rounds += 1;
                    continue;
                }
                Ok(None) => {
                    self.look_at_handshakes(true);
                    // ENet took everything that arrived: a connect still in flight is overdue.
                    return if overdue { self.expire_connect() } else { None };
                }
                Err(e) => {
                    tracing::warn!("ENet socket error: {e}");
                    // A socket failing at every poll must not hold the connect past its deadline.
                    return if overdue { self.expire_connect() } else { None };
                }
            };
            match event {
                EventNoRef::Connect { peer, data } => {
                    if let Some(event) = self.on_connect(peer.0, data) {
                        return Some(event);
                    }
                }
                EventNoRef::Disconnect { peer, data } => {
                    if let Some(event) = self.on_disconnect(peer.0, data) {
                        return Some(event);
                    }
                }
                EventNoRef::Receive {
                    peer: slot,
                    channel_id,
                    packet,
                } => {
                    let live = self
                        .slots
                        .get(slot.0)
                        .is_some_and(|s| s.state == SlotState::Connected);
                    if !live {
                        enet(|| drop(packet));
                        continue;
                    }
                    let peer = self.peer_id(slot.0);
                    let channel = if channel_id == 0 {
                        Channel::Reliable
                    } else {
                        Channel::Unreliable
                    };
                    let data = self.current.insert(packet).data();
                    self.stats.bytes_received += data.len() as u64;
                    self.stats.packets_received += 1;
                    return Some(TransportEvent::Received {
                        peer,
                        channel,
                        data,
                    });
                }
            }
        }
    }

    /// ENet keeps its own clock for resends and timeouts, so this does nothing.
    fn advance(&mut self, _dt: Duration) {}

    fn flush(&mut self) {
        let host = &mut self.host;
        enet(|| host.flush());
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        let Some(slot) = self.slot_of(peer) else {
            return;
        };
        let data = wire_reason::encode(reason);
        match self.slots.get(slot).map(|s| s.state) {
            Some(SlotState::Connected) => {
                tracing::info!(%peer, %reason, "ENet disconnecting peer");
                self.retire(slot, SlotState::Closing(data));
                self.with_peer(slot, |p| p.disconnect_later(data));
            }
            Some(SlotState::Connecting) => {
                self.retire(slot, SlotState::Closing(data));
                self.with_peer(slot, |p| p.disconnect(data));
            }
            _ => {}
        }
    }

    fn stats(&self) -> TransportStats {
        self.stats
    }

    /// A server's `max_clients` (the overflow slots only ever tell a client it is refused).
    fn capacity(&self) -> Option<usize> {
        match self.role {
            Role::Server { max_clients } => Some(max_clients),
            Role::Client => None,
        }
    }
}

impl Drop for EnetTransport {
    fn drop(&mut self) {
        let shutdown = self
            .closing
            .unwrap_or(wire_reason::encode(DisconnectReason::Shutdown));
        let Self {
            host,
            slots,
            current,
            ..
        } = self;
        enet(|| {
            *current = None;
            for (slot, s) in slots.iter().enumerate() {
                let data = match s.state {
                    SlotState::Closing(data) | SlotState::Rejecting(data) => data,
                    _ => shutdown,
                };
                if let Some(peer) = host.get_peer_mut(PeerID(slot)) {
                    if peer.state() != PeerState::Disconnected {
                        peer.disconnect_now(data);
                    }
                }
            }
        });
    }
}
