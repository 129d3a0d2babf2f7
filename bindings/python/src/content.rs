//! Content digests of live tensors (contract §19), computed in Rust over the tensors' own
//! memory: `content_partial`, `content_combine`, `block_values`, `content_blocks` and
//! `content_values_at` of `_native`.
//!
//! A tensor is read as `tensor_facts` reads it (DLPack, `__array_interface__`, the buffer
//! protocol); only a row-major contiguous tensor in host memory is hashed, in place, with
//! the GIL released. The caller keeps the tensor alive and unchanged during the call (the
//! argument holds a reference; writes from another thread meanwhile are the caller's race).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use weight_manifest::error::{Code, Error};
use weight_manifest::wire::{ContentEdge, ContentPartial};
use weight_manifest_content::manifest::{partial_from_wire, partial_to_wire};
use weight_manifest_content::walk::Buffer;
use weight_manifest_content::{blocks, combine, hash, partial, Fragment, Partial, Tensor};

use crate::errors::{to_py, OrRaise};
use crate::tensor::{read_facts, row_major_contiguous, unreadable};

/// The bytes of a live tensor, its shape and itemsize; `live_tensor_unreadable` unless it
/// is row-major contiguous in host memory.
#[allow(unsafe_code)]
fn live_bytes<'a>(tensor: &'a Bound<'_, PyAny>) -> PyResult<(&'a [u8], Vec<u64>, u64)> {
    let py = tensor.py();
    let facts = read_facts(tensor, None)?;
    if facts.device != "cpu" {
        return Err(unreadable(
            py,
            None,
            format!("the tensor is on {}, not in host memory", facts.device),
        ));
    }
    if !row_major_contiguous(&facts.shape, &facts.strides) {
        return Err(unreadable(
            py,
            None,
            "only row-major contiguous tensors are hashed",
        ));
    }
    let shape: Vec<u64> = facts
        .shape
        .iter()
        .map(|&e| u64::try_from(e))
        .collect::<Result<_, _>>()
        .map_err(|_| unreadable(py, None, "the tensor has a negative extent"))?;
    let len = shape
        .iter()
        .try_fold(facts.itemsize, |p, &e| p.checked_mul(e))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| unreadable(py, None, "the tensor's byte size does not fit in memory"))?;
    if len == 0 {
        return Ok((&[], shape, facts.itemsize));
    }
    let address = usize::try_from(facts.address)
        .ok()
        .filter(|&a| a != 0)
        .ok_or_else(|| unreadable(py, None, "the tensor has no address"))?;
    // SAFETY: the exporter states that `len` bytes from `address` are the tensor's
    // contiguous host memory; `tensor` holds a reference to the owner for as long as the
    // returned slice borrows it, and the slice is only read.
    let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, len) };
    Ok((bytes, shape, facts.itemsize))
}

/// `content_partial(tensor, tensor_id, global_shape, global_offset, block_elements)`:
/// the partial of the live fragment `tensor` (its shape is the local_shape) at
/// `global_offset` of the tensor `tensor_id`: `{"sum": hex, "edges": [{"block", "bytes",
/// "row", "start"}, ...]}`, the content manifest's form.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts the arguments owned
pub(crate) fn content_partial<'py>(
    tensor: &Bound<'py, PyAny>,
    tensor_id: &str,
    global_shape: Vec<u64>,
    global_offset: Vec<u64>,
    block_elements: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let (bytes, local_shape, itemsize) = live_bytes(tensor)?;
    let box_ = (&global_offset[..], &local_shape[..]);
    partial_of(
        tensor.py(),
        bytes,
        tensor_id,
        &global_shape,
        itemsize,
        box_,
        block_elements,
    )
}

/// The partial of the box `(global_offset, local_shape)` of a tensor whose row-major
/// bytes are `data`, computed without the GIL, as the dict of its wire form.
fn partial_of<'py>(
    py: Python<'py>,
    data: &[u8],
    tensor_id: &str,
    global_shape: &[u64],
    itemsize: u64,
    (global_offset, local_shape): (&[u64], &[u64]),
    block_elements: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let t = Tensor::new(tensor_id, global_shape, itemsize, block_elements).or_raise(py)?;
    let p = py
        .detach(|| partial::partial(&t, global_offset, local_shape, data))
        .or_raise(py)?;
    partial_dict(py, &partial_to_wire(&p))
}

