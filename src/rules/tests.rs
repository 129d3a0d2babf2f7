//! The predicates on their own: each rule's edge cases.

use super::fragment_set::fragment_box::{first_box_failure, BoxFailure, TensorFrame};
use super::physical::alias_pair::{exact_alias_pair, AliasCandidate};
use super::stride::{is_canonical_stride, row_major_strides};
use super::values::{at_least, end_address, is_non_empty, sort_aliases, MIN_ADDRESS, MIN_NBYTES};
use crate::wire::TensorDescriptor;

#[test]
fn field_minimums_and_strings() {
    assert!(!at_least(0, MIN_NBYTES) && at_least(1, MIN_NBYTES));
    assert!(!at_least(0, MIN_ADDRESS) && at_least(1, MIN_ADDRESS));
    assert!(!is_non_empty("") && is_non_empty("a"));
}

#[test]
fn aliases_are_sorted_and_must_be_distinct() {
    let mut names = vec!["zeta".to_owned(), "alpha".to_owned()];
    assert!(sort_aliases(&mut names));
    assert_eq!(names, ["alpha", "zeta"]);
    let mut names = vec!["b".to_owned(), "a".to_owned(), "b".to_owned()];
    assert!(!sort_aliases(&mut names));
    assert!(sort_aliases(&mut []));
}

#[test]
fn the_end_address_must_fit() {
    assert_eq!(end_address(1, 2), Some(3));
    assert_eq!(end_address(u64::MAX - 1, 1), Some(u64::MAX));
    assert_eq!(end_address(u64::MAX, 1), None);
}

#[test]
fn strides_are_row_major() {
    assert_eq!(row_major_strides(&[2, 3, 4]), Some(vec![12, 4, 1]));
    assert_eq!(row_major_strides(&[5]), Some(vec![1]));
    assert_eq!(row_major_strides(&[]), Some(vec![]));
    assert_eq!(row_major_strides(&[2, u64::MAX, 2]), None);
    // Only the strides must fit, not the volume.
    assert_eq!(row_major_strides(&[u64::MAX, 2]), Some(vec![2, 1]));
}

#[test]
fn canonical_strides_accept_anything_on_an_extent_one_axis() {
    assert!(is_canonical_stride(&[2, 3, 4], &[12, 4, 1]));
    assert!(!is_canonical_stride(&[2, 3, 4], &[12, 4, 2]));
    assert!(!is_canonical_stride(&[2, 3], &[3]));
    assert!(is_canonical_stride(&[1, 3], &[99, 1]));
    assert!(is_canonical_stride(&[3, 1], &[1, 7]));
    // A canonical stride above 2^64-1 matches no u64 unless its axis has extent 1.
    assert!(!is_canonical_stride(&[2, u64::MAX, 2], &[0, 2, 1]));
    assert!(is_canonical_stride(&[1, u64::MAX, 2], &[0, 2, 1]));
}

#[test]
fn box_failures_come_in_the_order_of_f4_to_f8() {
    let sharded = TensorFrame {
        shape: &[4, 6],
        itemsize: 2,
        replicated: false,
        is_shard_axis: |k: usize| k == 0,
    };
    let failure = |offset: &[u64], extent: &[u64], nbytes| {
        first_box_failure(&sharded, offset, extent, nbytes)
    };
    assert_eq!(failure(&[2, 0], &[2, 6], 24), None);
    assert_eq!(failure(&[0], &[2, 6], 24), Some(BoxFailure::RankMismatch));
    assert_eq!(
        failure(&[3, 0], &[2, 6], 24),
        Some(BoxFailure::OutOfBounds(0))
    );
    // The first axis that runs past names the failure.
    assert_eq!(
        failure(&[0, 1], &[2, 6], 24),
        Some(BoxFailure::OutOfBounds(1))
    );
    assert_eq!(
        failure(&[u64::MAX, 0], &[2, 6], 24),
        Some(BoxFailure::OutOfBounds(0))
    );
    assert_eq!(
        failure(&[0, 1], &[2, 5], 20),
        Some(BoxFailure::NonShardAxisOffset(1))
    );
    assert_eq!(
        failure(&[0, 0], &[2, 5], 20),
        Some(BoxFailure::NonShardAxisShape(1))
    );
    assert_eq!(
        failure(&[0, 0], &[2, 6], 23),
        Some(BoxFailure::NbytesMismatch)
    );
    let replicated = TensorFrame {
        shape: &[4, 6],
        itemsize: 2,
        replicated: true,
        is_shard_axis: |_: usize| false,
    };
    let failure = |offset: &[u64], extent: &[u64], nbytes| {
        first_box_failure(&replicated, offset, extent, nbytes)
    };
    assert_eq!(failure(&[0, 0], &[4, 6], 48), None);
    assert_eq!(
        failure(&[0, 1], &[4, 5], 40),
        Some(BoxFailure::ReplicatedOffset(1))
    );
    assert_eq!(
        failure(&[0, 0], &[4, 5], 40),
        Some(BoxFailure::ReplicatedIncomplete(1))
    );
    // A product above 2^64-1 equals no nbytes.
    let huge = TensorFrame {
        shape: &[u64::MAX, u64::MAX],
        itemsize: 1,
        replicated: false,
        is_shard_axis: |_: usize| true,
    };
    assert_eq!(
        first_box_failure(&huge, &[0, 0], &[u64::MAX, 2], u64::MAX),
        Some(BoxFailure::NbytesMismatch)
    );
}

