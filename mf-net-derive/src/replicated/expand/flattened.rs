//! The flattened bases, for the RPC tables (`mf_net::rpc::FlattenedBases`): wire ids put a
//! base's RPCs first, and dispatch reaches them through these projections.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use super::context::Ctx;
use super::tokens::local;

/// The projection functions and the registry entry; nothing without bases.
pub(super) fn flattened_bases(cx: &Ctx<'_>) -> Option<TokenStream> {
    if cx.bases.is_empty() {
        return None;
    }
    let (p, ident) = (&cx.p, cx.ident);
    let v = local("__v");
    let projections = cx.bases.iter().enumerate().map(|(i, f)| {
        let field = &f.ident;
        let get = projection(i);
        quote! {
            fn #get(#v: &mut dyn #p::Any) -> #p::Option<&mut dyn #p::Any> {
                match #v.downcast_mut::<#ident>() {
                    #p::Option::Some(#v) => #p::Option::Some(&mut #v.#field as &mut dyn #p::Any),
                    #p::Option::None => #p::Option::None,
                }
            }
        }
    });
    let infos = cx.bases.iter().enumerate().map(|(i, f)| {
        let (name, ty) = (f.schema_name(), &f.ty);
        let get = projection(i);
        quote! {
            #p::BaseInfo {
                field: #name,
                type_id: #p::TypeId::of::<#ty>,
                get_mut: #get,
            },
        }
    });
    Some(quote! {
        #(#projections)*
        #p::inventory::submit! {
            #p::FlattenedBases::new(#p::TypeId::of::<#ident>, &[#(#infos)*])
        }
    })
}

/// The function that projects the type onto its base `index`.
fn projection(index: usize) -> Ident {
    Ident::new(&format!("__mf_net_base_{index}"), Span::call_site())
}
