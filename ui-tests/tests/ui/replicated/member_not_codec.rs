use mf_net::Replicated;

#[derive(Debug, Clone, PartialEq)]
struct Texture(u32);

#[derive(Replicated)]
struct Sprite {
    #[replicated]
    position: (f32, f32),
    #[replicated]
    texture: Texture,
}

fn main() {}