fn descriptor(tensor_id: &str) -> TensorDescriptor {
    TensorDescriptor {
        dtype: "float16".to_owned(),
        expert_id: None,
        global_shape: vec![8],
        itemsize: 2,
        layer_id: None,
        layout_fingerprint: "fp".to_owned(),
        partition_dim: None,
        shard_dims: Some(vec![]),
        tensor_id: tensor_id.to_owned(),
    }
}

#[test]
fn an_exact_alias_pair_agrees_in_every_listed_member() {
    let aliases = ["embed".to_owned(), "lm_head".to_owned()];
    let (embed, head) = (descriptor("embed"), descriptor("lm_head"));
    let a = AliasCandidate {
        address: 4096,
        nbytes: 16,
        lease_generation: 3,
        aliases: &aliases,
        global_offset: &[0],
        local_shape: &[8],
        descriptor: &embed,
    };
    let b = AliasCandidate {
        descriptor: &head,
        ..a
    };
    assert!(exact_alias_pair(&a, &b));
    let other_layout = TensorDescriptor {
        layout_fingerprint: "other".to_owned(),
        ..descriptor("lm_head")
    };
    let one_alias = [aliases[0].clone()];
    let near_misses = [
        AliasCandidate { address: 4098, ..b },
        AliasCandidate { nbytes: 14, ..b },
        AliasCandidate {
            lease_generation: 4,
            ..b
        },
        AliasCandidate {
            aliases: &aliases[..1],
            ..b
        },
        AliasCandidate {
            global_offset: &[1],
            ..b
        },
        AliasCandidate {
            local_shape: &[7],
            ..b
        },
        AliasCandidate {
            descriptor: &other_layout,
            ..b
        },
    ];
    for (i, near) in near_misses.iter().enumerate() {
        assert!(!exact_alias_pair(&a, near), "near miss {i}");
    }
    // A single alias never qualifies, even when both declare it.
    let single = AliasCandidate {
        aliases: &one_alias,
        ..a
    };
    assert!(!exact_alias_pair(&single, &single));
}

/// The §1.4 value checks (INT, INTS, ALIASES, STR) and their messages.
mod value_checks {
    use crate::error::Code;
    use crate::path::Path;
    use crate::rules::values::{aliases, int, ints, string};
    use crate::value::Value;
    use std::borrow::Cow;

    fn s(text: &str) -> Value<'_> {
        Value::Str(Cow::Borrowed(text))
    }

    #[test]
    fn int_distinguishes_type_minimum_and_range() {
        let p = Path::Root;
        assert_eq!(int(&Value::UInt(3), "x", 1, &p).unwrap(), 3);
        let codes: Vec<Code> = [
            Value::UInt(0),
            Value::NegInt(Cow::Borrowed("-99999999999999999999999")),
            Value::BigUInt(Cow::Borrowed("18446744073709551616")),
            Value::Float(Cow::Borrowed("2.0")),
            Value::Bool(true),
            Value::Null,
            s("1"),
        ]
        .iter()
        .map(|v| int(v, "x", 1, &p).unwrap_err().code())
        .collect();
        assert_eq!(
            codes,
            [
                Code::BelowMinimum,
                Code::BelowMinimum,
                Code::U64Overflow,
                Code::NotAnInteger,
                Code::NotAnInteger,
                Code::NotAnInteger,
                Code::NotAnInteger
            ]
        );
        assert_eq!(
            int(&Value::UInt(0), "itemsize", 1, &p)
                .unwrap_err()
                .message(),
            "itemsize must be at least 1"
        );
    }

    #[test]
    fn ints_names_the_array() {
        let p = Path::Root;
        let err = ints(
            &Value::Array(vec![Value::UInt(1), Value::Null]),
            "local_shape",
            1,
            &p,
        )
        .unwrap_err();
        assert_eq!(err.message(), "local_shape must be an integer");
        let err = ints(&s("x"), "local_shape", 1, &p).unwrap_err();
        assert_eq!(err.code(), Code::NotASequence);
        assert_eq!(err.message(), "local_shape must contain integers");
    }

    #[test]
    fn aliases_are_sorted_and_distinct() {
        let p = Path::Root;
        let v = Value::Array(vec![s("zeta"), s("alpha")]);
        assert_eq!(aliases(&v, &p).unwrap(), ["alpha", "zeta"]);
        let dup = Value::Array(vec![s("a"), s("a")]);
        assert_eq!(
            aliases(&dup, &p).unwrap_err().code(),
            Code::AliasesDuplicate
        );
        for bad in [Value::Null, s("a"), Value::Array(vec![s("")])] {
            assert_eq!(aliases(&bad, &p).unwrap_err().code(), Code::AliasesInvalid);
        }
    }

    #[test]
    fn string_rejects_empty_and_non_strings() {
        let p = Path::Root;
        assert_eq!(string(&s("a"), "f", &p).unwrap(), "a");
        for bad in [s(""), Value::Null, Value::UInt(1)] {
            let err = string(&bad, "model_id", &p).unwrap_err();
            assert_eq!(err.code(), Code::EmptyString);
            assert_eq!(err.message(), "model_id must be a non-empty string");
        }
    }
}
