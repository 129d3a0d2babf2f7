//! The facts of one live tensor, read without copying it: where its first element is, its
//! dtype, shape, strides and device, for `weight_manifest.live` (contract §10.3 records).
//!
//! A tensor is read through DLPack when it has `__dlpack__` (numpy, torch, cupy, jax alike):
//! the legacy `"dltensor"` capsule's `DLTensor` is copied field by field and the capsule is
//! then released untouched, so its own destructor returns the export to the producer. An
//! object without DLPack is read through `__array_interface__`, else the buffer protocol.
//! Nothing is judged here: a non-contiguous tensor is reported with its real strides, and
//! the core's inventory reader decides (`not_contiguous`, `non_canonical_stride`).

use std::ffi::{c_void, CStr};

use pyo3::exceptions::PyException;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use weight_manifest::error::{Code, Error};

use crate::errors::to_py;

/// What a tensor is, in the record's terms: strides in elements, the address of the first
/// element (the view's first byte, offsets already applied).
pub(crate) struct Facts {
    pub(crate) address: u64,
    pub(crate) device: String,
    pub(crate) dtype: String,
    pub(crate) itemsize: u64,
    pub(crate) shape: Vec<i64>,
    pub(crate) strides: Vec<i64>,
    pub(crate) interface: &'static str,
}

/// The `unreadable` rejection: `live_tensor_unreadable` at `pointer`, its message
/// "tensor {name}: {why}" naming the tensor of the pointer's last token (§18).
pub(crate) fn unreadable(py: Python<'_>, pointer: Option<&str>, why: impl Into<String>) -> PyErr {
    let why = why.into();
    let message = match pointer.and_then(|p| p.rsplit_once('/')) {
        Some((_, token)) => {
            let name = token.replace("~1", "/").replace("~0", "~");
            format!("tensor {name}: {why}")
        }
        None => why,
    };
    let error =
        Error::new(Code::LiveTensorUnreadable, message).with_pointer(pointer.map(str::to_owned));
    to_py(py, &error)
}

/// Row-major contiguity with extent-1 axes ignored: every other axis steps by the product
/// of the extents after it (§10.3 step 4.3.5 compares the same way).
pub(crate) fn row_major_contiguous(shape: &[i64], strides: &[i64]) -> bool {
    let mut expected: i64 = 1;
    for (&extent, &stride) in shape.iter().zip(strides).rev() {
        if extent != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(extent);
    }
    true
}

/// `tensor_facts(tensor, pointer=None)`: a dict with `address` (the first element's
/// address), `device` (`cpu`, `cuda:N`, ...), `dtype` (torch spelling), `itemsize`,
/// `shape`, `strides` (elements), `is_contiguous` and `interface` (`dlpack`,
/// `array_interface` or `buffer`). An object that none of them reads, or a dtype with
/// lanes or without whole bytes, raises `ManifestError` `live_tensor_unreadable` at
/// `pointer`.
#[pyfunction]
#[pyo3(signature = (tensor, pointer=None))]
pub(crate) fn tensor_facts<'py>(
    tensor: &Bound<'py, PyAny>,
    pointer: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let py = tensor.py();
    let facts = read_facts(tensor, pointer)?;
    let dict = PyDict::new(py);
    dict.set_item("address", facts.address)?;
    dict.set_item("device", facts.device)?;
    dict.set_item("dtype", facts.dtype)?;
    dict.set_item("itemsize", facts.itemsize)?;
    dict.set_item("shape", PyTuple::new(py, &facts.shape)?)?;
    dict.set_item("strides", PyTuple::new(py, &facts.strides)?)?;
    dict.set_item(
        "is_contiguous",
        row_major_contiguous(&facts.shape, &facts.strides),
    )?;
    dict.set_item("interface", facts.interface)?;
    Ok(dict)
}

