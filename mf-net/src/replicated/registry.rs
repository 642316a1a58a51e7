//! The link-time registry of replicated types.
//!
//! Every `#[derive(Replicated)]` submits one [`RegisteredType`] to an [`inventory`] table at link
//! time. [`ReplicationRegistry`] reads that table once, sorts it by stable name (link order is
//! unspecified and differs between a server and a client binary), refuses two types with the
//! same stable name, and numbers the types `1..=n` in that order, so every build that links the
//! same replicated types agrees on their ids and on the registry's
//! [`fingerprint`](ReplicationRegistry::fingerprint).
//!
//! ```
//! use mf_net::prelude::*;
//! use mf_net::replication::ReplicationRegistry;
//!
//! #[derive(Replicated, Default)]
//! struct Door {
//!     #[replicated]
//!     open: bool,
//! }
//!
//! let registry = ReplicationRegistry::global();
//! let id = registry.id_of::<Door>().unwrap();
//! assert_eq!(registry.get(id).unwrap().name(), "Door");
//! assert!(registry.dump().contains("open: bool"));
//! ```

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::num::NonZeroU16;
use std::sync::OnceLock;

use super::{MemberCondition, RegisteredType, Replicated};
use crate::schema;

/// A replicated type's number in a [`ReplicationRegistry`]: its position in stable-name order,
/// counting from 1 (so that 0 can mean "no type" on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicatedTypeId(NonZeroU16);

impl ReplicatedTypeId {
    /// The id with number `id`; `None` for 0.
    pub const fn new(id: u16) -> Option<Self> {
        match NonZeroU16::new(id) {
            Some(id) => Some(Self(id)),
            None => None,
        }
    }

    /// The number (1 or more).
    pub const fn get(self) -> u16 {
        self.0.get()
    }

    fn index(self) -> usize {
        usize::from(self.0.get()) - 1
    }
}

impl fmt::Display for ReplicatedTypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Why the table of replicated types cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplicationRegistryError {
    /// Two types have the same stable name.
    DuplicateName {
        /// The stable name they share.
        name: &'static str,
        /// One of the Rust types ([`std::any::type_name`]).
        first: &'static str,
        /// The other.
        second: &'static str,
    },
    /// More types than [`ReplicationRegistry::MAX_TYPES`].
    TooManyTypes {
        /// How many there are.
        count: usize,
    },
}

impl fmt::Display for ReplicationRegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateName {
                name,
                first,
                second,
            } => write!(
                f,
                "two replicated types have the stable name `{name}`: `{first}` and `{second}`; \
                 give one of them another with `#[replicated(name = \"...\")]`"
            ),
            Self::TooManyTypes { count } => write!(
                f,
                "{count} replicated types are linked, more than the {} a registry numbers",
                ReplicationRegistry::MAX_TYPES
            ),
        }
    }
}

impl std::error::Error for ReplicationRegistryError {}

/// Every replicated type linked into the program, sorted by stable name and numbered from 1.
///
/// Built once, usually through [`global`](Self::global); lookups do not allocate.
#[derive(Debug)]
pub struct ReplicationRegistry {
    /// Sorted by name; the type with id `n` is at index `n - 1`.
    types: Vec<&'static RegisteredType>,
    by_type: HashMap<TypeId, ReplicatedTypeId>,
    fingerprint: u64,
}

impl ReplicationRegistry {
    /// How many types a registry numbers at most: their numbers fit 15 bits (the server keeps
    /// a flag of its own beside a node's type number).
    pub const MAX_TYPES: usize = 0x7FFF;

    /// The registry of every type submitted by `#[derive(Replicated)]` in the linked program.
    pub fn from_inventory() -> Result<Self, ReplicationRegistryError> {
        Self::from_types(RegisteredType::linked())
    }

    /// The registry of `types` (any order): sorted by stable name, duplicates refused.
    ///
    /// [`from_inventory`](Self::from_inventory) is this over the link-time table; tests and
    /// tools can pass their own list.
    pub fn from_types(
        types: impl IntoIterator<Item = &'static RegisteredType>,
    ) -> Result<Self, ReplicationRegistryError> {
        let mut types: Vec<&'static RegisteredType> = types.into_iter().collect();
        types.sort_by(|a, b| {
            a.name()
                .cmp(b.name())
                .then(a.rust_name().cmp(b.rust_name()))
        });
        if let Some(pair) = types.windows(2).find(|w| w[0].name() == w[1].name()) {
            return Err(ReplicationRegistryError::DuplicateName {
                name: pair[0].name(),
                first: pair[0].rust_name(),
                second: pair[1].rust_name(),
            });
        }
        if types.len() > Self::MAX_TYPES {
            return Err(ReplicationRegistryError::TooManyTypes { count: types.len() });
        }
        let mut by_type = HashMap::with_capacity(types.len());
        let mut fingerprint = schema::hash_u64(schema::FNV_OFFSET, types.len() as u64);
        for (index, ty) in types.iter().enumerate() {
            let id = u16::try_from(index + 1)
                .ok()
                .and_then(ReplicatedTypeId::new)
                .ok_or(ReplicationRegistryError::TooManyTypes { count: types.len() })?;
            // Not `ty.type_id()`: on a `&&RegisteredType` that could resolve to
            // `Any::type_id` of the reference wherever `Any` is in scope.
            by_type.insert(RegisteredType::type_id(ty), id);
            fingerprint = schema::hash_str(fingerprint, ty.name());
            fingerprint = schema::hash_u64(fingerprint, ty.schema_hash());
        }
        Ok(Self {
            types,
            by_type,
            fingerprint,
        })
    }

