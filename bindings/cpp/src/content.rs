//! Content digests (contract §19) over the C ABI: a tensor's geometry, a fragment's
//! partial and block values computed over the caller's own memory (pointer, length, byte
//! strides, box), partials combined to the tensor digest, and the content manifest (read,
//! verified, written, compared, one fragment checked against it). Every rule is the
//! `weight-manifest-content` crate's; this module only moves arguments and results.

use std::ffi::c_char;
use std::sync::OnceLock;

use weight_manifest::error::{Code, Error};
use weight_manifest::wire::ContentManifest;
use weight_manifest::Limits;
use weight_manifest_content::manifest::{self, Difference};
use weight_manifest_content::walk::Buffer;
use weight_manifest_content::{blocks, combine, partial, strided, BlockValue, Partial, Tensor};

use crate::api::{handle_arg, run, Failure};
use crate::error::WmError;
use crate::fence::verdict;
use crate::handles::{expose, free};
use crate::text::{bytes_arg, CText};

/// A tensor's validated geometry for content digests: tensor_id, global shape, itemsize
/// and block size. Opaque; free it with `wm_content_tensor_free`.
#[derive(Debug)]
pub struct WmContentTensor {
    inner: Tensor,
}

/// A fragment's partial (contract §19.3). Opaque; free it with `wm_content_partial_free`.
#[derive(Debug)]
pub struct WmContentPartial {
    inner: Partial,
    json: OnceLock<CText>,
}

/// The values of the blocks wholly inside a fragment, by row, then block. Opaque; free it
/// with `wm_content_values_free`.
#[derive(Debug)]
pub struct WmContentValues {
    inner: Vec<BlockValue>,
    json: OnceLock<CText>,
}

/// A content manifest, read strictly (contract §19.5). Opaque; free it with
/// `wm_content_manifest_free`.
#[derive(Debug)]
pub struct WmContentManifest {
    inner: ContentManifest,
    json: CText,
}

/// The differences between two content manifests. Opaque; free it with
/// `wm_content_comparison_free`.
#[derive(Debug)]
pub struct WmContentComparison {
    inner: Vec<Difference>,
    json: CText,
}

/// One fragment given to `wm_content_combine`: its box (`ndim` extents from each
/// pointer) and its partial.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WmContentFragment {
    /// The box's first element, `ndim` values.
    pub global_offset: *const u64,
    /// The box's shape, `ndim` values.
    pub local_shape: *const u64,
    /// The number of dimensions of the box.
    pub ndim: usize,
    /// The fragment's partial (a live handle).
    pub partial: *const WmContentPartial,
}

/// A tensor's content digest as text: `xxh3sum128:` and 32 lowercase hex digits, then a
/// NUL byte.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WmContentDigest {
    /// The NUL-terminated text (43 characters and the NUL).
    pub text: [c_char; 44],
}

/// `count` u64 values at `ptr` (NULL with `count` 0 is the empty list).
///
/// # Safety
/// Unless NULL, `ptr` points to `count` readable, aligned `u64` values live for `'a`.
unsafe fn u64s_arg<'a>(ptr: *const u64, count: usize, name: &str) -> Result<&'a [u64], Failure> {
    if ptr.is_null() {
        return if count == 0 {
            Ok(&[])
        } else {
            Err(Failure::Argument(format!(
                "{name} is NULL but has {count} values"
            )))
        };
    }
    if count
        .checked_mul(8)
        .is_none_or(|n| isize::try_from(n).is_err())
    {
        return Err(Failure::Argument(format!(
            "{name} has too many values ({count})"
        )));
    }
    // SAFETY: non-NULL, and by the caller's promise `count` readable aligned values; the
    // byte size fits in `isize` (checked above).
    Ok(unsafe { std::slice::from_raw_parts(ptr, count) })
}

