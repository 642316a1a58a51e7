use mf_net::NetCodec;

#[derive(NetCodec)]
#[net = "game::Chat"]
struct Chat {
    text: String,
}

fn main() {}