/// `content_blocks(tensor, tensor_id, global_shape, global_offset, block_elements)`: in
/// one pass over the live fragment, `(partial, values)`: its partial (as
/// `content_partial`) and the values of its whole blocks by row, then block, as bytes (16
/// per block: the value's low, then high 64 bits, in native byte order: a numpy uint64
/// array of shape (blocks, 2)). A delta's source hashes its bytes once for both.
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts the arguments owned
pub(crate) fn content_blocks<'py>(
    tensor: &Bound<'py, PyAny>,
    tensor_id: &str,
    global_shape: Vec<u64>,
    global_offset: Vec<u64>,
    block_elements: u64,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = tensor.py();
    let (bytes, local_shape, itemsize) = live_bytes(tensor)?;
    let t = Tensor::new(tensor_id, &global_shape, itemsize, block_elements).or_raise(py)?;
    let origin = vec![0; local_shape.len()];
    let (p, values) = py
        .detach(|| {
            let buffer = Buffer::contiguous(bytes, &local_shape, &origin);
            blocks::partial_and_values(&t, &global_offset, &local_shape, buffer)
        })
        .or_raise(py)?;
    let raw = PyBytes::new_with(py, values.len().saturating_mul(16), |out| {
        for (v, slot) in values.iter().zip(out.chunks_exact_mut(16)) {
            #[allow(clippy::cast_possible_truncation)] // the two halves, on purpose
            let (lo, hi) = (*v as u64, (*v >> 64) as u64);
            slot[..8].copy_from_slice(&lo.to_ne_bytes());
            slot[8..].copy_from_slice(&hi.to_ne_bytes());
        }
        Ok(())
    })?;
    let partial = partial_dict(py, &partial_to_wire(&p))?;
    PyTuple::new(py, [partial.into_any(), raw.into_any()])
}

/// `content_values_at(tensor, tensor_id, blocks)`: the values (contract §19.2) of the
/// blocks of the live fragment `tensor` that `blocks` lists, each as four native-endian
/// u64 (the block's byte offset in the fragment's memory, its byte length, its global row
/// r, its block index j), as bytes (16 per block: low, then high 64 bits, as
/// `content_blocks` gives them), hashed in one call with the GIL released: a delta's check
/// re-hashes only the blocks it wrote. `content_buffer_invalid` for a list whose length
/// is not a multiple of 32 bytes or a block that leaves the fragment's memory; nothing is
/// hashed then.
#[pyfunction]
pub(crate) fn content_values_at<'py>(
    tensor: &Bound<'py, PyAny>,
    tensor_id: &str,
    blocks: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let py = tensor.py();
    let (bytes, _, _) = live_bytes(tensor)?;
    let invalid = |message: String| to_py(py, &Error::new(Code::ContentBufferInvalid, message));
    if !blocks.len().is_multiple_of(32) {
        return Err(invalid(format!(
            "the block list holds {} bytes, not a multiple of 32 (offset, length, row, block)",
            blocks.len()
        )));
    }
    let mut spans = Vec::with_capacity(blocks.len() / 32);
    for (i, entry) in blocks.chunks_exact(32).enumerate() {
        let mut words = [0_u64; 4];
        for (word, raw) in words.iter_mut().zip(entry.chunks_exact(8)) {
            let mut le = [0_u8; 8];
            le.copy_from_slice(raw);
            *word = u64::from_ne_bytes(le);
        }
        let [offset, length, row, block] = words;
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(length).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?))
            .filter(|r| r.end <= bytes.len());
        match range {
            Some(r) => spans.push((r, row, block)),
            None => {
                return Err(invalid(format!(
                    "block {i} of the list ({length} bytes at byte {offset}) leaves the fragment's {} bytes",
                    bytes.len()
                )))
            }
        }
    }
    let values: Vec<u128> = py.detach(|| {
        let key = hash::tensor_key(tensor_id);
        spans
            .iter()
            .map(|(r, row, block)| hash::value(key, *row, *block, hash::content(&bytes[r.clone()])))
            .collect()
    });
    PyBytes::new_with(py, values.len().saturating_mul(16), |out| {
        for (v, slot) in values.iter().zip(out.chunks_exact_mut(16)) {
            #[allow(clippy::cast_possible_truncation)] // the two halves, on purpose
            let (lo, hi) = (*v as u64, (*v >> 64) as u64);
            slot[..8].copy_from_slice(&lo.to_ne_bytes());
            slot[8..].copy_from_slice(&hi.to_ne_bytes());
        }
        Ok(())
    })
}

