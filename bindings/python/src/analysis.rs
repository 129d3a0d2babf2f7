//! The analysis operations as Python values: coverage (contract §16), the reshard plan
//! (§17) and the plan bound to live runtimes (§17.4). Each class holds the core's value and
//! renders it through the core, so its JSON is the CLI's byte for byte.

use std::borrow::Cow;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString, PyTuple};
use weight_manifest::plan::{PlanStats, DEFAULT_MAX_REGIONS, DEFAULT_MAX_SEGMENTS};
use weight_manifest::plan_bind::segments;
use weight_manifest::wire::{BoundCopy, BoundPair, ParallelRank, PlanRegion as RegionWire};
use weight_manifest::{plan_with_choice, ReplicaChoice, SourceHosts};
use weight_manifest::{Binding, Coverage, Fences, Limits, Options, Placement, PlanLimits};

use weight_manifest::canonical;

use crate::errors::OrRaise;
use crate::manifest_lists::Ranks;
use crate::manifests::{binding_core, placement_core, PlacementCore};
use crate::ops::document_bytes;

/// JSON text (`str`, `bytes`, `bytearray`) or a file path (`os.PathLike`) as bytes; `None`
/// when `value` is neither (a manifest object).
fn text_or_file(value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyBytes>()
        || value.is_instance_of::<PyByteArray>()
    {
        return Ok(Some(document_bytes(value)?.into_owned()));
    }
    if value.hasattr("__fspath__")? {
        let path: PathBuf = value.extract()?;
        return Ok(Some(std::fs::read(path)?));
    }
    Ok(None)
}

/// A placement argument: a PlacementManifest, or placement manifest JSON (text or file).
pub(crate) fn placement_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Placement> {
    match text_or_file(value)? {
        Some(text) => Placement::from_json(text, &Options::default()).or_raise(value.py()),
        None => Ok(placement_core(value, what)?.get().0.clone()),
    }
}

/// A binding argument: a RuntimeBindingManifest, or its JSON (text or file).
pub(crate) fn binding_arg(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Binding> {
    match text_or_file(value)? {
        Some(text) => Binding::from_json(text, &Options::default()).or_raise(value.py()),
        None => Ok(binding_core(value, what)?.get().0.clone()),
    }
}

/// A member of a core value as Python data: its canonical JSON (`canonical::to_string` of
/// just that member) read by `json.loads` (exact ints, dicts, lists).
fn to_data<E: std::fmt::Display>(
    py: Python<'_>,
    encoded: Result<String, E>,
) -> PyResult<Bound<'_, PyAny>> {
    let text = encoded.map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    py.import("json")?.getattr("loads")?.call1((text,))
}

/// A coverage report (contract §16): how the fragments of a placement cover its tensors.
#[pyclass(frozen, module = "weight_manifest")]
pub(crate) struct CoverageReport(Coverage);

#[pymethods]
impl CoverageReport {
    /// Reads a coverage report document (the output of `weight-manifest coverage -o`).
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<CoverageReport> {
        let py = text.py();
        let bytes = text_or_file(text)?.unwrap_or_default();
        let coverage = Coverage::from_json(bytes, &Options::default()).or_raise(py)?;
        Ok(CoverageReport(coverage))
    }

    /// The canonical JSON text of the report (what `coverage -o` writes).
    fn to_json(&self) -> String {
        self.0.to_json()
    }

    /// Whether every tensor is complete.
    #[getter]
    fn is_complete(&self) -> bool {
        self.0.is_complete()
    }

    /// The analysed placement's placement_id.
    #[getter]
    fn placement_id(&self) -> &str {
        &self.0.report().placement_id
    }

    /// The analysed placement's digest.
    #[getter]
    fn digest(&self) -> &str {
        &self.0.report().digest
    }

    /// The number of tensors whose status is `complete`.
    #[getter]
    fn tensors_complete(&self) -> u64 {
        self.0.report().tensors_complete
    }

    /// The number of tensors whose status is `gaps`.
    #[getter]
    fn tensors_with_gaps(&self) -> u64 {
        self.0.report().tensors_with_gaps
    }

    /// The number of tensors whose status is `ambiguous`.
    #[getter]
    fn tensors_ambiguous(&self) -> u64 {
        self.0.report().tensors_ambiguous
    }

