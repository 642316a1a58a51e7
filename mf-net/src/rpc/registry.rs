//! The RPC tables of replicated types, joined at start-up from two link-time tables.
//!
//! `#[rpcs]` submits one [`RpcRegistration`] per type (its own RPCs), and
//! `#[derive(Replicated)]` submits one [`FlattenedBases`] per type that has
//! `#[replicated(flatten)]` bases. Neither macro sees the other's input, so the wire order is
//! made here: [`RpcRegistry`] walks each type's bases (recursively, in field order) and builds
//! its [`RpcTable`] — the bases' RPCs first, then the type's own in declaration order — in the
//! type-id order of a [`ReplicationRegistry`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::OnceLock;

use smallvec::SmallVec;

use super::{RpcCallError, RpcContext, RpcInfo, Rpcs};
use crate::replicated::registry::{ReplicatedTypeId, ReplicationRegistry};
use crate::schema;
use crate::wire::NetReader;

/// A type's own RPCs: the item that `#[rpcs]` submits to the link-time table.
#[derive(Clone, Copy)]
pub struct RpcRegistration {
    type_id: fn() -> TypeId,
    rust_name: fn() -> &'static str,
    rpcs: &'static [RpcInfo],
}

impl RpcRegistration {
    /// The entry for `T`, from its [`Rpcs::RPCS`].
    pub const fn of<T: Rpcs>() -> Self {
        Self {
            type_id: TypeId::of::<T>,
            rust_name: std::any::type_name::<T>,
            rpcs: T::RPCS,
        }
    }

    /// Every entry of the link-time table, in unspecified order.
    pub fn linked() -> impl Iterator<Item = &'static RpcRegistration> {
        inventory::iter::<RpcRegistration>.into_iter()
    }

    /// The declaring type's [`TypeId`].
    pub fn type_id(&self) -> TypeId {
        (self.type_id)()
    }

    /// The declaring type's Rust path (for messages only).
    pub fn rust_name(&self) -> &'static str {
        (self.rust_name)()
    }

    /// Its RPCs, in declaration order.
    pub fn rpcs(&self) -> &'static [RpcInfo] {
        self.rpcs
    }
}

impl fmt::Debug for RpcRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcRegistration")
            .field("type", &self.rust_name())
            .field("rpcs", &self.rpcs)
            .finish()
    }
}

inventory::collect!(RpcRegistration);

/// Takes a flattened base out of a value of the outer type: `Some(&mut outer.base)`, or `None`
/// if the value is not of the outer type.
pub type BaseProjection = fn(&mut dyn Any) -> Option<&mut dyn Any>;

/// One `#[replicated(flatten)]` field, as [`FlattenedBases`] lists it.
#[derive(Clone, Copy)]
pub struct BaseInfo {
    /// The field's name.
    pub field: &'static str,
    /// The base type's [`TypeId`].
    pub type_id: fn() -> TypeId,
    /// The field, from a value of the outer type.
    pub get_mut: BaseProjection,
}

impl fmt::Debug for BaseInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BaseInfo")
            .field("field", &self.field)
            .finish_non_exhaustive()
    }
}

/// A replicated type's flattened bases, in field order: the item that `#[derive(Replicated)]`
/// submits for each type with `#[replicated(flatten)]` fields.
#[derive(Clone, Copy, Debug)]
pub struct FlattenedBases {
    type_id: fn() -> TypeId,
    bases: &'static [BaseInfo],
}

impl FlattenedBases {
    /// The bases of the type with [`TypeId`] `type_id`.
    pub const fn new(type_id: fn() -> TypeId, bases: &'static [BaseInfo]) -> Self {
        Self { type_id, bases }
    }

    /// Every entry of the link-time table, in unspecified order.
    pub fn linked() -> impl Iterator<Item = &'static FlattenedBases> {
        inventory::iter::<FlattenedBases>.into_iter()
    }

    /// The outer type's [`TypeId`].
    pub fn type_id(&self) -> TypeId {
        (self.type_id)()
    }

    /// Its bases, in field order.
    pub fn bases(&self) -> &'static [BaseInfo] {
        self.bases
    }
}

inventory::collect!(FlattenedBases);

