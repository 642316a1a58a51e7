//! Why an RPC did not run ([`RpcCallError`]) or could not be sent ([`RpcSendError`]), and
//! [`call_catching`], which turns a panicking body into an error.

use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::RpcMode;
use crate::scene::NodeId;
use crate::transport::PeerId;
use crate::wire::DecodeError;

/// Why an RPC call did not complete on the receiving side (or on the caller, for a
/// `call_local` run).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RpcCallError {
    /// The value the call was dispatched to is not of the RPC's declaring type (a runtime bug
    /// or a stale table, never the sender's doing).
    WrongType,
    /// The arguments did not decode: too few bytes, an invalid value, or bytes left over after
    /// the last argument.
    Malformed(DecodeError),
    /// The RPC's `validate` function returned `false`; the body did not run.
    Rejected,
    /// The body returned `Err`; the text is the error's `Display`.
    Failed(String),
    /// The body panicked (caught by [`call_catching`]); the text is the panic message.
    Panicked(String),
}

impl fmt::Display for RpcCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongType => f.write_str("the node's value is not of the RPC's declaring type"),
            Self::Malformed(error) => write!(f, "malformed arguments: {error}"),
            Self::Rejected => f.write_str("rejected by the RPC's validate function"),
            Self::Failed(error) => write!(f, "the RPC body failed: {error}"),
            Self::Panicked(message) => write!(f, "the RPC body panicked: {message}"),
        }
    }
}

impl std::error::Error for RpcCallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Malformed(error) => Some(error),
            _ => None,
        }
    }
}

impl From<DecodeError> for RpcCallError {
    fn from(error: DecodeError) -> Self {
        Self::Malformed(error)
    }
}

/// Why a generated sender (`mp.rpc(node).name(..)`) failed.
///
/// The [`RpcSink`](super::RpcSink) (the `Multiplayer`, or an
/// [`RpcContext`](super::RpcContext) for deferred sends) decides each case.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RpcSendError {
    /// The node does not exist (any more).
    NoSuchNode(NodeId),
    /// The node's value is not of the type the sender was made for, and does not flatten it.
    WrongType(NodeId),
    /// The node's type has no such RPC in the registry (a registry built without the type's
    /// `#[rpcs]` registration).
    NoSuchRpc {
        /// The node.
        node: NodeId,
        /// The RPC's name.
        rpc: &'static str,
    },
    /// The RPC's mode does not let this peer call it (a client calling a `server` RPC, or an
    /// `authority` RPC of a node it does not own).
    NotAllowed {
        /// The RPC's name.
        rpc: &'static str,
        /// Its mode.
        mode: RpcMode,
        /// The node it was called on.
        node: NodeId,
        /// The node's authority (its owner; the server for server-owned nodes).
        authority: PeerId,
        /// The peer that tried to call it (this peer).
        caller: PeerId,
    },
    /// `_to(peer)` names a peer that is not connected.
    UnknownPeer(PeerId),
    /// The transport refused the packet.
    SendFailed,
    /// An argument holds a string longer than receivers accept
    /// ([`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)): nothing was sent, since every
    /// receiver would drop the call as malformed.
    OverLimit,
    /// The arguments were sent (if the call goes to the network), but the `call_local` run on
    /// the caller failed.
    LocalCall(RpcCallError),
    /// A call whose destination is the caller ([`RpcDelivery::Here`](super::RpcDelivery::Here):
    /// the host's or singleplayer's own `authority` call) over the RPC's `rate_limit`, which
    /// holds for the server's own calls as for a client's: it did not run. Counted in
    /// `rpcs_rate_limited`, as a client's call over its limit is.
    RateLimited {
        /// The RPC's name.
        rpc: &'static str,
        /// Its `rate_limit`: calls per second.
        limit: u32,
    },
}

