//! Impls with no behaviour, for a declaration that has mistakes (see [`placeholder_impl`]).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Ident};

use crate::runtime;

/// Impls with no behaviour, emitted next to the errors of a declaration that has mistakes:
/// the build fails on those errors anyway, and uses of the type elsewhere then compile instead
/// of adding "`Replicated` is not implemented" errors that would hide the real ones. Generic
/// items get none (their impls would need bounds the user has not written).
pub(crate) fn placeholder_impl(input: &DeriveInput) -> TokenStream {
    if !input.generics.params.is_empty() {
        return TokenStream::new();
    }
    let p = &runtime::private();
    let ident = &input.ident;
    let replicated = replicated_impl(p, ident);
    let capture = capture_impl(p, ident);
    let apply = apply_impl(p, ident);
    let interpolated = interpolated_impl(p, ident);
    let predicted = predicted_impl(p, ident);
    quote! {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            #replicated

            #capture

            #apply

            #interpolated

            #predicted
        };
    }
}

/// The `impl Replicated`: no members, unit state types.
fn replicated_impl(p: &TokenStream, ident: &Ident) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::Replicated for #ident {
            type State = ();
            type Interp = ();
            const NAME: &'static str = "";
            const SCHEMA_HASH: u64 = 0;
            const MEMBERS: &'static [#p::MemberInfo] = &[];
            const STATE_COUNT: usize = 1;
            const OWNER_EXCLUDED: u64 = 0;
            const NON_OWNER_EXCLUDED: u64 = 0;
            const SNAPSHOT_EXCLUDED: u64 = 0;
            const OWNER_CONDITIONS: bool = false;
            const ON_CHANGE: bool = false;
            const INTERPOLATED: bool = false;
            const PREDICTED: u64 = 0;
            const PREDICTS: bool = false;
            const LAYOUT: &'static #p::StateLayout = &#p::StateLayout::EMPTY;
        }
    }
}

/// The `impl Capture<()>`: nothing captured, nothing written.
fn capture_impl(p: &TokenStream, ident: &Ident) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::Capture<()> for #ident {
            fn new_state(&self, _: u32) {}

            fn capture(&self, _: &mut (), _: u32) -> bool {
                false
            }

            fn age(_: &mut (), _: u32) {}

            fn last_changed(_: &()) -> u32 {
                0
            }

            fn last_changed_for(_: &(), _: #p::Audience) -> u32 {
                0
            }

            fn changed_before(_: &(), _: u32, _: #p::Audience) -> #p::Option<u32> {
                #p::Option::None
            }

            fn write_since_for(
                _: &(),
                _: #p::Option<u32>,
                _: #p::Audience,
                _: &mut #p::NetWriter,
            ) {
            }

            fn write_full_for(_: &(), _: #p::Audience, _: &mut #p::NetWriter) {}

            fn write_bits_since_for(
                _: &(),
                _: #p::Option<u32>,
                _: #p::Audience,
                _: &mut #p::StateCoder<'_>,
            ) {
            }
        }
    }
}

/// The `impl Apply`: every read fails.
fn apply_impl(p: &TokenStream, ident: &Ident) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::Apply for #ident {
            fn read(
                &mut self,
                _: &mut #p::NetReader<'_>,
            ) -> #p::Result<(), #p::DecodeError> {
                #p::Result::Err(#p::DecodeError::InvalidValue)
            }

            fn read_tracked(
                &mut self,
                _: &mut #p::NetReader<'_>,
                _: &mut [u64],
            ) -> #p::Result<(), #p::DecodeError> {
                #p::Result::Err(#p::DecodeError::InvalidValue)
            }

            fn run_on_change(&mut self, _: &[u64]) {}
        }
    }
}

/// The `impl Interpolated<()>`: every read fails.
fn interpolated_impl(p: &TokenStream, ident: &Ident) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::Interpolated<()> for #ident {
            fn new_interp(&self, _: u32) {}

            fn read_buffered(
                &mut self,
                _: &mut (),
                _: &mut #p::NetReader<'_>,
                _: u32,
                _: u32,
                _: &mut [u64],
            ) -> #p::Result<(), #p::DecodeError> {
                #p::Result::Err(#p::DecodeError::InvalidValue)
            }

            fn blend(&mut self, _: &(), _: f64, _: u32, _: f64) {}

            fn snap_interp(&mut self, _: &mut ()) {}
        }
    }
}

/// The `impl Predicted<()>`: nothing predicted.
fn predicted_impl(p: &TokenStream, ident: &Ident) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #p::Predicted<()> for #ident {
            fn restore_predicted(&mut self, _: &()) {}

            fn predicted_difference(_: &(), _: &()) -> #p::Option<&'static str> {
                #p::Option::None
            }

            fn smooth_predicted(&mut self, _: &(), _: &(), _: f32) {}
        }
    }
}