/// One RPC of a node type, at its wire id.
#[derive(Clone)]
pub struct RpcEntry {
    wire_id: u16,
    info: &'static RpcInfo,
    declaring_type: TypeId,
    declaring_name: &'static str,
    own_index: u16,
    /// Projections from the node's value down to the declaring type's part, outermost first.
    path: SmallVec<[BaseProjection; 2]>,
    /// The flattened fields along `path`, joined with `.` (empty for the type's own RPCs).
    via: String,
}

impl RpcEntry {
    /// The RPC's id on the wire within its node type.
    pub fn wire_id(&self) -> u16 {
        self.wire_id
    }

    /// The RPC.
    pub fn info(&self) -> &'static RpcInfo {
        self.info
    }

    /// The type that declares it (the node's type, or a flattened base).
    pub fn declaring_type(&self) -> TypeId {
        self.declaring_type
    }

    /// The declaring type's stable name.
    pub fn declaring_name(&self) -> &'static str {
        self.declaring_name
    }

    /// Its index in the declaring type's [`Rpcs::RPCS`].
    pub fn own_index(&self) -> u16 {
        self.own_index
    }

    /// The flattened fields leading to the declaring type, joined with `.` (`""` for the node
    /// type's own RPCs).
    pub fn via(&self) -> &str {
        &self.via
    }

    /// The part of `value` (a value of the node type) that the RPC runs on: `value` itself, or
    /// the flattened base that declares it. `None` if `value` is not of the node type.
    pub fn project<'v>(&self, value: &'v mut dyn Any) -> Option<&'v mut dyn Any> {
        let mut value = value;
        for step in &self.path {
            value = step(value)?;
        }
        Some(value)
    }

    /// Runs the RPC on `value` (a value of the node type): [`project`](Self::project) then
    /// [`RpcInfo::dispatch`]. Panics are not caught; see
    /// [`call_catching`](super::call_catching).
    pub fn dispatch(
        &self,
        value: &mut dyn Any,
        ctx: &mut RpcContext,
        args: &mut NetReader<'_>,
    ) -> Result<(), RpcCallError> {
        let value = self.project(value).ok_or(RpcCallError::WrongType)?;
        (self.info.dispatch)(value, ctx, args)
    }
}

impl fmt::Debug for RpcEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcEntry")
            .field("wire_id", &self.wire_id)
            .field("declaring", &self.declaring_name)
            .field("own_index", &self.own_index)
            .field("via", &self.via)
            .field("info", self.info)
            .finish()
    }
}

impl fmt::Display for RpcEntry {
    /// `wire_id Declaring::name(params) mode, options[ (via field)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>3} {}::{}",
            self.wire_id, self.declaring_name, self.info
        )?;
        if !self.via.is_empty() {
            write!(f, " (via {})", self.via)?;
        }
        Ok(())
    }
}

/// The RPCs of one node type in wire-id order: the flattened bases' RPCs first (recursively, in
/// field order), then the type's own, in declaration order.
#[derive(Debug, Clone, Default)]
pub struct RpcTable {
    entries: Vec<RpcEntry>,
    signature_hash: u64,
}

impl RpcTable {
    /// The RPC with wire id `wire_id`.
    pub fn get(&self, wire_id: u16) -> Option<&RpcEntry> {
        self.entries.get(usize::from(wire_id))
    }

    /// The RPC declared by `declaring_type` at own index `own_index`: how a sink maps what a
    /// generated sender passes ([`OutgoingRpc`](super::OutgoingRpc)) to a wire id. If the type
    /// flattens the same base more than once, the first occurrence. A linear search (tables are
    /// short); no allocation.
    pub fn find(&self, declaring_type: TypeId, own_index: u16) -> Option<&RpcEntry> {
        self.entries
            .iter()
            .find(|e| e.declaring_type == declaring_type && e.own_index == own_index)
    }

    /// Every RPC, in wire-id order.
    pub fn entries(&self) -> &[RpcEntry] {
        &self.entries
    }

    /// How many RPCs the type has, bases included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A hash of every RPC's declaring type and [`RpcInfo::signature_hash`], in wire order:
    /// fold it into anything that fingerprints the node type.
    pub fn signature_hash(&self) -> u64 {
        self.signature_hash
    }
}