/// The contiguous row-major bytes of a fragment in the caller's memory: `data` itself when
/// `strides_bytes` is NULL, else the view's elements gathered (every byte checked to lie
/// in `data_len` first).
///
/// # Safety
/// `data` is NULL or points to `data_len` readable bytes; `strides_bytes` is NULL or
/// points to `ndim` readable values; both unchanged during the call.
unsafe fn fragment_bytes<'a>(
    tensor: &Tensor,
    local_shape: &[u64],
    data: *const u8,
    data_len: usize,
    strides_bytes: *const u64,
) -> Result<std::borrow::Cow<'a, [u8]>, Failure> {
    // SAFETY: forwarded caller promises.
    let memory = unsafe { bytes_arg(data.cast::<c_char>(), data_len, "data") }?;
    if strides_bytes.is_null() {
        return Ok(std::borrow::Cow::Borrowed(memory));
    }
    // SAFETY: forwarded caller promise: `ndim` (= local_shape.len()) strides.
    let strides = unsafe { u64s_arg(strides_bytes, local_shape.len(), "strides_bytes") }?;
    Ok(std::borrow::Cow::Owned(strided::gather(
        memory,
        local_shape,
        strides,
        tensor.itemsize(),
    )?))
}

/// Checks a tensor's geometry for content digests (contract §19.1): `tensor_id`
/// (`tensor_id_len` bytes of UTF-8), `ndim` extents at `global_shape`, `itemsize` (the
/// dtype's bytes per element) and `block_elements` (B; 64 is the default of the CLI and
/// the manifests). Rejections: `content_shape_invalid` (no dimension, a zero extent,
/// itemsize or B of 0, a byte size past 2^64 − 1); `WM_CODE_INVALID_ARGUMENT` for a
/// tensor_id that is not UTF-8 or NULL pointers with non-zero lengths.
///
/// # Safety
/// `tensor_id` is NULL or points to `tensor_id_len` readable bytes; `global_shape` is NULL
/// or points to `ndim` readable values; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_tensor_new(
    tensor_id: *const c_char,
    tensor_id_len: usize,
    global_shape: *const u64,
    ndim: usize,
    itemsize: u64,
    block_elements: u64,
    out: *mut *mut WmContentTensor,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let id = bytes_arg(tensor_id, tensor_id_len, "tensor_id")?;
            let id = std::str::from_utf8(id)
                .map_err(|_| Failure::Argument("tensor_id is not UTF-8".to_owned()))?;
            let shape = u64s_arg(global_shape, ndim, "global_shape")?;
            Ok(WmContentTensor {
                inner: Tensor::new(id, shape, itemsize, block_elements)?,
            })
        })
    }
}

/// The partial (contract §19.3) of the fragment (`global_offset`, `local_shape`, `ndim`
/// values each) of `tensor` whose bytes are in the caller's memory at `data`
/// (`data_len` readable bytes). With `strides_bytes` NULL the bytes are contiguous
/// row-major and `data_len` must be exactly product(local_shape) × itemsize
/// (`content_buffer_invalid` otherwise); else `strides_bytes` holds `ndim` byte strides
/// of a view whose element (0, …, 0) is at `data` (a box of a larger buffer, a transposed
/// view), and every byte of the view must lie in `data_len` (`content_buffer_invalid`).
/// Rejections also `content_shape_invalid` for a box of another rank, a zero extent or a
/// box outside the tensor. The memory is only read, during the call.
///
/// # Safety
/// `tensor` is NULL or a live handle; `global_offset`, `local_shape` and `strides_bytes`
/// are NULL or point to `ndim` readable values; `data` is NULL or points to `data_len`
/// readable bytes, unchanged during the call; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_partial(
    tensor: *const WmContentTensor,
    global_offset: *const u64,
    local_shape: *const u64,
    ndim: usize,
    data: *const u8,
    data_len: usize,
    strides_bytes: *const u64,
    out: *mut *mut WmContentPartial,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let t = &handle_arg(tensor, "tensor")?.inner;
            let offset = u64s_arg(global_offset, ndim, "global_offset")?;
            let shape = u64s_arg(local_shape, ndim, "local_shape")?;
            t.check_box(offset, shape)?;
            let bytes = fragment_bytes(t, shape, data, data_len, strides_bytes)?;
            Ok(WmContentPartial::new(partial::partial(
                t, offset, shape, &bytes,
            )?))
        })
    }
}

