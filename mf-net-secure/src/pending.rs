//! [`Pending`]: a peer connected on the inner transport and not admitted yet, and where its
//! handshake is.

use std::time::Duration;

use mf_net::transport::PeerId;

use crate::admission::Ticket;
use crate::session::Session;
use crate::used::TokenTag;
use crate::wire::SALT_LEN;

/// A peer connected on the inner transport, not admitted yet.
pub(crate) struct Pending {
    pub(crate) peer: PeerId,
    pub(crate) connect_data: u32,
    pub(crate) since: Duration,
    pub(crate) stage: Stage,
}

/// Where a pending peer's handshake is.
pub(crate) enum Stage {
    /// Connected; its request has not come.
    AwaitingRequest,
    /// Its token opened and it was sent a challenge.
    Challenged(Box<Challenged>),
}

/// A peer whose token opened: its ticket and the connection's session.
pub(crate) struct Challenged {
    pub(crate) ticket: Ticket,
    pub(crate) session: Session,
    /// The server's salt for this connection (sent in clear with the challenge).
    pub(crate) salt: [u8; SALT_LEN],
}

/// A challenged peer's token, when it connected, and where it is in the pending list.
pub(crate) type Presented = (TokenTag, Duration, usize);
