//! The content manifest reader (contract §19.5) through the reading pipeline: never
//! panics; an accepted manifest re-emits to a fixed point that reads back equal, and
//! checking its fragments' partials (when it has fragments) never panics either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::Limits;
use weight_manifest_content::manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(read) = manifest::read(data, &Limits::default()) else {
        return;
    };
    let text = manifest::to_json(&read);
    let again =
        manifest::read(text.as_bytes(), &Limits::default()).expect("emitted manifest must read");
    assert_eq!(again, read);
    assert_eq!(manifest::to_json(&again), text, "emission is a fixed point");
    if read.fragments.is_some() {
        let _ = manifest::verify_fragments(&read);
    }
});
