//! Rendering instancetype families and composed preferences. Being written.

use crate::model::Object;

/// The embedded common catalog, rendered once.
pub fn embedded_catalog() -> &'static [Object] {
    &[]
}
