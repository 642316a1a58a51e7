use mf_net::NetCodec;

#[derive(NetCodec)]
struct Chat {
    #[net(skip = true)]
    cache: u32,
    #[net(skip(always))]
    other: u32,
    text: String,
}

fn main() {}
