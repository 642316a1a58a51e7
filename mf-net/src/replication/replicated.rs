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
}

/// A game struct whose `#[replicated]` fields are kept in sync from the server to clients.
///
/// Implemented by `#[derive(Replicated)]`; the generated code compares each member with a typed
/// shadow copy (`State`), stamps changed members with the tick, and writes or reads only the
/// members changed since a given tick. Nothing here boxes or allocates (member values that own
/// heap data, such as `String`, allocate when they change).
///
/// # Wire format of one node's state
///
/// For each *state* in the type's chain — first every `#[replicated(flatten)]` base, in field
/// order (recursively, bases of bases first), then the type's own members — a varint change mask
/// (bit *i* = the *i*-th member in declaration order), then the values of the members whose bit
/// is set, in member order, each with its [`NetCodec`](crate::codec::NetCodec) encoding.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a replicated type: it does not implement `Replicated`",
    label = "not `Replicated`",
    note = "derive it with `#[derive(Replicated)]` on `{Self}`",
    note = "`#[replicated(flatten)]` needs a `Replicated` base; to send a `NetCodec` value as one \
            member, write `#[replicated]` instead"
)]
pub trait Replicated: Sized + 'static {
    /// The typed shadow state: one field per member with the tick it last changed, and the
    /// states of flattened bases.
    type State: 'static;

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

    /// A shadow of the current values, every member stamped with `tick` (the server captures
    /// spawn state at tick 0).
    fn new_state(&self, tick: u32) -> Self::State;

    /// Compares every member with the shadow (`PartialEq`); changed ones are copied into the
    /// shadow and stamped with `tick`. Returns whether anything changed, bases included.
    fn capture(&self, state: &mut Self::State, tick: u32) -> bool;

    /// The newest tick any member of the chain was stamped with.
    fn last_changed(state: &Self::State) -> u32;

    /// Writes, for every state in the chain, the mask of members stamped after `since` and
    /// their shadow values. Callers check [`last_changed`](Self::last_changed) first to skip
    /// unchanged nodes.
    fn write_since(state: &Self::State, since: u32, w: &mut NetWriter);

    /// Writes every member of every state (all mask bits set): a spawn's full state.
    fn write_full(state: &Self::State, w: &mut NetWriter);

    /// Reads what [`write_since`](Self::write_since) or [`write_full`](Self::write_full) wrote
    /// and assigns the values to `self`. A mask bit past the member count is
    /// [`DecodeError::Invalid`]. On error `self` may be partly updated; callers drop the entry.
    fn read(&mut self, r: &mut NetReader<'_>) -> Result<(), DecodeError>;

    /// The client-side interpolation state: an
    /// [`InterpolationBuffer`](crate::interpolation::InterpolationBuffer) per
    /// `#[replicated(interpolate)]` member, and the flattened bases' states. Only clients with
    /// interpolation enabled create one, when the node spawns; the server's shadow
    /// [`State`](Self::State) does not carry it.
    type Interp: 'static;

    /// Whether the chain (bases included) has an interpolated member; types without one need
    /// no [`Interp`](Self::Interp) state and are always [`read`](Self::read).
    const INTERPOLATED: bool;

    /// A fresh interpolation state whose buffers each hold the member's current value (the
    /// spawn state, applied already) as their first sample, at `tick`.
    fn new_interp(&self, tick: u32) -> Self::Interp;

    /// [`read`](Self::read) for a client that interpolates: members that are not interpolated
    /// are assigned; interpolated ones are pushed into their buffers as the sample of `tick`
    /// ([`push_with_hold`](crate::interpolation::InterpolationBuffer::push_with_hold) with
    /// `known_until`, the node's known tick before this snapshot) and reach `self` in
    /// [`blend`](Self::blend).
    fn read_buffered(
        &mut self,
        interp: &mut Self::Interp,
        r: &mut NetReader<'_>,
        known_until: u32,
        tick: u32,
    ) -> Result<(), DecodeError>;

    /// Writes every interpolated member's
    /// [`sample`](crate::interpolation::InterpolationBuffer::sample) at `render_tick` into
    /// `self` (a member with an empty buffer keeps its value). `known_until` is the node's known
    /// tick. Allocates nothing unless cloning a member does.
    fn blend(
        &mut self,
        interp: &Self::Interp,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    );

    /// The client's clock snapped: every interpolated member snaps to its newest sample and
    /// its buffer is cleared.
    fn snap_interp(&mut self, interp: &mut Self::Interp);
}
