//! The common catalog shipped in the binary: the files under `catalog/` are embedded at build
//! time (see `build.rs`) and rendered once, on first use.

use std::sync::{Arc, OnceLock};

use crate::load::{self, Source};
use crate::model::Object;
use crate::resolve::Index;

use super::{RenderOptions, Rendered, render};

include!(concat!(env!("OUT_DIR"), "/embedded_catalog.rs"));

/// The embedded catalog files as load sources, paths relative to the crate (`catalog/…`).
pub fn embedded_sources() -> Vec<Source> {
    FILES
        .iter()
        .map(|(path, text)| Source {
            path: Arc::from(*path),
            bytes: text.as_bytes().to_vec(),
        })
        .collect()
}

/// Render the embedded catalog sources with `options` (its `sources` field is ignored: the
/// embedded texts are used).
///
/// # Errors
/// When the embedded catalog does not parse or render, which its tests rule out.
pub fn render_embedded(options: &RenderOptions<'_>) -> Result<Rendered, String> {
    let sources = embedded_sources();
    let loaded = load::parse_sources(&sources);
    if let Some(d) = loaded.diagnostics.first() {
        return Err(format!("{}: {}", d.origin, d.message));
    }
    let options = RenderOptions {
        sources: &sources,
        ..options.clone()
    };
    render(&loaded.objects, &options).map_err(|e| {
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        message
    })
}

/// The rendered common catalog (instancetypes and preferences, cluster-scoped and namespaced),
/// sorted by kind then name. Rendered once per process, on first use.
pub fn embedded_catalog() -> &'static [Object] {
    static CATALOG: OnceLock<Vec<Object>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        // The shipped catalog is covered by tests; failing here is a build defect, not bad input.
        match render_embedded(&RenderOptions::default()) {
            Ok(rendered) => rendered.objects,
            Err(message) => panic!("the embedded catalog does not render: {message}"),
        }
    })
}

/// Look an object up in the embedded catalog by kind, namespace and name, with the resolution
/// index's rules (namespaced objects live in `default`). The catalog is rendered on the first
/// call, so a run whose references all resolve in the user's files never renders it: pass this
/// to [`crate::resolve::Index::set_fallback`].
pub fn embedded_lookup(kind: &str, namespace: &str, name: &str) -> Option<&'static Object> {
    static INDEX: OnceLock<Index<'static>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let mut index = Index::new();
            index.add_layer(embedded_catalog());
            index
        })
        .get_str(kind, namespace, name)
}
