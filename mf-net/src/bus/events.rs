use std::fmt;

use crate::transport::{Channel, DisconnectReason, PeerId, SendError};
use crate::wire::DecodeError;

/// What a message handler learns about the message besides its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageContext {
    /// The peer that sent it, as the transport knows it (never taken from the payload).
    pub sender: PeerId,
    /// The sender's tick from the header.
    pub tick: u32,
    /// The channel it arrived on.
    pub channel: Channel,
    /// Its message id.
    pub message_id: u16,
}

/// Why an incoming packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The header's protocol version differs from ours.
    ProtocolMismatch,
    /// No message type has this id.
    UnknownId,
    /// The packet could not be decoded (short, bad varint, trailing bytes…).
    Malformed(DecodeError),
    /// The type is registered but nothing subscribed to it.
    NoHandler,
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropReason::ProtocolMismatch => f.write_str("protocol version mismatch"),
            DropReason::UnknownId => f.write_str("unknown message id"),
            DropReason::Malformed(e) => write!(f, "malformed: {e}"),
            DropReason::NoHandler => f.write_str("no handler"),
        }
    }
}

/// Something the bus wants the game to know, taken with
/// [`BusCore::next_event`](super::BusCore::next_event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusEvent {
    /// A peer connected (on a server: with a matching fingerprint).
    PeerConnected(PeerId),
    /// A peer is gone.
    PeerDisconnected {
        /// Who.
        peer: PeerId,
        /// Why.
        reason: DisconnectReason,
    },
    /// A client was turned away (its fingerprint differs).
    PeerRefused {
        /// The refused connection.
        peer: PeerId,
        /// The reason sent to it.
        reason: DisconnectReason,
    },
    /// The transport refused an outgoing message.
    SendFailed {
        /// The destination.
        peer: PeerId,
        /// The message id.
        message_id: u16,
        /// What the transport said.
        error: SendError,
    },
    /// An incoming packet was dropped.
    MessageDropped {
        /// The sender.
        peer: PeerId,
        /// The message id, when the header could be read.
        message_id: Option<u16>,
        /// Why.
        reason: DropReason,
    },
}

/// Counters kept by a [`MessageBus`](super::MessageBus).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BusStats {
    /// Bytes of messages handed to the transport (headers included).
    pub bytes_sent: u64,
    /// Bytes of packets received.
    pub bytes_received: u64,
    /// Messages handed to the transport.
    pub messages_sent: u64,
    /// Packets received.
    pub messages_received: u64,
    /// Messages dispatched to handlers.
    pub messages_dispatched: u64,
    /// Packets dropped for a protocol version mismatch.
    pub dropped_protocol_mismatch: u64,
    /// Packets dropped for an unknown message id.
    pub dropped_unknown_id: u64,
    /// Packets dropped as malformed.
    pub dropped_malformed: u64,
    /// Packets dropped because nothing handles their type.
    pub dropped_no_handler: u64,
    /// Sends the transport refused.
    pub send_failures: u64,
    /// Connections refused for a fingerprint mismatch.
    pub peers_refused: u64,
    /// Events discarded because the event queue was full (nobody drained it).
    pub events_lost: u64,
    /// Server: clients disconnected because their packets were mostly garbage
    /// ([`MALFORMED_PACKET_LIMIT`](super::MALFORMED_PACKET_LIMIT)).
    pub malformed_kicks: u64,
}

impl BusStats {
    /// Every dropped packet, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.dropped_protocol_mismatch
            + self.dropped_unknown_id
            + self.dropped_malformed
            + self.dropped_no_handler
    }
}
