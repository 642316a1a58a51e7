use std::collections::VecDeque;
use std::fmt;

use tracing::{debug, info, trace, warn};

use super::events::{BusEvent, BusStats, DropReason};
use super::header::MessageHeader;
use super::refusal::{write_listing, REGISTRY_LISTING};
use super::registry::{MessageRegistry, RegistryError};
use super::traffic::Traffic;
use crate::codec::NetCodec;
use crate::transport::{Channel, DisconnectReason, PeerId, SendError, Transport};
use crate::wire::NetWriter;

/// Events kept for the game before the oldest are discarded (and counted in
/// [`BusStats::events_lost`]).
pub const MAX_QUEUED_EVENTS: usize = 1024;

/// Which end of the connection a bus is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Accepts clients and checks their fingerprints.
    Server,
    /// Talks to one server.
    Client,
}

/// Why [`BusCore::send`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BusSendError {
    /// The message type is not in the registry (a programming error, caught before sending).
    NotRegistered(&'static str),
    /// The transport refused the packet; a [`BusEvent::SendFailed`] was raised and counted.
    Transport(SendError),
}

impl fmt::Display for BusSendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BusSendError::NotRegistered(name) => {
                fmt::Display::fmt(&RegistryError::NotRegistered(name), f)
            }
            BusSendError::Transport(e) => write!(f, "send failed: {e}"),
        }
    }
}

impl std::error::Error for BusSendError {}

impl From<SendError> for BusSendError {
    fn from(e: SendError) -> Self {
        BusSendError::Transport(e)
    }
}

/// Everything a [`MessageBus`](super::MessageBus) does except subscribing and polling: sending,
/// peers, events, stats. Message handlers receive it so they can answer while dispatching.
///
/// `BusCore<dyn Transport>` works too (a `&mut BusCore<T>` coerces to it): code that only
/// sends, such as the replication runtime's state machine, is written once for every
/// transport.
pub struct BusCore<T: ?Sized> {
    pub(super) registry: MessageRegistry,
    pub(super) role: Role,
    writer: NetWriter,
    pub(super) recv: Vec<u8>,
    peers: Vec<PeerId>,
    events: VecDeque<BusEvent>,
    pub(super) stats: BusStats,
    tick: u32,
    log_packets: bool,
    /// Server: each client's received and dropped packets.
    traffic: Traffic,
    /// Client: why the server refused us (from its registry listing).
    pub(super) refusal: Option<String>,
    /// Last, so that the type can be unsized to `BusCore<dyn Transport>`.
    pub(super) transport: T,
}

impl<T: Transport> BusCore<T> {
    pub(super) fn new(transport: T, registry: MessageRegistry, role: Role) -> Self {
        Self {
            transport,
            registry,
            role,
            writer: NetWriter::with_capacity(1500),
            recv: Vec::with_capacity(1500),
            peers: Vec::new(),
            events: VecDeque::with_capacity(64),
            stats: BusStats::default(),
            tick: 0,
            log_packets: false,
            traffic: Traffic::default(),
            refusal: None,
        }
    }
}

impl<T: Transport + ?Sized> BusCore<T> {
    /// Whether this bus is a server or a client.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The registry both ends share.
    pub fn registry(&self) -> &MessageRegistry {
        &self.registry
    }

    /// The connected peers (on a client: the server, once connected).
    pub fn peers(&self) -> &[PeerId] {
        &self.peers
    }

    /// Whether `peer` is connected.
    pub fn is_connected(&self, peer: PeerId) -> bool {
        self.peers.contains(&peer)
    }

    /// The tick written into outgoing headers.
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// Sets the tick written into outgoing headers.
    pub fn set_tick(&mut self, tick: u32) {
        self.tick = tick;
    }

    /// Logs every message sent and received at `trace` level (off by default).
    pub fn set_log_packets(&mut self, on: bool) {
        self.log_packets = on;
    }

    /// Client, refused by the server with
    /// [`ProtocolMismatch`](DisconnectReason::ProtocolMismatch) because the registries differ:
    /// the first message type that differs (the server sends its registry before it
    /// disconnects), for example ``message id 3 is `game::Chat` on the server but `game::Move`
    /// on this client``. `None` otherwise.
    pub fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    /// Counters since the bus was created.
    pub fn stats(&self) -> &BusStats {
        &self.stats
    }

    /// The transport underneath.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// The transport underneath, mutably (for example to advance its time).
    pub fn transport_mut(&mut self) -> &mut T {
        &mut self.transport
    }

