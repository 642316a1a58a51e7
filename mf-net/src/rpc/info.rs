//! What `#[rpcs]` generates for each RPC: its [`RpcInfo`], and the [`Rpcs`] table of a type.

use std::any::Any;
use std::fmt;

use super::{RpcCallError, RpcContext};
use crate::schema;
use crate::transport::{Channel, PeerId};
use crate::wire::{DecodeError, NetReader};

/// Who may call an RPC, checked by the receiving side against the transport's sender.
///
/// Written as the first option of `#[rpc(..)]`: `server`, `authority` (the default) or
/// `any_peer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RpcMode {
    /// Only the server calls it (server → clients): `#[rpc(server)]`.
    Server,
    /// Only the node's authority calls it: the owning client for a client-owned node, the
    /// server for a server-owned one (`#[rpc]` or `#[rpc(authority)]`).
    #[default]
    Authority,
    /// Any peer calls it (`#[rpc(any_peer)]`). It says who may *call*, not that the call is
    /// safe: read [`RpcContext::sender`] and check it in the body or with `validate`.
    AnyPeer,
}

impl RpcMode {
    /// Whether `sender` may call an RPC of this mode on a node whose authority is `authority`.
    ///
    /// `sender` is always the transport's peer for the packet (never an id read from the
    /// payload); the server is [`PeerId::SERVER`].
    pub fn allows(self, sender: PeerId, authority: PeerId) -> bool {
        match self {
            RpcMode::Server => sender == PeerId::SERVER,
            RpcMode::Authority => sender == authority,
            RpcMode::AnyPeer => true,
        }
    }

    /// The option as written in `#[rpc(..)]`.
    pub fn as_str(self) -> &'static str {
        match self {
            RpcMode::Server => "server",
            RpcMode::Authority => "authority",
            RpcMode::AnyPeer => "any_peer",
        }
    }

    /// A stable number for fingerprints.
    pub(crate) fn code(self) -> u64 {
        match self {
            RpcMode::Server => 0,
            RpcMode::Authority => 1,
            RpcMode::AnyPeer => 2,
        }
    }
}

