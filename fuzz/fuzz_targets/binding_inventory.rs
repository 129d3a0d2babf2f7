//! Binding inventory reader: never panics; an accepted binding round-trips its wire form.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::inventory::{read_binding_inventory, InventoryOptions};
use weight_manifest::Binding;

fuzz_target!(|data: &[u8]| {
    for options in [InventoryOptions::default(), InventoryOptions::view()] {
        let Ok(binding) = read_binding_inventory(data, &options) else { continue };
        let text = binding.to_json();
        assert_eq!(Binding::from_json(&text).expect("emitted binding must parse"), binding);
    }
});
