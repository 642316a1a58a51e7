//! What `#[replicated(interpolate)]` requires of a member's type, as a trait whose message
//! names the attribute (like `replication::member` does for `#[replicated]`).

use super::Interpolate;

/// [`Interpolate`], as a `#[replicated(interpolate)]` member needs it. The derive asserts it
/// at the field's type; it has a blanket implementation and nothing implements it by hand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[replicated(interpolate)]` member: it does not implement \
               `Interpolate`",
    label = "not `Interpolate`",
    note = "clients blend interpolated members between snapshots, which needs \
            `mf_net::interpolation::Interpolate`: use a type that has it (`f32`, `f64` and, with \
            mf-net's `glam` feature, `glam::Vec2`, `Vec3`, `Vec4` and `Quat`), or implement it \
            for your own type",
    note = "or remove `interpolate` (write `#[replicated]`): the member then snaps to each \
            snapshot's value"
)]
pub trait MemberInterpolate {
    /// [`Interpolate::EXTRAPOLATE`].
    const EXTRAPOLATE: bool;
}

impl<T: Interpolate> MemberInterpolate for T {
    const EXTRAPOLATE: bool = T::EXTRAPOLATE;
}
