//! [`RegisteredType`]: the link-time entry of one replicated type.
//!
//! Every `#[derive(Replicated)]` submits one to an [`inventory`] table;
//! [`ReplicationRegistry`](crate::replication::ReplicationRegistry) reads that table once. The
//! scene's columns and the runtime refer to a type's entry as `&'static`, never copying it. The
//! entry also carries the runtime's typed parts of the type (the makers of its columns), which
//! `#[derive(Replicated)]` adds with [`RegisteredType::with_runtime`].

use std::any::{Any, TypeId};
use std::fmt;

use super::{MemberInfo, Replicated};
use crate::codec::state_bits::StateLayout;

/// One replicated type as the registry sees it: the item that `#[derive(Replicated)]` submits to
/// the link-time table.
///
/// Build it with [`RegisteredType::of`]. Its fields are private so that later per-type tables
/// (the RPC table that `#[rpcs]` fills, for one) can be added without breaking anyone.
#[derive(Clone, Copy)]
pub struct RegisteredType {
    name: &'static str,
    schema_hash: u64,
    members: &'static [MemberInfo],
    layout: &'static StateLayout,
    state_count: usize,
    type_id: fn() -> TypeId,
    rust_name: fn() -> &'static str,
    on_change: bool,
    owner_conditions: bool,
    predicts: bool,
    runtime: Option<RuntimePart>,
}

/// A type's runtime part of a kind: what [`RegisteredType::runtime_part`] calls.
type RuntimePart = fn(TypeId) -> Option<&'static dyn Any>;

impl RegisteredType {
    /// The entry for `T`, from its [`Replicated`] constants.
    pub const fn of<T: Replicated>() -> Self {
        Self {
            name: T::NAME,
            schema_hash: T::SCHEMA_HASH,
            members: T::MEMBERS,
            layout: T::LAYOUT,
            state_count: T::STATE_COUNT,
            type_id: TypeId::of::<T>,
            rust_name: std::any::type_name::<T>,
            on_change: T::ON_CHANGE,
            owner_conditions: T::OWNER_CONDITIONS,
            predicts: T::PREDICTS,
            runtime: None,
        }
    }

    /// This entry with the runtime's typed parts of the type (what `#[derive(Replicated)]`
    /// submits): without them the runtime cannot network the type.
    #[doc(hidden)]
    pub const fn with_runtime(mut self, runtime: fn(TypeId) -> Option<&'static dyn Any>) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// The runtime's typed part of kind `kind` (the column maker one half of the runtime asks
    /// for), if the entry has the runtime's parts.
    pub(crate) fn runtime_part(&self, kind: TypeId) -> Option<&'static dyn Any> {
        self.runtime.and_then(|part| part(kind))
    }

    /// Every entry of the link-time table, in unspecified order (unsorted, duplicates
    /// included): what [`ReplicationRegistry::from_inventory`](crate::replication::ReplicationRegistry::from_inventory) reads.
    pub fn linked() -> impl Iterator<Item = &'static RegisteredType> {
        inventory::iter::<RegisteredType>.into_iter()
    }

    /// The stable name ([`Replicated::NAME`]).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// [`Replicated::SCHEMA_HASH`].
    pub fn schema_hash(&self) -> u64 {
        self.schema_hash
    }

    /// The type's own members, in declaration order ([`Replicated::MEMBERS`]).
    pub fn members(&self) -> &'static [MemberInfo] {
        self.members
    }

    /// How the type's states travel bit-packed ([`Replicated::LAYOUT`]).
    pub fn layout(&self) -> &'static StateLayout {
        self.layout
    }

    /// How many states the type writes ([`Replicated::STATE_COUNT`]).
    pub fn state_count(&self) -> usize {
        self.state_count
    }

    /// The Rust type's [`TypeId`].
    pub fn type_id(&self) -> TypeId {
        (self.type_id)()
    }

    /// The Rust type's path as [`std::any::type_name`] gives it: for messages only, it is not
    /// stable between compiler versions.
    pub fn rust_name(&self) -> &'static str {
        (self.rust_name)()
    }

    /// Whether the type (bases included) has `on_change` hooks ([`Replicated::ON_CHANGE`]):
    /// only then do clients record which members a read changed.
    pub fn has_on_change(&self) -> bool {
        self.on_change
    }

    /// Whether what a client receives of the type depends on whether it owns the node
    /// ([`Replicated::OWNER_CONDITIONS`]).
    pub fn has_owner_conditions(&self) -> bool {
        self.owner_conditions
    }

    /// Whether the type (bases included) has `#[replicated(predict)]` members
    /// ([`Replicated::PREDICTS`]): only then does the owning client simulate, check and
    /// correct it.
    pub fn predicts(&self) -> bool {
        self.predicts
    }
}

impl fmt::Debug for RegisteredType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredType")
            .field("name", &self.name)
            .field("rust_name", &self.rust_name())
            .field("schema_hash", &format_args!("{:#018x}", self.schema_hash))
            .field("members", &self.members)
            .field("state_count", &self.state_count)
            .finish()
    }
}

inventory::collect!(RegisteredType);
