//! Checking a connection request, statelessly: everything needed is in the packet, the
//! server's configuration and its clock. Nothing is kept for a request that fails.

use mf_net::replication::message_ids::HELLO;
use mf_net::transport::DisconnectReason;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::keys::{ConnectionKeys, Salts};
use crate::private::{self, PrivateFields};
use crate::token::PublicPart;
use crate::used::TokenTag;
use crate::wire::{Reader, KIND_REQUEST, SALT_LEN, SESSION_KEY_LEN, TAG_LEN};
use crate::{ClientIdentity, ServerConfig};

/// A request whose token opened: who it is, the keys it brings, and whether it may go on.
pub(crate) struct Opened {
    pub(crate) ticket: Ticket,
    /// `Err` with the reason to send (sealed) if the request is refused.
    pub(crate) verdict: Result<(), DisconnectReason>,
}

/// What an opened token gives the server.
pub(crate) struct Ticket {
    pub(crate) identity: ClientIdentity,
    /// The protocol id the token was issued for (its connection is sealed with it).
    pub(crate) protocol_id: u64,
    pub(crate) tag: TokenTag,
    pub(crate) secrets: TicketSecrets,
}

/// The token's keys and the client's salt. Wiped when dropped.
#[derive(Zeroize, ZeroizeOnDrop)]
pub(crate) struct TicketSecrets {
    client_to_server: [u8; SESSION_KEY_LEN],
    server_to_client: [u8; SESSION_KEY_LEN],
    client_salt: [u8; SALT_LEN],
}

impl Ticket {
    /// The keys of the connection this request makes with the server's `salt`.
    pub(crate) fn connection_keys(&self, server_salt: &[u8; SALT_LEN]) -> ConnectionKeys {
        let s = &self.secrets;
        let salts = Salts {
            client: &s.client_salt,
            server: server_salt,
        };
        ConnectionKeys::derive(
            self.protocol_id,
            &s.client_to_server,
            &s.server_to_client,
            &salts,
        )
    }
}

/// Why a request gets no answer at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Silent {
    /// Not a connection request of this version.
    Malformed,
    /// The token did not open: tampered with, or sealed under another key.
    Invalid,
}

/// What the server's clock and start say about tokens.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// Seconds since the UNIX epoch.
    pub(crate) now: u64,
    /// Tokens created before this (seconds since the UNIX epoch) are refused.
    pub(crate) oldest_created: u64,
}

/// Checks `packet` as a connection request. In order: the shape and version, then the seal
/// (both silent on failure: garbage gets no answer), then what an opened token may be
/// refused for, with a reason for the token holder: the protocol id
/// ([`ProtocolMismatch`](DisconnectReason::ProtocolMismatch)), the expiry and start
/// ([`TokenExpired`](DisconnectReason::TokenExpired)), the address list
/// ([`TokenWrongServer`](DisconnectReason::TokenWrongServer)). `scratch` receives the opened
/// private part and is wiped before this returns.
pub(crate) fn check(
    config: &ServerConfig,
    addresses: &[String],
    clock: Clock,
    packet: &[u8],
    scratch: &mut Vec<u8>,
) -> Result<Opened, Silent> {
    let mut r = Reader::new(packet);
    if r.u8() != Some(KIND_REQUEST) {
        return Err(Silent::Malformed);
    }
    let public = PublicPart::read(&mut r).ok_or(Silent::Malformed)?;
    let client_salt: [u8; SALT_LEN] = r.array().ok_or(Silent::Malformed)?;
    if !r.is_empty() {
        return Err(Silent::Malformed);
    }
    let ad = private::additional_data(public.protocol_id, public.created_at, public.expires_at);
    let opened = private::open(&config.key, &public.nonce, &ad, public.sealed, scratch)
        .and_then(PrivateFields::decode)
        .map(|fields| {
            let lists = addresses.iter().any(|a| fields.lists(a.as_bytes()));
            let secrets = TicketSecrets {
                client_to_server: fields.client_to_server,
                server_to_client: fields.server_to_client,
                client_salt,
            };
            (
                ClientIdentity::new(fields.client_id, fields.user_data),
                secrets,
                lists,
            )
        });
    scratch.zeroize();
    let (identity, secrets, lists) = opened.ok_or(Silent::Invalid)?;
    let tag_at = public.sealed.len().saturating_sub(TAG_LEN);
    let tag = public
        .sealed
        .get(tag_at..)
        .and_then(|t| t.try_into().ok())
        .ok_or(Silent::Malformed)?;
    let verdict = if public.protocol_id != config.protocol_id {
        Err(DisconnectReason::ProtocolMismatch)
    } else if clock.now >= public.expires_at || public.created_at < clock.oldest_created {
        Err(DisconnectReason::TokenExpired)
    } else if !lists {
        Err(DisconnectReason::TokenWrongServer)
    } else {
        Ok(())
    };
    Ok(Opened {
        ticket: Ticket {
            identity,
            protocol_id: public.protocol_id,
            tag,
            secrets,
        },
        verdict,
    })
}

/// What a pending peer's first packet is.
pub(crate) enum Request {
    /// A plain mf-net client's hello: it has no token at all.
    Plain,
    /// Garbage, or a token that does not open: no answer.
    Silent(Silent),
    /// A token that opened.
    Opened(Opened),
}

/// Reads a pending peer's first packet (see [`check`]).
pub(crate) fn check_request(
    config: &ServerConfig,
    addresses: &[String],
    clock: Clock,
    packet: &[u8],
    scratch: &mut Vec<u8>,
) -> Request {
    if is_plain_hello(packet) {
        return Request::Plain;
    }
    match check(config, addresses, clock, packet, scratch) {
        Ok(opened) => Request::Opened(opened),
        Err(silent) => Request::Silent(silent),
    }
}

/// Whether `packet` is an mf-net message header carrying the replication hello.
fn is_plain_hello(packet: &[u8]) -> bool {
    packet.len() >= mf_net::bus::MessageHeader::SIZE
        && packet.get(1..3) == Some(&HELLO.to_le_bytes()[..])
}
