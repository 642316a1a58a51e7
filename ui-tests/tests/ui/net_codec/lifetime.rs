use mf_net::NetCodec;

#[derive(NetCodec)]
struct Borrowed<'a> {
    text: &'a str,
}

fn main() {}
