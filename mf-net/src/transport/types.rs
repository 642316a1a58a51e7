use std::fmt;

/// Identifies a remote peer of one transport. Never reused within that transport: once a peer
/// has gone, its id stays dead, so a message for it cannot reach a newcomer.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PeerId(pub u64);

impl PeerId {
    /// The server, as clients see it and as the replication layer numbers it.
    pub const SERVER: PeerId = PeerId(1);
}

/// `peer#4`: the same with `{}` and `{:?}`, so logs, panics and assertion messages agree.
impl fmt::Display for PeerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "peer#{}", self.0)
    }
}

/// As [`Display`](fmt::Display): `peer#4`.
impl fmt::Debug for PeerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Delivery guarantees for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// Delivered once, in order, or the connection fails: spawns, RPCs, control, chat.
    Reliable,
    /// May be lost, duplicated or reordered by the network: state snapshots.
    Unreliable,
}

impl Channel {
    /// A small index for per-channel tables (`Reliable` = 0, `Unreliable` = 1).
    pub const fn index(self) -> usize {
        match self {
            Channel::Reliable => 0,
            Channel::Unreliable => 1,
        }
    }
}

/// Why a connection ended. Every reason except [`Timeout`](Self::Timeout) and
/// [`ConnectFailed`](Self::ConnectFailed) travels to the remote side where the transport can
/// carry it (see [`code`](Self::code)).
///
/// The `Token*`, `Secure*`, [`ClientIdInUse`](Self::ClientIdInUse) and [`Replaced`](Self::Replaced) reasons
/// are given by the secure layer (the `mf-net-secure` crate) when it refuses a connection
/// request or replaces a connection; their codes (8 to 14) follow the older ones, which keep
/// theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DisconnectReason {
    /// The remote side closed the connection normally.
    Closed,
    /// Nothing was heard from the peer for too long.
    Timeout,
    /// The server removed this peer.
    Kicked,
    /// The remote endpoint shut down.
    Shutdown,
    /// Protocol versions, message registries or replication schemas differ.
    ProtocolMismatch,
    /// The connection never completed (nobody listening, refused, timed out while connecting).
    ConnectFailed,
    /// The server has no free slot.
    ServerFull,
    /// A message that had to arrive (a reliable control message such as a spawn, despawn,
    /// authority change, welcome or hello) was refused by the transport, so the connection was
    /// closed rather than left diverged.
    ReliableSendFailed,
    /// Refused by a secure server: the client presented no connect token (its transport is not
    /// wrapped in `mf_net_secure::SecureClient`).
    SecureRequired,
    /// Refused by a plain server: the client presented a connect token, but the server's
    /// transport is not wrapped in `mf_net_secure::SecureServer`.
    SecureUnsupported,
    /// Refused by a secure server: the connect token has expired.
    TokenExpired,
    /// Refused by a secure server: the connect token does not list this server's address.
    TokenWrongServer,
    /// The connect token was tampered with or sealed under another key (the two cannot be told
    /// apart: authentication failed). A secure server no longer sends it: such a request gets
    /// no answer at all (the code stays reserved).
    TokenInvalid,
    /// Refused by a secure server: the connect token was used already (a replayed request).
    TokenReplayed,
    /// The first packet was not a connection request at all. A secure server no longer sends
    /// it: garbage gets no answer (a plain mf-net client is told
    /// [`SecureRequired`](Self::SecureRequired)); the code stays reserved.
    TokenMalformed,
    /// Refused by a secure server: a client with the same id is connected and the server keeps
    /// the older connection.
    ClientIdInUse,
    /// A newer connection holding a token for the same client id took this one's place.
    Replaced,
    /// The server disconnected a client whose packets were mostly malformed, of unknown ids or
    /// of another protocol version ([`MALFORMED_PACKET_LIMIT`](crate::bus::MALFORMED_PACKET_LIMIT)).
    MalformedTraffic,
    /// An application-defined reason.
    Custom(u16),
}

impl DisconnectReason {
    /// The number carried on the wire (for example as ENet disconnect data).
    pub const fn code(self) -> u32 {
        match self {
            DisconnectReason::Closed => 0,
            DisconnectReason::Timeout => 1,
            DisconnectReason::Kicked => 2,
            DisconnectReason::Shutdown => 3,
            DisconnectReason::ProtocolMismatch => 4,
            DisconnectReason::ConnectFailed => 5,
            DisconnectReason::ServerFull => 6,
            DisconnectReason::ReliableSendFailed => 7,
            DisconnectReason::TokenExpired => 8,
            DisconnectReason::TokenWrongServer => 9,
            DisconnectReason::TokenInvalid => 10,
            DisconnectReason::TokenReplayed => 11,
            DisconnectReason::TokenMalformed => 12,
            DisconnectReason::ClientIdInUse => 13,
            DisconnectReason::Replaced => 14,
            DisconnectReason::MalformedTraffic => 15,
            DisconnectReason::SecureRequired => 16,
            DisconnectReason::SecureUnsupported => 17,
            DisconnectReason::Custom(c) => 0x1_0000 | c as u32,
        }
    }

    /// The reason for a wire number; unknown numbers read as [`Closed`](Self::Closed).
    pub const fn from_code(code: u32) -> Self {
        match code {
            1 => DisconnectReason::Timeout,
            2 => DisconnectReason::Kicked,
            3 => DisconnectReason::Shutdown,
            4 => DisconnectReason::ProtocolMismatch,
            5 => DisconnectReason::ConnectFailed,
            6 => DisconnectReason::ServerFull,
            7 => DisconnectReason::ReliableSendFailed,
            8 => DisconnectReason::TokenExpired,
            9 => DisconnectReason::TokenWrongServer,
            10 => DisconnectReason::TokenInvalid,
            11 => DisconnectReason::TokenReplayed,
            12 => DisconnectReason::TokenMalformed,
            13 => DisconnectReason::ClientIdInUse,
            14 => DisconnectReason::Replaced,
            15 => DisconnectReason::MalformedTraffic,
            16 => DisconnectReason::SecureRequired,
            17 => DisconnectReason::SecureUnsupported,
            c if c & 0xffff_0000 == 0x1_0000 => DisconnectReason::Custom(c as u16),
            _ => DisconnectReason::Closed,
        }
    }
}

