use mf_net::NetCodec;

#[derive(NetCodec)]
#[net(nme = "game::Chat")]
struct Chat {
    #[net(skp)]
    cache: u32,
    text: String,
}

fn main() {}
