//! Kubernetes resource quantities, parsed, compared and printed exactly as apimachinery's
//! `resource.Quantity` does (`pkg/api/resource`: `quantity.go`, `amount.go`, `suffix.go`,
//! `scale_int.go`, `math.go`).
//!
//! A parsed quantity keeps the same internal shape as the Go value, because several observable
//! behaviours depend on it:
//!
//! * **Small amounts** (at most 18 significant digits, no finer than nano, and for binary suffixes
//!   small enough to fit) are kept as a 64-bit integer with a decimal exponent, exactly as written
//!   (`1000M` is 1000 × 10⁶, not 1 × 10⁹; `1Gi` is 1073741824 × 10⁰).
//! * **Everything else** (long mantissas, amounts below one nano, fractional binary amounts, large
//!   binary amounts such as `1Ei`) is kept as an arbitrary-precision decimal rounded up (away
//!   from zero) to nine fractional digits, binary amounts being capped at `i64::MAX`.
//! * When the text was already in canonical form by Go's cheap test at parse time, the text
//!   itself is remembered and printed back verbatim (so `+1G` prints as `+1G`, as in Go).
//!
//! [`Quantity`]'s `Display` is Go's `Quantity.String()`: the canonical form (`1024Mi` → `1Gi`,
//! `0.5Gi` → `512Mi`, `1000M` → `1G`, `1.5` → `1500m`, `0.1Gi` → `107374182400m`).
//!
//! The only deliberate difference from Go: an amount whose exact decimal expansion would need
//! more than [`MAX_DIGITS`] digits (e.g. a 20-digit mantissa with an `e100000` exponent) is
//! rejected instead of exhausting memory.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::ops::RangeInclusive;

use serde_json::Value;

/// The largest number of decimal digits an arbitrary-precision amount may need; longer amounts
/// are refused by [`Quantity::parse`].
pub const MAX_DIGITS: usize = 100_000;

/// The format a quantity is printed in (Go's `resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Decimal SI suffixes (`n`, `u`, `m`, `k`, `M`, `G`, `T`, `P`, `E`).
    DecimalSi,
    /// Binary SI suffixes (`Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei`).
    BinarySi,
    /// Decimal exponent (`1e3`, `5E-3`).
    DecimalExponent,
}

impl Format {
    /// The Go name of the format (`DecimalSI`, `BinarySI`, `DecimalExponent`).
    pub fn go_name(self) -> &'static str {
        match self {
            Format::DecimalSi => "DecimalSI",
            Format::BinarySi => "BinarySI",
            Format::DecimalExponent => "DecimalExponent",
        }
    }
}

/// A quantity string that Go's `ParseQuantity` refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)]
pub struct QuantityError;

/// A parsed Kubernetes quantity (see the module documentation for its representation).
#[derive(Clone, Debug)]
pub struct Quantity {
    amount: Amount,
    /// The input text, kept only when it was judged canonical at parse time (Go's `s`).
    cached: Option<String>,
    format: Format,
}

/// The numeric part of a quantity.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Amount {
    /// `value × 10^scale` (Go's `int64Amount`).
    Int { value: i64, scale: i32 },
    /// An arbitrary-precision decimal (Go's `inf.Dec`).
    Big(BigDec),
}

/// `±mag × 10^(-scale)`; `mag` holds decimal digits (0–9), most significant first, without
/// leading zeros (empty means zero, which is never negative).
#[derive(Clone, Debug, PartialEq, Eq)]
struct BigDec {
    neg: bool,
    mag: Vec<u8>,
    scale: i32,
}

