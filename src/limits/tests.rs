//! `Limits::set`, and the fast paths' side of every limit: at the limit a fast path decides
//! (so the limit costs the fast documents nothing), one over it the fast path defers and
//! the general path reports `limit_exceeded`. A fast-path success over a limit is therefore
//! impossible: the fast path never returns a result, success or error, for such a document.

use super::{Limits, MAX_DEPTH_CEILING};
use crate::code::Code;

use crate::model::Placement;
use crate::model::Runtime;
use crate::options::Options;
use crate::test_support::{fast_placement, fast_runtime_inventory};

#[test]
fn defaults_are_the_documented_values() {
    let limits = Limits::default();
    assert_eq!(limits.max_document_bytes, 1 << 30);
    assert_eq!(limits.max_depth, 128);
    assert_eq!(limits.max_dims, 64);
    assert_eq!(limits.max_tensors, 4_194_304);
    assert_eq!(limits.max_fragments, 16_777_216);
    assert_eq!(limits.max_string_bytes, 65_536);
    assert_eq!(
        limits.to_string(),
        "max_document_bytes=1073741824 max_depth=128 max_dims=64 max_tensors=4194304 \
         max_fragments=16777216 max_string_bytes=65536 max_geometry_work=4096"
    );
}

#[test]
fn settings_by_name() {
    let mut limits = Limits::default();
    for (i, name) in Limits::NAMES.iter().enumerate() {
        limits.set(name, &(i + 1).to_string()).unwrap();
    }
    assert_eq!(
        limits,
        Limits {
            max_document_bytes: 1,
            max_depth: 2,
            max_dims: 3,
            max_tensors: 4,
            max_fragments: 5,
            max_string_bytes: 6,
            max_geometry_work: 7,
        }
    );
    limits.set_pair("max_fragments=1_000_000").unwrap();
    assert_eq!(limits.max_fragments, 1_000_000);
    limits.set_pair(" max_dims = 7 ").unwrap();
    assert_eq!(limits.max_dims, 7);
    limits.set("max_depth", "512").unwrap();
    assert_eq!(limits.effective_depth(), MAX_DEPTH_CEILING);

    for (name, value) in [
        ("max_depth", "513"),
        ("max_depth", "-1"),
        ("max_dims", ""),
        ("max_dims", "1e3"),
        ("max_dims", "0x10"),
        ("max_document_bytes", "18446744073709551616"),
        ("max_nesting", "3"),
    ] {
        let before = limits;
        let message = limits.set(name, value).unwrap_err().to_string();
        assert!(message.contains(name), "{message}");
        assert_eq!(limits, before, "a rejected setting changes nothing");
    }
    assert!(limits
        .set_pair("max_dims")
        .unwrap_err()
        .to_string()
        .contains("NAME=VALUE"));
    assert!(limits
        .set("nope", "1")
        .unwrap_err()
        .to_string()
        .contains("max_document_bytes, max_depth"));
}

#[test]
fn a_depth_above_the_ceiling_acts_as_the_ceiling() {
    let limits = Limits {
        max_depth: usize::MAX,
        ..Limits::default()
    };
    let deep = "[".repeat(MAX_DEPTH_CEILING + 1);
    let error = crate::reader::read(deep.as_bytes(), "x", &limits).unwrap_err();
    assert_eq!(error.code(), Code::LimitExceeded);
    assert_eq!(
        error.message(),
        "document nesting depth exceeds max_depth (512)"
    );
}

/// A placement of `tensors` tensors of `dims` dimensions and `fragments` fragments (of the
/// first tensor, one per dp rank), model_id `model_id`.
fn placement(tensors: usize, fragments: usize, dims: usize, model_id: &str) -> String {
    let ones = vec!["1"; dims].join(",");
    let zeros = vec!["0"; dims].join(",");
    let tensor = |i: usize| {
        format!(
            r#"{{"dtype":"bfloat16","expert_id":null,"global_shape":[{ones}],"itemsize":2,"layer_id":null,"layout_fingerprint":"fp","partition_dim":null,"shard_dims":null,"tensor_id":"t{i}"}}"#
        )
    };
    let fragment = |j: usize| {
        format!(
            r#"{{"aliases":[],"global_offset":[{zeros}],"local_shape":[{ones}],"nbytes":2,"placement_fragment_id":"p{j}","rank":{{"dp":{j},"ep":0,"pp":0,"tp":0}},"tensor_id":"t0"}}"#
        )
    };
    let tensors: Vec<String> = (0..tensors).map(tensor).collect();
    let fragments: Vec<String> = (0..fragments).map(fragment).collect();
    format!(
        r#"{{"fragments":[{}],"model_id":"{model_id}","placement_id":null,"revision":"r","tensors":[{}]}}"#,
        fragments.join(","),
        tensors.join(",")
    )
}

