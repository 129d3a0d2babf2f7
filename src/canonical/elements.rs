//! Direct canonical encoders of the placement's wire elements, for the identity hashes.
//!
//! Byte-for-byte what the serde [`Encoder`](super::ser::Encoder) writes for the generated
//! types (fields in their sorted declaration order; tested against it below), without the
//! per-field serde calls: the hashes of a large placement are dominated by these bytes.

use super::escape::{write_str, write_u64};
use crate::wire::{PlacementFragment, TensorDescriptor};

/// Appends a canonical array of unsigned integers.
pub(crate) fn put_u64s(out: &mut Vec<u8>, values: &[u64]) {
    out.push(b'[');
    for (i, &value) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_u64(out, value);
    }
    out.push(b']');
}

fn put_opt_u64(out: &mut Vec<u8>, value: Option<u64>) {
    match value {
        Some(value) => write_u64(out, value),
        None => out.extend_from_slice(b"null"),
    }
}

/// Appends the canonical encoding of a placement fragment (§6.1, 7 keys).
pub(crate) fn put_fragment(out: &mut Vec<u8>, fragment: &PlacementFragment) {
    out.extend_from_slice(b"{\"aliases\":[");
    for (i, alias) in fragment.aliases.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, alias);
    }
    out.extend_from_slice(b"],\"global_offset\":");
    put_u64s(out, &fragment.global_offset);
    out.extend_from_slice(b",\"local_shape\":");
    put_u64s(out, &fragment.local_shape);
    out.extend_from_slice(b",\"nbytes\":");
    write_u64(out, fragment.nbytes);
    out.extend_from_slice(b",\"placement_fragment_id\":");
    write_str(out, &fragment.placement_fragment_id);
    let rank = &fragment.rank;
    out.extend_from_slice(b",\"rank\":{\"dp\":");
    write_u64(out, rank.dp);
    out.extend_from_slice(b",\"ep\":");
    write_u64(out, rank.ep);
    out.extend_from_slice(b",\"pp\":");
    write_u64(out, rank.pp);
    out.extend_from_slice(b",\"tp\":");
    write_u64(out, rank.tp);
    out.extend_from_slice(b"},\"tensor_id\":");
    write_str(out, &fragment.tensor_id);
    out.push(b'}');
}

/// Appends the canonical encoding of a tensor descriptor (§6.1, 9 keys).
pub(crate) fn put_tensor(out: &mut Vec<u8>, tensor: &TensorDescriptor) {
    out.extend_from_slice(b"{\"dtype\":");
    write_str(out, &tensor.dtype);
    out.extend_from_slice(b",\"expert_id\":");
    put_opt_u64(out, tensor.expert_id);
    out.extend_from_slice(b",\"global_shape\":");
    put_u64s(out, &tensor.global_shape);
    out.extend_from_slice(b",\"itemsize\":");
    write_u64(out, tensor.itemsize);
    out.extend_from_slice(b",\"layer_id\":");
    put_opt_u64(out, tensor.layer_id);
    out.extend_from_slice(b",\"layout_fingerprint\":");
    write_str(out, &tensor.layout_fingerprint);
    out.extend_from_slice(b",\"partition_dim\":");
    put_opt_u64(out, tensor.partition_dim);
    out.extend_from_slice(b",\"shard_dims\":");
    match &tensor.shard_dims {
        Some(dims) => put_u64s(out, dims),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"tensor_id\":");
    write_str(out, &tensor.tensor_id);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::{put_fragment, put_tensor};
    use crate::canonical::to_vec;
    use crate::wire::{ParallelRank, PlacementFragment, TensorDescriptor};

    fn fragment(aliases: &[&str], id: &str, tensor_id: &str) -> PlacementFragment {
        PlacementFragment {
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            global_offset: vec![0, 18_446_744_073_709_551_615],
            local_shape: vec![7, 1],
            nbytes: 14,
            placement_fragment_id: id.to_owned(),
            rank: ParallelRank {
                dp: 1,
                ep: 2,
                pp: 3,
                tp: 4,
            },
            tensor_id: tensor_id.to_owned(),
        }
    }

    #[test]
    fn fragments_match_the_serde_encoder() {
        for f in [
            fragment(&[], "logical:00", "t"),
            fragment(&["a", "b\"c"], "id/\u{e9}\u{1f600}", "t\\\n\u{7f}x"),
            PlacementFragment {
                global_offset: Vec::new(),
                local_shape: Vec::new(),
                ..fragment(&["x"], "i", "\u{0}")
            },
        ] {
            let mut out = Vec::new();
            put_fragment(&mut out, &f);
            assert_eq!(out, to_vec(&f).unwrap());
        }
    }

    #[test]
    fn tensors_match_the_serde_encoder() {
        let base = TensorDescriptor {
            dtype: "bfloat16".to_owned(),
            expert_id: Some(3),
            global_shape: vec![8, 4],
            itemsize: 2,
            layer_id: None,
            layout_fingerprint: "fp\u{2028}".to_owned(),
            partition_dim: Some(0),
            shard_dims: Some(vec![0]),
            tensor_id: "layers.0.w".to_owned(),
        };
        for t in [
            base.clone(),
            TensorDescriptor {
                expert_id: None,
                layer_id: Some(u64::MAX),
                partition_dim: None,
                shard_dims: None,
                ..base.clone()
            },
            TensorDescriptor {
                shard_dims: Some(vec![0, 1]),
                partition_dim: None,
                ..base
            },
        ] {
            let mut out = Vec::new();
            put_tensor(&mut out, &t);
            assert_eq!(out, to_vec(&t).unwrap());
        }
    }
}