impl fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisconnectReason::Closed => f.write_str("closed"),
            DisconnectReason::Timeout => f.write_str("timed out"),
            DisconnectReason::Kicked => f.write_str("kicked"),
            DisconnectReason::Shutdown => f.write_str("remote shut down"),
            DisconnectReason::ProtocolMismatch => f.write_str("protocol mismatch"),
            DisconnectReason::ConnectFailed => f.write_str("connection failed"),
            DisconnectReason::ServerFull => f.write_str("server full"),
            DisconnectReason::ReliableSendFailed => {
                f.write_str("a message that had to arrive could not be sent")
            }
            DisconnectReason::TokenExpired => f.write_str("connect token expired"),
            DisconnectReason::TokenWrongServer => {
                f.write_str("connect token not valid for this server")
            }
            DisconnectReason::TokenInvalid => {
                f.write_str("connect token tampered with or sealed under another key")
            }
            DisconnectReason::TokenReplayed => f.write_str("connect token already used"),
            DisconnectReason::TokenMalformed => f.write_str("not a connection request"),
            DisconnectReason::ClientIdInUse => f.write_str("client id already connected"),
            DisconnectReason::Replaced => f.write_str("replaced by a newer connection"),
            DisconnectReason::MalformedTraffic => f.write_str("too many malformed packets"),
            DisconnectReason::SecureRequired => f.write_str(
                "the server requires a connect token: wrap the client's transport in \
                 mf_net_secure::SecureClient",
            ),
            DisconnectReason::SecureUnsupported => f.write_str(
                "the client sent a connect token to a server without mf-net-secure: wrap the \
                 server's transport in mf_net_secure::SecureServer, or connect without a token",
            ),
            DisconnectReason::Custom(c) => write!(f, "custom reason {c}"),
        }
    }
}

/// Why a packet could not be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SendError {
    /// No such peer, or it has disconnected (its id is stale).
    UnknownPeer,
    /// The peer exists but the connection is not established yet, or is closing.
    NotConnected,
    /// The packet is larger than the transport accepts.
    TooLarge,
    /// The transport refused the packet for another reason (a full queue, an OS error).
    Refused,
    /// The message holds a value no receiver accepts (a string longer than
    /// [`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)): it was not sent, since every
    /// receiver would drop it as malformed.
    OverLimit,
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SendError::UnknownPeer => "unknown or disconnected peer",
            SendError::NotConnected => "peer is not connected",
            SendError::TooLarge => "packet too large for the transport",
            SendError::Refused => "transport refused the packet",
            SendError::OverLimit => "message holds a string longer than receivers accept",
        })
    }
}

impl std::error::Error for SendError {}

/// Something that happened on a transport, taken with
/// [`Transport::poll_event`](super::Transport::poll_event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportEvent<'a> {
    /// A connection completed. On a server, `connect_data` is what the client passed when
    /// connecting (mf-net sends its registry fingerprint); on a client it is 0.
    Connected {
        /// The new peer.
        peer: PeerId,
        /// The client's connect data.
        connect_data: u32,
    },
    /// A connection ended, or never completed.
    Disconnected {
        /// The peer that left; its id is dead from now on.
        peer: PeerId,
        /// Why.
        reason: DisconnectReason,
    },
    /// A packet arrived. `data` is lent until the next call on the transport.
    Received {
        /// Who sent it.
        peer: PeerId,
        /// The channel it came on.
        channel: Channel,
        /// The packet's bytes.
        data: &'a [u8],
    },
}

/// Totals kept by every transport.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransportStats {
    /// Bytes handed to the network (payload bytes, excluding the transport's own headers).
    pub bytes_sent: u64,
    /// Bytes received from the network (payload bytes).
    pub bytes_received: u64,
    /// Packets handed to the network.
    pub packets_sent: u64,
    /// Packets received.
    pub packets_received: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_ids_print_alike_in_debug_and_display() {
        let peer = PeerId(4_294_967_296);
        assert_eq!(format!("{peer}"), "peer#4294967296");
        assert_eq!(format!("{peer:?}"), "peer#4294967296");
        assert_eq!(format!("{:?}", Some(PeerId::SERVER)), "Some(peer#1)");
    }

    #[test]
    fn reason_codes_round_trip() {
        for reason in [
            DisconnectReason::Closed,
            DisconnectReason::Timeout,
            DisconnectReason::Kicked,
            DisconnectReason::Shutdown,
            DisconnectReason::ProtocolMismatch,
            DisconnectReason::ConnectFailed,
            DisconnectReason::ServerFull,
            DisconnectReason::ReliableSendFailed,
            DisconnectReason::TokenExpired,
            DisconnectReason::TokenWrongServer,
            DisconnectReason::TokenInvalid,
            DisconnectReason::TokenReplayed,
            DisconnectReason::TokenMalformed,
            DisconnectReason::ClientIdInUse,
            DisconnectReason::Replaced,
            DisconnectReason::MalformedTraffic,
            DisconnectReason::Custom(0),
            DisconnectReason::Custom(u16::MAX),
        ] {
            assert_eq!(DisconnectReason::from_code(reason.code()), reason);
        }
        assert_eq!(DisconnectReason::from_code(999), DisconnectReason::Closed);
    }
}