    /// One dict per tensor, sorted by tensor_id, with the report's members (status,
    /// boxes, dp, overlap, uncovered_coordinate, uncovered_elements).
    #[getter]
    fn tensors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, canonical::to_string(&self.0.report().tensors))
    }

    /// Raises `ManifestError` (`coverage_incomplete`, naming the first incomplete tensor)
    /// unless every tensor is complete.
    fn require_complete(&self, py: Python<'_>) -> PyResult<()> {
        self.0.require_complete().or_raise(py)
    }

    fn __repr__(&self) -> String {
        let r = self.0.report();
        format!(
            "CoverageReport(tensors={}, complete={}, with_gaps={}, ambiguous={})",
            r.tensors.len(),
            r.tensors_complete,
            r.tensors_with_gaps,
            r.tensors_ambiguous
        )
    }
}

/// `coverage(placement)`: the coverage report of a placement (a PlacementManifest, or its
/// JSON text or file).
#[pyfunction]
pub(crate) fn coverage(placement: &Bound<'_, PyAny>) -> PyResult<CoverageReport> {
    let py = placement.py();
    let placement = placement_arg(placement, "placement")?;
    let report = weight_manifest::coverage(&placement, &Limits::default()).or_raise(py)?;
    Ok(CoverageReport(report))
}

/// One region of a plan: a box of one tensor copied from a source fragment's buffer to a
/// target fragment's buffer as `run_bytes`-long runs repeated over `loops`.
#[pyclass(frozen, module = "weight_manifest")]
pub(crate) struct PlanRegion(RegionWire);

#[pymethods]
impl PlanRegion {
    /// The tensor both fragments belong to.
    #[getter]
    fn tensor_id(&self) -> &str {
        &self.0.tensor_id
    }
    /// The placement_fragment_id read.
    #[getter]
    fn source_fragment_id(&self) -> &str {
        &self.0.source_fragment_id
    }
    /// The placement_fragment_id written.
    #[getter]
    fn target_fragment_id(&self) -> &str {
        &self.0.target_fragment_id
    }
    /// What the source computes for the region (contract §17.8): `"fp8_e4m3_block_values"`
    /// or `"fp8_e4m3_block_scales"`; `None` when the bytes are copied unchanged.
    #[getter]
    fn transform(&self) -> Option<String> {
        self.0.transform.map(|t| t.to_string())
    }
    /// Byte offset of the first byte in the source fragment's buffer.
    #[getter]
    fn source_offset(&self) -> u64 {
        self.0.source_offset
    }
    /// Byte offset of the first byte in the target fragment's buffer.
    #[getter]
    fn target_offset(&self) -> u64 {
        self.0.target_offset
    }
    /// Start of the box in global coordinates.
    #[getter]
    fn global_offset<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.global_offset)
    }
    /// Extent of the box on each axis.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.0.shape)
    }
    /// Bytes the region copies.
    #[getter]
    fn nbytes(&self) -> u64 {
        self.0.nbytes
    }
    /// Length of one contiguous run.
    #[getter]
    fn run_bytes(&self) -> u64 {
        self.0.run_bytes
    }
    /// The outer loops, outermost first, as (count, source_stride, target_stride).
    #[getter]
    fn loops<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let loops = self
            .0
            .loops
            .iter()
            .map(|l| (l.count, l.source_stride, l.target_stride));
        PyTuple::new(py, loops)
    }
    fn __repr__(&self) -> String {
        format!(
            "PlanRegion({} {} -> {}, {} bytes)",
            self.0.tensor_id, self.0.source_fragment_id, self.0.target_fragment_id, self.0.nbytes
        )
    }
}

/// A reshard plan (contract §17): the regions that move a model's weights from a source
/// placement to a target placement.
#[pyclass(frozen, module = "weight_manifest")]
pub(crate) struct Plan(pub(crate) weight_manifest::Plan);