fn partial_dict<'py>(py: Python<'py>, wire: &ContentPartial) -> PyResult<Bound<'py, PyDict>> {
    let edges = PyList::empty(py);
    for e in &wire.edges {
        let edge = PyDict::new(py);
        edge.set_item("block", e.block)?;
        edge.set_item("bytes", &e.bytes)?;
        edge.set_item("row", e.row)?;
        edge.set_item("start", e.start)?;
        edges.append(edge)?;
    }
    let dict = PyDict::new(py);
    dict.set_item("edges", edges)?;
    dict.set_item("sum", &wire.sum)?;
    Ok(dict)
}

/// `content_manifest_invalid` at `pointer` (into the `partials` list).
fn bad(py: Python<'_>, pointer: String, why: &str) -> PyErr {
    to_py(
        py,
        &Error::new(Code::ContentManifestInvalid, why).with_pointer(Some(pointer)),
    )
}

fn member<'py, T: for<'a> FromPyObject<'a, 'py>>(
    dict: &Bound<'py, PyAny>,
    key: &str,
    pointer: &str,
) -> PyResult<T> {
    let py = dict.py();
    let at = format!("{pointer}/{key}");
    let value = dict
        .get_item(key)
        .map_err(|_| bad(py, at.clone(), &format!("missing member {key}")))?;
    value
        .extract::<T>()
        .map_err(|_| bad(py, at, &format!("member {key} has the wrong type")))
}

/// One partial from its dict form (`{"sum", "edges"}`) at `pointer`.
fn partial_from_dict(value: &Bound<'_, PyAny>, pointer: &str) -> PyResult<Partial> {
    let py = value.py();
    let sum: String = member(value, "sum", pointer)?;
    let list: Vec<Bound<'_, PyAny>> = member(value, "edges", pointer)?;
    let mut edges = Vec::with_capacity(list.len());
    for (i, e) in list.iter().enumerate() {
        let at = format!("{pointer}/edges/{i}");
        edges.push(ContentEdge {
            block: member(e, "block", &at)?,
            bytes: member(e, "bytes", &at)?,
            row: member(e, "row", &at)?,
            start: member(e, "start", &at)?,
        });
    }
    partial_from_wire(&ContentPartial { edges, sum }, pointer).or_raise(py)
}

/// `content_combine(tensor_id, global_shape, itemsize, block_elements, partials)`: the
/// digest text (`xxh3sum128:…`) of the tensor from `partials`, dicts with
/// `global_offset`, `local_shape` and `partial`; replicas count once, distinct boxes must
/// partition the tensor (contract §19.4).
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts the arguments owned
pub(crate) fn content_combine(
    py: Python<'_>,
    tensor_id: &str,
    global_shape: Vec<u64>,
    itemsize: u64,
    block_elements: u64,
    partials: Vec<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let t = Tensor::new(tensor_id, &global_shape, itemsize, block_elements).or_raise(py)?;
    let mut boxes = Vec::with_capacity(partials.len());
    for (i, item) in partials.iter().enumerate() {
        let at = format!("/{i}");
        let offset: Vec<u64> = member(item, "global_offset", &at)?;
        let shape: Vec<u64> = member(item, "local_shape", &at)?;
        let inner = item
            .get_item("partial")
            .map_err(|_| bad(py, format!("{at}/partial"), "missing member partial"))?;
        boxes.push((
            offset,
            shape,
            partial_from_dict(&inner, &format!("{at}/partial"))?,
        ));
    }
    let fragments: Vec<Fragment<'_>> = boxes
        .iter()
        .map(|(o, l, p)| Fragment {
            global_offset: o,
            local_shape: l,
            partial: p,
        })
        .collect();
    let digest = py.detach(|| combine(&t, &fragments)).or_raise(py)?;
    Ok(digest.to_string())
}

