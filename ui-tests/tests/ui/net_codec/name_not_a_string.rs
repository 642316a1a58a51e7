use mf_net::NetCodec;

#[derive(NetCodec)]
#[net(name = 5)]
struct Chat {
    text: String,
}

#[derive(NetCodec)]
#[net(name)]
struct Ping;

fn main() {}