/// Why the RPC tables cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RpcRegistryError {
    /// Two registrations for one type (only possible with hand-made lists: a second `#[rpcs]`
    /// block is a compile error).
    DuplicateRegistration {
        /// The type's Rust path.
        rust_name: &'static str,
    },
    /// A type has more RPCs, bases included, than a `u16` wire id can number.
    TooManyRpcs {
        /// The type's stable name.
        name: &'static str,
        /// How many it has.
        count: usize,
    },
}

impl fmt::Display for RpcRegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateRegistration { rust_name } => {
                write!(f, "the RPCs of `{rust_name}` are registered twice")
            }
            Self::TooManyRpcs { name, count } => write!(
                f,
                "`{name}` has {count} RPCs with its flattened bases, more than the {} a wire id \
                 can number",
                u16::MAX
            ),
        }
    }
}

impl std::error::Error for RpcRegistryError {}

/// The [`RpcTable`] of every type of a [`ReplicationRegistry`], indexed like it, with a
/// fingerprint of every RPC signature.
///
/// Built once at start (allocates); lookups do not allocate.
#[derive(Debug)]
pub struct RpcRegistry {
    /// The table of type id `n` is at index `n - 1`.
    tables: Vec<RpcTable>,
    by_type: HashMap<TypeId, usize>,
    names: Vec<&'static str>,
    fingerprint: u64,
}

impl RpcRegistry {
    /// The tables of `types`, from the link-time tables of `#[rpcs]` and
    /// `#[derive(Replicated)]`.
    ///
    /// # Errors
    ///
    /// See [`RpcRegistryError`].
    pub fn from_inventory(types: &ReplicationRegistry) -> Result<Self, RpcRegistryError> {
        Self::from_parts(types, RpcRegistration::linked(), FlattenedBases::linked())
    }