/// The block values (contract §19.3, for delta updates) of the fragment given as for
/// `wm_content_partial`, with the same rejections.
///
/// # Safety
/// As for `wm_content_partial`.
#[no_mangle]
pub unsafe extern "C" fn wm_content_block_values(
    tensor: *const WmContentTensor,
    global_offset: *const u64,
    local_shape: *const u64,
    ndim: usize,
    data: *const u8,
    data_len: usize,
    strides_bytes: *const u64,
    out: *mut *mut WmContentValues,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let t = &handle_arg(tensor, "tensor")?.inner;
            let offset = u64s_arg(global_offset, ndim, "global_offset")?;
            let shape = u64s_arg(local_shape, ndim, "local_shape")?;
            t.check_box(offset, shape)?;
            let bytes = fragment_bytes(t, shape, data, data_len, strides_bytes)?;
            let origin = vec![0; shape.len()];
            let buffer = Buffer::contiguous(&bytes, shape, &origin);
            Ok(WmContentValues {
                inner: blocks::block_values(t, offset, shape, buffer)?,
                json: OnceLock::new(),
            })
        })
    }
}

/// Reads a partial from its JSON text (`{"edges": [{"block", "bytes", "row", "start"},
/// ...], "sum": 32 hex digits}`, the form `wm_content_partial_json` writes and a content
/// manifest's fragments hold): `content_manifest_invalid` for another shape, a sum or
/// edge bytes not in lowercase hex, and the reader's codes.
///
/// # Safety
/// `json` is NULL or points to `json_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_partial_parse(
    json: *const c_char,
    json_len: usize,
    out: *mut *mut WmContentPartial,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(json, json_len, "json")?;
            Ok(WmContentPartial::new(manifest::read_partial(
                text,
                &Limits::default(),
            )?))
        })
    }
}

/// Whether two partials are equal (the same sum, the same edges as sets): how replicas are
/// compared (§19.4). False when either is NULL.
///
/// # Safety
/// `a` and `b` are each NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wm_content_partial_equal(
    a: *const WmContentPartial,
    b: *const WmContentPartial,
) -> bool {
    // SAFETY: the caller promises NULL or live; `as_ref` checks NULL.
    match unsafe { (a.as_ref(), b.as_ref()) } {
        (Some(a), Some(b)) => combine::same_partial(&a.inner, &b.inner),
        _ => false,
    }
}

/// The partial as canonical JSON text, NUL-terminated and owned by the handle; its length
/// in `len` unless NULL. NULL for a NULL handle.
///
/// # Safety
/// `partial` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_partial_json(
    partial: *const WmContentPartial,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe {
        expose(partial, len, |p| {
            p.json
                .get_or_init(|| CText::new(&manifest::partial_to_json(&p.inner)))
        })
    }
}

