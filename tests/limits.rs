//! Every limit of `Limits` at the limit (accepted) and one over it (`limit_exceeded`, the
//! message naming the limit, the pointer at the element that crosses it), for the default
//! and for a small custom value, through every document kind's entry point (which tries the
//! fast path first where there is one) and through its general path (document tree).
//! The fast paths' own side (they defer over every limit) is in `src/limits/tests.rs`.

use weight_manifest::Options;
use weight_manifest::{
    project_binding, project_placement, reader, Binding, Code, Error, Limits, Placement, Runtime,
};

/// A document kind: its entry point and its general path, both under `limits`, reduced to
/// accepted or the error.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Placement,
    RuntimeManifest,
    BindingManifest,
    RuntimeInventory,
    PlacementInventory,
    BindingInventory,
}

const KINDS: [Kind; 6] = [
    Kind::Placement,
    Kind::RuntimeManifest,
    Kind::BindingManifest,
    Kind::RuntimeInventory,
    Kind::PlacementInventory,
    Kind::BindingInventory,
];

impl Kind {
    fn entry(self, text: &str, limits: &Limits) -> Result<(), Error> {
        let bytes = text.as_bytes();
        let options = Options::default();
        match self {
            Kind::Placement => {
                Placement::from_json(bytes, &Options::default().with_limits(*limits)).map(drop)
            }
            Kind::RuntimeManifest => {
                Runtime::from_json(bytes, &Options::default().with_limits(*limits)).map(drop)
            }
            Kind::BindingManifest => {
                Binding::from_json(bytes, &Options::default().with_limits(*limits)).map(drop)
            }
            Kind::RuntimeInventory => {
                Runtime::from_inventory_json(bytes, &(options).with_limits(*limits)).map(drop)
            }
            Kind::PlacementInventory => {
                Placement::from_inventory_json(bytes, &Options::default().with_limits(*limits))
                    .map(drop)
            }
            Kind::BindingInventory => {
                Binding::from_inventory_json(bytes, &(options).with_limits(*limits)).map(drop)
            }
        }
    }

    fn general(self, text: &str, limits: &Limits) -> Result<(), Error> {
        let document = reader::read(text.as_bytes(), "document", limits)?;
        let options = Options::default();
        match self {
            Kind::Placement => {
                Placement::from_value(&document, &Options::default().with_limits(*limits)).map(drop)
            }
            Kind::RuntimeManifest => {
                Runtime::from_value(&document, &Options::default().with_limits(*limits)).map(drop)
            }
            Kind::BindingManifest => {
                Binding::from_value(&document, &Options::default().with_limits(*limits)).map(drop)
            }
            Kind::RuntimeInventory => {
                Runtime::from_inventory(&document, &(options).with_limits(*limits)).map(drop)
            }
            Kind::PlacementInventory => {
                Placement::from_inventory(&document, &Options::default().with_limits(*limits))
                    .map(drop)
            }
            Kind::BindingInventory => {
                Binding::from_inventory(&document, &(options).with_limits(*limits)).map(drop)
            }
        }
    }

    /// The member holding the fragments (records), and the one holding tensors.
    fn fragments_at(self) -> &'static str {
        match self {
            Kind::RuntimeInventory | Kind::PlacementInventory => "/tensors",
            _ => "/fragments",
        }
    }

    /// A valid document of this kind: `records` fragments over `tensors` tensors of `dims`
    /// dimensions each. Its strings but the model_id are at most 71 bytes (a binding's
    /// placement_id), and the model_id comes before them in the text.
    fn document(self, tensors: usize, records: usize, dims: usize, model_id: &str) -> String {
        let inventory = runtime_inventory(tensors, records, dims, model_id);
        if matches!(self, Kind::RuntimeInventory | Kind::PlacementInventory) {
            return inventory;
        }
        let runtime = Runtime::from_inventory_json(
            inventory.as_bytes(),
            &Options::default().with_limits(Limits {
                max_dims: usize::MAX,
                max_string_bytes: usize::MAX,
                ..Limits::default()
            }),
        )
        .expect("a valid inventory");
        match self {
            Kind::RuntimeManifest => runtime.to_json(),
            Kind::Placement => {
                let placement = project_placement(&runtime, None).expect("projects");
                // A null placement_id: the canonical one is a 71-byte string.
                placement
                    .to_json()
                    .replace(&format!("\"{}\"", placement.placement_id()), "null")
            }
            _ => {
                let binding = project_binding(&runtime, None).expect("projects").to_json();
                if matches!(self, Kind::BindingManifest) {
                    return binding;
                }
                let mut value: serde_json::Value = serde_json::from_str(&binding).unwrap();
                for fragment in value["fragments"].as_array_mut().unwrap() {
                    fragment["is_contiguous"] = serde_json::Value::Bool(true);
                }
                value.to_string()
            }
        }
    }
}

