//! [`Replication`]: the state machine's data, the state both halves share and the half that runs
//! ([`Role`]); its behaviour is in `machine.rs`.

use crate::refs::NetIdMap;
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

impl Role {
    /// The net ids of this side's networked nodes, which node references travel as.
    pub(crate) fn net_ids(&self) -> &NetIdMap {
        match self {
            Role::Server(server) => &server.by_node,
            Role::Client(client) => &client.by_node,
        }
    }
}

/// The replication state machine (see the [module documentation](self)).
pub(crate) struct Replication {
    pub(crate) shared: Shared,
    pub(crate) role: Role,
    /// The server half a client session took the place of, if it had run: the server half
    /// after the session goes on from its tick and net ids (see
    /// [`go_offline`](Self::go_offline)).
    pub(crate) before_client: Option<Box<ServerState>>,
}
