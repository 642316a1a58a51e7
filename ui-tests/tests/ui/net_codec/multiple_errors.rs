use mf_net::NetCodec;

// Every mistake in one declaration is reported in one build.
#[derive(NetCodec)]
#[net(name = 7, version = 2)]
struct Chat<'a> {
    #[net(skip = "yes")]
    cache: u32,
    #[net(skipp)]
    from: &'a str,
    #[net(skip, skip)]
    text: String,
}

fn main() {}