/// The facts of `tensor`: through DLPack, else `__array_interface__`, else the buffer
/// protocol (the module docs).
pub(crate) fn read_facts(tensor: &Bound<'_, PyAny>, pointer: Option<&str>) -> PyResult<Facts> {
    let py = tensor.py();
    let has_interface = tensor.hasattr(intern!(py, "__array_interface__"))?;
    Ok(if tensor.hasattr(intern!(py, "__dlpack__"))? {
        // An export can be refused (numpy will not export a read-only array through the
        // legacy capsule); the array interface then reads the same memory.
        match dlpack(tensor, pointer) {
            Ok(facts) => facts,
            Err(refused) if has_interface => {
                array_interface(tensor, pointer).map_err(|_| refused)?
            }
            Err(refused) => return Err(refused),
        }
    } else if has_interface {
        array_interface(tensor, pointer)?
    } else {
        buffer(tensor, pointer)?
    })
}

// ---- DLPack ---------------------------------------------------------------------------

/// `DLDevice` of dlpack.h.
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType` of dlpack.h.
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor` of dlpack.h: the first member of the `DLManagedTensor` a `"dltensor"`
/// capsule points at, so a pointer to one is a pointer to the other.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

const DLTENSOR: &CStr = c"dltensor";

/// The device in torch's spelling where there is one (DLPack `DLDeviceType` numbers).
fn device_name(device: DlDevice) -> String {
    let id = device.device_id;
    match device.device_type {
        1 => "cpu".to_owned(),
        2 => format!("cuda:{id}"),
        3 => "cuda_host".to_owned(),
        4 => format!("opencl:{id}"),
        7 => format!("vulkan:{id}"),
        8 => format!("mps:{id}"),
        10 => format!("rocm:{id}"),
        11 => "rocm_host".to_owned(),
        13 => format!("cuda_managed:{id}"),
        14 => format!("xpu:{id}"),
        other => format!("dlpack{other}:{id}"),
    }
}

/// The torch name of a DLPack dtype (code, bits) with one lane, as the adapter names the
/// safetensors dtypes.
fn dlpack_dtype(code: u8, bits: u8) -> Option<&'static str> {
    Some(match (code, bits) {
        (0, 8) => "int8",
        (0, 16) => "int16",
        (0, 32) => "int32",
        (0, 64) => "int64",
        (1, 8) => "uint8",
        (1, 16) => "uint16",
        (1, 32) => "uint32",
        (1, 64) => "uint64",
        (2, 16) => "float16",
        (2, 32) => "float32",
        (2, 64) => "float64",
        (4, 16) => "bfloat16",
        (5, 64) => "complex64",
        (5, 128) => "complex128",
        (6, 8) => "bool",
        (10, 8) => "float8_e4m3fn",
        (11, 8) => "float8_e4m3fnuz",
        (12, 8) => "float8_e5m2",
        (13, 8) => "float8_e5m2fnuz",
        (14, 8) => "float8_e8m0fnu",
        _ => return None,
    })
}

/// The DLTensor fields, copied while the capsule is held.
struct DlCopy {
    data: usize,
    byte_offset: u64,
    device: DlDevice,
    dtype: DlDataType,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
}

/// The DLTensor of a `"dltensor"` capsule, copied out; the capsule is left as it was.
#[allow(unsafe_code)]
fn copy_dltensor(capsule: &Bound<'_, PyCapsule>) -> PyResult<DlCopy> {
    let pointer = capsule.pointer_checked(Some(DLTENSOR))?;
    // SAFETY: a capsule named "dltensor" holds a `DLManagedTensor*` (DLPack's Python
    // specification) whose first member is the `DLTensor`; it stays valid while the
    // capsule is alive and unconsumed, and no Python code runs until the copy is made.
    // `shape` has `ndim` elements, and so has `strides` unless it is NULL (row-major).
    unsafe {
        let tensor = &*pointer.as_ptr().cast::<DlTensor>();
        let ndim = usize::try_from(tensor.ndim).unwrap_or(0);
        let shape = if ndim == 0 || tensor.shape.is_null() {
            Vec::new()
        } else {
            std::slice::from_raw_parts(tensor.shape, ndim).to_vec()
        };
        let strides = (!tensor.strides.is_null() && ndim > 0)
            .then(|| std::slice::from_raw_parts(tensor.strides, ndim).to_vec());
        Ok(DlCopy {
            data: tensor.data.addr(),
            byte_offset: tensor.byte_offset,
            device: tensor.device,
            dtype: tensor.dtype,
            shape,
            strides,
        })
    }
}

