use mf_net::NetCodec;

#[derive(NetCodec)]
#[net(name = "")]
struct Chat {
    text: String,
}

fn main() {}