/// The statistics as the CLI's `plan --stats --format json` prints them; ranks are
/// ParallelRank instances.
fn stats_dict<'py>(py: Python<'py>, stats: &PlanStats) -> PyResult<Bound<'py, PyAny>> {
    let mut ranks = Ranks::new(py);
    let dict = pyo3::types::PyDict::new(py);
    dict.set_item("regions", stats.regions)?;
    dict.set_item("segments", stats.segments)?;
    dict.set_item("bytes", stats.bytes)?;
    let sources = stats
        .sources
        .iter()
        .map(|s| {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("rank", ranks.get(&s.rank)?)?;
            d.set_item("regions", s.regions)?;
            d.set_item("bytes", s.bytes)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    dict.set_item("sources", sources)?;
    Ok(dict.into_any())
}

#[pymethods]
impl Plan {
    /// Reads a plan document strictly and checks its plan_id (§17.3).
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Plan> {
        let py = text.py();
        let bytes = text_or_file(text)?.unwrap_or_default();
        let plan = weight_manifest::Plan::from_json(bytes, &Options::default()).or_raise(py)?;
        Ok(Plan(plan))
    }

    /// The canonical JSON text (what `weight-manifest plan -o` writes).
    fn to_json(&self) -> String {
        self.0.to_json()
    }

    /// `sha256:` + 64 hex digits over the canonical plan.
    #[getter]
    fn plan_id(&self) -> &str {
        self.0.plan_id()
    }

    /// The model_id both placements name.
    #[getter]
    fn model_id(&self) -> &str {
        &self.0.as_wire().model_id
    }

    /// The placement_id of the source placement.
    #[getter]
    fn source_placement_id(&self) -> &str {
        &self.0.as_wire().source.placement_id
    }

    /// The placement_id of the target placement.
    #[getter]
    fn target_placement_id(&self) -> &str {
        &self.0.as_wire().target.placement_id
    }

    /// The regions, in plan order.
    #[getter]
    fn regions(&self) -> Vec<PlanRegion> {
        self.0.regions().iter().cloned().map(PlanRegion).collect()
    }

    /// Totals and per-source-rank figures: `regions`, `segments`, `bytes` and `sources`
    /// (one dict per source rank read from: `rank`, `regions`, `bytes`). A plan read from
    /// a document names no ranks: its `sources` is empty.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        stats_dict(py, self.0.stats())
    }

    fn __len__(&self) -> usize {
        self.0.regions().len()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Plan>()
            .is_ok_and(|other| other.get().0 == self.0)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, self.0.plan_id()).hash()
    }

    fn __repr__(&self) -> String {
        let s = self.0.stats();
        format!(
            "Plan({}, regions={}, bytes={})",
            self.0.plan_id(),
            s.regions,
            s.bytes
        )
    }
}

/// `plan(source, target, max_regions, max_segments, max_geometry_work, spread=False,
/// source_hosts=None)`: the reshard plan between two placements (PlacementManifest
/// instances, or their JSON text or files). With `spread`, a region may read any replica of
/// its tile, so that the busiest source host (in `source_hosts`, a dict from
/// `(dp, tp, pp, ep)` to a host name) and then the busiest source rank send the fewest
/// bytes. With `quantization` (a quantization spec's JSON text, contract §17.8; not with
/// `spread`), the target quantizes the tensors it names in flight. The planner runs
/// without the GIL.
#[pyfunction]
#[pyo3(signature = (source, target, max_regions=DEFAULT_MAX_REGIONS, max_segments=DEFAULT_MAX_SEGMENTS, max_geometry_work=None, spread=false, source_hosts=None, quantization=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan(
    source: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    max_regions: u64,
    max_segments: u64,
    max_geometry_work: Option<u64>,
    spread: bool,
    source_hosts: Option<std::collections::HashMap<(u64, u64, u64, u64), String>>,
    quantization: Option<String>,
) -> PyResult<Plan> {
    let py = source.py();
    let source = PlacementInput::of(source, "source")?;
    let target = PlacementInput::of(target, "target")?;
    let (source, target) = (source.view(), target.view());
    let limits = PlanLimits {
        max_regions,
        max_segments,
        max_geometry_work: max_geometry_work.unwrap_or(Limits::default().max_geometry_work),
    };
    let hosts = source_hosts.map(|named| {
        SourceHosts::new(
            named
                .into_iter()
                .map(|((dp, tp, pp, ep), host)| (ParallelRank { dp, ep, pp, tp }, host)),
        )
    });
    // As the CLI does: the two documents are read at once, the target on a second
    // thread; the source's rejection, when both are rejected, is the one reported.
    let planned = py.detach(|| {
        let (source, target) = std::thread::scope(|scope| {
            let target = scope.spawn(|| target.placement());
            let source = source.placement();
            (source, target.join())
        });
        let target = target.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let (source, target) = (source?, target?);
        if let Some(text) = quantization {
            let spec = weight_manifest::Quantization::from_json(
                text,
                &weight_manifest::Options::default(),
            )?;
            weight_manifest::plan_quantized(&source, &target, &spec, &limits)
        } else if spread {
            plan_with_choice(
                &source,
                &target,
                &limits,
                ReplicaChoice::Spread(hosts.as_ref()),
            )
        } else {
            weight_manifest::plan(&source, &target, &limits)
        }
    });
    Ok(Plan(planned.or_raise(py)?))
}