/// The digest of `tensor` (contract §19.4) from the partials of `count` fragments at
/// `fragments` that hold all of it; replicas (equal boxes) count once. Writes the digest
/// text to `*out` and returns NULL, or returns the error: `content_shape_invalid` for a box
/// outside the tensor, `content_replica_mismatch`, `content_partition_invalid`;
/// `WM_CODE_INVALID_ARGUMENT` for NULL handles or pointers.
///
/// # Safety
/// `tensor` is NULL or a live handle; `fragments` is NULL or points to `count` readable
/// fragments whose pointers each satisfy `wm_content_partial`'s promises; `out` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_combine(
    tensor: *const WmContentTensor,
    fragments: *const WmContentFragment,
    count: usize,
    out: *mut WmContentDigest,
) -> *mut WmError {
    verdict(|| {
        // SAFETY: forwarded caller promises.
        let (t, given, out) = unsafe {
            let t = &handle_arg(tensor, "tensor")?.inner;
            let given: &[WmContentFragment] = if fragments.is_null() && count == 0 {
                &[]
            } else if fragments.is_null() {
                return Err(Failure::Argument(format!(
                    "fragments is NULL but count is {count}"
                )));
            } else {
                std::slice::from_raw_parts(fragments, count)
            };
            let out = out
                .as_mut()
                .ok_or_else(|| Failure::Argument("the output pointer is NULL".to_owned()))?;
            (t, given, out)
        };
        let mut parts = Vec::with_capacity(given.len());
        for (i, f) in given.iter().enumerate() {
            // SAFETY: forwarded caller promises, per fragment.
            let (offset, shape, p) = unsafe {
                (
                    u64s_arg(
                        f.global_offset,
                        f.ndim,
                        &format!("fragments[{i}].global_offset"),
                    )?,
                    u64s_arg(
                        f.local_shape,
                        f.ndim,
                        &format!("fragments[{i}].local_shape"),
                    )?,
                    &handle_arg(f.partial, &format!("fragments[{i}].partial"))?.inner,
                )
            };
            parts.push(weight_manifest_content::Fragment {
                global_offset: offset,
                local_shape: shape,
                partial: p,
            });
        }
        let digest = combine::combine(t, &parts)?.to_string();
        let mut text = [0 as c_char; 44];
        for (slot, byte) in text.iter_mut().zip(digest.bytes()) {
            *slot = byte.cast_signed();
        }
        out.text = text;
        Ok(())
    })
}

/// The number of block values.
///
/// # Safety
/// `values` is NULL (0) or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wm_content_values_count(values: *const WmContentValues) -> usize {
    // SAFETY: the caller promises NULL or live.
    unsafe { values.as_ref() }.map_or(0, |v| v.inner.len())
}

/// Block value `index`: its row, block and the value's upper and lower 64 bits. False (and
/// nothing written) for a NULL handle, an index past the end or a NULL output.
///
/// # Safety
/// `values` is NULL or a live handle; each output is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_values_get(
    values: *const WmContentValues,
    index: usize,
    row: *mut u64,
    block: *mut u64,
    value_hi: *mut u64,
    value_lo: *mut u64,
) -> bool {
    // SAFETY: the caller promises NULL or live / writable; `as_ref`/`as_mut` check NULL.
    unsafe {
        let Some(v) = values.as_ref().and_then(|v| v.inner.get(index)) else {
            return false;
        };
        let (Some(r), Some(b), Some(hi), Some(lo)) = (
            row.as_mut(),
            block.as_mut(),
            value_hi.as_mut(),
            value_lo.as_mut(),
        ) else {
            return false;
        };
        *r = v.row;
        *b = v.block;
        #[allow(clippy::cast_possible_truncation)] // the two halves of the u128, on purpose
        {
            *hi = (v.value >> 64) as u64;
            *lo = v.value as u64;
        }
        true
    }
}

/// The block values as canonical JSON text (`[{"block", "row", "value": 32 hex digits}]`),
/// NUL-terminated and owned by the handle; its length in `len` unless NULL.
///
/// # Safety
/// `values` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_values_json(
    values: *const WmContentValues,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe {
        expose(values, len, |v| {
            v.json
                .get_or_init(|| CText::new(&blocks::values_to_json(&v.inner)))
        })
    }
}

/// Reads a content manifest strictly (contract §19.5: `content_manifest_invalid`,
/// `content_shape_invalid` with their pointers, the reader's codes, `limit_exceeded`).
/// Its fragments are not recombined here: `wm_content_manifest_verify` does that.
///
/// # Safety
/// `json` is NULL or points to `json_len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_parse(
    json: *const c_char,
    json_len: usize,
    out: *mut *mut WmContentManifest,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let text = bytes_arg(json, json_len, "json")?;
            let inner = manifest::read(text, &Limits::default())?;
            Ok(WmContentManifest {
                json: CText::new(&manifest::to_json(&inner)),
                inner,
            })
        })
    }
}

