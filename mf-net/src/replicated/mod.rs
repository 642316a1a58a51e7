//! Replicated types: the [`Replicated`] trait that `#[derive(Replicated)]` implements with its
//! sub-traits by side ([`Capture`], [`Apply`], [`Interpolated`], [`Predicted`]), what it
//! requires of each member's type, the link-time [`RegisteredType`] entry of every type and
//! the [`registry`] that collects them.
//!
//! Shared by the scene, which stores values in one column per type, and the replication
//! runtime; it imports neither.

mod entry;
pub(crate) mod member;
pub mod registry;

pub use entry::RegisteredType;

use crate::codec::state_bits::StateLayout;
use crate::codec::state_coder::StateCoder;
use crate::wire::{DecodeError, NetReader, NetWriter};

/// Most members one declaring type may have: the change mask is a `u64`.
pub const MAX_MEMBERS: usize = 64;

/// One replicated member of a type, as the registry and fingerprints see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberInfo {
    /// The field's name.
    pub name: &'static str,
    /// The stable name of the field's type ([`NetCodec::NAME`](crate::codec::NetCodec::NAME)).
    pub type_name: &'static str,
    /// The schema hash of the field's type.
    pub schema_hash: u64,
    /// Whether clients blend it (`#[replicated(interpolate)]`).
    pub interpolate: bool,
    /// Whether the owning client simulates it locally, and checks and corrects its prediction
    /// against the server's value (`#[replicated(predict)]`). Never quantized, never
    /// `initial_only` nor `skip_owner`.
    pub predict: bool,
    /// Which clients receive it (`#[replicated(owner_only)]`, `#[replicated(skip_owner)]`).
    pub condition: MemberCondition,
    /// Whether it is sent only in the spawn's full state (`#[replicated(initial_only)]`).
    pub initial_only: bool,
    /// The path of its `#[replicated(on_change = path)]` hook, as written.
    pub on_change: Option<&'static str>,
    /// Its `#[replicated(quantize(min = .., max = .., bits = ..))]` range and resolution, or
    /// its `quantize(smallest_three, bits = ..)` ([`Quantization::is_smallest_three`]).
    ///
    /// [`Quantization::is_smallest_three`]: crate::codec::quantize::Quantization::is_smallest_three
    pub quantize: Option<crate::codec::quantize::Quantization>,
}

/// Which clients receive a member, relative to the node's authority (its owning client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MemberCondition {
    /// Every client (`#[replicated]`).
    #[default]
    Always,
    /// Only the client that is the node's authority (`#[replicated(owner_only)]`): private
    /// state such as ammunition or an inventory.
    OwnerOnly,
    /// Every client except the node's authority (`#[replicated(skip_owner)]`): state the
    /// owner predicts or drives itself.
    SkipOwner,
}

/// Whom a node's state is written for: decides which `owner_only` / `skip_owner` members a
/// write leaves out (see [`Capture::write_since_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Audience {
    /// No owner condition applies: every member (tools, tests, a copy of the whole state).
    #[default]
    All,
    /// The client that is the node's authority: `skip_owner` members are left out.
    Owner,
    /// Any other client: `owner_only` members are left out.
    NonOwner,
}

impl Audience {
    /// [`Owner`](Self::Owner) if `is_owner`, else [`NonOwner`](Self::NonOwner).
    pub const fn of(is_owner: bool) -> Self {
        if is_owner {
            Self::Owner
        } else {
            Self::NonOwner
        }
    }

    /// The members of `T`'s own state (not its bases') that a write for this audience leaves
    /// out: [`Replicated::OWNER_EXCLUDED`] or [`Replicated::NON_OWNER_EXCLUDED`] (0 for
    /// [`All`](Self::All)).
    pub const fn excluded<T: Replicated>(self) -> u64 {
        match self {
            Self::All => 0,
            Self::Owner => T::OWNER_EXCLUDED,
            Self::NonOwner => T::NON_OWNER_EXCLUDED,
        }
    }
}

