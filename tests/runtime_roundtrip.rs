//! Runtime half: the project / re-bind / re-project property (contract §13.3), owners
//! carried through bind, the Rust-values inventory adapter, API-only codes, and a large
//! single-device snapshot through the physical overlap sweep.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value as Json;
use weight_manifest::inventory::Record;
use weight_manifest::wire::RuntimeBindingManifest;
use weight_manifest::Options;
use weight_manifest::{
    bind, project_binding, project_placement, Binding, Code, Owner, Runtime, Value,
};

fn reference(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/vectors/reference")
            .join(name),
    )
    .unwrap()
}

const INVENTORIES: [&str; 5] = [
    "01_tp_sharded_2d.runtime-inventory.json",
    "02_moe_ep_pp.runtime-inventory.json",
    "03_tied_aliases.runtime-inventory.json",
    "w2.runtime-inventory.json",
    "w3.runtime-inventory.json",
];

/// Changes only the physical and lifetime half of a binding (§13.3): instance, generation,
/// lease, and per fragment the runtime id, address, worker, endpoint and device.
fn move_everything(binding: &Binding, shift: u64) -> RuntimeBindingManifest {
    let mut moved = binding.as_wire().clone();
    moved.instance_id = format!("{}-restarted", moved.instance_id);
    moved.generation += 1;
    moved.lease_id = format!("{}-renewed", moved.lease_id);
    for fragment in &mut moved.fragments {
        fragment.fragment_id = format!("moved/{}", fragment.fragment_id);
        fragment.address += shift;
        fragment.worker_id = format!("{}-b", fragment.worker_id);
        "10.9.9.9:1".clone_into(&mut fragment.endpoint);
        fragment.device = format!("{}-b", fragment.device);
    }
    moved
}

#[test]
fn project_rebind_reproject_keeps_the_digest() {
    for name in INVENTORIES {
        let runtime = Runtime::from_inventory_json(reference(name), &Options::default()).unwrap();
        let placement = project_placement(&runtime, None).unwrap();
        let binding = project_binding(&runtime, None).unwrap();
        assert_eq!(
            binding.as_wire().placement_digest,
            placement.digest(),
            "{name}"
        );

        let moved = Binding::from_wire(&move_everything(&binding, 1 << 20)).unwrap();
        let rebound = bind(&placement, &moved).unwrap();
        let again = project_placement(&rebound, None).unwrap();
        assert_eq!(again.placement_id(), placement.placement_id(), "{name}");
        assert_eq!(again.digest(), placement.digest(), "{name}");
        assert_eq!(
            rebound.generation(),
            Some(moved.as_wire().generation),
            "{name}"
        );
    }
}

#[test]
fn runtime_and_binding_wire_forms_round_trip() {
    for name in INVENTORIES {
        let runtime = Runtime::from_inventory_json(reference(name), &Options::default()).unwrap();
        let text = runtime.to_json();
        let parsed = Runtime::from_json(&text, &Options::default()).unwrap();
        assert_eq!(parsed, runtime, "{name}");
        assert_eq!(parsed.to_json(), text, "{name}");
        let binding = project_binding(&runtime, None).unwrap();
        let parsed = Binding::from_json(binding.to_json(), &Options::default()).unwrap();
        assert_eq!(parsed, binding, "{name}");
        assert_eq!(parsed.to_json(), binding.to_json(), "{name}");
    }
}

/// A framework's own record type, read through the [`Record`] trait.
struct TorchLikeRecord {
    members: weight_manifest::Object<'static>,
    storage: &'static str,
}

impl Record for TorchLikeRecord {
    fn member(&self, name: &str) -> Option<Value<'_>> {
        self.members.member(name)
    }

    fn owner(&self) -> Option<Owner> {
        Some(Owner::new(self.storage))
    }
}

fn as_value(json: &Json) -> Value<'static> {
    let text = serde_json::to_vec(json).unwrap();
    weight_manifest::reader::read(&text, "test", &weight_manifest::Limits::default())
        .unwrap()
        .into_owned()
}

#[test]
fn rust_records_read_like_json_and_carry_owners_through_bind() {
    let document: Json =
        serde_json::from_slice(&reference("02_moe_ep_pp.runtime-inventory.json")).unwrap();
    let Value::Object(top) = as_value(&document) else {
        panic!("not an object")
    };
    let records: Vec<TorchLikeRecord> = document["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| {
            let Value::Object(members) = as_value(record) else {
                panic!("not an object")
            };
            TorchLikeRecord {
                members,
                storage: "storage-handle",
            }
        })
        .collect();
    let from_records = Runtime::from_records(&top, &records, &Options::default()).unwrap();
    let from_json = Runtime::from_inventory_json(
        reference("02_moe_ep_pp.runtime-inventory.json"),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(from_records, from_json, "owners are excluded from equality");
    assert!(from_json.owner(0).is_none());
    let owner = from_records.owner(3).expect("every record has an owner");
    assert_eq!(owner.downcast_ref::<&str>(), Some(&"storage-handle"));

    // Owners follow the binding into the bound runtime manifest (§13.3).
    let placement = project_placement(&from_records, None).unwrap();
    let binding = project_binding(&from_records, None).unwrap();
    assert!(binding.owner(0).is_some());
    let bound = bind(&placement, &binding).unwrap();
    assert!((0..bound.fragments().len()).all(|i| bound.owner(i).is_some()));
}