/// Row-major strides of `shape`, in elements (DLPack's meaning of NULL strides).
fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1_i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
    }
    strides
}

/// The legacy DLPack capsule of `tensor`. A refusal by the exporter (torch will not export
/// a meta, sparse, quantized or nested tensor, nor one with the conjugate bit set) is
/// `live_tensor_unreadable` at `pointer`, with the exporter's reason.
fn export<'py>(tensor: &Bound<'py, PyAny>, pointer: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
    let py = tensor.py();
    let refused = |error: PyErr| {
        if error.is_instance_of::<PyException>(py) {
            unreadable(
                py,
                pointer,
                format!("the DLPack export was refused: {error}"),
            )
        } else {
            error
        }
    };
    // torch exports a view with the negative bit set (`x.conj().imag`) as the bytes of
    // the un-negated values: its memory does not hold the tensor.
    let is_neg = tensor.getattr_opt(intern!(py, "is_neg")).map_err(refused)?;
    if let Some(is_neg) = is_neg {
        if is_neg
            .call0()
            .and_then(|flag| flag.is_truthy())
            .map_err(refused)?
        {
            return Err(unreadable(
                py,
                pointer,
                "the tensor has torch's negative bit set: its memory holds the negated values",
            ));
        }
    }
    // torch refuses to export a tensor that requires grad (a model's nn.Parameter does);
    // its detach() is the same memory, strides and offset, without autograd.
    let requires_grad = tensor
        .getattr_opt(intern!(py, "requires_grad"))
        .map_err(refused)?
        .is_some_and(|flag| flag.is_truthy().unwrap_or(false));
    let exported = if requires_grad {
        tensor
            .call_method0(intern!(py, "detach"))
            .map_err(refused)?
    } else {
        tensor.clone()
    };
    exported
        .call_method0(intern!(py, "__dlpack__"))
        .map_err(refused)
}

/// The facts of a tensor exported through DLPack (`__dlpack__()`, legacy capsule).
fn dlpack(tensor: &Bound<'_, PyAny>, pointer: Option<&str>) -> PyResult<Facts> {
    let py = tensor.py();
    let capsule = export(tensor, pointer)?;
    let capsule = capsule
        .cast::<PyCapsule>()
        .map_err(|_| unreadable(py, pointer, "__dlpack__() did not return a capsule"))?;
    let copy = copy_dltensor(capsule)?;
    // The capsule is dropped here, still named "dltensor": its destructor runs the
    // producer's deleter, as for any export nobody consumed.
    let DlDataType { code, bits, lanes } = copy.dtype;
    let dtype = (lanes == 1)
        .then(|| dlpack_dtype(code, bits))
        .flatten()
        .ok_or_else(|| {
            unreadable(
                py,
                pointer,
                format!("DLPack dtype code {code} bits {bits} lanes {lanes} has no name here"),
            )
        })?;
    let strides = copy.strides.unwrap_or_else(|| row_major(&copy.shape));
    let address = u64::try_from(copy.data)
        .ok()
        .and_then(|data| data.checked_add(copy.byte_offset))
        .ok_or_else(|| unreadable(py, pointer, "the data address does not fit in 64 bits"))?;
    Ok(Facts {
        address,
        device: device_name(copy.device),
        dtype: dtype.to_owned(),
        itemsize: u64::from(bits / 8),
        shape: copy.shape,
        strides,
        interface: "dlpack",
    })
}

// ---- __array_interface__ and the buffer protocol ---------------------------------------

/// The torch name of an `__array_interface__` typestr kind (`b` boolean, `i`, `u`, `f`,
/// `c`) of `size` bytes.
fn typestr_dtype(kind: char, size: u64) -> Option<String> {
    let bits = size * 8;
    match kind {
        'b' if size == 1 => Some("bool".to_owned()),
        'i' => Some(format!("int{bits}")),
        'u' => Some(format!("uint{bits}")),
        'f' => Some(format!("float{bits}")),
        'c' => Some(format!("complex{bits}")),
        _ => None,
    }
}