impl Quantity {
    /// Parses a quantity exactly as Go's `resource.ParseQuantity`: an optional sign, a decimal
    /// number (`1`, `1.5`, `.5`, `5.`), and an optional suffix: one of `n u m k M G T P E`,
    /// `Ki Mi Gi Ti Pi Ei`, or an exponent `e<int>` / `E<int>`. No surrounding whitespace.
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        Quantity::parse_noting_change(s).map(|(q, _)| q)
    }

    /// The quantity Go reads from `s` when that is not the amount written: Go rounds a
    /// non-zero amount up (away from zero) to a whole number of nano-units (`1e-30` is `1n`,
    /// `0.5n` is `1n`) and caps a binary one at 2^63 - 1 (`16Ei` is `9223372036854775807`).
    /// `None` when `s` does not parse or Go keeps its amount exactly (`1024Mi`, `1e30`).
    pub fn changed_by_go(s: &str) -> Option<Quantity> {
        match Quantity::parse_noting_change(s) {
            Ok((q, true)) => Some(q),
            _ => None,
        }
    }

    /// [`Quantity::parse`], and whether Go's amount differs from the amount written.
    fn parse_noting_change(s: &str) -> Result<(Quantity, bool), QuantityError> {
        if s.is_empty() {
            return Err(QuantityError);
        }
        if s == "0" {
            return Ok((
                Quantity {
                    amount: Amount::Int { value: 0, scale: 0 },
                    cached: Some(s.to_owned()),
                    format: Format::DecimalSi,
                },
                false,
            ));
        }
        let parts = split(s)?;
        let (base, exponent, format) = interpret_suffix(parts.suffix)?;

        let mut scale: i32 = 0;
        let mut mantissa: i64 = 1;
        let digits = (parts.num.len() + parts.denom.len()) as i64;
        let precision: i64 = match format {
            Format::DecimalSi | Format::DecimalExponent => {
                scale = exponent;
                18 - digits
            }
            Format::BinarySi => {
                if exponent >= 0 && parts.denom.is_empty() {
                    mantissa = 1i64 << exponent;
                    15 - parts.num.len() as i64 - i64::from(exponent * 3 / 10) - 1
                } else {
                    -1
                }
            }
        };

        if precision >= 0 {
            scale = scale.wrapping_sub(parts.denom.len() as i32);
            if scale >= -9 {
                let shifted: Cow<'_, str> = if parts.denom.is_empty() {
                    Cow::Borrowed(parts.num)
                } else {
                    Cow::Owned(format!("{}{}", parts.num, parts.denom))
                };
                let value: i64 = shifted.parse().map_err(|_| QuantityError)?;
                if let Some(mut result) = value.checked_mul(mantissa) {
                    if !parts.positive {
                        result = -result;
                    }
                    let canonical = match format {
                        Format::BinarySi => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => {
                            scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                        }
                    };
                    return Ok((
                        Quantity {
                            amount: Amount::Int {
                                value: result,
                                scale,
                            },
                            cached: canonical.then(|| s.to_owned()),
                            format,
                        },
                        false,
                    ));
                }
            }
        }

        // Arbitrary-precision path.
        if !parts.value.bytes().any(|b| b.is_ascii_digit()) {
            return Err(QuantityError);
        }
        let mut mag = digits_from_str(&format!("{}{}", parts.num, parts.denom));
        let mut dscale: i32 = if parts.value.contains('.') {
            parts.denom.len() as i32
        } else {
            0
        };
        if base == 10 {
            dscale = dscale.wrapping_add(exponent.wrapping_neg());
        } else {
            for _ in 0..exponent / 30 {
                mul_small(&mut mag, 1 << 30);
            }
            mul_small(&mut mag, 1 << (exponent % 30));
        }
        let negative = !parts.positive && !mag.is_empty();
        let mut amount = BigDec {
            neg: false,
            mag,
            scale: dscale,
        };
        let mut changed = false;
        if !amount.mag.is_empty() {
            let grow = 9i64 - i64::from(amount.scale);
            if grow > 0 && amount.mag.len() as i64 + grow > MAX_DIGITS as i64 {
                return Err(QuantityError);
            }
            let (rounded, exact) = amount.round_up(9);
            amount = rounded;
            changed = !exact;
        }
        let mut format = format;
        if format == Format::BinarySi {
            let max = BigDec::from_int(i64::MAX, 0);
            if amount.cmp_num(&max) == Ordering::Greater {
                amount = max;
                changed = true;
            }
            if !amount.mag.is_empty() && amount.cmp_num(&BigDec::from_int(1, 0)) == Ordering::Less {
                format = Format::DecimalSi;
            }
        }
        amount.neg = negative;
        Ok((
            Quantity {
                amount: Amount::Big(amount),
                cached: None,
                format,
            },
            changed,
        ))
    }

    /// Reads a quantity from a JSON value the way Go's `Quantity.UnmarshalJSON` reads the JSON
    /// text: a string (surrounding spaces ignored), or a number, taken as the text Go's
    /// `encoding/json` would print for it (integers verbatim, `1.5` as `1.5`, `2.0` as `2`,
    /// `1e21` as `1e+21`). Anything else, or text that does not parse, gives `None`.
    pub fn from_json(v: &Value) -> Option<Quantity> {
        match v {
            Value::String(s) => Quantity::parse(trim_json_space(s)).ok(),
            Value::Number(n) => {
                let text = if let Some(i) = n.as_i64() {
                    i.to_string()
                } else if let Some(u) = n.as_u64() {
                    u.to_string()
                } else {
                    go_json_float(n.as_f64()?)
                };
                Quantity::parse(&text).ok()
            }
            _ => None,
        }
    }

    /// The canonical string (as [`fmt::Display`]) as a JSON string, as Go marshals a quantity.
    pub fn to_json(&self) -> Value {
        Value::String(self.to_string())
    }

    /// Go's `NewQuantity`: the integer `value` (no fractional part) printed in `format`.
    pub fn new(value: i64, format: Format) -> Quantity {
        Quantity {
            amount: Amount::Int { value, scale: 0 },
            cached: None,
            format,
        }
    }

    /// The format the quantity was written in (after Go's parse-time adjustments: a binary
    /// amount strictly between 0 and 1, e.g. `0.000000000001Ki`, becomes decimal).
    pub fn format(&self) -> Format {
        self.format
    }

    /// Go's `Value()`: the amount as a whole number. A fraction is rounded away from zero for
    /// small amounts (`1.5` → 2, `-1.5` → -2) and up toward +∞ for arbitrary-precision ones; an
    /// amount that does not fit wraps or gives 0 exactly as Go's arithmetic does.
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// Go's `MilliValue()`: the amount in thousandths, rounded like [`Quantity::value`].
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }

    /// Go's `ScaledValue(scale)`: the amount in units of `10^scale`, rounded like
    /// [`Quantity::value`].
    pub fn scaled_value(&self, scale: i32) -> i64 {
        match &self.amount {
            Amount::Int { value, scale: own } => as_scaled_i64(*value, *own, scale).0,
            Amount::Big(d) => d.scaled_value(scale.wrapping_neg()),
        }
    }

    /// Go's `Cmp`: the exact numeric comparison of two quantities (formats ignored).
    pub fn cmp_value(&self, other: &Quantity) -> Ordering {
        if let (
            Amount::Int {
                value: a,
                scale: sa,
            },
            Amount::Int {
                value: b,
                scale: sb,
            },
        ) = (&self.amount, &other.amount)
            && let Some(ordering) = cmp_small(*a, *sa, *b, *sb)
        {
            return ordering;
        }
        self.as_dec().cmp_num(&other.as_dec())
    }

    /// The amount compared with the whole number `n`, without big decimals when both fit the
    /// small comparison.
    fn cmp_int(&self, n: i64) -> Ordering {
        if let Amount::Int { value, scale } = self.amount
            && let Some(ordering) = cmp_small(value, scale, n, 0)
        {
            return ordering;
        }
        self.as_dec().cmp_num(&BigDec::from_int(n, 0))
    }

    /// Go's `Equal`: the two quantities are numerically equal (`1Gi` equals `1024Mi`).
    pub fn eq_value(&self, other: &Quantity) -> bool {
        self.cmp_value(other) == Ordering::Equal
    }

    /// Whether the amount is zero.
    pub fn is_zero(&self) -> bool {
        match &self.amount {
            Amount::Int { value, .. } => *value == 0,
            Amount::Big(d) => d.mag.is_empty(),
        }
    }

    /// Whether the amount is negative.
    pub fn is_negative(&self) -> bool {
        match &self.amount {
            Amount::Int { value, .. } => *value < 0,
            Amount::Big(d) => d.neg,
        }
    }

    /// The amount as the nearest `f64` (correctly rounded from the exact decimal; Go's
    /// `AsApproximateFloat64` may differ in the last bit). Exact for integers up to 2⁵³.
    pub fn as_f64(&self) -> f64 {
        let d = self.as_dec();
        if d.mag.is_empty() {
            return 0.0;
        }
        let digits: String = d.mag.iter().map(|&b| char::from(b'0' + b)).collect();
        let text = format!(
            "{}{}e{}",
            if d.neg { "-" } else { "" },
            digits,
            -i64::from(d.scale)
        );
        text.parse().unwrap_or(0.0)
    }

    /// Go struct equality (`==`) of two parsed quantities: the same internal amount (mantissa and
    /// exponent as written), the same format and the same remembered canonical text. Amounts on
    /// the arbitrary-precision path live behind a pointer in Go, so two separately parsed ones are
    /// never `==`; this returns `false` for them.
    pub fn go_struct_eq(&self, other: &Quantity) -> bool {
        match (&self.amount, &other.amount) {
            (Amount::Int { .. }, Amount::Int { .. }) => {
                self.amount == other.amount
                    && self.format == other.format
                    && self.cached == other.cached
            }
            _ => false,
        }
    }

    /// Go's `%v` rendering of the quantity struct, as it appears in KubeVirt error messages:
    /// `{{1073741824 0} {<nil>} 1Gi BinarySI}`, or `{{0 0} {<ptr>}  DecimalSI}` for an
    /// arbitrary-precision amount (whose heap address is written `<ptr>`).
    pub fn go_struct_repr(&self) -> String {
        match &self.amount {
            Amount::Int { value, scale } => format!(
                "{{{{{value} {scale}}} {{<nil>}} {} {}}}",
                self.cached.as_deref().unwrap_or(""),
                self.format.go_name()
            ),
            Amount::Big(_) => format!(
                "{{{{0 0}} {{<ptr>}} {} {}}}",
                self.cached.as_deref().unwrap_or(""),
                self.format.go_name()
            ),
        }
    }

    fn as_dec(&self) -> BigDec {
        match &self.amount {
            Amount::Int { value, scale } => BigDec::from_int(*value, *scale),
            Amount::Big(d) => d.clone(),
        }
    }

    /// Go's `CanonicalizeBytes`: the number and the suffix.
    fn canonical(&self) -> (String, &'static str) {
        if self.is_zero() {
            return ("0".to_owned(), "");
        }
        let mut format = self.format;
        let mut rounded = None;
        if format == Format::BinarySi {
            if self.cmp_int(-1024) == Ordering::Greater && self.cmp_int(1024) == Ordering::Less {
                format = Format::DecimalSi;
            } else {
                let (r, exact) = self.amount.as_scale_zero();
                if exact {
                    rounded = Some(r);
                } else {
                    format = Format::DecimalSi;
                }
            }
        }
        match (format, rounded) {
            (Format::BinarySi, Some(r)) => {
                let (number, exponent) = r.canonical_base1024();
                (number, binary_suffix(exponent.wrapping_mul(10)))
            }
            _ => {
                let (number, exponent) = self.amount.canonical_base10();
                let suffix = match format {
                    Format::DecimalExponent => {
                        if exponent == 0 {
                            ""
                        } else {
                            return (format!("{number}e{exponent}"), "");
                        }
                    }
                    _ => decimal_suffix(exponent),
                };
                (number, suffix)
            }
        }
    }
}

