//! Connecting a client in one step: [`Multiplayer::start_client`](crate::replication::multiplayer::Multiplayer::start_client)
//! computes the connect data and hands it to the function that opens the transport, so no
//! other value can reach the server. [`IntoTransport`] lets that function return either the
//! transport or a `Result` of one.

use std::fmt;

use crate::bus::MessageRegistry;
use crate::replication::shared::config::MultiplayerError;
use crate::replication::shared::protocol;
use crate::transport::Transport;

/// What the function given to [`start_client`](crate::replication::multiplayer::Multiplayer::start_client) returns: a
/// transport (`LoopbackNetwork::connect`), or a `Result` of one (`EnetTransport::connect`,
/// whose error becomes [`MultiplayerError::Transport`]).
pub trait IntoTransport<T> {
    /// The transport, or why it could not be opened.
    ///
    /// # Errors
    ///
    /// [`MultiplayerError::Transport`] with the opening error's text.
    fn into_transport(self) -> Result<T, MultiplayerError>;
}

impl<T: Transport> IntoTransport<T> for T {
    fn into_transport(self) -> Result<T, MultiplayerError> {
        Ok(self)
    }
}

impl<T: Transport, E: fmt::Display> IntoTransport<T> for Result<T, E> {
    fn into_transport(self) -> Result<T, MultiplayerError> {
        self.map_err(|e| MultiplayerError::Transport(e.to_string()))
    }
}

/// The transport connect data of a client whose game messages are `messages`: the fingerprint
/// of `messages` once the replication messages are added to it.
///
/// A [`Multiplayer`](crate::replication::multiplayer::Multiplayer) client never needs this
/// ([`start_client`](crate::replication::multiplayer::Multiplayer::start_client) passes it to the transport); it is for a
/// bare [`MessageBus`](crate::bus::MessageBus) that talks to a `Multiplayer` server (tools,
/// tests of hostile clients).
///
/// # Errors
///
/// If a game message holds a reserved id.
pub fn connect_data(messages: &MessageRegistry) -> Result<u32, MultiplayerError> {
    let mut messages = messages.clone();
    protocol::prepare_registry(&mut messages)?;
    Ok(messages.fingerprint())
}