/// A game struct whose `#[replicated]` fields are kept in sync from the server to clients.
///
/// Implemented by `#[derive(Replicated)]`. This trait holds what every side shares: the type's
/// shape (its stable name, schema hash, members and option masks) and its two state types, the
/// server's typed shadow copy ([`State`](Self::State)) and the client's interpolation state
/// ([`Interp`](Self::Interp)). What each side does with them is in a sub-trait, each a
/// supertrait of this one, so a `T: Replicated` bound reaches all of it:
///
/// - [`Capture`]: change detection against the shadow state and the writes (the server);
/// - [`Apply`]: reading a state into the value and running `on_change` hooks (clients);
/// - [`Interpolated`]: buffering and blending `#[replicated(interpolate)]` members (clients
///   that interpolate);
/// - [`Predicted`]: restoring, comparing and smoothing `#[replicated(predict)]` members (the
///   owning client).
///
/// The generated code compares each member with the shadow copy, stamps changed members with
/// the tick, and writes or reads only the members changed since a given tick. Nothing here
/// boxes or allocates (member values that own heap data, such as `String`, allocate when they
/// change).
///
/// # Wire format of one node's state
///
/// For each *state* in the type's chain — first every `#[replicated(flatten)]` base, in field
/// order (recursively, bases of bases first), then the type's own members — a varint change mask
/// (bit *i* = the *i*-th member in declaration order), then the values of the members whose bit
/// is set, in member order, each with its [`NetCodec`](crate::codec::NetCodec) encoding, or for
/// a `#[replicated(quantize(..))]` member its bucket index in the fewest whole bytes that hold
/// `bits` bits (for `quantize(smallest_three, ..)`, its smallest-three encoding).
///
/// # Member options
///
/// A write for an [`Audience`] clears the bits of the members that audience does not receive
/// (`owner_only`, `skip_owner`); snapshot writes ([`write_since_for`](Capture::write_since_for))
/// also clear `initial_only` members. The wire format is the same: only the mask differs.
/// Clients run `on_change` hooks after applying a changed value
/// ([`read_tracked`](Apply::read_tracked), then [`run_on_change`](Apply::run_on_change)).
/// `predict` members change nothing on the wire either: the owning client simulates them and
/// compares, restores and smooths them through
/// [`predicted_difference`](Predicted::predicted_difference),
/// [`restore_predicted`](Predicted::restore_predicted) and
/// [`smooth_predicted`](Predicted::smooth_predicted).
///
/// # One trait for the derive to name
///
/// The derive reaches a flattened base only through this trait (its two state types here, the
/// rest through a proxy that type-checks whatever the base is), so a base that does not derive
/// `Replicated` is reported once, with this trait's message, however many sub-traits it lacks.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a replicated type: it does not implement `Replicated`",
    label = "not `Replicated`",
    note = "derive it with `#[derive(Replicated)]` on `{Self}`",
    note = "`#[replicated(flatten)]` needs a `Replicated` base; to send a `NetCodec` value as one \
            member, write `#[replicated]` instead"
)]
pub trait Replicated:
    Capture<<Self as Replicated>::State>
    + Apply
    + Interpolated<<Self as Replicated>::Interp>
    + Predicted<<Self as Replicated>::State>
    + Sized
    + 'static
{
    /// The typed shadow state: one field per member with the tick it last changed, and the
    /// states of flattened bases. The server keeps one per networked node ([`Capture`]); the
    /// owning client keeps several per predicted node ([`Predicted`]).
    type State: 'static;

    /// The client-side interpolation state: an
    /// [`InterpolationBuffer`](crate::interpolation::InterpolationBuffer) per
    /// `#[replicated(interpolate)]` member, and the flattened bases' states. Only clients with
    /// interpolation enabled create one, when the node spawns ([`Interpolated`]); the server's
    /// shadow [`State`](Self::State) does not carry it.
    type Interp: 'static;

    /// The stable type name: the module path without the crate name, then the ident, or
    /// `#[replicated(name = "…")]`.
    const NAME: &'static str;

    /// Hash of the name, every member's name and type schema hash, and the flattened bases'
    /// schema hashes, in wire order.
    const SCHEMA_HASH: u64;

    /// This type's own members, in declaration order (not those of flattened bases).
    const MEMBERS: &'static [MemberInfo];

    /// How many states the chain writes (1 + the flattened bases' counts).
    const STATE_COUNT: usize;

    /// The own members (bit *i* = the *i*-th) left out of every write for the node's owner:
    /// the `#[replicated(skip_owner)]` ones.
    const OWNER_EXCLUDED: u64;

    /// The own members left out of every write for clients other than the node's owner: the
    /// `#[replicated(owner_only)]` ones.
    const NON_OWNER_EXCLUDED: u64;

    /// The own members left out of every snapshot (they travel only in the spawn's full
    /// state): the `#[replicated(initial_only)]` ones.
    const SNAPSHOT_EXCLUDED: u64;

    /// Whether the chain (bases included) has an `owner_only` or `skip_owner` member: what a
    /// client receives of it depends on whether it owns the node.
    const OWNER_CONDITIONS: bool;

    /// Whether the chain (bases included) has an `#[replicated(on_change = ..)]` member.
    const ON_CHANGE: bool;

    /// How its states travel in the bit-packed form: the flattened bases' layouts, then each
    /// own member's form ([`state_bits`](crate::codec::state_bits)).
    const LAYOUT: &'static StateLayout;

    /// Whether the chain (bases included) has an interpolated member; types without one need
    /// no [`Interp`](Self::Interp) state and are always [`read`](Apply::read).
    const INTERPOLATED: bool;

    /// The own members marked `#[replicated(predict)]` (bit *i* = the *i*-th member).
    const PREDICTED: u64;

    /// Whether the chain (bases included) has a predicted member.
    const PREDICTS: bool;

    /// Whether the chain (bases included) has a member that can hold node references
    /// ([`NetCodec::NODE_REFS`](crate::codec::NetCodec::NODE_REFS)): only then does a client
    /// look for members held back while it applies the type's states.
    const NODE_REFS: bool = false;
}

