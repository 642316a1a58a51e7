use mf_net::codec::{to_vec, NetCodec};

#[derive(NetCodec)]
struct Tree {
    value: u32,
    children: Vec<Tree>,
}

fn main() {
    let _ = to_vec(&Tree { value: 1, children: Vec::new() });
}

#[derive(NetCodec)]
enum Expr {
    Number(f64),
    Add(Box<Self>, Box<Self>),
}
