//! Typed remote procedure calls on replicated nodes: `#[rpcs]` / `#[rpc(..)]`.
//!
//! `#[rpcs]` on an `impl` block of a [`Replicated`](crate::replication::Replicated) type reads
//! every method marked `#[rpc(..)]` and generates, per RPC, a decoder and dispatcher (its
//! [`RpcInfo`], in the type's [`Rpcs::RPCS`] table, registered at link time) and a sender: the
//! public extension trait `<Type>Rpcs`, implemented for [`RpcSender`], so that game code writes
//! `mp.rpc(handle).move_by(input)` and `mp.rpc(handle).hit_to(peer, 10)`.
//!
//! ```
//! use mf_net::prelude::*;
//!
//! #[derive(Replicated, Default)]
//! pub struct Player {
//!     #[replicated]
//!     pub x: i32,
//!     #[replicated]
//!     pub health: i32,
//! }
//!
//! #[derive(Debug)]
//! pub struct Dead;
//!
//! impl std::fmt::Display for Dead {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         f.write_str("already dead")
//!     }
//! }
//!
//! #[rpcs]
//! impl Player {
//!     /// The owning client moves its player (client -> server).
//!     #[rpc(authority)]
//!     pub fn move_by(&mut self, dx: i32) {
//!         self.x += dx;
//!     }
//!
//!     /// The server tells everyone (and itself) about a hit.
//!     #[rpc(server, call_local)]
//!     pub fn hit(&mut self, damage: i32) -> Result<(), Dead> {
//!         if self.health <= 0 {
//!             return Err(Dead);
//!         }
//!         self.health -= damage;
//!         Ok(())
//!     }
//!
//!     /// Anyone may wave, at most 5 times a second; the context says who did.
//!     #[rpc(any_peer, unreliable, rate_limit = 5, validate = Self::may_wave)]
//!     pub fn wave(&mut self, ctx: &RpcContext) {
//!         let _who = ctx.sender();
//!     }
//!
//!     fn may_wave(&self, _ctx: &RpcContext) -> bool {
//!         self.health > 0
//!     }
//! }
//!
//! use mf_net::rpc::{RpcMode, Rpcs};
//! let hit = &<Player as Rpcs>::RPCS[1];
//! assert_eq!((hit.name, hit.mode, hit.call_local), ("hit", RpcMode::Server, true));
//! assert_eq!(hit.to_string(), "hit(damage: i32) server, call_local");
//! ```
//!
//! # Options
//!
//! `#[rpc(mode, call_local, unreliable, rate_limit = N, validate = path)]`, all optional:
//!
//! | option | meaning |
//! | --- | --- |
//! | `server` / `authority` (default) / `any_peer` | who may call it ([`RpcMode`]) |
//! | `call_local` | the body also runs on the caller |
//! | `unreliable` | sent on the unreliable channel (default: reliable) |
//! | `rate_limit = N` | at most `N` calls per second per connection, counted by the server |
//! | `validate = path` | `fn(&Self, &RpcContext, &Arg1, ..) -> bool` run before the body, on every call (local ones too); `false` rejects the call. The arguments are passed by reference, so `&str` works for a `String` and `&[T]` for a `Vec<T>` |
//!
//! # Methods
//!
//! An RPC takes `&mut self`, then optionally `&RpcContext` (or `&mut RpcContext` to queue
//! world changes, see [`RpcContext`]), then by-value [`NetCodec`](crate::codec::NetCodec)
//! parameters (arrays and `Vec`s included). It returns `()` or `Result<(), E>` with
//! `E: Display`; an `Err` is a failed call ([`RpcCallError::Failed`]). It is not generic,
//! `async`, `const` or `unsafe`. Methods without `#[rpc]` are left alone.
//!
//! # Wire format
//!
//! A call's arguments are the parameters' `NetCodec` encodings in order, nothing else; the
//! runtime frames them with the node and the RPC's wire id ([`RpcTable`]: the RPCs of
//! flattened bases first, then the type's own, in declaration order).
//!
//! # Failures
//!
//! [`RpcInfo::dispatch`] never panics on bad input: undecodable arguments are
//! [`RpcCallError::Malformed`]. A body that panics is caught by [`call_catching`] (not with
//! `panic = "abort"`; see there).

mod arg_proxy;
mod context;
mod error;
mod info;
mod registry;
mod send;
#[doc(hidden)]
pub mod support;

pub use context::{QueuedRpc, RpcCommand, RpcContext};
pub use error::{call_catching, RpcCallError, RpcSendError};
pub use info::{RpcDispatch, RpcInfo, RpcMode, RpcParam, RpcReadArgs, Rpcs};
pub use mf_net_derive::{rpc, rpcs};
pub use registry::{
    BaseInfo, BaseProjection, FlattenedBases, RpcEntry, RpcRegistration, RpcRegistry,
    RpcRegistryError, RpcTable,
};
pub use send::{LocalCall, OutgoingRpc, RpcDelivery, RpcSender, RpcSink, RpcTarget};