/// Recombines a manifest's fragments (§19.5): NULL when every tensor with fragments gets
/// its digest, else the error (`content_digest_mismatch` naming the tensor, or the
/// combination's rejections).
///
/// # Safety
/// `manifest` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_verify(
    manifest: *const WmContentManifest,
) -> *mut WmError {
    verdict(|| {
        // SAFETY: forwarded caller promise.
        let m = unsafe { handle_arg(manifest, "manifest") }?;
        Ok(manifest::verify_fragments(&m.inner)?)
    })
}

/// The manifest in the canonical encoding (§5), NUL-terminated and owned by the handle;
/// its length in `len` unless NULL.
///
/// # Safety
/// `manifest` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_json(
    manifest: *const WmContentManifest,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(manifest, len, |m| &m.json) }
}

/// The geometry of the manifest's tensor `tensor_id` with the manifest's block size, for
/// `wm_content_partial`: `content_manifest_invalid` when the manifest lists no such
/// tensor.
///
/// # Safety
/// `manifest` is NULL or a live handle; `tensor_id` is NULL or points to `tensor_id_len`
/// readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_tensor(
    manifest: *const WmContentManifest,
    tensor_id: *const c_char,
    tensor_id_len: usize,
    out: *mut *mut WmContentTensor,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let m = &handle_arg(manifest, "manifest")?.inner;
            let id = bytes_arg(tensor_id, tensor_id_len, "tensor_id")?;
            let entry = m
                .tensors
                .iter()
                .find(|t| t.tensor_id.as_bytes() == id)
                .ok_or_else(|| {
                    Error::new(
                        Code::ContentManifestInvalid,
                        format!(
                            "the content manifest lists no tensor {}",
                            String::from_utf8_lossy(id)
                        ),
                    )
                })?;
            Ok(WmContentTensor {
                inner: Tensor::new(
                    &entry.tensor_id,
                    &entry.global_shape,
                    entry.itemsize,
                    m.block_elements,
                )?,
            })
        })
    }
}

/// Checks a partial one holder computed over its own memory against the partial the
/// manifest records for the fragment `placement_fragment_id`: NULL when they are equal,
/// else `content_digest_mismatch` naming the fragment and its tensor, or
/// `content_manifest_invalid` when the manifest lists no such fragment.
///
/// # Safety
/// `manifest` and `partial` are each NULL or a live handle; `placement_fragment_id` is
/// NULL or points to `id_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_check_fragment(
    manifest: *const WmContentManifest,
    placement_fragment_id: *const c_char,
    id_len: usize,
    partial: *const WmContentPartial,
) -> *mut WmError {
    verdict(|| {
        // SAFETY: forwarded caller promises.
        let (m, id, p) = unsafe {
            (
                handle_arg(manifest, "manifest")?,
                bytes_arg(placement_fragment_id, id_len, "placement_fragment_id")?,
                handle_arg(partial, "partial")?,
            )
        };
        let id = String::from_utf8_lossy(id);
        Ok(manifest::check_fragment(&m.inner, &id, &p.inner)?)
    })
}

/// Checks the bytes of the fragment `placement_fragment_id` as they landed in the caller's
/// memory (`data`, `data_len`, optional `strides_bytes` of the fragment's `ndim`, as for
/// `wm_content_partial`) against the manifest: the fragment's tensor and box are the
/// manifest's, its partial is computed over the memory and compared with the recorded one.
/// NULL when every byte agrees; else `content_digest_mismatch` naming the fragment,
/// `content_manifest_invalid` when the manifest lists no such fragment, or the partial's
/// rejections (`content_buffer_invalid` for memory of the wrong size).
///
/// # Safety
/// `manifest` is NULL or a live handle; `placement_fragment_id` is NULL or points to
/// `id_len` readable bytes; `data` and `strides_bytes` as for `wm_content_partial`, with
/// `ndim` the fragment's number of dimensions in the manifest.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_check_bytes(
    manifest: *const WmContentManifest,
    placement_fragment_id: *const c_char,
    id_len: usize,
    data: *const u8,
    data_len: usize,
    strides_bytes: *const u64,
) -> *mut WmError {
    verdict(|| {
        // SAFETY: forwarded caller promises.
        let (m, id) = unsafe {
            (
                &handle_arg(manifest, "manifest")?.inner,
                bytes_arg(placement_fragment_id, id_len, "placement_fragment_id")?,
            )
        };
        let id = String::from_utf8_lossy(id);
        let (tensor, fragment) = manifest::fragment_tensor(m, &id)?;
        let shape = &fragment.local_shape;
        // SAFETY: forwarded caller promises.
        let bytes = unsafe { fragment_bytes(&tensor, shape, data, data_len, strides_bytes) }?;
        let landed = partial::partial(&tensor, &fragment.global_offset, shape, &bytes)?;
        Ok(manifest::check_fragment(m, &id, &landed)?)
    })
}

