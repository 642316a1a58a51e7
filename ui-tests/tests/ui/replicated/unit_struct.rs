use mf_net::Replicated;

#[derive(Replicated)]
struct Marker;

fn main() {}
