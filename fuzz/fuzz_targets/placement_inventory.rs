//! Placement inventory reader: never panics; an accepted inventory gives a placement
//! whose wire form parses back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::inventory::read_placement_inventory;
use weight_manifest::Placement;

fuzz_target!(|data: &[u8]| {
    let Ok(placement) = read_placement_inventory(data) else { return };
    let again = Placement::from_json(placement.to_json()).expect("emitted placement must parse");
    assert_eq!(again, placement);
});
