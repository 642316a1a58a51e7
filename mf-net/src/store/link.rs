//! [`Link`]: how a node of a typed spawn group relates to one before it.

/// How a node networked with others by
/// [`replicate`](crate::replication::Multiplayer::replicate) relates to a node before it in its
/// group ([`Store::group`](super::Store::group)); `T` names that node (an index into the group
/// on the server's side, the client's node when it makes one,
/// [`Store::spawn_linked`](super::Store::spawn_linked)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Link<T> {
    /// The group's root.
    Root,
    /// A child of that node (a Bevy entity whose `ChildOf` is that one's entity).
    ChildOf(T),
    /// Another value of the same object (another replicated component of that one's entity).
    Beside(T),
}

impl<T> Link<T> {
    /// The node it relates to, if any.
    pub fn to(&self) -> Option<&T> {
        match self {
            Link::Root => None,
            Link::ChildOf(to) | Link::Beside(to) => Some(to),
        }
    }

    /// The same relation to another node.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Link<U> {
        match self {
            Link::Root => Link::Root,
            Link::ChildOf(to) => Link::ChildOf(f(to)),
            Link::Beside(to) => Link::Beside(f(to)),
        }
    }
}
