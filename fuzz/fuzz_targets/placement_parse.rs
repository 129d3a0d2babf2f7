//! Strict placement parse: never panics; an accepted document re-emits to a fixed point
//! whose SHA-256 is the digest.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::Options;
use weight_manifest::Placement;

fuzz_target!(|data: &[u8]| {
    let Ok(placement) = Placement::from_json(data, &Options::default()) else {
        return;
    };
    let text = placement.to_json();
    let again =
        Placement::from_json(&text, &Options::default()).expect("emitted placement must parse");
    assert_eq!(again, placement);
    assert_eq!(again.to_json(), text, "emission is a fixed point");
    assert_eq!(
        weight_manifest::canonical::sha256_hex(text.as_bytes()),
        placement.digest()
    );
});
