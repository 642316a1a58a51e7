use mf_net::Replicated;

#[derive(Replicated)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