    /// Takes the oldest pending event.
    pub fn next_event(&mut self) -> Option<BusEvent> {
        self.events.pop_front()
    }

    /// Sends `message` to `peer`. A transport failure raises [`BusEvent::SendFailed`], is
    /// counted and logged, and is returned; it never panics.
    pub fn send<M: NetCodec + 'static>(
        &mut self,
        peer: PeerId,
        message: &M,
        channel: Channel,
    ) -> Result<(), BusSendError> {
        let id = self.id_of::<M>()?;
        self.encode(id, |w| message.encode(w));
        self.send_encoded(peer, id, channel)
            .map_err(BusSendError::Transport)
    }

    /// Sends `message` to every connected peer but `except`; returns how many accepted it.
    pub fn broadcast<M: NetCodec + 'static>(
        &mut self,
        message: &M,
        channel: Channel,
        except: Option<PeerId>,
    ) -> Result<usize, BusSendError> {
        let id = self.id_of::<M>()?;
        self.encode(id, |w| message.encode(w));
        Ok(self.broadcast_encoded(id, channel, except))
    }

    /// Sends a message whose payload `encode` writes, under a raw id (used by the replication
    /// layer for its reserved ids, and by generated RPC senders that encode arguments in place).
    pub(crate) fn send_with(
        &mut self,
        peer: PeerId,
        id: u16,
        channel: Channel,
        encode: impl FnOnce(&mut NetWriter),
    ) -> Result<(), SendError> {
        self.encode(id, encode);
        self.send_encoded(peer, id, channel)
    }

    /// Broadcasts a message whose payload `encode` writes once; returns how many peers accepted.
    pub(crate) fn broadcast_with(
        &mut self,
        id: u16,
        channel: Channel,
        except: Option<PeerId>,
        encode: impl FnOnce(&mut NetWriter),
    ) -> usize {
        self.encode(id, encode);
        self.broadcast_encoded(id, channel, except)
    }

    /// Like [`broadcast_with`](Self::broadcast_with) (encodes once, sends to every peer), but
    /// appends every peer whose send failed to `failed`; returns the accepted count and the
    /// message's length in bytes (what each accepted peer was sent).
    pub(crate) fn broadcast_with_failures(
        &mut self,
        id: u16,
        channel: Channel,
        failed: &mut Vec<PeerId>,
        encode: impl FnOnce(&mut NetWriter),
    ) -> (usize, usize) {
        self.encode(id, encode);
        let len = self.writer.len();
        let mut accepted = 0;
        for i in 0..self.peers.len() {
            let peer = self.peers[i];
            if self.send_encoded(peer, id, channel).is_ok() {
                accepted += 1;
            } else {
                failed.push(peer);
            }
        }
        (accepted, len)
    }

    /// Whether the last message encoded held a string no receiver accepts (and so went to no
    /// peer: [`SendError::OverLimit`]); forgets it.
    pub(crate) fn take_over_limit(&mut self) -> bool {
        self.writer.take_over_limit()
    }

    /// Disconnects `peer` with `reason`; the peer leaves the list and a
    /// [`BusEvent::PeerDisconnected`] is raised locally.
    pub fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        if let Some(i) = self.peers.iter().position(|p| *p == peer) {
            self.peers.swap_remove(i);
            self.traffic.left(peer);
            info!(%peer, %reason, "disconnecting peer");
            self.transport.disconnect(peer, reason);
            self.push_event(BusEvent::PeerDisconnected { peer, reason });
        }
    }

    /// Pushes queued packets onto the wire (call once per frame, after sending).
    pub fn flush(&mut self) {
        self.transport.flush();
    }

    fn id_of<M: NetCodec + 'static>(&self) -> Result<u16, BusSendError> {
        self.registry
            .id_of::<M>()
            .ok_or(BusSendError::NotRegistered(M::NAME))
    }

    fn encode(&mut self, id: u16, encode: impl FnOnce(&mut NetWriter)) {
        self.writer.clear();
        MessageHeader {
            version: self.registry.protocol_version(),
            id,
            tick: self.tick,
        }
        .write(&mut self.writer);
        encode(&mut self.writer);
    }

    fn send_encoded(&mut self, peer: PeerId, id: u16, channel: Channel) -> Result<(), SendError> {
        let len = self.writer.len();
        let sent = match self.writer.over_limit() {
            true => Err(SendError::OverLimit),
            false => self.transport.send(peer, channel, self.writer.as_slice()),
        };
        match sent {
            Ok(()) => {
                self.stats.messages_sent += 1;
                self.stats.bytes_sent += len as u64;
                if self.log_packets {
                    trace!(%peer, id, len, ?channel, "sent message");
                }
                Ok(())
            }
            Err(error) => {
                self.stats.send_failures += 1;
                warn!(%peer, id, %error, "send failed");
                self.push_event(BusEvent::SendFailed {
                    peer,
                    message_id: id,
                    error,
                });
                Err(error)
            }
        }
    }

    fn broadcast_encoded(&mut self, id: u16, channel: Channel, except: Option<PeerId>) -> usize {
        let mut accepted = 0;
        for i in 0..self.peers.len() {
            let peer = self.peers[i];
            if Some(peer) != except && self.send_encoded(peer, id, channel).is_ok() {
                accepted += 1;
            }
        }
        accepted
    }

    pub(super) fn push_event(&mut self, event: BusEvent) {
        if self.events.len() >= MAX_QUEUED_EVENTS {
            self.events.pop_front();
            self.stats.events_lost += 1;
        }
        self.events.push_back(event);
    }

    pub(super) fn on_connected(&mut self, peer: PeerId, connect_data: u32) {
        let expected = self.registry.fingerprint();
        if self.role == Role::Server && connect_data != expected {
            let reason = DisconnectReason::ProtocolMismatch;
            warn!(
                %peer,
                "refusing peer: its message registry differs (fingerprint {connect_data:#010x}, \
                 ours {expected:#010x}); it is sent ours and names the first difference"
            );
            self.stats.peers_refused += 1;
            // Reliable packets queued before a disconnect are delivered first.
            let mut listing = NetWriter::new();
            write_listing(&mut listing, &self.registry);
            let _ = self.send_with(peer, REGISTRY_LISTING, Channel::Reliable, |w| {
                w.write_bytes(listing.as_slice());
            });
            self.transport.disconnect(peer, reason);
            self.push_event(BusEvent::PeerRefused { peer, reason });
            return;
        }
        info!(%peer, "peer connected");
        if !self.peers.contains(&peer) {
            self.peers.push(peer);
            if self.role == Role::Server {
                self.traffic.connected(peer);
            }
        }
        self.push_event(BusEvent::PeerConnected(peer));
    }

    /// Server: refuses `peer`, which sent a secure layer's connection request to this plain
    /// server.
    pub(super) fn refuse_secure_request(&mut self, peer: PeerId) {
        let reason = DisconnectReason::SecureUnsupported;
        warn!(
            %peer,
            "refusing peer: it presents a connect token, but this server's transport is not \
             wrapped in mf_net_secure::SecureServer"
        );
        self.stats.peers_refused += 1;
        self.disconnect(peer, reason);
    }

    pub(super) fn on_disconnected(&mut self, peer: PeerId, reason: DisconnectReason) {
        info!(%peer, %reason, "peer disconnected");
        if let Some(i) = self.peers.iter().position(|p| *p == peer) {
            self.peers.swap_remove(i);
        }
        self.traffic.left(peer);
        self.push_event(BusEvent::PeerDisconnected { peer, reason });
    }

    pub(super) fn drop_packet(
        &mut self,
        peer: PeerId,
        message_id: Option<u16>,
        reason: DropReason,
    ) {
        match reason {
            DropReason::ProtocolMismatch => self.stats.dropped_protocol_mismatch += 1,
            DropReason::UnknownId => self.stats.dropped_unknown_id += 1,
            DropReason::Malformed(_) => self.stats.dropped_malformed += 1,
            DropReason::NoHandler => self.stats.dropped_no_handler += 1,
        }
        debug!(%peer, ?message_id, %reason, "dropped message");
        self.push_event(BusEvent::MessageDropped {
            peer,
            message_id,
            reason,
        });
        let garbage = !matches!(reason, DropReason::NoHandler);
        if garbage && self.traffic.dropped(peer) {
            warn!(%peer, "disconnecting a client whose packets are mostly malformed");
            self.stats.malformed_kicks += 1;
            self.disconnect(peer, DisconnectReason::MalformedTraffic);
        }
    }

    /// Server: counts a packet from `peer` (see [`MALFORMED_PACKET_LIMIT`]).
    ///
    /// [`MALFORMED_PACKET_LIMIT`]: super::MALFORMED_PACKET_LIMIT
    #[inline]
    pub(super) fn count_received(&mut self, peer: PeerId) {
        self.traffic.received(peer);
    }
}