    /// The tables of `types` from the given registrations (any order). Registrations of types
    /// that `types` does not hold are ignored, as are their bases.
    ///
    /// # Errors
    ///
    /// See [`RpcRegistryError`].
    pub fn from_parts<'r>(
        types: &ReplicationRegistry,
        rpcs: impl IntoIterator<Item = &'r RpcRegistration>,
        bases: impl IntoIterator<Item = &'r FlattenedBases>,
    ) -> Result<Self, RpcRegistryError> {
        let mut own: HashMap<TypeId, &RpcRegistration> = HashMap::new();
        for registration in rpcs {
            if own.insert(registration.type_id(), registration).is_some() {
                return Err(RpcRegistryError::DuplicateRegistration {
                    rust_name: registration.rust_name(),
                });
            }
        }
        let bases: HashMap<TypeId, &'static [BaseInfo]> =
            bases.into_iter().map(|b| (b.type_id(), b.bases)).collect();
        let names: HashMap<TypeId, &'static str> = types
            .iter()
            .map(|(_, ty)| (ty.type_id(), ty.name()))
            .collect();
        let join = Join {
            own: &own,
            bases: &bases,
            names: &names,
        };

        let mut tables = Vec::with_capacity(types.len());
        let mut by_type = HashMap::with_capacity(types.len());
        let mut type_names = Vec::with_capacity(types.len());
        let mut fingerprint = schema::hash_u64(schema::FNV_OFFSET, types.len() as u64);
        for (index, (_, ty)) in types.iter().enumerate() {
            let mut entries = Vec::new();
            join.collect(ty.type_id(), &mut SmallVec::new(), "", &mut entries);
            let mut signature_hash = schema::hash_u64(schema::FNV_OFFSET, entries.len() as u64);
            for (wire_id, entry) in entries.iter_mut().enumerate() {
                entry.wire_id =
                    u16::try_from(wire_id).map_err(|_| RpcRegistryError::TooManyRpcs {
                        name: ty.name(),
                        count: wire_id + 1,
                    })?;
                signature_hash = schema::hash_str(signature_hash, entry.declaring_name);
                signature_hash = schema::hash_u64(signature_hash, entry.info.signature_hash());
            }
            fingerprint = schema::hash_str(fingerprint, ty.name());
            fingerprint = schema::hash_u64(fingerprint, signature_hash);
            by_type.insert(ty.type_id(), index);
            type_names.push(ty.name());
            tables.push(RpcTable {
                entries,
                signature_hash,
            });
        }
        Ok(Self {
            tables,
            by_type,
            names: type_names,
            fingerprint,
        })
    }

    /// The tables of [`ReplicationRegistry::global`], built on first use.
    ///
    /// # Panics
    ///
    /// On first use, if [`ReplicationRegistry::global`] panics, or a type has more than
    /// 65 535 RPCs.
    pub fn global() -> &'static Self {
        static GLOBAL: OnceLock<RpcRegistry> = OnceLock::new();
        GLOBAL.get_or_init(|| {
            Self::from_inventory(ReplicationRegistry::global())
                .unwrap_or_else(|error| panic!("{error}"))
        })
    }

    /// The table of the type with id `id` (empty for a type without RPCs); `None` if the
    /// registry has no such type.
    pub fn table(&self, id: ReplicatedTypeId) -> Option<&RpcTable> {
        self.tables.get(usize::from(id.get()) - 1)
    }

    /// The table of the type with stable name `name` (a linear search, for start-up).
    pub fn table_named(&self, name: &str) -> Option<&RpcTable> {
        let index = self.names.iter().position(|n| *n == name)?;
        self.tables.get(index)
    }

    /// The table of the Rust type with [`TypeId`] `type_id`.
    pub fn table_of(&self, type_id: TypeId) -> Option<&RpcTable> {
        self.tables.get(*self.by_type.get(&type_id)?)
    }

    /// A hash of every type's stable name and [`RpcTable::signature_hash`], in type-id order:
    /// two programs with the same fingerprint agree on every RPC's wire id, mode, channel and
    /// argument types. The replication handshake folds it into its fingerprint.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// A listing of every type that has RPCs, with each RPC's wire id, declaring type,
    /// parameters, mode and options, for debugging fingerprint mismatches.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        let with_rpcs = self.tables.iter().filter(|t| !t.is_empty()).count();
        // Writing to a `String` cannot fail.
        let _ = writeln!(
            out,
            "{with_rpcs} types with RPCs, fingerprint {:#018x}",
            self.fingerprint
        );
        for (index, (table, name)) in self.tables.iter().zip(&self.names).enumerate() {
            if table.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "#{} {name}: {} RPC(s), signatures {:#018x}",
                index + 1,
                table.len(),
                table.signature_hash
            );
            for entry in &table.entries {
                let _ = writeln!(out, "    {entry}");
            }
        }
        out
    }
}

/// The lookups the join walks.
struct Join<'j> {
    own: &'j HashMap<TypeId, &'j RpcRegistration>,
    bases: &'j HashMap<TypeId, &'static [BaseInfo]>,
    names: &'j HashMap<TypeId, &'static str>,
}

impl Join<'_> {
    /// Appends the RPCs of `ty` (reached through `path`, the fields `via`) in wire order.
    /// Recursion ends because a type cannot contain itself.
    fn collect(
        &self,
        ty: TypeId,
        path: &mut SmallVec<[BaseProjection; 2]>,
        via: &str,
        out: &mut Vec<RpcEntry>,
    ) {
        for base in self.bases.get(&ty).copied().unwrap_or_default() {
            path.push(base.get_mut);
            let via = if via.is_empty() {
                base.field.to_owned()
            } else {
                format!("{via}.{}", base.field)
            };
            self.collect((base.type_id)(), path, &via, out);
            path.pop();
        }
        let Some(registration) = self.own.get(&ty) else {
            return;
        };
        let name = self
            .names
            .get(&ty)
            .copied()
            .unwrap_or_else(|| registration.rust_name());
        for (own_index, info) in registration.rpcs.iter().enumerate() {
            out.push(RpcEntry {
                wire_id: 0,
                info,
                declaring_type: ty,
                declaring_name: name,
                own_index: u16::try_from(own_index).unwrap_or(u16::MAX),
                path: path.clone(),
                via: via.to_owned(),
            });
        }
    }
}
