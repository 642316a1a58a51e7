use super::NetCodec;
use crate::schema::{hash_name, hash_u64};
use crate::wire::{DecodeError, NetReader, NetWriter};

macro_rules! tuple {
    ($($name:ident $other:ident)+) => {
        impl<$($name: NetCodec),+> NetCodec for ($($name,)+) {
            const NAME: &'static str = "Tuple";
            const SCHEMA_HASH: u64 = {
                let h = hash_name("Tuple");
                $(let h = hash_u64(h, $name::SCHEMA_HASH);)+
                h
            };
            const MIN_SIZE: usize = 0 $(+ $name::MIN_SIZE)+;
            const NODE_REFS: bool = false $(|| $name::NODE_REFS)+;

            #[allow(non_snake_case)]
            fn encode(&self, w: &mut NetWriter) {
                let ($($name,)+) = self;
                $($name.encode(w);)+
            }

            fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
                Ok(($($name::decode(r)?,)+))
            }

            #[allow(non_snake_case)]
            fn same_encoding(&self, other: &Self) -> Option<bool> {
                let ($($name,)+) = self;
                let ($($other,)+) = other;
                super::all_same([$($name.same_encoding($other),)+])
            }
        }
    };
}

tuple!(A a);
tuple!(A a B b);
tuple!(A a B b C c);
tuple!(A a B b C c D d);
tuple!(A a B b C c D d E e);
tuple!(A a B b C c D d E e F f);
