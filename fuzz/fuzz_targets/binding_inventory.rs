//! Binding inventory reader: never panics; an accepted binding round-trips its wire form.
#![no_main]

use libfuzzer_sys::fuzz_target;

use weight_manifest::Binding;
use weight_manifest::Options;

fuzz_target!(|data: &[u8]| {
    for options in [Options::default(), Options::view()] {
        let Ok(binding) = Binding::from_inventory_json(data, &options) else {
            continue;
        };
        let text = binding.to_json();
        assert_eq!(
            Binding::from_json(&text, &Options::default()).expect("emitted binding must parse"),
            binding
        );
    }
});
