//! [`Replication`]: the state machine's data, the state both halves share and the half that runs
//! ([`Role`]); its behaviour is in `machine.rs`.

use crate::replication::client::state::ClientState;
use crate::replication::server::state::ServerState;
use crate::replication::shared::state::Shared;

/// Which half runs.
// One per `Multiplayer`, replaced only when the role changes: its size costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Role {
    /// Server (or offline).
    Server(ServerState),
    /// Client.
    Client(ClientState),
}

/// The replication state machine (see the [module documentation](self)).
pub(crate) struct Replication {
    pub(crate) shared: Shared,
    pub(crate) role: Role,
}
