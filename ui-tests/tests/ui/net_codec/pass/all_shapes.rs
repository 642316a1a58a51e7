//! Every shape the derive accepts compiles, including generics and skipped fields.

use std::marker::PhantomData;

use mf_net::codec::NetCodec;

#[derive(NetCodec)]
struct Named {
    a: u32,
    b: String,
}

#[derive(NetCodec)]
struct Tuple(u8, Vec<i16>);

#[derive(NetCodec)]
struct Unit;

#[derive(NetCodec)]
struct Empty {}

#[derive(NetCodec)]
struct Generic<T, U> {
    value: T,
    list: Vec<U>,
}

// `T` is used only by a skipped field: no `T: NetCodec` bound, only `PhantomData<T>: Default`.
#[derive(NetCodec)]
struct Marker<T> {
    id: u32,
    #[net(skip)]
    _marker: PhantomData<T>,
}

struct NotACodec;

#[derive(NetCodec)]
struct ConstGeneric<const N: usize> {
    data: [u8; N],
}

#[derive(NetCodec)]
#[net(name = "game::Renamed")]
enum Shapes<T> {
    Unit,
    Tuple(T, #[net(skip)] u8),
    Struct { x: f32, #[net(skip)] cache: Option<String>, y: f32 },
    #[allow(non_camel_case_types)]
    r#type,
}

#[derive(NetCodec)]
enum Never {}

#[derive(NetCodec)]
struct r#Raw {
    r#type: u8,
}

fn assert_codec<T: NetCodec>() {}

fn main() {
    assert_codec::<Named>();
    assert_codec::<Tuple>();
    assert_codec::<Unit>();
    assert_codec::<Empty>();
    assert_codec::<Generic<u8, String>>();
    assert_codec::<Marker<NotACodec>>();
    assert_codec::<ConstGeneric<3>>();
    assert_codec::<Shapes<u64>>();
    assert_codec::<Never>();
    assert_codec::<Raw>();
    assert_eq!(<Shapes<u8> as NetCodec>::NAME, "game::Renamed");
    assert_eq!(<Named as NetCodec>::NAME, "Named");
    assert_eq!(<Raw as NetCodec>::NAME, "Raw");
}