/// The server's side of a [`Replicated`] type: change detection against the shadow state `S`
/// ([`Replicated::State`]) and the writes from it. The owning client's prediction keeps shadow
/// states of its predicted nodes the same way ([`Predicted`]).
///
/// Ticks wrap: every comparison of stamps is by serial-number arithmetic (RFC 1982), which
/// orders two ticks less than 2³¹ apart.
pub trait Capture<S>: Sized + 'static {
    /// A shadow of the current values, every member stamped with `tick` (the server captures
    /// spawn state at the tick of its latest capture).
    fn new_state(&self, tick: u32) -> S;

    /// Compares every member with the shadow (`PartialEq`; a quantized member by its bucket
    /// index, so a change within the bucket last sent is none); changed ones are copied into
    /// the shadow and stamped with `tick`. Returns whether anything changed, bases included.
    fn capture(&self, state: &mut S, tick: u32) -> bool;

    /// Moves every stamp of the chain older than `floor` up to `floor` (serial-number order),
    /// keeping the newer ones: the server calls it on every shadow state at least every 2³⁰
    /// ticks, so that no stamp is ever 2³¹ ticks older than the server's tick (after which it
    /// would look newer). Members stamped before `floor` compare equal afterwards, so the
    /// server treats every client that had not acknowledged such a stamp as owed a resync.
    fn age(state: &mut S, floor: u32);

    /// The newest tick any member of the chain was stamped with (serial-number order).
    fn last_changed(state: &S) -> u32;

    /// The newest tick stamped on a member that a snapshot for `audience` may carry (members
    /// the audience does not receive and `initial_only` members are not counted; the state's
    /// creation stamp when there is none), in serial-number order. A node whose
    /// `last_changed_for(audience)` is not after `since` has nothing to send.
    fn last_changed_for(state: &S, audience: Audience) -> u32;

    /// The newest tick before `limit` stamped on a member that a snapshot for `audience` may
    /// carry (counted as in [`last_changed_for`](Self::last_changed_for)), in serial-number
    /// order; `None` if every such member is stamped `limit` or later. With `limit` the
    /// [`last_changed_for`](Self::last_changed_for) tick `L` and the answer `P`, every `since`
    /// from `P` (or any, for `None`) up to before `L` selects the same members: their entries
    /// are the same bytes, which the server encodes once.
    fn changed_before(state: &S, limit: u32, audience: Audience) -> Option<u32>;

    /// A snapshot entry's state: for every state in the chain, the mask of members stamped
    /// after `since` (serial-number order; every member when `since` is `None`: the receiver's copy is not known,
    /// as after an authority change), minus those `audience` does not receive and the
    /// `initial_only` ones, then their shadow values. Callers check
    /// [`last_changed_for`](Self::last_changed_for) first to skip nodes with nothing to send.
    fn write_since_for(state: &S, since: Option<u32>, audience: Audience, w: &mut NetWriter);

    /// A spawn's full state for `audience`: every member of every state except those
    /// `audience` does not receive (`initial_only` members included).
    fn write_full_for(state: &S, audience: Audience, w: &mut NetWriter);

    /// The bit-packed form of the state [`write_since_for`](Self::write_since_for) writes
    /// (the same members): for every state in the chain, its change bits, then each member it
    /// carries coded by `coder` against the baseline `coder` holds
    /// ([`state_bits`](crate::codec::state_bits) describes the form).
    fn write_bits_since_for(
        state: &S,
        since: Option<u32>,
        audience: Audience,
        coder: &mut StateCoder<'_>,
    );

    /// [`write_since_for`](Self::write_since_for) of `Some(since)` for [`Audience::All`]: the
    /// members stamped after `since`, except `initial_only` ones.
    #[inline]
    fn write_since(state: &S, since: u32, w: &mut NetWriter) {
        Self::write_since_for(state, Some(since), Audience::All, w);
    }

    /// [`write_full_for`](Self::write_full_for) for [`Audience::All`]: every member of every
    /// state (all mask bits set).
    #[inline]
    fn write_full(state: &S, w: &mut NetWriter) {
        Self::write_full_for(state, Audience::All, w);
    }
}

