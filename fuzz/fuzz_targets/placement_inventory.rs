//! Placement inventory reader: never panics; an accepted inventory gives a placement
//! whose wire form parses back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

use weight_manifest::Options;
use weight_manifest::Placement;

fuzz_target!(|data: &[u8]| {
    let Ok(placement) = Placement::from_inventory_json(data, &Options::default()) else {
        return;
    };
    let again = Placement::from_json(placement.to_json(), &Options::default())
        .expect("emitted placement must parse");
    assert_eq!(again, placement);
});
