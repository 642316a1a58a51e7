use mf_net::Replicated;

// A type with none of what a member needs: one error per missing trait, each once, however
// many places the expansion uses the member.
struct Texture(u32);

#[derive(Replicated)]
struct Sprite {
    #[replicated]
    position: (f32, f32),
    #[replicated(interpolate)]
    texture: Texture,
}

fn main() {}