impl fmt::Display for Quantity {
    /// Go's `Quantity.String()`: the remembered canonical input, or the canonical form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.cached {
            return f.write_str(s);
        }
        let (number, suffix) = self.canonical();
        f.write_str(&number)?;
        f.write_str(suffix)
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

/// The canonical JSON string for `v` when it is a string or number that parses as a quantity
/// (as Go would re-serialize it), else `None`.
pub fn canonicalize(v: &Value) -> Option<Value> {
    Quantity::from_json(v).map(|q| q.to_json())
}

/// Whether the quantities written `a` and `b` parse to `==`-equal Go structs (see
/// [`Quantity::go_struct_eq`]): `1024Mi` and `1048576Ki` are, `1Gi` and `1024Mi` are not (only
/// `1Gi` remembers its text), nor `1G` and `1000M` (different mantissa and exponent). Text that
/// does not parse is never equal.
pub fn go_struct_eq(a: &str, b: &str) -> bool {
    match (Quantity::parse(a), Quantity::parse(b)) {
        (Ok(a), Ok(b)) => a.go_struct_eq(&b),
        _ => false,
    }
}

/// The pieces of a quantity string.
struct Parts<'a> {
    positive: bool,
    /// The signed number as written (everything before the suffix).
    value: &'a str,
    /// The integer digits without leading zeros (`"0"` when there are none).
    num: &'a str,
    /// The fractional digits.
    denom: &'a str,
    suffix: &'a str,
}

