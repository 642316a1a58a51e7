//! `Self` in a member's type means the type itself, as in any struct declaration.

use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Link {
    #[replicated]
    next: NetRef<Self>,
    #[replicated]
    earlier: Vec<NetRef<Self>>,
    #[replicated(initial_only)]
    first: Option<NetRef<Self>>,
    local: Option<Box<Self>>,
}

fn main() {
    let link = Link::default();
    assert!(link.next.is_unresolved() && link.earlier.is_empty() && link.first.is_none());
    assert!(link.local.is_none());
    assert_eq!(<Link as Replicated>::MEMBERS.len(), 3);
}
