use mf_net::NetCodec;

struct Handle(u32);

#[derive(NetCodec)]
struct Sprite {
    position: (f32, f32),
    #[net(skip)]
    handle: Handle,
}

fn main() {}