/// `a × 10^sa` against `b × 10^sb` in `i128` arithmetic, when the scales are small and the
/// scaled values fit (the common case); `None` leaves the comparison to [`BigDec`].
fn cmp_small(a: i64, sa: i32, b: i64, sb: i32) -> Option<Ordering> {
    const SMALL: RangeInclusive<i32> = -38..=38;
    if !SMALL.contains(&sa) || !SMALL.contains(&sb) {
        return None;
    }
    let low = sa.min(sb);
    let scaled = |v: i64, s: i32| -> Option<i128> {
        let power = 10i128.checked_pow(u32::try_from(s - low).ok()?)?;
        i128::from(v).checked_mul(power)
    };
    Some(scaled(a, sa)?.cmp(&scaled(b, sb)?))
}

/// Splits a quantity string the way Go's `parseQuantityString` does.
fn split(s: &str) -> Result<Parts<'_>, QuantityError> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            value: "0",
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let mut num = &s[start..pos];
    if pos >= end {
        return Ok(Parts {
            positive,
            value: s,
            num,
            denom: "",
            suffix: "",
        });
    }
    if num.is_empty() {
        num = "0";
    }
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let dstart = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[dstart..pos];
        if pos >= end {
            return Ok(Parts {
                positive,
                value: s,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError);
    }
    Ok(Parts {
        positive,
        value,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// Base, exponent and format of a suffix.
fn interpret_suffix(suffix: &str) -> Result<(u32, i32, Format), QuantityError> {
    let dec = |e| Ok((10, e, Format::DecimalSi));
    let bin = |e| Ok((2, e, Format::BinarySi));
    match suffix {
        "" => dec(0),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        _ if suffix.len() > 1 && (suffix.starts_with('e') || suffix.starts_with('E')) => {
            // Go parses a 64-bit integer and then truncates it to 32 bits.
            let parsed: i64 = suffix[1..].parse().map_err(|_| QuantityError)?;
            Ok((10, parsed as i32, Format::DecimalExponent))
        }
        _ => Err(QuantityError),
    }
}

fn decimal_suffix(exponent: i32) -> &'static str {
    match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        // Go finds no suffix (e.g. for 10²¹) and prints the bare number.
        _ => "",
    }
}

fn binary_suffix(exponent: i32) -> &'static str {
    match exponent {
        10 => "Ki",
        20 => "Mi",
        30 => "Gi",
        40 => "Ti",
        50 => "Pi",
        60 => "Ei",
        _ => "",
    }
}

/// Strips what Go's `strings.TrimSpace` would strip from the raw JSON text of a string: white
/// space that `encoding/json` leaves unescaped (ASCII control characters and U+2028/U+2029 are
/// escaped in JSON text, so Go never sees them raw and the parse fails).
fn trim_json_space(s: &str) -> &str {
    s.trim_matches(|c: char| {
        c.is_whitespace() && !c.is_ascii_control() && c != '\u{2028}' && c != '\u{2029}'
    })
}

/// The text Go's `encoding/json` prints for a float64.
fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((mant, exp)) if !exp.starts_with('-') => format!("{mant}e+{exp}"),
            _ => s,
        }
    } else {
        format!("{f}")
    }
}

// ---------------------------------------------------------------------------------------------
// 64-bit helpers with Go's overflow behaviour (math.go).

/// `a × b` and whether it did not overflow; on overflow the wrapped product is still returned
/// (except for `i64::MIN`), as Go's `int64MultiplyScale` does.
fn mul_scale(a: i64, b: i64) -> (i64, bool) {
    if a == 0 || a == 1 {
        return (a.wrapping_mul(b), true);
    }
    if a == i64::MIN && b != 1 {
        return (0, false);
    }
    let c = a.wrapping_mul(b);
    (c, c / b == a)
}

/// `base × 10^scale` with Go's `positiveScaleInt64` overflow behaviour.
fn positive_scale_i64(base: i64, scale: i32) -> (i64, bool) {
    match scale {
        0 => (base, true),
        1 => mul_scale(base, 10),
        2 => mul_scale(base, 100),
        3 => mul_scale(base, 1000),
        6 => mul_scale(base, 1_000_000),
        9 => mul_scale(base, 1_000_000_000),
        _ => {
            if base == 0 {
                return (0, true);
            }
            let mut value = base;
            for _ in 0..scale {
                let (v, ok) = mul_scale(value, 10);
                if !ok {
                    return (0, false);
                }
                value = v;
            }
            (value, true)
        }
    }
}

/// `base / 10^scale` rounded away from zero, and whether it was exact.
fn negative_scale_i64(base: i64, scale: i32) -> (i64, bool) {
    if scale == 0 {
        return (base, true);
    }
    let mut value = base;
    let mut fraction = false;
    for _ in 0..scale {
        if !fraction && value % 10 != 0 {
            fraction = true;
        }
        value /= 10;
        if value == 0 {
            if fraction {
                return (if base > 0 { 1 } else { -1 }, false);
            }
            return (0, true);
        }
    }
    if fraction {
        if base > 0 {
            value += 1;
        } else {
            value -= 1;
        }
    }
    (value, !fraction)
}

/// Go's `int64Amount.AsScaledInt64`.
fn as_scaled_i64(value: i64, own: i32, scale: i32) -> (i64, bool) {
    if own < scale {
        (negative_scale_i64(value, scale.wrapping_sub(own)).0, true)
    } else {
        positive_scale_i64(value, own.wrapping_sub(scale))
    }
}

/// Removes factors of `base` from `value`, returning what is left and how many were removed.
fn remove_i64_factors(value: i64, base: i64) -> (i64, i32) {
    let negative = value < 0;
    let mut result = if negative {
        value.wrapping_neg()
    } else {
        value
    };
    let mut times = 0;
    while result >= base && result % base == 0 {
        times += 1;
        result /= base;
    }
    (
        if negative {
            result.wrapping_neg()
        } else {
            result
        },
        times,
    )
}

