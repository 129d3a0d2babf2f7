//! Runtime inventory reader (both address semantics), then the projections and bind:
//! never panics; the validating reader agrees with the full one; what is accepted
//! re-validates from its own JSON; project / bind / re-project keeps the placement digest
//! (§13.3).
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::inventory::{validate_runtime_inventory, RuntimeSummary};
use weight_manifest::Options;
use weight_manifest::{bind, project_binding, project_placement, Runtime};

fuzz_target!(|data: &[u8]| {
    for options in [Options::default(), Options::view()] {
        let read = Runtime::from_inventory_json(data, &options);
        let summary = read
            .as_ref()
            .map(RuntimeSummary::from)
            .map_err(Clone::clone);
        assert_eq!(validate_runtime_inventory(data, &options), summary);
        let Ok(runtime) = read else { continue };
        let text = runtime.to_json();
        assert_eq!(
            Runtime::from_json(&text, &Options::default()).expect("emitted runtime must parse"),
            runtime
        );
        let Ok(placement) = project_placement(&runtime, None) else {
            continue;
        };
        let Ok(binding) = project_binding(&runtime, None) else {
            continue;
        };
        let rebound = bind(&placement, &binding).expect("a projected binding binds");
        let again = project_placement(&rebound, None).expect("a bound runtime projects");
        assert_eq!(again.digest(), placement.digest());
    }
});