impl fmt::Display for RpcMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One parameter of an RPC (the `&RpcContext` parameter is not one: it is not sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpcParam {
    /// The parameter's name.
    pub name: &'static str,
    /// The stable name of its type ([`NetCodec::NAME`](crate::codec::NetCodec::NAME)).
    pub type_name: &'static str,
    /// The schema hash of its type.
    pub schema_hash: u64,
}

/// Reads an RPC's arguments without running it: see [`RpcInfo::read_args`].
pub type RpcReadArgs = fn(&mut NetReader<'_>) -> Result<(), DecodeError>;

/// Decodes an RPC's arguments from the reader and runs it on a value: see [`RpcInfo::dispatch`].
pub type RpcDispatch =
    fn(&mut dyn Any, &mut RpcContext, &mut NetReader<'_>) -> Result<(), RpcCallError>;

/// One RPC, as `#[rpcs]` generates it: its options, its parameters and its dispatcher.
///
/// A type's RPCs are its [`Rpcs::RPCS`], in declaration order; their position there is the RPC's
/// *own index*. Wire ids come from the [`RpcRegistry`](super::RpcRegistry), which puts the RPCs
/// of flattened bases first.
#[derive(Clone, Copy)]
pub struct RpcInfo {
    /// The method's name.
    pub name: &'static str,
    /// Who may call it.
    pub mode: RpcMode,
    /// `#[rpc(call_local)]`: the body also runs on the caller.
    pub call_local: bool,
    /// Sent on the reliable channel (the default), or on the unreliable one
    /// (`#[rpc(unreliable)]`).
    pub reliable: bool,
    /// `#[rpc(rate_limit = N)]`: at most `N` (1 or more) calls per second per connection, as the
    /// server counts them; `None` for no limit.
    pub rate_limit: Option<u32>,
    /// `#[rpc(validate = path)]`: the validating function's path as written (for listings).
    pub validate: Option<&'static str>,
    /// The sent parameters, in order: the arguments go on the wire in this order, each in its
    /// `NetCodec` encoding, with nothing before, between or after them.
    pub params: &'static [RpcParam],
    /// Decodes the arguments and runs the RPC on a value of the declaring type.
    ///
    /// In order: the value is downcast to the declaring type (else
    /// [`RpcCallError::WrongType`]); every argument is decoded, each read checked, and the
    /// reader must then be empty (else [`RpcCallError::Malformed`]: the reader must hold
    /// exactly the arguments); the `validate` function runs if there is one (`false` is
    /// [`RpcCallError::Rejected`]); the body runs, and an `Err(e)` it returns is
    /// [`RpcCallError::Failed`] with `e`'s `Display` text.
    ///
    /// A body that panics is **not** caught here: callers that take calls from the network run
    /// this through [`call_catching`](super::call_catching).
    pub dispatch: RpcDispatch,
    /// For an RPC with node references among its parameters
    /// ([`NetCodec::NODE_REFS`](crate::codec::NetCodec::NODE_REFS)), a function that reads
    /// the arguments (all of them, then the end) and drops them; `None` for the others. The
    /// server reads a client's call this way before running it, to check every node it names.
    pub read_args: Option<RpcReadArgs>,
}

impl RpcInfo {
    /// The channel the RPC is sent on.
    pub fn channel(&self) -> Channel {
        if self.reliable {
            Channel::Reliable
        } else {
            Channel::Unreliable
        }
    }

    /// A hash of what both ends must agree on: the name, the mode, the channel and every
    /// parameter's type schema hash, in order (parameter names, `call_local`, `rate_limit` and
    /// `validate` only change what one side does, so they are left out).
    pub fn signature_hash(&self) -> u64 {
        let mut h = schema::hash_name(self.name);
        h = schema::hash_u64(h, self.mode.code());
        h = schema::hash_u64(h, u64::from(self.reliable));
        h = schema::hash_u64(h, self.params.len() as u64);
        for param in self.params {
            h = schema::hash_u64(h, param.schema_hash);
        }
        h
    }
}

impl fmt::Debug for RpcInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RpcInfo")
            .field("name", &self.name)
            .field("mode", &self.mode)
            .field("call_local", &self.call_local)
            .field("reliable", &self.reliable)
            .field("rate_limit", &self.rate_limit)
            .field("validate", &self.validate)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RpcInfo {
    /// `name(param: Type, ..) mode[, call_local][, unreliable][, rate_limit = N][, validate = f]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        for (i, param) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}: {}", param.name, param.type_name)?;
        }
        write!(f, ") {}", self.mode)?;
        if self.call_local {
            f.write_str(", call_local")?;
        }
        if !self.reliable {
            f.write_str(", unreliable")?;
        }
        if let Some(limit) = self.rate_limit {
            write!(f, ", rate_limit = {limit}")?;
        }
        if let Some(validate) = self.validate {
            write!(f, ", validate = {validate}")?;
        }
        Ok(())
    }
}

/// A type with RPCs: implemented by `#[rpcs]` on an `impl` block of a `Replicated` type.
///
/// A type has at most one `#[rpcs]` block (a second one is a conflicting implementation of this
/// trait), so its RPCs and their order are fixed by one declaration.
pub trait Rpcs: 'static {
    /// The type's own RPCs, in declaration order (not those of flattened bases).
    const RPCS: &'static [RpcInfo];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_dispatch(
        _: &mut dyn Any,
        _: &mut RpcContext,
        _: &mut NetReader<'_>,
    ) -> Result<(), RpcCallError> {
        Ok(())
    }

    const PARAMS: &[RpcParam] = &[
        RpcParam {
            name: "text",
            type_name: "String",
            schema_hash: 1,
        },
        RpcParam {
            name: "n",
            type_name: "u8",
            schema_hash: 2,
        },
    ];

    fn info() -> RpcInfo {
        RpcInfo {
            name: "greet",
            mode: RpcMode::AnyPeer,
            call_local: false,
            reliable: false,
            rate_limit: Some(5),
            validate: Some("Self::check"),
            params: PARAMS,
            dispatch: no_dispatch,
            read_args: None,
        }
    }

    #[test]
    fn displays_as_declared() {
        assert_eq!(
            info().to_string(),
            "greet(text: String, n: u8) any_peer, unreliable, rate_limit = 5, validate = \
             Self::check"
        );
        assert_eq!(info().channel(), Channel::Unreliable);
    }

    #[test]
    fn signature_hash_ignores_local_options_only() {
        let base = info().signature_hash();
        let mut other = info();
        other.call_local = true;
        other.rate_limit = None;
        other.validate = None;
        assert_eq!(other.signature_hash(), base);
        for change in [
            (|i: &mut RpcInfo| i.name = "wave") as fn(&mut RpcInfo),
            |i| i.mode = RpcMode::Authority,
            |i| i.reliable = true,
            |i| i.params = &PARAMS[..1],
        ] {
            let mut other = info();
            change(&mut other);
            assert_ne!(other.signature_hash(), base);
        }
    }

    #[test]
    fn modes_check_the_transport_sender() {
        let owner = PeerId(4);
        assert!(RpcMode::Server.allows(PeerId::SERVER, owner));
        assert!(!RpcMode::Server.allows(owner, owner));
        assert!(RpcMode::Authority.allows(owner, owner));
        assert!(!RpcMode::Authority.allows(PeerId(5), owner));
        assert!(!RpcMode::Authority.allows(PeerId::SERVER, owner));
        assert!(RpcMode::AnyPeer.allows(PeerId(5), owner));
    }
}