#[test]
fn binding_inventory_owner_resolver_is_called_per_record() {
    let resolve = |record: &Value<'_>| match record.as_object().and_then(|o| o.get("fragment_id")) {
        Some(Value::Str(id)) => Some(Owner::new(id.to_string())),
        _ => None,
    };
    let options = Options::default().with_owners(&resolve);
    let binding = Binding::from_inventory_json(
        reference("01_tp_sharded_2d.binding-inventory.json"),
        &options,
    )
    .unwrap();
    for (i, fragment) in binding.fragments().iter().enumerate() {
        let owner = binding.owner(i).unwrap();
        assert_eq!(
            owner.downcast_ref::<String>(),
            Some(&fragment.fragment_id),
            "sorted with its fragment"
        );
    }
}

/// `missing_generation` and `missing_lease_id` can only come from a runtime manifest built
/// without fragments and without a generation (or lease): API-only for the first.
#[test]
fn projection_of_a_manifest_without_generation_or_lease() {
    let empty = |generation: &str, lease: &str| {
        format!(
            r#"{{"fragments":[],"generation":{generation},"instance_id":"i","lease_id":{lease},"model_id":"m","placement_id":null,"revision":"r","tensors":[]}}"#
        )
    };
    let runtime = Runtime::from_json(empty("null", "\"l\""), &Options::default()).unwrap();
    assert_eq!(runtime.generation(), None);
    let error = project_binding(&runtime, None).unwrap_err();
    assert_eq!(error.code(), Code::MissingGeneration);
    assert_eq!(
        error.message(),
        "runtime manifest has no generation for runtime binding"
    );
    let runtime = Runtime::from_json(empty("4", "null"), &Options::default()).unwrap();
    assert_eq!(
        project_binding(&runtime, None).unwrap_err().code(),
        Code::MissingLeaseId
    );
    let runtime = Runtime::from_json(empty("4", "\"l\""), &Options::default()).unwrap();
    let binding = project_binding(&runtime, None).unwrap();
    assert_eq!(binding.as_wire().generation, 4);
    // An empty placement binds to an empty runtime manifest carrying B's generation.
    let placement = project_placement(&runtime, None).unwrap();
    let bound = bind(&placement, &binding).unwrap();
    assert_eq!(bound.generation(), Some(4));
    assert!(bound.fragments().is_empty());
}

#[test]
fn argument_placement_id_must_be_canonical_and_non_empty() {
    let runtime =
        Runtime::from_inventory_json(reference("w2.runtime-inventory.json"), &Options::default())
            .unwrap();
    let canonical = project_placement(&runtime, None).unwrap();
    assert!(project_placement(&runtime, Some(canonical.placement_id())).is_ok());
    assert_eq!(
        project_placement(&runtime, Some("")).unwrap_err().code(),
        Code::EmptyString
    );
    assert_eq!(
        project_placement(&runtime, Some("sha256:00"))
            .unwrap_err()
            .code(),
        Code::PlacementIdMismatch
    );
}

/// 200,000 fragments of one tensor, all on one (worker, device), packed back to back:
/// the physical sweep and the same-rank box sweep are O(n log n), so this completes fast
/// even in a debug build (timings live in the benchmarks, not here).
#[test]
fn two_hundred_thousand_fragments_on_one_device() {
    let count: u64 = 200_000;
    let mut text = String::with_capacity(64 << 20);
    text.push_str(r#"{"model_id":"m","revision":"r","instance_id":"i","lease_id":"l","generation":1,"tensors":["#);
    for i in 0..count {
        if i > 0 {
            text.push(',');
        }
        let _ = write!(
            text,
            r#"{{"tensor_id":"t","global_shape":[{count},4],"dtype":"bf16","itemsize":2,"partition_dim":0,"layout_fingerprint":"f","is_contiguous":true,"local_shape":[1,4],"stride":[4,1],"storage_offset":0,"byte_offset":0,"rank":{{"dp":0,"tp":{tp},"pp":0,"ep":0}},"lease_generation":1,"fragment_id":"f{i}","global_offset":[{i},0],"address":{address},"nbytes":8,"worker_id":"w","endpoint":"e","device":"d"}}"#,
            tp = i % 2,
            address = 4096 + 8 * i,
        );
    }
    text.push_str("]}");
    let runtime = Runtime::from_inventory_json(text.as_bytes(), &Options::default()).unwrap();
    assert_eq!(runtime.fragments().len(), 200_000);

    // One byte of overlap at the very end is found and named.
    let last = format!(r#""address":{}"#, 4096 + 8 * (count - 1));
    let bad = text.replacen(
        &last,
        &format!(r#""address":{}"#, 4096 + 8 * (count - 1) - 1),
        1,
    );
    let error = Runtime::from_inventory_json(bad.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(error.code(), Code::AddressOverlap);
    assert!(
        error
            .message()
            .starts_with("runtime manifest address ranges overlap: f199998 and f199999"),
        "{}",
        error.message()
    );
}
