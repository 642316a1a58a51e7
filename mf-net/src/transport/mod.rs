//! Transports move bytes between peers; everything above them is sans-IO.
//!
//! A [`Transport`] is polled, never blocks and never reads a clock: time enters through
//! [`Transport::advance`]. Implementations here are in-process ([`loopback`]) or decorate
//! another transport ([`simulated`]); `mf-net-enet` provides real UDP.

pub mod address;
pub mod loopback;
mod pool;
pub mod selector;
pub mod simulated;
mod types;

pub use types::{Channel, DisconnectReason, PeerId, SendError, TransportEvent, TransportStats};

/// How a connection request of the secure layer (`mf-net-secure`) starts, whatever its format
/// version: a plain server that receives one refuses the peer with
/// [`DisconnectReason::SecureUnsupported`] instead of counting it as garbage.
pub const SECURE_REQUEST_PREFIX: [u8; 6] = *b"\x01MFSEC";

use std::time::Duration;

/// A packet transport between one local endpoint and its remote peers.
///
/// A server endpoint has any number of peers; a client endpoint has exactly one, the server.
/// All methods are non-blocking. Events are taken one at a time with
/// [`poll_event`](Transport::poll_event), which lends the received bytes until the next call, so
/// no packet needs its own allocation.
pub trait Transport {
    /// Queues `data` for `peer` on `channel`. Never panics: an unknown, stale or disconnected
    /// peer, or a packet the transport refuses, is an error.
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError>;

    /// Takes the next event, if any. The bytes of a [`TransportEvent::Received`] stay valid until
    /// the next call on this transport.
    fn poll_event(&mut self) -> Option<TransportEvent<'_>>;

    /// Moves the transport's notion of time forward by `dt` (timers, simulated latency).
    fn advance(&mut self, dt: Duration);

    /// Pushes queued outgoing packets onto the wire.
    fn flush(&mut self);

    /// Disconnects `peer`, telling it `reason` where the transport can carry it. Packets queued
    /// for the peer on the reliable channel before this call are delivered first. The local side
    /// gets no [`TransportEvent::Disconnected`] for a disconnect it asked for.
    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason);

    /// Byte and packet totals since the transport was created.
    fn stats(&self) -> TransportStats;

    /// How many peers this endpoint holds at once, if it has a fixed number of slots (a
    /// listening server's `max_clients`): a layer above that admits peers itself (the secure
    /// layer's handshake) keeps one free with it, so that a newcomer always finds one. A
    /// decorator passes its inner transport's on. `None` (the default): not known.
    fn capacity(&self) -> Option<usize> {
        None
    }
}

impl<T: Transport + ?Sized> Transport for Box<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        (**self).send(peer, channel, data)
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        (**self).poll_event()
    }

    fn advance(&mut self, dt: Duration) {
        (**self).advance(dt);
    }

    fn flush(&mut self) {
        (**self).flush();
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        (**self).disconnect(peer, reason);
    }

    fn stats(&self) -> TransportStats {
        (**self).stats()
    }

    fn capacity(&self) -> Option<usize> {
        (**self).capacity()
    }
}
