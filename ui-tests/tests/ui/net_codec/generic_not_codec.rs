use mf_net::codec::NetCodec;

struct Texture;

#[derive(NetCodec)]
struct Tagged<T> {
    tag: u8,
    value: T,
}

fn send<M: NetCodec>(_message: &M) {}

fn main() {
    send(&Tagged { tag: 1, value: Texture });
}
