use mf_net::NetCodec;

#[derive(NetCodec)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
