//! Checking a connection request, statelessly: everything needed is in the packet, the
//! server's configuration and its clock. Nothing is kept for a request that fails.

use mf_net::transport::DisconnectReason;

use crate::private::{self, PrivateFields};
use crate::token::PublicPart;
use crate::used::TokenTag;
use crate::wire::{Reader, KIND_REQUEST, SESSION_KEY_LEN, TAG_LEN};
use crate::{ClientIdentity, ServerConfig};

/// A request that passed every check that needs no other connection: what admitting it takes.
pub(crate) struct Ticket {
    pub(crate) identity: ClientIdentity,
    pub(crate) client_to_server: [u8; SESSION_KEY_LEN],
    pub(crate) server_to_client: [u8; SESSION_KEY_LEN],
    pub(crate) tag: TokenTag,
    pub(crate) expires_at: u64,
}

/// Checks `packet` as a connection request at `now` (seconds since the UNIX epoch), in order:
/// the shape ([`TokenMalformed`](DisconnectReason::TokenMalformed)), the protocol id
/// ([`ProtocolMismatch`](DisconnectReason::ProtocolMismatch)), the expiry
/// ([`TokenExpired`](DisconnectReason::TokenExpired)), the seal
/// ([`TokenInvalid`](DisconnectReason::TokenInvalid)) and the address list
/// ([`TokenWrongServer`](DisconnectReason::TokenWrongServer)). `scratch` receives the opened
/// private part.
pub(crate) fn check(
    config: &ServerConfig,
    addresses: &[String],
    now: u64,
    packet: &[u8],
    scratch: &mut Vec<u8>,
) -> Result<Ticket, DisconnectReason> {
    let mut r = Reader::new(packet);
    if r.u8() != Some(KIND_REQUEST) {
        return Err(DisconnectReason::TokenMalformed);
    }
    let public = PublicPart::read(&mut r).ok_or(DisconnectReason::TokenMalformed)?;
    if !r.is_empty() {
        return Err(DisconnectReason::TokenMalformed);
    }
    if public.protocol_id != config.protocol_id {
        return Err(DisconnectReason::ProtocolMismatch);
    }
    if now >= public.expires_at {
        return Err(DisconnectReason::TokenExpired);
    }
    let ad = private::additional_data(public.protocol_id, public.expires_at);
    let plain = private::open(&config.key, &public.nonce, &ad, public.sealed, scratch)
        .ok_or(DisconnectReason::TokenInvalid)?;
    let fields = PrivateFields::decode(plain).ok_or(DisconnectReason::TokenInvalid)?;
    if !addresses.iter().any(|a| fields.lists(a.as_bytes())) {
        return Err(DisconnectReason::TokenWrongServer);
    }
    let tag_at = public.sealed.len().saturating_sub(TAG_LEN);
    let tag = public
        .sealed
        .get(tag_at..)
        .and_then(|t| t.try_into().ok())
        .ok_or(DisconnectReason::TokenMalformed)?;
    Ok(Ticket {
        identity: ClientIdentity::new(fields.client_id, fields.user_data),
        client_to_server: fields.client_to_server,
        server_to_client: fields.server_to_client,
        tag,
        expires_at: public.expires_at,
    })
}