impl Amount {
    /// Go's `AsScale(0)`: rounded away from zero to an integer, and whether that was exact.
    fn as_scale_zero(&self) -> (Amount, bool) {
        match self {
            Amount::Int { value, scale } => {
                if *scale >= 0 {
                    (self.clone(), true)
                } else {
                    let (v, exact) = negative_scale_i64(*value, scale.wrapping_neg());
                    (Amount::Int { value: v, scale: 0 }, exact)
                }
            }
            Amount::Big(d) => {
                let (r, exact) = d.round_up(0);
                (Amount::Big(r), exact)
            }
        }
    }

    /// Go's `AsCanonicalBytes`: digits and a decimal exponent that is a multiple of 3.
    fn canonical_base10(&self) -> (String, i32) {
        match self {
            Amount::Int { value, scale } => {
                let (mut amount, times) = remove_i64_factors(*value, 10);
                let mut exponent = scale.wrapping_add(times);
                let step = match exponent % 3 {
                    1 | -2 => Some((10, 1)),
                    2 | -1 => Some((100, 2)),
                    _ => None,
                };
                if let Some((factor, minus)) = step {
                    let (scaled, ok) = if amount == i64::MIN {
                        (0, false)
                    } else {
                        mul_scale(amount, factor)
                    };
                    if !ok {
                        return BigDec::from_int(*value, *scale).canonical_base10();
                    }
                    amount = scaled;
                    exponent = exponent.wrapping_sub(minus);
                }
                (amount.to_string(), exponent)
            }
            Amount::Big(d) => d.canonical_base10(),
        }
    }

