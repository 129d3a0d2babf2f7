//! The descriptor part of inventory records (§10.3 step 4.1–4.2, §10.5 step 3.1–3.2).

use std::collections::HashMap;

use super::member_reader::Members;
use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::rules::descriptor::{check_descriptor, DescriptorFields};
use crate::wire::key;
use crate::wire::TensorDescriptor;

/// Reads the descriptor members in the contract's order, then `max_dims` on global_shape,
/// checks and canonicalises.
pub(crate) fn read_descriptor(
    record: &Members<'_, '_>,
    limits: &Limits,
) -> Result<TensorDescriptor> {
    let shard_dims = record.opt(key::SHARD_DIMS);
    let tensor_id = record.req(key::TENSOR_ID)?;
    let global_shape = record.req(key::GLOBAL_SHAPE)?;
    let dtype = record.req(key::DTYPE)?;
    let itemsize = record.req(key::ITEMSIZE)?;
    let partition_dim = record.req(key::PARTITION_DIM)?;
    let layer_id = record.opt(key::LAYER_ID);
    let expert_id = record.opt(key::EXPERT_ID);
    let layout_fingerprint = record.req(key::LAYOUT_FINGERPRINT)?;
    limits.check_dims(global_shape, &record.at(key::GLOBAL_SHAPE))?;
    let fields = DescriptorFields {
        tensor_id,
        global_shape,
        dtype,
        itemsize,
        partition_dim: Some(partition_dim),
        layout_fingerprint,
        layer_id,
        expert_id,
        shard_dims,
    };
    check_descriptor(&fields, record.path())
}

/// The distinct canonical descriptors met so far; equivalent spellings merge.
#[derive(Default)]
pub(crate) struct DescriptorSet {
    by_id: HashMap<String, TensorDescriptor>,
}

impl DescriptorSet {
    /// Adds `descriptor`; a different one under an existing tensor_id is
    /// `descriptor_mismatch` with "{prefix} descriptor mismatch: {tensor_id}", a new one
    /// past `max_tensors` is `limit_exceeded` at the record.
    pub(crate) fn merge(
        &mut self,
        descriptor: TensorDescriptor,
        prefix: &str,
        record: &Members<'_, '_>,
        limits: &Limits,
    ) -> Result<()> {
        match self.by_id.get(&descriptor.tensor_id) {
            Some(existing) if *existing != descriptor => Err(Error::at(
                Code::DescriptorMismatch,
                format!("{prefix} descriptor mismatch: {}", descriptor.tensor_id),
                record.path(),
            )),
            Some(_) => Ok(()),
            None => {
                limits.check_tensors(self.by_id.len() + 1, record.path())?;
                self.by_id.insert(descriptor.tensor_id.clone(), descriptor);
                Ok(())
            }
        }
    }

    /// The distinct descriptors sorted by tensor_id.
    pub(crate) fn into_sorted(self) -> Vec<TensorDescriptor> {
        let mut tensors: Vec<TensorDescriptor> = self.by_id.into_values().collect();
        tensors.sort_by(|a, b| a.tensor_id.cmp(&b.tensor_id));
        tensors
    }
}