/// A runtime inventory of `records` records over `tensors` tensors (record j holds tensor
/// j mod tensors on dp rank j) of `dims` dimensions, model_id `model_id`.
fn inventory(tensors: usize, records: usize, dims: usize, model_id: &str) -> String {
    let ones = vec!["1"; dims].join(",");
    let zeros = vec!["0"; dims].join(",");
    let record = |j: usize| {
        format!(
            r#"{{"fragment_id":"f{j}","tensor_id":"t{}","global_shape":[{ones}],"global_offset":[{zeros}],"local_shape":[{ones}],"dtype":"bfloat16","itemsize":2,"partition_dim":null,"layout_fingerprint":"fp","address":{},"nbytes":2,"worker_id":"w","endpoint":"e","device":"cuda:0","rank":{{"dp":{j},"tp":0,"pp":0,"ep":0}},"lease_generation":5,"is_contiguous":true,"stride":[{ones}],"storage_offset":0,"byte_offset":0}}"#,
            j % tensors,
            4096 * (j + 1)
        )
    };
    let records: Vec<String> = (0..records).map(record).collect();
    format!(
        r#"{{"model_id":"{model_id}","revision":"r","instance_id":"i","generation":5,"lease_id":"l","tensors":[{}]}}"#,
        records.join(",")
    )
}

fn small() -> Limits {
    Limits {
        max_document_bytes: 1 << 20,
        max_depth: 4,
        max_dims: 3,
        max_tensors: 3,
        max_fragments: 3,
        max_string_bytes: 32,
        max_geometry_work: 4096,
    }
}

/// Which fast path a case runs.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Placement,
    Inventory,
}

/// A generated document: tensors, fragments (records), dimensions, model_id length.
type Shape = (usize, usize, usize, usize);

fn document(kind: Kind, (tensors, fragments, dims, model): Shape) -> String {
    let model_id = "m".repeat(model);
    match kind {
        Kind::Placement => placement(tensors, fragments, dims, &model_id),
        Kind::Inventory => inventory(tensors, fragments, dims, &model_id),
    }
}

/// The fast path decides `at` the limit and defers one `over` it, where the general
/// path's `limit_exceeded` with `message` is the result.
fn fast_defers(kind: Kind, at: Shape, over: Shape, limits: &Limits, message: &str) {
    let (at, over) = (document(kind, at), document(kind, over));
    let options = Options::default().with_limits(*limits);
    let (decided, deferred, general) = match kind {
        Kind::Placement => (
            fast_placement(at.as_bytes(), limits).map(|r| r.map(drop)),
            fast_placement(over.as_bytes(), limits).is_none(),
            Placement::from_json(&over, &options).map(drop),
        ),
        Kind::Inventory => (
            fast_runtime_inventory(at.as_bytes(), &options).map(|r| r.map(drop)),
            fast_runtime_inventory(over.as_bytes(), &options).is_none(),
            Runtime::from_inventory_json(over.as_bytes(), &options).map(drop),
        ),
    };
    let decided = decided.unwrap_or_else(|| panic!("{kind:?} decides at the limit: {message}"));
    assert!(decided.is_ok(), "{decided:?}");
    assert!(deferred, "{kind:?} defers over the limit: {message}");
    let error = general.unwrap_err();
    assert_eq!(error.code(), Code::LimitExceeded);
    assert_eq!(error.message(), message);
}

#[test]
fn fast_paths_defer_over_every_count_limit() {
    let limits = small();
    let four_fragments = Limits {
        max_fragments: 4,
        ..limits
    };
    let tensors = "4 tensors exceed max_tensors (3)";
    let fragments = "4 fragments exceed max_fragments (3)";
    let dims = "tensor has 4 dimensions, above max_dims (3)";
    let cases = [
        (Kind::Placement, (4, 3, 3, 32), tensors),
        (Kind::Placement, (3, 4, 3, 32), fragments),
        (Kind::Inventory, (3, 4, 3, 32), fragments),
        (Kind::Placement, (3, 3, 4, 32), dims),
        (Kind::Inventory, (3, 3, 4, 32), dims),
    ];
    for (kind, over, message) in cases {
        fast_defers(kind, (3, 3, 3, 32), over, &limits, message);
    }
    let string = "string of 33 bytes exceeds max_string_bytes (32)";
    for kind in [Kind::Placement, Kind::Inventory] {
        fast_defers(kind, (3, 3, 3, 32), (3, 3, 3, 33), &limits, string);
    }
    // Three records of three tensors need max_fragments above 3 to reach max_tensors.
    fast_defers(
        Kind::Inventory,
        (3, 4, 3, 32),
        (4, 4, 3, 32),
        &four_fragments,
        tensors,
    );
}

#[test]
fn fast_paths_decide_the_default_limits() {
    let limits = Limits::default();
    let dims = "tensor has 65 dimensions, above max_dims (64)";
    let string = "string of 65537 bytes exceeds max_string_bytes (65536)";
    for kind in [Kind::Placement, Kind::Inventory] {
        fast_defers(kind, (1, 1, 64, 65_536), (1, 1, 65, 65_536), &limits, dims);
        fast_defers(kind, (1, 1, 1, 65_536), (1, 1, 1, 65_537), &limits, string);
    }
}

#[test]
fn fast_placement_defers_under_small_depth_and_string_limits() {
    let text = placement(1, 1, 1, "m");
    let shallow = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    assert!(fast_placement(text.as_bytes(), &shallow).is_none());
    let error = Placement::from_json(&text, &Options::default().with_limits(shallow)).unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        (Code::LimitExceeded, Some("/fragments/0/aliases"))
    );
    // Member names up to 21 bytes are matched as literals: below 32 the fast path defers.
    let short = Limits {
        max_string_bytes: 31,
        ..Limits::default()
    };
    assert!(fast_placement(text.as_bytes(), &short).is_none());
    assert!(Placement::from_json(&text, &Options::default().with_limits(short)).is_ok());
}
