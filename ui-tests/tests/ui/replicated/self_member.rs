use mf_net::scene::NetRef;
use mf_net::Replicated;

#[derive(Replicated, Default)]
struct Node {
    #[replicated]
    children: Vec<Self>,
    #[replicated]
    parent: Option<Box<Node>>,
    // A reference to another node of the type is fine: it holds a net id.
    #[replicated]
    next: NetRef<Node>,
    #[replicated]
    previous: Option<NetRef<Self>>,
}

fn main() {}
