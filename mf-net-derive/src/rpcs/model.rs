//! What `#[rpcs]` checks and expands: the checked RPC methods of an impl block.

use syn::{Attribute, Ident, ItemImpl, Path, Type, Visibility};

/// Who may call an RPC (`mf_net::rpc::RpcMode`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Server,
    Authority,
    AnyPeer,
}

/// The optional `&RpcContext` / `&mut RpcContext` parameter.
pub(crate) struct Context {
    pub(crate) mutable: bool,
}

/// One sent parameter.
pub(crate) struct Param {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
}

/// One checked `#[rpc]` method.
pub(crate) struct Rpc {
    pub(crate) ident: Ident,
    pub(crate) docs: Vec<Attribute>,
    /// The method's `#[deprecated]` attributes, copied onto its senders.
    pub(crate) deprecated: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) mode: Mode,
    pub(crate) call_local: bool,
    pub(crate) reliable: bool,
    pub(crate) rate_limit: Option<u32>,
    pub(crate) validate: Option<Path>,
    pub(crate) context: Option<Context>,
    pub(crate) params: Vec<Param>,
    /// `Result<(), E>`, or `None` for `()`.
    pub(crate) ret: Option<Type>,
}

/// What the expansion needs.
pub(crate) struct Model<'a> {
    /// The impl block without its `#[rpc]` attributes.
    pub(crate) item: &'a ItemImpl,
    /// The last segment of the self type's path (`Player`).
    pub(crate) type_ident: Ident,
    pub(crate) rpcs: Vec<Rpc>,
}