/// A client's side of a [`Replicated`] type: reading what [`Capture`] wrote into the value,
/// and running the `on_change` hooks of the members that changed.
pub trait Apply: Sized + 'static {
    /// Reads what [`write_since`](Capture::write_since) or [`write_full`](Capture::write_full)
    /// wrote and assigns the values to `self`. A mask bit past the member count is
    /// [`DecodeError::BadMask`]. On error `self` may be partly updated; callers drop the entry.
    /// Runs no `on_change` hook.
    fn read(&mut self, r: &mut NetReader<'_>) -> Result<(), DecodeError>;

    /// [`read`](Self::read), also recording which `on_change` members received a value that
    /// differs from the one they held: bit *i* of `changed[k]` for the *i*-th member of the
    /// *k*-th state of the chain (wire order: bases first, the type's own state last). Bits are
    /// only ever set, never cleared; `changed` should have
    /// [`STATE_COUNT`](Replicated::STATE_COUNT) zeroed entries (a shorter slice records less).
    /// Runs no hook: see [`run_on_change`](Self::run_on_change).
    fn read_tracked(
        &mut self,
        r: &mut NetReader<'_>,
        changed: &mut [u64],
    ) -> Result<(), DecodeError>;

    /// Runs the `on_change` hook of every member whose bit is set in `changed` (laid out as
    /// [`read_tracked`](Self::read_tracked) fills it): the bases' hooks first, then the type's
    /// own, each in declaration order, each once. Clients call it after a whole snapshot entry
    /// or spawn was applied.
    fn run_on_change(&mut self, changed: &[u64]);
}

