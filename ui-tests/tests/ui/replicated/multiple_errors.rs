use mf_net::Replicated;

// Every mistake in one declaration is reported in one build.
#[derive(Replicated)]
#[replicated(name = 7, version = 2)]
struct Player<T> {
    #[replicated(interpolate = "yes")]
    position: f32,
    #[replicated(flaten)]
    base: T,
    #[replicated(interpolate, interpolate)]
    health: i32,
    #[replicated(flatten, interpolate)]
    other: u8,
}

fn main() {}
