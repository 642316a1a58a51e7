use mf_net::Replicated;

#[derive(Replicated)]
struct Node {
    #[replicated]
    children: Vec<Self>,
    #[replicated]
    parent: Option<Box<Node>>,
}

fn main() {}