/// A runtime inventory whose records double as placement inventory records: record j holds
/// tensor `j mod tensors` on dp rank j.
fn runtime_inventory(tensors: usize, records: usize, dims: usize, model_id: &str) -> String {
    let ones = vec!["1"; dims].join(",");
    let zeros = vec!["0"; dims].join(",");
    let record = |j: usize| {
        format!(
            r#"{{"fragment_id":"f{j}","placement_fragment_id":"p{j}","tensor_id":"t{}","global_shape":[{ones}],"global_offset":[{zeros}],"local_shape":[{ones}],"dtype":"bfloat16","itemsize":2,"partition_dim":null,"layout_fingerprint":"fp","address":{},"nbytes":2,"worker_id":"w","endpoint":"e","device":"cuda:0","rank":{{"dp":{j},"tp":0,"pp":0,"ep":0}},"lease_generation":5,"is_contiguous":true,"stride":[{ones}],"storage_offset":0,"byte_offset":0}}"#,
            j % tensors,
            4096 * (j + 1)
        )
    };
    let records: Vec<String> = (0..records).map(record).collect();
    format!(
        r#"{{"model_id":"{model_id}","revision":"r","instance_id":"i","generation":5,"lease_id":"l","placement_id":null,"tensors":[{}]}}"#,
        records.join(",")
    )
}

/// `text` is accepted under `at` and rejected under `over` with `message` at `pointer`,
/// through the entry point and through the general path.
fn at_and_over(kind: Kind, text: &str, at: &Limits, over: &Limits, message: &str, pointer: &str) {
    for (path, run) in [
        (
            "entry",
            Kind::entry as fn(Kind, &str, &Limits) -> Result<(), Error>,
        ),
        ("general", Kind::general),
    ] {
        if let Err(e) = run(kind, text, at) {
            panic!("{kind:?} {path}: rejected at the limit: {e}");
        }
        let error = run(kind, text, over).expect_err("accepted over the limit");
        assert_eq!(
            (error.code(), error.message(), error.path()),
            (Code::LimitExceeded, message, Some(pointer)),
            "{kind:?} {path}"
        );
    }
}

fn custom() -> Limits {
    Limits {
        max_document_bytes: 1 << 20,
        max_depth: 5,
        max_dims: 3,
        max_tensors: 3,
        max_fragments: 3,
        max_string_bytes: 80,
        max_geometry_work: weight_manifest::limits::DEFAULT_MAX_GEOMETRY_WORK,
    }
}

#[test]
fn max_fragments_at_and_over_in_every_kind() {
    let at = custom();
    let over = Limits {
        max_fragments: 2,
        ..at
    };
    for kind in KINDS {
        let text = kind.document(3, 3, 3, "m");
        let message = "3 fragments exceed max_fragments (2)";
        at_and_over(kind, &text, &at, &over, message, kind.fragments_at());
    }
}

#[test]
fn max_tensors_at_and_over_in_every_kind_with_tensors() {
    let at = custom();
    let over = Limits {
        max_tensors: 2,
        ..at
    };
    for kind in [Kind::Placement, Kind::RuntimeManifest] {
        let text = kind.document(3, 3, 3, "m");
        let message = "3 tensors exceed max_tensors (2)";
        at_and_over(kind, &text, &at, &over, message, "/tensors");
    }
    // Inventories count distinct tensor_ids, at the record that adds one too many.
    for kind in [Kind::RuntimeInventory, Kind::PlacementInventory] {
        let text = kind.document(3, 3, 3, "m");
        let message = "3 tensors exceed max_tensors (2)";
        at_and_over(kind, &text, &at, &over, message, "/tensors/2");
    }
}

#[test]
fn max_dims_at_and_over_custom_and_default() {
    let at = custom();
    let over = Limits { max_dims: 2, ..at };
    let dims_kinds = [
        Kind::Placement,
        Kind::RuntimeManifest,
        Kind::RuntimeInventory,
        Kind::PlacementInventory,
    ];
    for kind in dims_kinds {
        let text = kind.document(1, 1, 3, "m");
        let message = "tensor has 3 dimensions, above max_dims (2)";
        at_and_over(kind, &text, &at, &over, message, "/tensors/0/global_shape");
    }
    // Default 64: accepted at 64; at 65 the default rejects what max_dims 65 accepts.
    let defaults = Limits::default();
    let raised = Limits {
        max_dims: 65,
        ..defaults
    };
    for kind in dims_kinds {
        let text = kind.document(1, 1, 64, "m");
        kind.entry(&text, &defaults).expect("64 dimensions");
        let text = kind.document(1, 1, 65, "m");
        let message = "tensor has 65 dimensions, above max_dims (64)";
        at_and_over(
            kind,
            &text,
            &raised,
            &defaults,
            message,
            "/tensors/0/global_shape",
        );
    }
}

