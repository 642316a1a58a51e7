use mf_net::NetCodec;

#[derive(NetCodec)]
enum Command {
    #[net(skip)]
    Jump,
    Move(f32, f32),
}

fn main() {}
