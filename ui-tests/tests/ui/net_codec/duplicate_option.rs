use mf_net::NetCodec;

#[derive(NetCodec)]
#[net(name = "game::Chat", name = "game::Message")]
struct Chat {
    #[net(skip, skip)]
    cache: u32,
    text: String,
}

fn main() {}
