//! The KRM ResourceList reader: any bytes on stdin of `kvrender fn` give a ResourceList with
//! results (or an error), never a panic; the whole function runs, as `kvrender fn` would.
#![no_main]

use kvrender::krm;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = krm::resource_list::parse(text);
    let _ = krm::run_resource_list(text, None);
});