/// A placement argument as given: a PlacementManifest (its validated core value), or
/// placement manifest JSON (text or file) still to read.
enum PlacementInput<'py> {
    Held(Bound<'py, PlacementCore>),
    Text(Vec<u8>),
}

/// A [`PlacementInput`] without the GIL: what a thread reads or borrows.
enum PlacementView<'a> {
    Held(&'a Placement),
    Text(&'a [u8]),
}

impl<'py> PlacementInput<'py> {
    fn of(value: &Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        Ok(match text_or_file(value)? {
            Some(text) => PlacementInput::Text(text),
            None => PlacementInput::Held(placement_core(value, what)?),
        })
    }

    fn view(&self) -> PlacementView<'_> {
        match self {
            PlacementInput::Held(core) => PlacementView::Held(&core.get().0),
            PlacementInput::Text(text) => PlacementView::Text(text),
        }
    }
}

impl PlacementView<'_> {
    /// The placement: the held one, or the text read (§6.2).
    fn placement(&self) -> weight_manifest::Result<Cow<'_, Placement>> {
        match self {
            PlacementView::Held(placement) => Ok(Cow::Borrowed(*placement)),
            PlacementView::Text(text) => {
                Placement::from_json(text, &Options::default()).map(Cow::Owned)
            }
        }
    }
}

/// The copies one (source worker, target worker) pair moves.
#[pyclass(frozen, module = "weight_manifest")]
pub(crate) struct CopyGroup(BoundPair);

/// A column as a read-only numpy array of `dtype` (`numpy.frombuffer` over the bytes).
fn column(numpy: &Bound<'_, PyModule>, bytes: &[u8], dtype: &str) -> PyResult<Py<PyAny>> {
    let py = numpy.py();
    let array = numpy.call_method1(
        "frombuffer",
        (PyBytes::new(py, bytes), numpy.getattr(dtype)?),
    )?;
    Ok(array.unbind())
}

/// Contiguous segments of one worker pair's copies, for a transfer engine's batch calls:
/// numpy columns of equal length. Runs adjacent on both sides between the same devices are
/// merged.
#[pyclass(frozen, module = "weight_manifest")]
pub(crate) struct Segments {
    /// The first source byte of each segment (uint64).
    #[pyo3(get)]
    source: Py<PyAny>,
    /// The first target byte of each segment (uint64).
    #[pyo3(get)]
    target: Py<PyAny>,
    /// The bytes of each segment (uint64).
    #[pyo3(get)]
    length: Py<PyAny>,
    /// Each segment's index into `devices` (uint32).
    #[pyo3(get)]
    device: Py<PyAny>,
    /// The (source device, target device) pairs, in order of first use.
    #[pyo3(get)]
    devices: Vec<(String, String)>,
    /// The index of the copy each segment's first run belongs to (uint32); a transformed
    /// copy's runs (§17.8) merge only with each other.
    #[pyo3(get)]
    copy: Py<PyAny>,
    count: usize,
}

#[pymethods]
impl Segments {
    fn __len__(&self) -> usize {
        self.count
    }
    fn __repr__(&self) -> String {
        format!(
            "Segments({} segments, {} device pairs)",
            self.count,
            self.devices.len()
        )
    }
}