    /// The registry of the linked program, built on first use and kept for its lifetime.
    ///
    /// # Panics
    ///
    /// On first use, if two linked types have the same stable name (the message names both
    /// Rust types). That is a mistake in the program's declarations, found by the first test
    /// that touches replication; use [`from_inventory`](Self::from_inventory) to handle it as
    /// an error instead.
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<ReplicationRegistry> = OnceLock::new();
        GLOBAL.get_or_init(|| Self::from_inventory().unwrap_or_else(|error| panic!("{error}")))
    }

    /// How many types there are.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether no type is registered.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Every type with its id, in id (stable-name) order.
    pub fn iter(
        &self,
    ) -> impl ExactSizeIterator<Item = (ReplicatedTypeId, &'static RegisteredType)> + '_ {
        self.types.iter().enumerate().map(|(index, ty)| {
            // `from_types` refused more types than ids, so every index + 1 fits.
            let id = u16::try_from(index + 1)
                .ok()
                .and_then(ReplicatedTypeId::new)
                .unwrap_or(ReplicatedTypeId(NonZeroU16::MAX));
            (id, *ty)
        })
    }

    /// The type with id `id`.
    pub fn get(&self, id: ReplicatedTypeId) -> Option<&'static RegisteredType> {
        self.types.get(id.index()).copied()
    }

    /// The id of the Rust type `T`, if it is registered.
    pub fn id_of<T: Replicated>(&self) -> Option<ReplicatedTypeId> {
        self.id_of_type_id(TypeId::of::<T>())
    }

    /// The id of the Rust type with [`TypeId`] `type_id`, if it is registered.
    pub fn id_of_type_id(&self, type_id: TypeId) -> Option<ReplicatedTypeId> {
        self.by_type.get(&type_id).copied()
    }

    /// The type with stable name `name`, with its id.
    pub fn by_name(&self, name: &str) -> Option<(ReplicatedTypeId, &'static RegisteredType)> {
        let index = self.types.binary_search_by(|ty| ty.name().cmp(name)).ok()?;
        let id = ReplicatedTypeId::new(u16::try_from(index + 1).ok()?)?;
        Some((id, self.types[index]))
    }

    /// A hash of every type's stable name and schema hash, in id order: two programs with the
    /// same fingerprint number the same types the same way and agree on their wire shapes.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// A human-readable listing of every type, its id, schema hash and members, for debugging
    /// fingerprint mismatches.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        // Writing to a `String` cannot fail.
        let _ = writeln!(
            out,
            "{} replicated types, fingerprint {:#018x}",
            self.len(),
            self.fingerprint
        );
        for (id, ty) in self.iter() {
            let _ = writeln!(
                out,
                "{id} {} ({}) schema {:#018x}, {} state(s)",
                ty.name(),
                ty.rust_name(),
                ty.schema_hash(),
                ty.state_count()
            );
            for (bit, member) in ty.members().iter().enumerate() {
                let _ = write!(
                    out,
                    "    {bit:>2} {}: {} (schema {:#018x})",
                    member.name, member.type_name, member.schema_hash,
                );
                if member.interpolate {
                    out.push_str(", interpolate");
                }
                match member.condition {
                    MemberCondition::Always => {}
                    MemberCondition::OwnerOnly => out.push_str(", owner_only"),
                    MemberCondition::SkipOwner => out.push_str(", skip_owner"),
                }
                if member.initial_only {
                    out.push_str(", initial_only");
                }
                if let Some(hook) = member.on_change {
                    let _ = write!(out, ", on_change = {hook}");
                }
                if let Some(q) = member.quantize.filter(|q| q.is_smallest_three()) {
                    let _ = write!(out, ", quantize(smallest_three, bits = {})", q.bits());
                } else if let Some(q) = member.quantize {
                    let _ = write!(
                        out,
                        ", quantize(min = {:?}, max = {:?}, bits = {})",
                        q.min(),
                        q.max(),
                        q.bits()
                    );
                }
                out.push('\n');
            }
        }
        out
    }
}
