use mf_net::Replicated;

#[derive(Replicated)]
struct Health(#[replicated] i32);

fn main() {}
