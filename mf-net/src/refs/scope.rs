//! The scope in which a runtime lends its [`NetIdMap`] to reference codecs: a thread-local
//! set for the duration of one encode or decode (one RPC's arguments, one tick's snapshots),
//! restored when it ends, even by a panic.

use std::any::TypeId;
use std::cell::RefCell;
use std::mem;

use super::NetIdMap;
use crate::store::NodeId;
use crate::wire::DecodeError;

/// What a decoded reference to a net id the receiver has no node for becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Resolve {
    /// An RPC argument: it arrives unresolved.
    #[default]
    Argument,
    /// A replicated member: it keeps its previous value. Every net id named is recorded for
    /// the state being read ([`take_named`]).
    Member,
    /// Ids are recorded, nothing is resolved (the server reads a client's call once this way,
    /// to check the ids before the call runs).
    Record,
}

#[derive(Default)]
struct Scope {
    map: Option<NetIdMap>,
    resolve: Resolve,
    /// Whether the reference decoded last was held back (taken by [`held`]).
    held_last: bool,
    /// Whether a reference was held back since [`take_named`] last asked.
    held_entry: bool,
    recorded: Vec<u32>,
    /// While [`asked`] runs: every node a reference was encoded to.
    asked: Option<Vec<NodeId>>,
}

thread_local! {
    static SCOPE: RefCell<Scope> = RefCell::new(Scope::default());
    /// The net ids named since [`take_named`] last asked ([`Resolve::Member`]); kept across
    /// scopes, so that its capacity is.
    static NAMED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Puts the outer scope back when the inner one ends.
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(outer) = self.0.take() {
            SCOPE.with(|s| *s.borrow_mut() = outer);
        }
    }
}

fn enter(map: Option<&NetIdMap>, resolve: Resolve, recorded: Vec<u32>) -> Restore {
    let inner = Scope {
        map: map.cloned(),
        resolve,
        held_last: false,
        held_entry: false,
        recorded,
        asked: None,
    };
    Restore(Some(
        SCOPE.with(|s| mem::replace(&mut *s.borrow_mut(), inner)),
    ))
}

fn leave(mut restore: Restore) -> Scope {
    let outer = restore.0.take().unwrap_or_default();
    SCOPE.with(|s| mem::replace(&mut *s.borrow_mut(), outer))
}

/// Runs `f` with `map` lent to the reference codecs (none: every reference encodes and decodes
/// as unresolved), decoding as `resolve` says.
pub(crate) fn with_scope<R>(map: Option<&NetIdMap>, resolve: Resolve, f: impl FnOnce() -> R) -> R {
    let restore = enter(map, resolve, Vec::new());
    let value = f();
    leave(restore);
    value
}

/// Runs `f` recording every net id a reference decodes ([`Resolve::Record`]) into
/// `recorded` (cleared first; its capacity is kept, so a warm vector allocates nothing).
pub(crate) fn record<R>(recorded: &mut Vec<u32>, f: impl FnOnce() -> R) -> R {
    recorded.clear();
    let restore = enter(None, Resolve::Record, mem::take(recorded));
    let value = f();
    *recorded = leave(restore).recorded;
    value
}

/// Runs `f` in the scope running, noting into `asked` (cleared first; its capacity is kept)
/// every node a reference is encoded to meanwhile, networked or not.
pub(crate) fn asked<R>(asked: &mut Vec<NodeId>, f: impl FnOnce() -> R) -> R {
    asked.clear();
    let list = mem::take(asked);
    SCOPE.with(|s| s.borrow_mut().asked = Some(list));
    let value = f();
    *asked = SCOPE
        .with(|s| s.borrow_mut().asked.take())
        .unwrap_or_default();
    value
}

/// The net id a reference to `node` encodes as: its net id in the lent map, or 0 (none) when
/// the node is not networked or no map is lent.
pub(crate) fn encode(node: NodeId) -> u32 {
    SCOPE.with(|s| {
        let mut s = s.borrow_mut();
        if let Some(asked) = &mut s.asked {
            asked.push(node);
        }
        s.map.as_ref().and_then(|m| m.encode(node)).unwrap_or(0)
    })
}

/// The node a decoded reference to `net_id` names, for a value of type `ty` (`None`: of any
/// type): `None` for an unresolved reference (0, no map, an id the receiver has no node for).
///
/// # Errors
///
/// [`DecodeError::BadReference`]: the node holds a value of another type, or none.
pub(crate) fn decode(net_id: u32, ty: Option<TypeId>) -> Result<Option<NodeId>, DecodeError> {
    if net_id == 0 {
        return Ok(None);
    }
    SCOPE.with(|s| {
        let mut s = s.borrow_mut();
        if s.resolve == Resolve::Record {
            s.recorded.push(net_id);
            return Ok(None);
        }
        let found = s.map.as_ref().and_then(|m| m.node_of(net_id));
        if s.resolve == Resolve::Member {
            NAMED.with(|named| named.borrow_mut().push(net_id));
        }
        match found {
            Some((node, Some(found))) if ty.map_or(true, |ty| found == ty) => Ok(Some(node)),
            Some(_) => Err(DecodeError::BadReference),
            None if s.map.is_some() && s.resolve == Resolve::Member => {
                s.held_last = true;
                s.held_entry = true;
                Ok(None)
            }
            None => Ok(None),
        }
    })
}

/// Whether a reference decoded since the last call was held back: the member that holds it
/// keeps its previous value. Generated `read` code asks after each member that can hold
/// references.
pub(crate) fn held() -> bool {
    SCOPE.with(|s| mem::take(&mut s.borrow_mut().held_last))
}

/// The net ids the references read since the last call named (each passed to `each`), and
/// whether one of them held its member back ([`Resolve::Member`]). The client asks after each
/// state it reads of a type with node references: when a node it names arrives later (spawned,
/// or relevant again), the client asks the server to send the naming node's state again.
pub(crate) fn take_named(mut each: impl FnMut(u32)) -> bool {
    NAMED.with(|named| {
        let mut named = named.borrow_mut();
        for &id in named.iter() {
            each(id);
        }
        named.clear();
    });
    SCOPE.with(|s| mem::take(&mut s.borrow_mut().held_entry))
}