#[test]
fn max_string_bytes_at_and_over_custom_and_default() {
    let at = custom();
    let over = Limits {
        max_string_bytes: 79,
        ..at
    };
    let message = "string of 80 bytes exceeds max_string_bytes (79)";
    for kind in KINDS {
        let text = kind.document(1, 1, 1, &"m".repeat(80));
        at_and_over(kind, &text, &at, &over, message, "/model_id");
    }
    let defaults = Limits::default();
    let raised = Limits {
        max_string_bytes: 65_537,
        ..defaults
    };
    let message = "string of 65537 bytes exceeds max_string_bytes (65536)";
    for kind in KINDS {
        let text = kind.document(1, 1, 1, &"m".repeat(65_536));
        kind.entry(&text, &defaults).expect("65536 bytes");
        let text = kind.document(1, 1, 1, &"m".repeat(65_537));
        at_and_over(kind, &text, &raised, &defaults, message, "/model_id");
    }
}

#[test]
fn max_document_bytes_at_and_over() {
    for kind in KINDS {
        let text = kind.document(1, 1, 1, "m");
        let len = text.len();
        let at = Limits {
            max_document_bytes: len as u64,
            ..custom()
        };
        let over = Limits {
            max_document_bytes: len as u64 - 1,
            ..at
        };
        let message = format!(
            "document of {len} bytes exceeds max_document_bytes ({})",
            len - 1
        );
        at_and_over(kind, &text, &at, &over, &message, "");
    }
    // The size is checked before anything is read: not even UTF-8 validity comes first.
    let over = Limits {
        max_document_bytes: 2,
        ..Limits::default()
    };
    let error =
        Placement::from_json(b"\xff\xff\xff", &Options::default().with_limits(over)).unwrap_err();
    assert_eq!(error.code(), Code::LimitExceeded);
    assert_eq!(Limits::default().max_document_bytes, 1 << 30);
}

#[test]
fn max_depth_at_and_over_custom_and_default() {
    // Manifests and inventories nest 4 deep (rank objects, shape arrays in elements).
    let at = Limits {
        max_depth: 4,
        ..custom()
    };
    let over = Limits { max_depth: 3, ..at };
    let message = "document nesting depth exceeds max_depth (3)";
    for kind in KINDS {
        let text = kind.document(1, 1, 1, "m");
        let first_deep = match kind {
            Kind::RuntimeInventory | Kind::PlacementInventory => "/tensors/0/global_shape",
            Kind::Placement | Kind::RuntimeManifest => "/fragments/0/aliases",
            Kind::BindingManifest | Kind::BindingInventory => continue,
        };
        at_and_over(kind, &text, &at, &over, message, first_deep);
    }
    // Binding documents nest 3 deep.
    let at = Limits {
        max_depth: 3,
        ..custom()
    };
    let over = Limits { max_depth: 2, ..at };
    let message = "document nesting depth exceeds max_depth (2)";
    for kind in [Kind::BindingManifest, Kind::BindingInventory] {
        let text = kind.document(1, 1, 1, "m");
        at_and_over(kind, &text, &at, &over, message, "/fragments/0");
    }
    // Default 128, in a member of a placement: the value nested 128 deep in the document
    // (the top level is depth 1) is accepted as far as the reader goes (and rejected by the
    // parser for its type); 129 deep is limit_exceeded at the array that crosses it.
    let base = Kind::Placement.document(1, 1, 1, "m");
    let nest = |depth: usize| {
        let inner = format!("{}{}", "[".repeat(depth - 1), "]".repeat(depth - 1));
        base.replacen("\"revision\":\"r\"", &format!("\"revision\":{inner}"), 1)
    };
    let error = Placement::from_json(nest(128), &Options::default()).unwrap_err();
    assert_eq!(error.code(), Code::EmptyString, "{error}");
    let error = Placement::from_json(nest(129), &Options::default()).unwrap_err();
    assert_eq!(
        (error.code(), error.message(), error.path()),
        (
            Code::LimitExceeded,
            "document nesting depth exceeds max_depth (128)",
            Some(format!("/revision{}", "/0".repeat(127)).as_str())
        )
    );
}

#[test]
fn a_million_open_containers_are_rejected_without_recursion() {
    let message = "document nesting depth exceeds max_depth (128)";
    for (text, pointer) in [
        ("[".repeat(1_000_000), "/0".repeat(128)),
        ("{\"a\":".repeat(1_000_000), "/a".repeat(128)),
    ] {
        for kind in KINDS {
            let error = kind.entry(&text, &Limits::default()).unwrap_err();
            assert_eq!(
                (error.code(), error.message(), error.path()),
                (Code::LimitExceeded, message, Some(pointer.as_str())),
                "{kind:?}"
            );
        }
    }
    let closed = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    let error = Placement::from_json(&closed, &Options::default()).unwrap_err();
    assert_eq!(error.code(), Code::LimitExceeded);
}