/// The side of a [`Replicated`] type that clients which interpolate use: buffering the
/// `#[replicated(interpolate)]` members' samples in the interpolation state `I`
/// ([`Replicated::Interp`]) and blending them into the value.
pub trait Interpolated<I>: Apply {
    /// A fresh interpolation state whose buffers each hold the member's current value (the
    /// spawn state, applied already) as their first sample, at `tick`.
    fn new_interp(&self, tick: u32) -> I;

    /// [`read`](Apply::read) for a client that interpolates: members that are not interpolated
    /// are assigned; interpolated ones are pushed into their buffers as the sample of `tick`
    /// ([`push_with_hold`](crate::interpolation::InterpolationBuffer::push_with_hold) with
    /// `known_until`, the node's known tick before this snapshot) and reach `self` in
    /// [`blend`](Self::blend). Records changed `on_change` members in `changed` like
    /// [`read_tracked`](Apply::read_tracked); an interpolated one counts as changed when its
    /// new sample differs from the newest sample it had.
    fn read_buffered(
        &mut self,
        interp: &mut I,
        r: &mut NetReader<'_>,
        known_until: u32,
        tick: u32,
        changed: &mut [u64],
    ) -> Result<(), DecodeError>;

    /// Writes every interpolated member's
    /// [`sample`](crate::interpolation::InterpolationBuffer::sample) at `render_tick` into
    /// `self` (a member with an empty buffer keeps its value). `known_until` is the node's known
    /// tick. Allocates nothing unless cloning a member does.
    fn blend(
        &mut self,
        interp: &I,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    );

    /// The client's clock snapped: every interpolated member snaps to its newest sample, and
    /// its buffer keeps that sample alone, at its tick.
    fn snap_interp(&mut self, interp: &mut I);
}

/// The owning client's side of a [`Replicated`] type with `#[replicated(predict)]` members:
/// it simulates them locally, keeps shadow states `S` ([`Replicated::State`]) of its
/// predictions, and checks, restores and smooths them against the server's values.
pub trait Predicted<S>: Capture<S> {
    /// Assigns every predicted member of the chain (bases first) from `state`'s shadow values
    /// (`clone_from`), leaving every other member as it is.
    ///
    /// Predicted members are never quantized, so the shadow holds the plain value (for a state
    /// made with [`new_state`](Capture::new_state), the value the member had then).
    fn restore_predicted(&mut self, state: &S);

    /// The name of the first predicted member of the chain (bases first, then own members in
    /// declaration order) whose shadow values in `a` and `b` differ by
    /// [`NetCodec::same_encoding`](crate::codec::NetCodec::same_encoding) (floats by bits: a
    /// NaN equals itself, `-0.0` differs from `0.0`; `PartialEq` for a type that does not
    /// say), or `None` if every predicted member is the same.
    fn predicted_difference(a: &S, b: &S) -> Option<&'static str>;

    /// Error smoothing: for every predicted member that is also `interpolate`, moves the member
    /// by `weight` times the offset `from − to`: `self.m = self.m.interpolate(&shifted, weight)`
    /// where `shifted = to.m.interpolate(&from.m.interpolate(&self.m, 0.5), 2.0)` (that is
    /// `self + (from − to)`, written with [`Interpolate`](crate::interpolation::Interpolate)
    /// alone). Other members are untouched. At `weight` 0 the member keeps its value exactly,
    /// at 1 it is `shifted` exactly.
    ///
    /// The formula relies on `interpolate` extrapolating at `t = 2`. `f32`, `f64` and the
    /// `glam` vectors do (linearly; with a NaN or infinite value among `self`, `from` and `to`
    /// the result is not an offset but what those impls give for non-finite samples, the
    /// newer one of each pair).
    /// `glam::Quat` clamps `t` to `0..=1`: `shifted` is then the slerp midpoint of
    /// `from` and `self`, whatever `to` is, so a predicted rotation is pulled by `weight`
    /// towards halfway to `from` instead of being offset by the rotation from `to` to `from`.
    /// A type whose `interpolate` clamps behaves the same way; give such a member its own
    /// smoothing, or do not mark it `interpolate`.
    fn smooth_predicted(&mut self, from: &S, to: &S, weight: f32);
}
