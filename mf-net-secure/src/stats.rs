//! [`SecureStats`]: what the secure layer admitted, refused and dropped.

use mf_net::transport::DisconnectReason;

/// Counters of a [`SecureServer`](crate::SecureServer) or [`SecureClient`](crate::SecureClient)
/// since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecureStats {
    /// Connections admitted (server) or accepted by the server (client).
    pub admitted: u64,
    /// Challenges sent (server): requests whose token opened and could be admitted.
    pub challenges_sent: u64,
    /// Packets from challenged peers that were not the challenge's answer (server).
    pub challenge_failures: u64,
    /// Admitted connections closed because nothing authenticated came for the timeout.
    pub timeouts: u64,
    /// Peers dropped to make room in the handshake (a stranger or a repeated token's peer
    /// pushed out, or the newcomer), because it held
    /// [`max_pending`](crate::ServerConfig::max_pending) peers or the newcomer took the inner
    /// transport's last free slot (server).
    pub strangers_dropped: u64,
    /// Plain mf-net clients (no token at all) refused with
    /// [`SecureRequired`](mf_net::transport::DisconnectReason::SecureRequired).
    pub refused_plain: u64,
    /// Requests refused because the token had expired.
    pub refused_expired: u64,
    /// Requests refused because the token does not list this server.
    pub refused_wrong_server: u64,
    /// Requests dropped without an answer because the token failed to authenticate (tampered,
    /// or another key).
    pub refused_invalid: u64,
    /// Requests refused because the token was used already.
    pub refused_replayed: u64,
    /// Requests dropped without an answer because the packet was not a connection request.
    pub refused_malformed: u64,
    /// Requests refused because the token is for another protocol id.
    pub refused_protocol: u64,
    /// Requests refused because every slot was taken.
    pub refused_full: u64,
    /// Requests refused because the client id was connected (with
    /// [`DuplicatePolicy::RefuseNewer`](crate::DuplicatePolicy::RefuseNewer)).
    pub refused_client_id_in_use: u64,
    /// Connections closed because a newer one with the same client id was admitted.
    pub replaced: u64,
    /// Connections that did not complete the handshake in time.
    pub handshake_timeouts: u64,
    /// Sealed packets dropped because they failed to authenticate or were cut short.
    pub dropped_tampered: u64,
    /// Sealed packets dropped as duplicates or as too old for the replay window.
    pub dropped_replayed: u64,
    /// Packets dropped because they came at the wrong moment (a second request, a payload
    /// before the connection was accepted).
    pub dropped_unexpected: u64,
}

impl SecureStats {
    /// Every refused or unanswered request, whatever the reason.
    pub fn refused(&self) -> u64 {
        self.refused_expired
            + self.refused_wrong_server
            + self.refused_invalid
            + self.refused_replayed
            + self.refused_malformed
            + self.refused_protocol
            + self.refused_full
            + self.refused_client_id_in_use
            + self.refused_plain
    }

    /// Counts a sealed refusal given with `reason` (each reason the server seals has its own
    /// counter).
    pub(crate) fn count_refusal(&mut self, reason: DisconnectReason) {
        let counter = match reason {
            DisconnectReason::TokenExpired => &mut self.refused_expired,
            DisconnectReason::TokenWrongServer => &mut self.refused_wrong_server,
            DisconnectReason::TokenReplayed => &mut self.refused_replayed,
            DisconnectReason::ProtocolMismatch => &mut self.refused_protocol,
            DisconnectReason::ServerFull => &mut self.refused_full,
            DisconnectReason::ClientIdInUse => &mut self.refused_client_id_in_use,
            _ => &mut self.refused_malformed,
        };
        *counter += 1;
    }
}
