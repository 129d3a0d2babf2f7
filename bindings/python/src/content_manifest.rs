//! Content manifests (contract §19.5) of tensor digests only, from Python:
//! `content_manifest_write` and `content_manifest_read` of `_native`, the core's writer and
//! reader, so a digest record written here is the one `weight-manifest content compare`
//! reads.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use weight_manifest::wire::{ContentManifest, ContentTensor};
use weight_manifest::Limits;
use weight_manifest_content::manifest;

use crate::errors::OrRaise;
use crate::ops::document_bytes;

/// One tensor's entry as Python gives it: (tensor_id, dtype, global_shape, itemsize,
/// digest).
type TensorTuple = (String, String, Vec<u64>, u64, String);

/// `content_manifest_write(model_id, revision, generation, block_elements, tensors)`: the
/// canonical text of a content manifest with the tensors' digests and no fragments; it is
/// read back by the core's reader (every member checked) before it is returned.
#[pyfunction]
#[pyo3(signature = (model_id, revision, generation, block_elements, tensors))]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts the arguments owned
pub(crate) fn content_manifest_write(
    py: Python<'_>,
    model_id: String,
    revision: String,
    generation: Option<u64>,
    block_elements: u64,
    tensors: Vec<TensorTuple>,
) -> PyResult<String> {
    let mut tensors: Vec<ContentTensor> = tensors
        .into_iter()
        .map(
            |(tensor_id, dtype, global_shape, itemsize, digest)| ContentTensor {
                digest,
                dtype,
                global_shape,
                itemsize,
                tensor_id,
            },
        )
        .collect();
    tensors.sort_by(|a, b| a.tensor_id.cmp(&b.tensor_id));
    let text = manifest::to_json(&ContentManifest {
        algorithm: manifest::ALGORITHM.to_owned(),
        block_elements,
        fragments: None,
        generation,
        model_id,
        placement_digest: None,
        revision,
        tensors,
    });
    manifest::read(text.as_bytes(), &Limits::default()).or_raise(py)?;
    Ok(text)
}

/// `content_manifest_read(text)`: a content manifest read strictly: a dict of `model_id`,
/// `revision`, `generation`, `block_elements` and `digests` (tensor_id -> digest text).
#[pyfunction]
pub(crate) fn content_manifest_read<'py>(text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let py = text.py();
    let m = manifest::read(&document_bytes(text)?, &Limits::default()).or_raise(py)?;
    let out = PyDict::new(py);
    out.set_item("model_id", &m.model_id)?;
    out.set_item("revision", &m.revision)?;
    out.set_item("generation", m.generation)?;
    out.set_item("block_elements", m.block_elements)?;
    let digests = PyDict::new(py);
    for t in &m.tensors {
        digests.set_item(&t.tensor_id, &t.digest)?;
    }
    out.set_item("digests", digests)?;
    Ok(out)
}

/// `content_manifest_verify(text)`: a content manifest read strictly, its fragments
/// recombined to each tensor's digest (`content_digest_mismatch` naming the first that
/// differs, or the combination's own rejections), returned in the canonical encoding.
#[pyfunction]
pub(crate) fn content_manifest_verify(text: &Bound<'_, PyAny>) -> PyResult<String> {
    let py = text.py();
    let m = manifest::read(&document_bytes(text)?, &Limits::default()).or_raise(py)?;
    manifest::verify_fragments(&m).or_raise(py)?;
    Ok(manifest::to_json(&m))
}