#[pymethods]
impl CopyGroup {
    /// The worker every copy reads from.
    #[getter]
    fn source_worker_id(&self) -> &str {
        &self.0.source_worker_id
    }
    /// The worker every copy writes to.
    #[getter]
    fn target_worker_id(&self) -> &str {
        &self.0.target_worker_id
    }
    /// The bytes the copies move in total.
    #[getter]
    fn bytes(&self) -> u64 {
        self.0.bytes
    }
    /// The number of copies (regions).
    fn __len__(&self) -> usize {
        self.0.copies.len()
    }
    /// Whether a copy carries a transform (§17.8): its source computes its bytes, and
    /// its source location is an offset in the source fragment's quantized form.
    #[getter]
    fn transformed(&self) -> bool {
        self.0.copies.iter().any(|c| c.transform.is_some())
    }
    /// The copies as dicts with the bound plan's members (tensor_id, source and target
    /// locations with absolute addresses, run_bytes, loops, nbytes, fragment ids).
    #[getter]
    fn copies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, canonical::to_string(&self.0.copies))
    }
    /// The copies lowered to contiguous segments, in copy order (see `Segments`). More
    /// than `max_segments` runs raise `ManifestError` (`plan_limit_exceeded`).
    #[pyo3(signature = (max_segments=DEFAULT_MAX_SEGMENTS))]
    fn segments(&self, py: Python<'_>, max_segments: u64) -> PyResult<Segments> {
        let copies: &[BoundCopy] = &self.0.copies;
        let lowered = py.detach(|| segments(copies, max_segments)).or_raise(py)?;
        let numpy = py.import("numpy")?;
        let words = |v: &[u64]| v.iter().flat_map(|n| n.to_ne_bytes()).collect::<Vec<u8>>();
        let half_words = |v: &[u32]| v.iter().flat_map(|n| n.to_ne_bytes()).collect::<Vec<u8>>();
        Ok(Segments {
            source: column(&numpy, &words(&lowered.source), "uint64")?,
            target: column(&numpy, &words(&lowered.target), "uint64")?,
            length: column(&numpy, &words(&lowered.length), "uint64")?,
            device: column(&numpy, &half_words(&lowered.device), "uint32")?,
            copy: column(&numpy, &half_words(&lowered.copy), "uint32")?,
            count: lowered.len(),
            devices: lowered.devices,
        })
    }
    fn __repr__(&self) -> String {
        format!(
            "CopyGroup({} -> {}, {} copies, {} bytes)",
            self.0.source_worker_id,
            self.0.target_worker_id,
            self.0.copies.len(),
            self.0.bytes
        )
    }
}

/// A plan bound to live runtimes (§17.4): the copy list a transfer engine executes.
#[pyclass(frozen, module = "weight_manifest")]
pub(crate) struct BoundPlan(pub(crate) weight_manifest::BoundPlan);

#[pymethods]
impl BoundPlan {
    /// Reads a bound plan document strictly and checks its bound_plan_id.
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<BoundPlan> {
        let py = text.py();
        let bytes = text_or_file(text)?.unwrap_or_default();
        let bound =
            weight_manifest::BoundPlan::from_json(bytes, &Options::default()).or_raise(py)?;
        Ok(BoundPlan(bound))
    }
    /// The canonical JSON text (what `weight-manifest plan-bind -o` writes).
    fn to_json(&self) -> String {
        self.0.to_json()
    }
    /// `sha256:` + 64 hex digits over the canonical bound plan.
    #[getter]
    fn bound_plan_id(&self) -> &str {
        self.0.bound_plan_id()
    }
    /// The plan_id of the plan that was bound.
    #[getter]
    fn plan_id(&self) -> &str {
        &self.0.as_wire().plan_id
    }
    /// The source binding's fences: generation, instance_id, lease_id, placement_digest,
    /// placement_id.
    #[getter]
    fn source<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, canonical::to_string(&self.0.as_wire().source))
    }
    /// The target binding's fences.
    #[getter]
    fn target<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_data(py, canonical::to_string(&self.0.as_wire().target))
    }
    /// The copies grouped by (source worker, target worker), in that order.
    #[getter]
    fn pairs(&self) -> Vec<CopyGroup> {
        self.0.pairs().iter().cloned().map(CopyGroup).collect()
    }
    fn __repr__(&self) -> String {
        format!(
            "BoundPlan({}, {} worker pairs)",
            self.0.bound_plan_id(),
            self.0.pairs().len()
        )
    }
}

/// `bind_plan(plan, source, target, source_generation, target_generation)`: the plan (a
/// Plan, or plan JSON text or file) bound to the runtime bindings of its source and target
/// placements (RuntimeBindingManifest instances or their JSON), read in that order.
#[pyfunction]
#[pyo3(signature = (plan, source, target, source_generation=None, target_generation=None))]
pub(crate) fn bind_plan(
    plan: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    source_generation: Option<u64>,
    target_generation: Option<u64>,
) -> PyResult<BoundPlan> {
    let py = plan.py();
    let plan = if let Ok(plan) = plan.cast::<Plan>() {
        plan.get().0.clone()
    } else {
        let text = text_or_file(plan)?.unwrap_or_default();
        weight_manifest::Plan::from_json(text, &Options::default()).or_raise(py)?
    };
    let source = binding_arg(source, "source")?;
    let target = binding_arg(target, "target")?;
    let fences = Fences {
        source_generation,
        target_generation,
    };
    let bound = weight_manifest::bind_plan(&plan, &source, &target, &fences).or_raise(py)?;
    Ok(BoundPlan(bound))
}