/// `block_values(tensor, tensor_id, global_shape, global_offset, block_elements)`: the
/// values of the blocks wholly inside the live fragment, as four numpy uint64 arrays
/// `(rows, blocks, hi, lo)`, `hi`/`lo` the value's upper and lower 64 bits (for delta).
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // pyo3 extracts the arguments owned
pub(crate) fn block_values<'py>(
    tensor: &Bound<'py, PyAny>,
    tensor_id: &str,
    global_shape: Vec<u64>,
    global_offset: Vec<u64>,
    block_elements: u64,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = tensor.py();
    let (bytes, local_shape, itemsize) = live_bytes(tensor)?;
    let t = Tensor::new(tensor_id, &global_shape, itemsize, block_elements).or_raise(py)?;
    let origin = vec![0; local_shape.len()];
    let values = py
        .detach(|| {
            let buffer = Buffer::contiguous(bytes, &local_shape, &origin);
            blocks::block_values(&t, &global_offset, &local_shape, buffer)
        })
        .or_raise(py)?;
    values_tuple(py, &values)
}

/// Block values as four numpy uint64 arrays `(rows, blocks, hi, lo)`.
fn values_tuple<'py>(
    py: Python<'py>,
    values: &[blocks::BlockValue],
) -> PyResult<Bound<'py, PyTuple>> {
    let numpy = py.import("numpy")?;
    let column = |f: &dyn Fn(&blocks::BlockValue) -> u64| -> PyResult<Bound<'py, PyAny>> {
        let raw: Vec<u8> = values.iter().flat_map(|v| f(v).to_ne_bytes()).collect();
        numpy.call_method1(
            "frombuffer",
            (PyBytes::new(py, &raw), numpy.getattr("uint64")?),
        )
    };
    #[allow(clippy::cast_possible_truncation)] // the two halves of the u128, on purpose
    let (hi, lo) = (
        |v: &blocks::BlockValue| (v.value >> 64) as u64,
        |v: &blocks::BlockValue| v.value as u64,
    );
    PyTuple::new(
        py,
        [
            column(&|v| v.row)?,
            column(&|v| v.block)?,
            column(&hi)?,
            column(&lo)?,
        ],
    )
}

/// `content_partial_of_bytes(data, tensor_id, global_shape, itemsize, global_offset,
/// local_shape, block_elements)`: the partial of the fragment (`global_offset`,
/// `local_shape`) whose row-major bytes are `data` (bytes received into a buffer, say),
/// in the form of `content_partial`; `content_buffer_invalid` unless `data` holds exactly
/// product(local_shape) × itemsize bytes.
#[pyfunction]
#[allow(clippy::needless_pass_by_value, clippy::too_many_arguments)]
pub(crate) fn content_partial_of_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    tensor_id: &str,
    global_shape: Vec<u64>,
    itemsize: u64,
    global_offset: Vec<u64>,
    local_shape: Vec<u64>,
    block_elements: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let box_ = (&global_offset[..], &local_shape[..]);
    partial_of(
        py,
        data,
        tensor_id,
        &global_shape,
        itemsize,
        box_,
        block_elements,
    )
}

/// `block_values_of_bytes(data, tensor_id, global_shape, itemsize, global_offset,
/// local_shape, block_elements)`: `block_values` of the fragment whose row-major bytes are
/// `data`, checked as `content_partial_of_bytes` checks them.
#[pyfunction]
#[allow(clippy::needless_pass_by_value, clippy::too_many_arguments)]
pub(crate) fn block_values_of_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    tensor_id: &str,
    global_shape: Vec<u64>,
    itemsize: u64,
    global_offset: Vec<u64>,
    local_shape: Vec<u64>,
    block_elements: u64,
) -> PyResult<Bound<'py, PyTuple>> {
    let t = Tensor::new(tensor_id, &global_shape, itemsize, block_elements).or_raise(py)?;
    let origin = vec![0; local_shape.len()];
    let values = py
        .detach(|| {
            let buffer = Buffer::contiguous(data, &local_shape, &origin);
            blocks::block_values(&t, &global_offset, &local_shape, buffer)
        })
        .or_raise(py)?;
    values_tuple(py, &values)
}
