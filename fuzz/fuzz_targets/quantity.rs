//! The quantity parser: any string parses or is refused without panicking, and a parsed
//! quantity's canonical text parses back to the same value.
#![no_main]

use kvrender::model::quantity::{Format, MAX_DIGITS, Quantity};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(q) = Quantity::parse(s) else {
        return;
    };
    let shown = q.to_string();
    let Ok(back) = Quantity::parse(&shown) else {
        // The one documented refusal: an amount whose exact decimal expansion would need more
        // than MAX_DIGITS digits (Go would build it). `1234567890123456789e200000` is such a
        // text, while `12345678901234567.e200002`, which it prints from, fits the int64 form.
        let (mantissa, exponent) = shown
            .split_once(['e', 'E'])
            .unwrap_or_else(|| panic!("{s:?} printed as {shown:?}, which does not parse"));
        let exponent: i64 = exponent.parse().expect("a printed exponent is an integer");
        assert!(
            mantissa.len() as i64 + exponent > MAX_DIGITS as i64 - 10,
            "{s:?} printed as {shown:?}, which does not parse"
        );
        return;
    };
    // Go's quirk, kept: the exponent is an `int32`, and printing adds the mantissa's trailing
    // zeros to it, wrapping at the edge (`384000E-930516503755751425` has the exponent
    // 2^31 - 1 once wrapped, and prints as `384e-2147483646`), so such a text does not
    // round-trip by value. Go cannot even read it back: rounding it to nano-units builds a
    // power of ten with two billion digits.
    if shown
        .split_once(['e', 'E'])
        .and_then(|(_, e)| e.parse::<i64>().ok())
        .is_some_and(|e| e.unsigned_abs() > u64::from(i32::MAX.unsigned_abs()) - 64)
    {
        return;
    }
    // Go's quirk, kept: a decimal-SI amount of 10^21 or more has no suffix, and Go prints the
    // mantissa bare (`1000E` prints as `1`), so only smaller amounts round-trip by value.
    if q.format() == Format::DecimalSi && q.as_f64().abs() >= 1e21 {
        return;
    }
    assert!(
        back.eq_value(&q),
        "{s:?} printed as {shown:?}, which parses to another value"
    );
    // Printing again need not give the same text: a binary amount that is no whole multiple
    // of 1024 prints without a suffix and reads back as a decimal one (as in Go).
    let _ = (q.value(), q.milli_value(), q.as_f64(), q.to_json());
});