/// The torch name of a buffer-protocol (struct module) format character of `size` bytes.
fn format_dtype(kind: char, size: u64) -> Option<String> {
    let bits = size * 8;
    match kind {
        'b' | 'h' | 'i' | 'l' | 'q' | 'n' => Some(format!("int{bits}")),
        'B' | 'H' | 'I' | 'L' | 'Q' | 'N' => Some(format!("uint{bits}")),
        'e' | 'f' | 'd' => Some(format!("float{bits}")),
        '?' => Some("bool".to_owned()),
        _ => None,
    }
}

/// Byte strides as element strides; `None` when one is not a whole number of elements.
fn element_strides(bytes: &[i64], itemsize: u64) -> Option<Vec<i64>> {
    let size = i64::try_from(itemsize).ok().filter(|&s| s > 0)?;
    bytes
        .iter()
        .map(|&b| (b % size == 0).then_some(b / size))
        .collect()
}

/// The facts of an object with numpy's `__array_interface__` (version 3): always on the CPU.
fn array_interface(tensor: &Bound<'_, PyAny>, pointer: Option<&str>) -> PyResult<Facts> {
    let py = tensor.py();
    let interface = tensor.getattr(intern!(py, "__array_interface__"))?;
    let typestr: String = interface.get_item("typestr")?.extract()?;
    let mut chars = typestr.chars();
    let (order, kind) = (chars.next(), chars.next());
    let itemsize: u64 = chars.as_str().parse().unwrap_or(0);
    let native = matches!(order, Some('|' | '='))
        || (order == Some('<') && cfg!(target_endian = "little"))
        || (order == Some('>') && cfg!(target_endian = "big"));
    let dtype = kind
        .filter(|_| native && itemsize > 0)
        .and_then(|kind| typestr_dtype(kind, itemsize))
        .ok_or_else(|| unreadable(py, pointer, format!("typestr {typestr} has no name here")))?;
    let shape: Vec<i64> = interface.get_item("shape")?.extract()?;
    let strides = match interface.get_item("strides").ok().filter(|s| !s.is_none()) {
        None => row_major(&shape),
        Some(bytes) => element_strides(&bytes.extract::<Vec<i64>>()?, itemsize)
            .ok_or_else(|| unreadable(py, pointer, "a stride is not a whole number of items"))?,
    };
    let data = interface.get_item("data")?;
    let address = if let Ok((address, _readonly)) = data.extract::<(u64, bool)>() {
        address
    } else {
        // `data` is a buffer object, or None for the object's own buffer; `offset` applies.
        let source = if data.is_none() { tensor.clone() } else { data };
        let start = buffer(&source, pointer)?.address;
        let offset: u64 = match interface.get_item("offset") {
            Ok(offset) if !offset.is_none() => offset.extract()?,
            _ => 0,
        };
        start
            .checked_add(offset)
            .ok_or_else(|| unreadable(py, pointer, "the data address does not fit in 64 bits"))?
    };
    Ok(Facts {
        address,
        device: "cpu".to_owned(),
        dtype,
        itemsize,
        shape,
        strides,
        interface: "array_interface",
    })
}

/// The buffer protocol through CPython's `PyObject_GetBuffer` and `PyBuffer_Release`.
///
/// The wheel is built for the limited API of CPython 3.9 (abi3), which has the buffer
/// protocol only from 3.11, so PyO3's `buffer` module is absent; both functions and this
/// `Py_buffer` layout are CPython's public C API, unchanged since 3.0, and an extension
/// module resolves them in the interpreter that loads it (on Windows, whose `python3.dll`
/// exports them only from 3.11, this needs an abi3-py311 or a version-specific build).
mod raw_buffer {
    use std::ffi::{c_char, c_int, c_void};

    use pyo3::ffi::PyObject;

    /// CPython's `Py_buffer`.
    #[repr(C)]
    pub(super) struct PyBuffer {
        pub(super) buf: *mut c_void,
        obj: *mut PyObject,
        len: isize,
        pub(super) itemsize: isize,
        readonly: c_int,
        pub(super) ndim: c_int,
        pub(super) format: *mut c_char,
        pub(super) shape: *mut isize,
        pub(super) strides: *mut isize,
        suboffsets: *mut isize,
        internal: *mut c_void,
    }

