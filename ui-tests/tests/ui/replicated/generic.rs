use mf_net::Replicated;

#[derive(Replicated)]
struct Holder<'a, T, const N: usize> {
    #[replicated]
    values: [u8; N],
    item: &'a T,
}

fn main() {}