    /// Go's `AsCanonicalBase1024Bytes`: digits and a power of 1024.
    fn canonical_base1024(&self) -> (String, i32) {
        match self {
            Amount::Int { value, scale } => {
                let (v, ok) = as_scaled_i64(*value, *scale, 0);
                if !ok {
                    return BigDec::from_int(*value, *scale).canonical_base1024();
                }
                let (amount, exponent) = remove_i64_factors(v, 1024);
                (amount.to_string(), exponent)
            }
            Amount::Big(d) => d.canonical_base1024(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Arbitrary-precision decimal (the parts of `inf.Dec` / `big.Int` a quantity needs).

/// Decimal digits of a string of ASCII digits, leading zeros removed.
fn digits_from_str(s: &str) -> Vec<u8> {
    s.bytes()
        .skip_while(|&b| b == b'0')
        .map(|b| b - b'0')
        .collect()
}

fn digits_to_string(d: &[u8]) -> String {
    if d.is_empty() {
        return "0".to_owned();
    }
    d.iter().map(|&b| char::from(b'0' + b)).collect()
}

/// `d *= m` for `m < 2^60`.
fn mul_small(d: &mut Vec<u8>, m: u64) {
    if d.is_empty() {
        return;
    }
    let mut carry: u128 = 0;
    for digit in d.iter_mut().rev() {
        let x = u128::from(*digit) * u128::from(m) + carry;
        *digit = (x % 10) as u8;
        carry = x / 10;
    }
    let mut head = Vec::new();
    while carry > 0 {
        head.push((carry % 10) as u8);
        carry /= 10;
    }
    head.reverse();
    head.append(d);
    *d = head;
    normalize(d);
}

/// `(d / m, d % m)`.
fn divmod_small(d: &[u8], m: u64) -> (Vec<u8>, u64) {
    let mut q = Vec::with_capacity(d.len());
    let mut rem: u128 = 0;
    for &digit in d {
        let x = rem * 10 + u128::from(digit);
        q.push((x / u128::from(m)) as u8);
        rem = x % u128::from(m);
    }
    normalize(&mut q);
    (q, rem as u64)
}

fn normalize(d: &mut Vec<u8>) {
    let lead = d.iter().take_while(|&&b| b == 0).count();
    if lead > 0 {
        d.drain(..lead);
    }
}

fn add_one(d: &mut Vec<u8>) {
    for digit in d.iter_mut().rev() {
        if *digit == 9 {
            *digit = 0;
        } else {
            *digit += 1;
            return;
        }
    }
    d.insert(0, 1);
}

/// The low 64 bits of the magnitude, as a two's-complement `i64` (Go's `big.Int.Int64`).
fn low_i64(neg: bool, d: &[u8]) -> i64 {
    let mut acc: u64 = 0;
    for &digit in d {
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(digit));
    }
    let v = acc as i64;
    if neg { v.wrapping_neg() } else { v }
}

/// Whether the integer with the decimal digits `d` (most significant first) and sign `neg` is
/// below `i64::MAX`, as Go's `big.Int.Cmp(maxInt64) < 0`.
fn unscaled_below_i64_max(neg: bool, d: &[u8]) -> bool {
    const MAX: &[u8] = b"9223372036854775807";
    let start = d.iter().position(|&b| b != 0).unwrap_or(d.len());
    let d = &d[start..];
    if neg && !d.is_empty() {
        return true;
    }
    match d.len().cmp(&MAX.len()) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => {
            d.iter()
                .zip(MAX)
                .map(|(&a, &m)| a.cmp(&(m - b'0')))
                .find(|o| o.is_ne())
                == Some(Ordering::Less)
        }
    }
}

impl BigDec {
    fn from_int(value: i64, scale: i32) -> BigDec {
        BigDec {
            neg: value < 0,
            mag: digits_from_str(&value.unsigned_abs().to_string()),
            scale: scale.wrapping_neg(),
        }
    }

    /// The value rounded away from zero to `scale` fractional digits (inf's `Round` with
    /// `RoundUp`); the result always has exactly that scale. Also says whether it was exact.
    fn round_up(&self, scale: i32) -> (BigDec, bool) {
        let diff = i64::from(scale) - i64::from(self.scale);
        let mut mag = self.mag.clone();
        let mut exact = true;
        if diff >= 0 {
            if !mag.is_empty() {
                mag.extend(std::iter::repeat_n(0, diff as usize));
            }
        } else {
            let cut = (-diff) as usize;
            let keep = mag.len().saturating_sub(cut);
            exact = mag[keep..].iter().all(|&b| b == 0);
            mag.truncate(keep);
            normalize(&mut mag);
            if !exact {
                add_one(&mut mag);
            }
        }
        let neg = self.neg && !mag.is_empty();
        (BigDec { neg, mag, scale }, exact)
    }

    /// Exact numeric comparison.
    fn cmp_num(&self, other: &BigDec) -> Ordering {
        let sign = |d: &BigDec| -> i8 {
            if d.mag.is_empty() {
                0
            } else if d.neg {
                -1
            } else {
                1
            }
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let trimmed = |d: &BigDec| -> (i64, usize) {
            let trailing = d.mag.iter().rev().take_while(|&&b| b == 0).count();
            let len = d.mag.len() - trailing;
            // Position of the leading digit: value is 0.<digits> × 10^adjusted.
            let adjusted = d.mag.len() as i64 - i64::from(d.scale);
            (adjusted, len)
        };
        let (ea, la) = trimmed(self);
        let (eb, lb) = trimmed(other);
        let magnitude = ea
            .cmp(&eb)
            .then_with(|| self.mag[..la].cmp(&other.mag[..lb]));
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    fn signed_string(&self, mag: &[u8]) -> String {
        let digits = digits_to_string(mag);
        if self.neg && !mag.is_empty() {
            format!("-{digits}")
        } else {
            digits
        }
    }

    /// Digits and a decimal exponent that is a multiple of 3 (Go's `infDecAmount`
    /// `AsCanonicalBytes`).
    fn canonical_base10(&self) -> (String, i32) {
        let mut mag = self.mag.clone();
        let mut exponent = self.scale.wrapping_neg();
        if !mag.is_empty() {
            let trailing = mag.iter().rev().take_while(|&&b| b == 0).count();
            mag.truncate(mag.len() - trailing);
            exponent = exponent.wrapping_add(trailing as i32);
        }
        while exponent % 3 != 0 {
            if !mag.is_empty() {
                mag.push(0);
            }
            exponent = exponent.wrapping_sub(1);
        }
        (self.signed_string(&mag), exponent)
    }

    /// Digits of the value rounded up to an integer, and a power of 1024.
    fn canonical_base1024(&self) -> (String, i32) {
        let (rounded, _) = self.round_up(0);
        let mut mag = rounded.mag.clone();
        let mut times = 0;
        while !mag.is_empty() {
            let (q, r) = divmod_small(&mag, 1024);
            if r != 0 {
                break;
            }
            mag = q;
            times += 1;
        }
        (rounded.signed_string(&mag), times)
    }

    /// Go's `scaledValue(unscaled, scale, new_scale)` with its rounding and wrapping.
    fn scaled_value(&self, new_scale: i32) -> i64 {
        let dif = i64::from(self.scale) - i64::from(new_scale);
        let unscaled = low_i64(self.neg, &self.mag);
        if dif == 0 {
            return unscaled;
        }
        if dif < 0 {
            // Go converts math.Pow10(-dif) to int64; beyond 10^18 that gives i64::MIN on amd64.
            let factor = if -dif <= 18 {
                10i64.pow((-dif) as u32)
            } else {
                i64::MIN
            };
            return unscaled.wrapping_mul(factor);
        }
        // Go compares the unscaled integer (not the amount) with the largest int64 here.
        if unscaled_below_i64_max(self.neg, &self.mag) && dif < 19 {
            let divide = 10i64.pow(dif as u32);
            let result = unscaled / divide;
            return if unscaled % divide != 0 {
                result + 1
            } else {
                result
            };
        }
        // Euclidean division by 10^dif: the quotient is the floor.
        let cut = usize::try_from(dif).unwrap_or(usize::MAX);
        let keep = self.mag.len().saturating_sub(cut);
        let remainder = self.mag[keep..].iter().any(|&b| b != 0);
        let mut q = self.mag[..keep].to_vec();
        normalize(&mut q);
        if self.neg && remainder {
            add_one(&mut q);
        }
        let quotient = low_i64(self.neg, &q);
        if remainder {
            quotient.wrapping_add(1)
        } else {
            quotient
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|_| panic!("{s} should parse"))
    }

    fn canon(s: &str) -> String {
        q(s).to_string()
    }

    #[test]
    fn canonical_forms() {
        let table = [
            // From the conformance READMEs.
            ("1024Mi", "1Gi"),
            ("0.5Gi", "512Mi"),
            ("1000M", "1G"),
            ("2048M", "2048M"),
            ("2e9", "2e9"),
            ("0.1Gi", "107374182400m"),
            ("1.5", "1500m"),
            ("0.5", "500m"),
            ("134217728", "134217728"),
            ("100m", "100m"),
            ("1Gi", "1Gi"),
            // Binary.
            ("1Ki", "1Ki"),
            ("1Mi", "1Mi"),
            ("300Mi", "300Mi"),
            ("307200Ki", "300Mi"),
            ("1025024Mi", "1001Gi"),
            ("1024Gi", "1Ti"),
            ("1Ei", "1Ei"),
            ("8Ei", "9223372036854775807"),
            ("9Ei", "9223372036854775807"),
            ("1.5Gi", "1536Mi"),
            ("1.5Ki", "1536"),
            ("0.5Ki", "512"),
            ("1023", "1023"),
            (".001Ki", "1024m"),
            (".000001Ki", "1024u"),
            (".000000001Ki", "1024n"),
            (".000000000001Ki", "2n"),
            ("100.035Ki", "102435840m"),
            // Decimal.
            ("1000000000", "1G"),
            ("50k", "50k"),
            ("0.001T", "1G"),
            ("1080m", "1080m"),
            ("1.08", "1080m"),
            ("1080000000n", "1080m"),
            ("1000u", "1m"),
            ("12E", "12E"),
            ("1000E", "1"),
            ("1.01E", "1010P"),
            ("7.123456M", "7.123456M"),
            ("7.123456Mi", "7469484998656u"),
            ("6.987654321G", "6.987654321G"),
            ("3.001n", "4n"),
            ("0.0000000001", "1n"),
            ("0.00000012345", "124n"),
            ("12345678901234567890", "12345678901234567890"),
            ("123456789012345678901k", "123456789012345678901k"),
            ("1.", "1."),
            ("1.G", "1.G"),
            ("1.0G", "1G"),
            (".5", "500m"),
            ("0.5e0", "500e-3"),
            // Exponent.
            ("1e3", "1e3"),
            ("1E6", "1E6"),
            ("10E5", "1e6"),
            (".001e12", "1e9"),
            ("1000e-12", "1e-9"),
            ("0.001e0", "1e-3"),
            ("1.2e3", "1200"),
            ("1.3E+6", "1300e3"),
            ("1.1E-9", "2e-9"),
            ("10e2", "1e3"),
            ("1.5e300", "1500e297"),
            ("Gi", "0"),
            ("k", "0"),
            // Zero.
            ("0", "0"),
            ("00", "0"),
            ("0Ki", "0"),
            ("0.000", "0"),
            ("-0", "0"),
            ("0e-20", "0"),
            (".", "0"),
            ("+", "0"),
            ("-", "0"),
            // Negative.
            ("-1024Mi", "-1Gi"),
            ("-0.5Gi", "-512Mi"),
            ("-1000M", "-1G"),
            ("-1.5", "-1500m"),
            ("-.000000000001Ki", "-2n"),
            ("-0.00000012345", "-124n"),
            ("-1023Ki", "-1023Ki"),
            ("-9Ei", "-9223372036854775807"),
            // Canonical text kept verbatim, as Go does.
            ("+1G", "+1G"),
            ("01G", "01G"),
            ("1e+3", "1e+3"),
        ];
        for (input, expected) in table {
            assert_eq!(canon(input), expected, "canonical form of {input}");
        }
    }

    #[test]
    fn formats() {
        assert_eq!(q("1Gi").format(), Format::BinarySi);
        assert_eq!(q("1G").format(), Format::DecimalSi);
        assert_eq!(q("1").format(), Format::DecimalSi);
        assert_eq!(q("1e3").format(), Format::DecimalExponent);
        assert_eq!(q("0.000000000001Ki").format(), Format::DecimalSi);
        assert_eq!(q("0.5Ki").format(), Format::BinarySi);
        assert_eq!(q("0Ki").format(), Format::BinarySi);
    }

    #[test]
    fn parse_errors() {
        for bad in [
            "",
            " 1",
            "1 ",
            "1.1.M",
            "1+1.0M",
            "0.1mi",
            "0.1am",
            "aoeu",
            ".5i",
            "1i",
            "-3.01i",
            "-3.01e-",
            "1K",
            "1e",
            "1E+",
            "1ee3",
            "1Gib",
            "1.5.5",
            "1e3.5",
            "1-5",
            "1GG",
            "١",
            "1e99999999999999999999",
            ".e-20",
            "1234567890123456789e1000000",
        ] {
            assert_eq!(
                Quantity::parse(bad).map(|q| q.to_string()),
                Err(QuantityError),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn values_and_rounding() {
        let table: [(&str, i64, i64); 19] = [
            ("1Gi", 1 << 30, 1000 << 30),
            ("1.5", 2, 1500),
            ("-1.5", -2, -1500),
            ("100m", 1, 100),
            ("1m", 1, 1),
            ("0.1m", 1, 1),
            ("1n", 1, 1),
            ("-1n", -1, -1),
            ("1.5Gi", 1610612736, 1610612736000),
            ("0.0000000001", 1, 1),
            ("-0.0000000001", 1, 1),
            (
                "12345678901234567890",
                -6101065172474983726,
                4807115922877858896,
            ),
            ("9Ei", i64::MAX, i64::MAX.wrapping_mul(1000)),
            // Big amounts whose unscaled integer (the amount in nano units) passes int64 while
            // the amount does not: the value is still exact.
            ("1Pi", 1 << 50, 1000 << 50),
            ("5Ei", 5 << 60, (5i64 << 60).wrapping_mul(1000)),
            (
                "5000000000000000000",
                5_000_000_000_000_000_000,
                5_000_000_000_000_000_000i64.wrapping_mul(1000),
            ),
            ("10E", 0, 0),
            ("128Mi", 134217728, 134217728000),
            ("0", 0, 0),
        ];
        for (input, value, milli) in table {
            let quantity = q(input);
            assert_eq!(quantity.value(), value, "value of {input}");
            assert_eq!(quantity.milli_value(), milli, "milli value of {input}");
        }
        assert_eq!(Quantity::new(42, Format::BinarySi).value(), 42);
        assert_eq!(Quantity::new(2048, Format::BinarySi).to_string(), "2Ki");
        assert_eq!(
            Quantity::new(26843544, Format::BinarySi).to_string(),
            "26843544"
        );
        assert_eq!(Quantity::new(1000, Format::DecimalSi).to_string(), "1k");
        assert_eq!(Quantity::new(0, Format::BinarySi).to_string(), "0");
        assert_eq!(
            Quantity::new(1000, Format::DecimalExponent).to_string(),
            "1e3"
        );
    }

    #[test]
    fn comparisons() {
        assert!(q("1Gi").eq_value(&q("1024Mi")));
        assert!(q("1Gi").eq_value(&q("1073741824")));
        assert!(q("1G").eq_value(&q("1000M")));
        assert!(q("2").eq_value(&q("2000m")));
        assert!(q("0.5").eq_value(&q("500m")));
        assert!(q("0").eq_value(&q("0Gi")));
        assert!(q("1Ei").eq_value(&q("1024Pi")));
        assert_eq!(q("1Gi").cmp_value(&q("1G")), Ordering::Greater);
        assert_eq!(q("1G").cmp_value(&q("1Gi")), Ordering::Less);
        assert_eq!(q("-1").cmp_value(&q("1n")), Ordering::Less);
        assert_eq!(q("-2").cmp_value(&q("-1")), Ordering::Less);
        assert_eq!(q("1n").cmp_value(&q("0")), Ordering::Greater);
        assert_eq!(
            q("12345678901234567890").cmp_value(&q("12345678901234567891")),
            Ordering::Less
        );
        assert_eq!(q("1.5e300").cmp_value(&q("1e300")), Ordering::Greater);
        assert!(q("0").is_zero() && q("0.0Mi").is_zero() && !q("1n").is_zero());
        assert!(q("-1").is_negative() && !q("-0").is_negative());
    }

    #[test]
    fn go_struct_equality() {
        assert!(!go_struct_eq("1Gi", "1024Mi"));
        assert!(!go_struct_eq("1G", "1000M"));
        assert!(!go_struct_eq("2", "2000m"));
        assert!(go_struct_eq("1024Mi", "1048576Ki"));
        assert!(go_struct_eq("1Gi", "1Gi"));
        assert!(go_struct_eq("1000M", "1000M"));
        assert!(go_struct_eq("128Mi", "131072Ki"));
        assert!(!go_struct_eq("1G", "1e9"));
        // Arbitrary-precision amounts sit behind a pointer in Go.
        assert!(!go_struct_eq("1.5Gi", "1.5Gi"));
        assert!(go_struct_eq("12345Gi", "12345Gi"));
        assert!(!go_struct_eq("123456Gi", "123456Gi"));
        assert!(!go_struct_eq("1Pi", "1Pi"));
        assert_eq!(
            q("1Ti").go_struct_repr(),
            "{{1099511627776 0} {<nil>} 1Ti BinarySI}"
        );
        assert!(!go_struct_eq("bad", "bad"));
        assert_eq!(
            q("1Gi").go_struct_repr(),
            "{{1073741824 0} {<nil>} 1Gi BinarySI}"
        );
        assert_eq!(
            q("128Mi").go_struct_repr(),
            "{{134217728 0} {<nil>}  BinarySI}"
        );
        assert_eq!(q("64M").go_struct_repr(), "{{64 6} {<nil>} 64M DecimalSI}");
        assert_eq!(q("1000M").go_struct_repr(), "{{1000 6} {<nil>}  DecimalSI}");
        assert_eq!(q("0.5").go_struct_repr(), "{{5 -1} {<nil>}  DecimalSI}");
        assert_eq!(
            q("2000m").go_struct_repr(),
            "{{2000 -3} {<nil>}  DecimalSI}"
        );
        assert_eq!(q("1.5Gi").go_struct_repr(), "{{0 0} {<ptr>}  BinarySI}");
    }

    #[test]
    fn json() {
        let cases = [
            (json!("1024Mi"), Some("1Gi")),
            (json!(" 1Gi "), Some("1Gi")),
            (json!("\t1Gi"), None),
            (json!(134217728), Some("134217728")),
            (json!(2), Some("2")),
            (json!(1.5), Some("1500m")),
            (json!(2.0), Some("2")),
            (json!(0.5), Some("500m")),
            (json!(-3), Some("-3")),
            (json!(1e21), Some("1e+21")),
            (json!(1.5e-7), Some("150e-9")),
            (json!(18446744073709551615u64), Some("18446744073709551615")),
            (json!(true), None),
            (json!(null), None),
            (json!({"a": 1}), None),
            (json!("garbage"), None),
        ];
        for (value, expected) in cases {
            assert_eq!(
                canonicalize(&value),
                expected.map(|s| Value::String(s.to_owned())),
                "{value}"
            );
        }
        assert_eq!(q("0.5Gi").to_json(), json!("512Mi"));
    }

    #[test]
    fn approximate_float() {
        assert_eq!(q("1.5").as_f64(), 1.5);
        assert_eq!(q("1Gi").as_f64(), 1073741824.0);
        assert_eq!(q("-100m").as_f64(), -0.1);
        assert_eq!(q("1.5Gi").as_f64(), 1610612736.0);
        assert_eq!(q("0").as_f64(), 0.0);
    }

    #[test]
    fn small_comparison_agrees_with_the_exact_decimal_one() {
        let values = [
            0,
            1,
            -1,
            7,
            10,
            1000,
            1024,
            -4096,
            999_999_999,
            i64::MAX,
            i64::MIN,
            i64::MAX / 10,
        ];
        let scales = [
            0,
            1,
            -1,
            3,
            -3,
            9,
            -9,
            18,
            -18,
            37,
            38,
            -38,
            39,
            -39,
            i32::MAX,
            i32::MIN,
        ];
        for &a in &values {
            for &b in &values {
                for &sa in &scales {
                    for &sb in &scales {
                        let exact = BigDec::from_int(a, sa).cmp_num(&BigDec::from_int(b, sb));
                        if let Some(small) = cmp_small(a, sa, b, sb) {
                            assert_eq!(small, exact, "{a}e{sa} vs {b}e{sb}");
                        }
                    }
                }
            }
        }
        assert_eq!(cmp_small(1, 0, 1, 0), Some(Ordering::Equal));
        let q = |s: &str| Quantity::parse(s).unwrap();
        assert!(q("1Gi").eq_value(&q("1024Mi")));
        assert!(q("1G").cmp_value(&q("1Gi")).is_lt());
        assert!(q("1500m").eq_value(&q("1.5")));
    }
}
