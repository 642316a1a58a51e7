//! [`ClientIdentity`]: who an admitted client is, as its token says.

/// The client id and user data of an admitted connection, from the sealed part of its token:
/// the backend vouched for them, the client could not change them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    client_id: u64,
    user_data: Vec<u8>,
}

impl ClientIdentity {
    pub(crate) fn new(client_id: u64, user_data: &[u8]) -> Self {
        Self {
            client_id,
            user_data: user_data.to_vec(),
        }
    }

    /// The id the backend gave the player (an account id, for example).
    pub fn client_id(&self) -> u64 {
        self.client_id
    }

    /// The user data the backend put in the token (at most
    /// [`MAX_USER_DATA`](crate::MAX_USER_DATA) bytes; its format is the game's).
    pub fn user_data(&self) -> &[u8] {
        &self.user_data
    }
}
