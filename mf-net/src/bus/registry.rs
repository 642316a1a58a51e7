use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;

use crate::codec::NetCodec;
use crate::schema::{fold32, hash_str, hash_u64, FNV_OFFSET};

/// Size of the message id space; dispatch indexes a table by id.
pub const MAX_MESSAGES: u16 = 4096;
/// Ids kept for mf-net's own replication messages, at the top of the id space.
pub const RESERVED_MESSAGES: u16 = 16;
/// The first reserved id (4080). Game messages use ids below it.
pub const FIRST_RESERVED_ID: u16 = MAX_MESSAGES - RESERVED_MESSAGES;

/// One registered message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageInfo {
    /// Its id on the wire.
    pub id: u16,
    /// Its stable name ([`NetCodec::NAME`]).
    pub name: &'static str,
    /// Its schema hash ([`NetCodec::SCHEMA_HASH`]).
    pub schema_hash: u64,
}

/// Why a type could not be registered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The type is registered already, under `id`.
    AlreadyRegistered {
        /// The type's stable name.
        name: &'static str,
        /// The id it has.
        id: u16,
    },
    /// Another type holds the id.
    IdTaken {
        /// The id asked for.
        id: u16,
        /// The stable name of the type holding it.
        holder: &'static str,
    },
    /// The id is past the game range (at or above [`FIRST_RESERVED_ID`]), or no id is left.
    IdOutOfRange(u16),
    /// The type was never registered.
    NotRegistered(&'static str),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::AlreadyRegistered { name, id } => {
                write!(f, "message type `{name}` is already registered as id {id}")
            }
            RegistryError::IdTaken { id, holder } => {
                write!(f, "message id {id} is already taken by `{holder}`")
            }
            RegistryError::IdOutOfRange(id) => write!(
                f,
                "message id {id} is out of range: game messages use ids 0..{FIRST_RESERVED_ID}"
            ),
            RegistryError::NotRegistered(name) => write!(
                f,
                "message type `{name}` is not registered: call MessageRegistry::register first"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// Maps message types to wire ids, and fingerprints the result.
///
/// Both ends must register the same types in the same order (or with the same explicit ids)
/// under the same protocol version; the [`fingerprint`](Self::fingerprint) travels as the
/// transport's connect data, and a server refuses a client whose fingerprint differs.
///
/// ```
/// use mf_net::bus::MessageRegistry;
/// use mf_net::NetCodec;
///
/// #[derive(NetCodec)]
/// struct Chat { text: String }
///
/// let mut registry = MessageRegistry::new(1);
/// assert_eq!(registry.register::<Chat>().unwrap(), 0);
/// let same = registry.clone();
/// assert_eq!(registry.fingerprint(), same.fingerprint());
/// ```
#[derive(Debug, Clone)]
pub struct MessageRegistry {
    version: u8,
    by_type: HashMap<TypeId, u16>,
    by_id: Vec<Option<MessageInfo>>,
    next_id: u16,
}

impl MessageRegistry {
    /// An empty registry for `protocol_version`, which goes in every message header.
    pub fn new(protocol_version: u8) -> Self {
        Self {
            version: protocol_version,
            by_type: HashMap::new(),
            by_id: Vec::new(),
            next_id: 0,
        }
    }

    /// The protocol version written in every header.
    pub fn protocol_version(&self) -> u8 {
        self.version
    }

    /// Registers `M` under the lowest free game id and returns it.
    pub fn register<M: NetCodec + 'static>(&mut self) -> Result<u16, RegistryError> {
        while self.info(self.next_id).is_some() {
            self.next_id += 1;
        }
        self.register_with_id::<M>(self.next_id)
    }

    /// Registers `M` under `id`, which must be below [`FIRST_RESERVED_ID`] and free.
    pub fn register_with_id<M: NetCodec + 'static>(
        &mut self,
        id: u16,
    ) -> Result<u16, RegistryError> {
        if id >= FIRST_RESERVED_ID {
            return Err(RegistryError::IdOutOfRange(id));
        }
        self.insert::<M>(id)
    }

    /// Reserves id [`FIRST_RESERVED_ID`]` + slot` for one of mf-net's own messages, which has
    /// no Rust type (the replication layer encodes it by hand) but enters the fingerprint under
    /// `name` and `schema_hash`. Registering the same name at the same slot again is a no-op.
    pub(crate) fn register_reserved_raw(
        &mut self,
        slot: u16,
        name: &'static str,
        schema_hash: u64,
    ) -> Result<u16, RegistryError> {
        let id = FIRST_RESERVED_ID
            .checked_add(slot)
            .filter(|&id| id < MAX_MESSAGES)
            .ok_or(RegistryError::IdOutOfRange(
                FIRST_RESERVED_ID.saturating_add(slot),
            ))?;
        match self.info(id) {
            Some(info) if info.name == name && info.schema_hash == schema_hash => return Ok(id),
            Some(info) => {
                return Err(RegistryError::IdTaken {
                    id,
                    holder: info.name,
                })
            }
            None => {}
        }
        self.put(MessageInfo {
            id,
            name,
            schema_hash,
        });
        Ok(id)
    }

    /// Stores `info` under its id (which the caller has checked is free).
    fn put(&mut self, info: MessageInfo) {
        let index = usize::from(info.id);
        if self.by_id.len() <= index {
            self.by_id.resize(index + 1, None);
        }
        self.by_id[index] = Some(info);
    }

    fn insert<M: NetCodec + 'static>(&mut self, id: u16) -> Result<u16, RegistryError> {
        if let Some(&existing) = self.by_type.get(&TypeId::of::<M>()) {
            return Err(RegistryError::AlreadyRegistered {
                name: M::NAME,
                id: existing,
            });
        }
        if let Some(holder) = self.info(id) {
            return Err(RegistryError::IdTaken {
                id,
                holder: holder.name,
            });
        }
        self.put(MessageInfo {
            id,
            name: M::NAME,
            schema_hash: M::SCHEMA_HASH,
        });
        self.by_type.insert(TypeId::of::<M>(), id);
        Ok(id)
    }

    /// The id of `M`, if registered.
    #[inline]
    pub fn id_of<M: 'static>(&self) -> Option<u16> {
        self.by_type.get(&TypeId::of::<M>()).copied()
    }

    /// What is registered under `id`.
    #[inline]
    pub fn info(&self, id: u16) -> Option<&MessageInfo> {
        self.by_id.get(usize::from(id)).and_then(Option::as_ref)
    }

    /// Every registered message, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &MessageInfo> {
        self.by_id.iter().flatten()
    }

    /// A 32-bit hash of the protocol version and every registered type's id, stable name and
    /// schema hash. Equal on both ends exactly when they speak the same protocol.
    pub fn fingerprint(&self) -> u32 {
        let mut h = hash_u64(FNV_OFFSET, u64::from(self.version));
        for info in self.iter() {
            h = hash_u64(h, u64::from(info.id));
            h = hash_str(h, info.name);
            h = hash_u64(h, info.schema_hash);
        }
        fold32(h)
    }
}
