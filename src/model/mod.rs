//! The object model: every document is a JSON-like tree ([`serde_json::Value`] with insertion
//! order kept), wrapped in an [`Object`] that remembers where it came from.
//!
//! We deliberately keep the whole document as an ordered tree rather than typed structs: every
//! field survives untouched unless a KubeVirt rule changes it, unknown fields included, in their
//! order. The rules read the few fields they reason about through the helpers in [`path`].

pub mod glob;
pub mod ip;
pub mod names;
pub mod object;
pub mod path;
pub mod quantity;
pub mod scope;
pub mod written;

pub use object::{Kind, Object};