    /// `PyBUF_FULL_RO`: strides, suboffsets and format, read-only (what PyO3 asks for).
    pub(super) const FULL_RO: c_int = 0x0100 | 0x0010 | 0x0008 | 0x0004;

    extern "C" {
        pub(super) fn PyObject_GetBuffer(
            obj: *mut PyObject,
            view: *mut PyBuffer,
            flags: c_int,
        ) -> c_int;
        pub(super) fn PyBuffer_Release(view: *mut PyBuffer);
    }
}

/// What a buffer export says, copied out before the export is released.
struct View {
    address: usize,
    item_size: usize,
    format: String,
    shape: Vec<usize>,
    strides: Vec<isize>,
}

/// The buffer of `object` with strides and format (`PyBUF_FULL_RO`), copied out and
/// released; None (the exporter's error cleared) when it has none, or gives no shape or
/// strides.
#[allow(unsafe_code)]
fn buffer_view(object: &Bound<'_, PyAny>) -> Option<View> {
    let mut raw = std::mem::MaybeUninit::<raw_buffer::PyBuffer>::uninit();
    // SAFETY: the GIL is held (`object` is bound); on success the exporter has filled
    // `raw`, and it is released exactly once below, after its fields are copied out.
    // `shape` and `strides` have `ndim` elements when not NULL; a NULL format means "B".
    unsafe {
        if raw_buffer::PyObject_GetBuffer(object.as_ptr(), raw.as_mut_ptr(), raw_buffer::FULL_RO)
            != 0
        {
            drop(PyErr::take(object.py()));
            return None;
        }
        let view = &mut *raw.as_mut_ptr();
        let ndim = usize::try_from(view.ndim).unwrap_or(0);
        let copied = (!view.shape.is_null() && !view.strides.is_null()).then(|| View {
            address: view.buf.addr(),
            item_size: usize::try_from(view.itemsize).unwrap_or(0),
            format: if view.format.is_null() {
                "B".to_owned()
            } else {
                CStr::from_ptr(view.format).to_string_lossy().into_owned()
            },
            shape: std::slice::from_raw_parts(view.shape.cast::<usize>(), ndim).to_vec(),
            strides: std::slice::from_raw_parts(view.strides, ndim).to_vec(),
        });
        raw_buffer::PyBuffer_Release(view);
        copied
    }
}

/// The facts of an object with the buffer protocol (`memoryview`, `bytes`, ...), read
/// with strides and format; the buffer is released before returning.
fn buffer(tensor: &Bound<'_, PyAny>, pointer: Option<&str>) -> PyResult<Facts> {
    let py = tensor.py();
    let view = buffer_view(tensor).ok_or_else(|| {
        unreadable(
            py,
            pointer,
            "the object offers neither __dlpack__, __array_interface__ nor a buffer",
        )
    })?;
    let itemsize = u64::try_from(view.item_size).unwrap_or(0);
    let format = view.format;
    let kind = format
        .trim_start_matches(['@', '=', '<', '!'])
        .chars()
        .next();
    let dtype = kind
        .filter(|_| format.len() <= 2 && !format.starts_with(['>', '!']))
        .and_then(|kind| format_dtype(kind, itemsize))
        .ok_or_else(|| {
            unreadable(
                py,
                pointer,
                format!("buffer format {format} has no name here"),
            )
        })?;
    let to_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let shape: Vec<i64> = view.shape.iter().map(|&n| to_i64(n)).collect();
    let byte_strides: Vec<i64> = view
        .strides
        .iter()
        .map(|&s| i64::try_from(s).unwrap_or(i64::MAX))
        .collect();
    let strides = element_strides(&byte_strides, itemsize)
        .ok_or_else(|| unreadable(py, pointer, "a stride is not a whole number of items"))?;
    let address = u64::try_from(view.address).unwrap_or(u64::MAX);
    Ok(Facts {
        address,
        device: "cpu".to_owned(),
        dtype,
        itemsize,
        shape,
        strides,
        interface: "buffer",
    })
}
