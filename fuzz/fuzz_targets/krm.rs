//! The KRM ResourceList reader: any bytes on stdin of `kvrender fn` give a ResourceList with
//! results (or an error), never a panic; the whole function runs, as `kvrender fn` would.
//! Reading a list in parts gives what reading it whole gives, and what the function prints is
//! a ResourceList that reads back.
#![no_main]

use kvrender::krm;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    assert_eq!(
        krm::resource_list::parse(text),
        krm::resource_list::parse_whole(text)
    );
    if let Ok(out) = krm::run_resource_list(text, None) {
        let back = krm::resource_list::parse_whole(&out.stdout);
        assert!(back.is_ok(), "{back:?}\n{}", out.stdout);
    }
});