impl fmt::Display for RpcSendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchNode(node) => write!(f, "node {node} does not exist"),
            Self::WrongType(node) => {
                write!(f, "node {node} does not hold the RPC's declaring type")
            }
            Self::NoSuchRpc { node, rpc } => {
                write!(f, "node {node}'s type has no registered RPC `{rpc}`")
            }
            Self::NotAllowed {
                rpc,
                mode: RpcMode::Server,
                node,
                caller,
                ..
            } => write!(
                f,
                "{caller} may not call `{rpc}` on node {node}: it is a `server` RPC, which only \
                 the server sends"
            ),
            Self::NotAllowed {
                rpc,
                mode,
                node,
                authority,
                caller,
            } => write!(
                f,
                "{caller} may not call the `{mode}` RPC `{rpc}` on node {node}: only the node's \
                 authority, {authority}, may"
            ),
            Self::UnknownPeer(peer) => write!(f, "{peer} is not connected"),
            Self::SendFailed => f.write_str("the transport refused the RPC"),
            Self::OverLimit => f.write_str(
                "an argument holds a string longer than receivers accept (MAX_STRING_BYTES)",
            ),
            Self::LocalCall(error) => write!(f, "the local call failed: {error}"),
            Self::RateLimited { rpc, limit } => {
                write!(
                    f,
                    "`{rpc}` is over its rate limit of {limit} calls a second"
                )
            }
        }
    }
}

impl std::error::Error for RpcSendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::LocalCall(error) => Some(error),
            _ => None,
        }
    }
}

/// Runs `call` (typically an [`RpcInfo::dispatch`](super::RpcInfo::dispatch)), turning a panic
/// into [`RpcCallError::Panicked`] with the panic message.
///
/// This is how a runtime runs calls that come from the network, so that a body that panics on
/// hostile input cannot take the server down. Nothing is allocated unless the body panics.
///
/// - The panic hook still runs (by default it prints the message to stderr); install another
///   with [`std::panic::set_hook`] to log it differently.
/// - The value the body was running on may be left half-updated: the body stopped wherever it
///   panicked. The runtime keeps it as it is (the next snapshot sends whatever it holds).
/// - **With `panic = "abort"`** in the build profile nothing can be caught: a panicking body
///   aborts the whole process, so one client could take the server down with one RPC. Servers
///   that must survive hostile clients keep the default `panic = "unwind"`, or make sure no
///   body can panic (check inputs with `validate`, return `Err` instead of panicking).
pub fn call_catching<F>(call: F) -> Result<(), RpcCallError>
where
    F: FnOnce() -> Result<(), RpcCallError>,
{
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(payload) => Err(RpcCallError::Panicked(panic_message(payload.as_ref()))),
    }
}

/// The text of a panic payload (`panic!("..")` carries a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_catching_maps_panics_and_passes_results_through() {
        assert_eq!(call_catching(|| Ok(())), Ok(()));
        assert_eq!(
            call_catching(|| Err(RpcCallError::Rejected)),
            Err(RpcCallError::Rejected)
        );
        assert_eq!(
            call_catching(|| panic!("static text")),
            Err(RpcCallError::Panicked("static text".to_owned()))
        );
        assert_eq!(
            call_catching(|| panic!("formatted {}", 1)),
            Err(RpcCallError::Panicked("formatted 1".to_owned()))
        );
        assert_eq!(
            call_catching(|| std::panic::panic_any(3_i32)),
            Err(RpcCallError::Panicked(
                "a panic with a non-text payload".to_owned()
            ))
        );
    }

    #[test]
    fn errors_say_what_happened() {
        assert_eq!(
            RpcCallError::from(DecodeError::EndOfStream).to_string(),
            "malformed arguments: unexpected end of stream"
        );
        assert_eq!(
            RpcSendError::LocalCall(RpcCallError::Failed("no".into())).to_string(),
            "the local call failed: the RPC body failed: no"
        );
        let node = crate::scene::Scene::new().root();
        assert_eq!(
            RpcSendError::NotAllowed {
                rpc: "hit",
                mode: RpcMode::Server,
                node,
                authority: PeerId(2),
                caller: PeerId(2),
            }
            .to_string(),
            format!(
                "peer#2 may not call `hit` on node {node}: it is a `server` RPC, which only the \
                 server sends"
            )
        );
        assert_eq!(
            RpcSendError::NotAllowed {
                rpc: "move_by",
                mode: RpcMode::Authority,
                node,
                authority: PeerId(2),
                caller: PeerId(4),
            }
            .to_string(),
            format!(
                "peer#4 may not call the `authority` RPC `move_by` on node {node}: only the \
                 node's authority, peer#2, may"
            )
        );
    }
}
