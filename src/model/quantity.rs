//! Kubernetes resource quantities, parsed and printed exactly as Go's `resource.Quantity`.
//! (Being written: see the API below.)

use std::fmt;

/// The format a quantity is printed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Decimal SI suffixes (`k`, `M`, `G`, `m`, ...).
    DecimalSi,
    /// Binary SI suffixes (`Ki`, `Mi`, `Gi`, ...).
    BinarySi,
    /// Decimal exponent (`1e3`).
    DecimalExponent,
}

/// A parse failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
pub struct QuantityError;

/// A parsed quantity.
#[derive(Clone, Debug)]
pub struct Quantity {
    _private: (),
}

impl Quantity {
    /// Parse a quantity string.
    pub fn parse(_s: &str) -> Result<Quantity, QuantityError> {
        Err(QuantityError)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0")
    }
}
