use mf_net::NetCodec;

struct Texture;

#[derive(NetCodec)]
struct Sprite {
    position: (f32, f32),
    texture: Texture,
}

#[derive(NetCodec)]
enum Draw {
    Sprite { texture: Texture },
    Clear,
}

fn main() {}