/// Compares two manifests tensor by tensor (§19.5): a tensor differs when it is in one
/// only or its descriptor or digest differs. `content_manifest_invalid` for manifests of
/// different algorithms or block sizes.
///
/// # Safety
/// `a` and `b` are each NULL or a live handle; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_compare(
    a: *const WmContentManifest,
    b: *const WmContentManifest,
    out: *mut *mut WmContentComparison,
) -> *mut WmError {
    // SAFETY: forwarded caller promises.
    unsafe {
        run(out, || {
            let (a, b) = (&handle_arg(a, "a")?.inner, &handle_arg(b, "b")?.inner);
            let inner = manifest::compare(a, b)?;
            Ok(WmContentComparison {
                json: CText::new(&comparison_json(&inner)),
                inner,
            })
        })
    }
}

/// `[{"difference": "differs" | "only_in_a" | "only_in_b", "tensor_id": ...}]`, canonical.
fn comparison_json(differences: &[Difference]) -> String {
    let entries: Vec<serde_json::Value> = differences
        .iter()
        .map(|d| {
            let kind = match d {
                Difference::Differs(_) => "differs",
                Difference::OnlyInFirst(_) => "only_in_a",
                Difference::OnlyInSecond(_) => "only_in_b",
            };
            serde_json::json!({"difference": kind, "tensor_id": d.tensor_id()})
        })
        .collect();
    weight_manifest::canonical::to_string(&entries)
        .unwrap_or_else(|e| unreachable!("JSON values are always encodable: {e}"))
}

/// The number of tensors that differ (0: the manifests agree).
///
/// # Safety
/// `comparison` is NULL (0) or a live handle.
#[no_mangle]
pub unsafe extern "C" fn wm_content_comparison_count(
    comparison: *const WmContentComparison,
) -> usize {
    // SAFETY: the caller promises NULL or live.
    unsafe { comparison.as_ref() }.map_or(0, |c| c.inner.len())
}

/// The differences as canonical JSON text, `[{"difference", "tensor_id"}]` sorted by
/// tensor_id within each kind; NUL-terminated, owned by the handle, its length in `len`.
///
/// # Safety
/// `comparison` is NULL or a live handle; `len` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn wm_content_comparison_json(
    comparison: *const WmContentComparison,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded caller promises.
    unsafe { expose(comparison, len, |c| &c.json) }
}

impl WmContentPartial {
    fn new(inner: Partial) -> WmContentPartial {
        WmContentPartial {
            inner,
            json: OnceLock::new(),
        }
    }
}

/// Frees a content tensor; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_content_tensor_free(handle: *mut WmContentTensor) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}

/// Frees a partial; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_content_partial_free(handle: *mut WmContentPartial) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}

/// Frees block values; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_content_values_free(handle: *mut WmContentValues) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}

/// Frees a content manifest; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_content_manifest_free(handle: *mut WmContentManifest) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}

/// Frees a comparison; NULL does nothing.
///
/// # Safety
/// The handle is NULL or from this library, not yet freed, not used after.
#[no_mangle]
pub unsafe extern "C" fn wm_content_comparison_free(handle: *mut WmContentComparison) {
    // SAFETY: forwarded caller promise.
    unsafe { free(handle) }
}
