//! Rendering instancetype families and composed preferences. Being written; this is the
//! interface the other modules code against until the renderer lands.

use crate::load::Source;
use crate::model::Object;
use crate::origin::Origin;

/// The API group of kvrender's own catalog kinds.
pub const CATALOG_GROUP: &str = "kvrender.io";

/// Whether `object` is one of kvrender's catalog kinds (any kind of the `kvrender.io` group).
pub fn is_catalog_kind(object: &Object) -> bool {
    object
        .api_version()
        .split_once('/')
        .is_some_and(|(group, _)| group == CATALOG_GROUP)
}

/// Options of a render run.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions<'a> {
    /// When set, every rendered object gets the version label with this value.
    pub version: Option<&'a str>,
    /// The label key for `version`.
    pub version_label: Option<&'a str>,
    /// The texts the objects were parsed from.
    pub sources: &'a [Source],
}

/// The result of a render run.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// The generated objects, sorted by kind then name.
    pub objects: Vec<Object>,
    /// The input objects that are not catalog kinds, untouched and in input order.
    pub passthrough: Vec<Object>,
}

/// Why a catalog could not be rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// A catalog document does not follow the format.
    #[error("{location}: {message}")]
    Invalid {
        /// The file and line of the offending field.
        location: Origin,
        /// What is wrong.
        message: String,
    },
}

impl RenderError {
    /// The file and line the error is about.
    pub fn location(&self) -> &Origin {
        match self {
            RenderError::Invalid { location, .. } => location,
        }
    }
}

/// Render the catalog documents among `objects`; other objects pass through untouched.
///
/// # Errors
/// Always for catalog documents, until the renderer lands.
pub fn render(objects: &[Object], _options: &RenderOptions<'_>) -> Result<Rendered, RenderError> {
    if let Some(obj) = objects.iter().find(|o| is_catalog_kind(o)) {
        return Err(RenderError::Invalid {
            location: obj.origin.clone(),
            message: "catalog rendering is not available yet".into(),
        });
    }
    Ok(Rendered {
        objects: Vec::new(),
        passthrough: objects.to_vec(),
    })
}

/// Render the embedded catalog with `options`.
///
/// # Errors
/// Never, until the renderer lands.
pub fn render_embedded(_options: &RenderOptions<'_>) -> Result<Rendered, String> {
    Ok(Rendered::default())
}

/// The embedded common catalog, rendered once.
pub fn embedded_catalog() -> &'static [Object] {
    &[]
}
