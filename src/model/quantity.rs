//! Kubernetes resource quantities, parsed and printed exactly as Go's `resource.Quantity`.
//! (Being written: this is the API only.)
#![allow(missing_docs, clippy::unused_self)]

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)]
pub struct QuantityError;

#[derive(Clone, Debug)]
pub struct Quantity {
    _private: (),
}

impl Quantity {
    pub fn parse(_s: &str) -> Result<Quantity, QuantityError> {
        Err(QuantityError)
    }
    pub fn from_json(_v: &serde_json::Value) -> Option<Quantity> {
        None
    }
    pub fn eq_value(&self, _o: &Quantity) -> bool {
        false
    }
    pub fn is_zero(&self) -> bool {
        true
    }
    pub fn value(&self) -> i64 {
        0
    }
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::String(self.to_string())
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0")
    }
}
