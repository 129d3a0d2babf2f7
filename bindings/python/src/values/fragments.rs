//! The three fragment classes: `PlacementFragment` (§2.3), `RuntimeFragment` (§2.4) and
//! `RuntimeBindingFragment` (§2.5). A fragment keeps its rank and owner objects as given
//! (the rank is checked when it is made; the owner never is).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use weight_manifest::construct;
use weight_manifest::wire::{self, key};

use super::args::Signature;
use super::fields::{arguments, stored};
use super::rank::ParallelRank;
use crate::errors::OrRaise;
use crate::scalars::{int, ints, opt_str, string, strs};

super::class::value_class! {
    /// An address-free logical box owned by one rank (§2.3).
    PlacementFragment = "PlacementFragment", checked: wire::PlacementFragment,
    new: PlacementFragment::new, rank: super::rank::ParallelRank,
    fields: [
        placement_fragment_id,
        tensor_id,
        global_offset,
        local_shape,
        nbytes,
        rank,
        aliases,
    ],
    traverse: [rank],
}

super::class::value_class! {
    /// One contiguous runtime view backing a logical box (§2.4).
    RuntimeFragment = "RuntimeFragment", checked: wire::RuntimeFragment,
    new: RuntimeFragment::new, rank: super::rank::ParallelRank,
    fields: [
        fragment_id,
        tensor_id,
        global_offset,
        local_shape,
        address,
        nbytes,
        worker_id,
        endpoint,
        device,
        rank,
        lease_generation,
        owner,
        aliases,
        placement_fragment_id,
    ],
    traverse: [rank, owner],
}

super::class::value_class! {
    /// The physical location of one placement fragment (§2.5).
    RuntimeBindingFragment = "RuntimeBindingFragment", checked: wire::RuntimeBindingFragment,
    new: RuntimeBindingFragment::new, rank: super::rank::ParallelRank,
    fields: [
        placement_fragment_id,
        fragment_id,
        address,
        nbytes,
        worker_id,
        endpoint,
        device,
        owner,
    ],
    traverse: [owner],
}

static PLACEMENT: Signature<7> =
    Signature::new(PlacementFragment::NAME, &PlacementFragment::FIELDS, 6);
static RUNTIME: Signature<14> = Signature::new(RuntimeFragment::NAME, &RuntimeFragment::FIELDS, 11);
static BINDING: Signature<8> = Signature::new(
    RuntimeBindingFragment::NAME,
    &RuntimeBindingFragment::FIELDS,
    7,
);

/// The checked rank of a fragment's `rank` argument; `None` when it is not a
/// ParallelRank (the core rejects that at its step).
fn checked_rank(rank: &Bound<'_, PyAny>) -> Option<wire::ParallelRank> {
    let rank = rank.cast::<ParallelRank>().ok()?;
    Some(rank.get().checked.clone())
}

/// Which given fields to keep: all but an aliases tuple that is not in the order the
/// core holds (sorted).
fn keep_aliases(held: &[String]) -> impl Fn(&str, &Bound<'_, PyAny>) -> bool + '_ {
    move |name, given| name != key::ALIASES || aliases_in_order(held, given)
}

/// Whether a given aliases tuple is `held`, in that order.
fn aliases_in_order(held: &[String], given: &Bound<'_, PyAny>) -> bool {
    given.cast_exact::<PyTuple>().is_ok_and(|t| {
        t.len() == held.len()
            && t.iter().zip(held).all(|(g, h)| {
                g.cast::<PyString>()
                    .is_ok_and(|s| crate::utf8::text(s) == Some(h.as_str()))
            })
    })
}

/// The given object of the field `name`, else None.
fn given_or_none<'py, const N: usize>(
    py: Python<'py>,
    names: &[&str; N],
    given: &[Option<Bound<'py, PyAny>>; N],
    name: &str,
) -> Bound<'py, PyAny> {
    names
        .iter()
        .zip(given)
        .find(|(n, _)| **n == name)
        .and_then(|(_, g)| g.clone())
        .unwrap_or_else(|| py.None().into_bound(py))
}

/// The fields and checked value of a fragment that has a rank (placement or runtime): the
/// call bound to `signature`, the core's `check` of the arguments with the rank's checked
/// value, each given field kept when normal (aliases only in the core's order), the rest
/// from `normal_form(checked, rank, owner)`.
fn with_rank<W, const N: usize>(
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    signature: &Signature<N>,
    names: &'static [&'static str; N],
    check: fn(
        &weight_manifest::Object<'_>,
        Option<wire::ParallelRank>,
    ) -> weight_manifest::Result<W>,
    aliases: fn(&W) -> &[String],
    normal_form: impl Fn(&W, &Bound<'_, PyAny>, &Bound<'_, PyAny>) -> PyResult<[Py<PyAny>; N]>,
) -> PyResult<([Py<PyAny>; N], W)> {
    let py = args.py();
    let given = signature.bind(args, kwargs)?;
    let rank = given_or_none(py, names, &given, key::RANK);
    let owner = given_or_none(py, names, &given, super::dataclass::OWNER);
    let checked = check(&arguments(names, &given)?, checked_rank(&rank)).or_raise(py)?;
    let fields = stored(py, names, &given, keep_aliases(aliases(&checked)), || {
        normal_form(&checked, &rank, &owner)
    })?;
    Ok((fields, checked))
}

impl PlacementFragment {
    fn new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let py = args.py();
        let (fields, checked) = with_rank(
            args,
            kwargs,
            &PLACEMENT,
            &Self::FIELDS,
            construct::placement_fragment,
            |f| &f.aliases,
            |f, rank, _| Self::normal_form(py, f, rank),
        )?;
        Ok(PlacementFragment { fields, checked })
    }

    fn normal_form(
        py: Python<'_>,
        f: &wire::PlacementFragment,
        rank: &Bound<'_, PyAny>,
    ) -> PyResult<[Py<PyAny>; 7]> {
        Ok([
            string(py, &f.placement_fragment_id)?,
            string(py, &f.tensor_id)?,
            ints(py, &f.global_offset)?,
            ints(py, &f.local_shape)?,
            int(py, f.nbytes)?,
            rank.clone(),
            strs(py, &f.aliases)?,
        ]
        .map(Bound::unbind))
    }

    /// An instance for a fragment the core has checked, with its rank object.
    pub(crate) fn trusted<'py>(
        checked: &wire::PlacementFragment,
        rank: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PlacementFragment>> {
        let py = rank.py();
        let fields = Self::normal_form(py, checked, rank)?;
        Self::instance(py, fields, checked.clone())
    }
}

impl RuntimeFragment {
    fn new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let py = args.py();
        let (fields, checked) = with_rank(
            args,
            kwargs,
            &RUNTIME,
            &Self::FIELDS,
            construct::runtime_fragment,
            |f| &f.aliases,
            |f, rank, owner| Self::normal_form(py, f, rank, owner),
        )?;
        Ok(RuntimeFragment { fields, checked })
    }

    fn normal_form(
        py: Python<'_>,
        f: &wire::RuntimeFragment,
        rank: &Bound<'_, PyAny>,
        owner: &Bound<'_, PyAny>,
    ) -> PyResult<[Py<PyAny>; 14]> {
        Ok([
            string(py, &f.fragment_id)?,
            string(py, &f.tensor_id)?,
            ints(py, &f.global_offset)?,
            ints(py, &f.local_shape)?,
            int(py, f.address)?,
            int(py, f.nbytes)?,
            string(py, &f.worker_id)?,
            string(py, &f.endpoint)?,
            string(py, &f.device)?,
            rank.clone(),
            int(py, f.lease_generation)?,
            owner.clone(),
            strs(py, &f.aliases)?,
            opt_str(py, f.placement_fragment_id.as_deref())?,
        ]
        .map(Bound::unbind))
    }

    /// An instance for a fragment the core has checked, with its rank and owner objects.
    pub(crate) fn trusted<'py>(
        checked: &wire::RuntimeFragment,
        rank: &Bound<'py, PyAny>,
        owner: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, RuntimeFragment>> {
        let py = rank.py();
        let fields = Self::normal_form(py, checked, rank, owner)?;
        Self::instance(py, fields, checked.clone())
    }

    /// The owner object (None when there is none).
    pub(crate) fn held_owner<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.fields[const { weight_manifest::wire::field_index(&Self::FIELDS, super::dataclass::OWNER) }].bind(py)
    }
}

impl RuntimeBindingFragment {
    fn new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let py = args.py();
        let given = BINDING.bind(args, kwargs)?;
        let owner = given_or_none(py, &Self::FIELDS, &given, super::dataclass::OWNER);
        let checked =
            construct::binding_fragment(&arguments(&Self::FIELDS, &given)?).or_raise(py)?;
        let fields = stored(
            py,
            &Self::FIELDS,
            &given,
            |_, _| true,
            || Self::normal_form(py, &checked, &owner),
        )?;
        Ok(RuntimeBindingFragment { fields, checked })
    }

    fn normal_form(
        py: Python<'_>,
        f: &wire::RuntimeBindingFragment,
        owner: &Bound<'_, PyAny>,
    ) -> PyResult<[Py<PyAny>; 8]> {
        Ok([
            string(py, &f.placement_fragment_id)?,
            string(py, &f.fragment_id)?,
            int(py, f.address)?,
            int(py, f.nbytes)?,
            string(py, &f.worker_id)?,
            string(py, &f.endpoint)?,
            string(py, &f.device)?,
            owner.clone(),
        ]
        .map(Bound::unbind))
    }

    /// An instance for a fragment the core has checked, with its owner object.
    pub(crate) fn trusted<'py>(
        checked: &wire::RuntimeBindingFragment,
        owner: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, RuntimeBindingFragment>> {
        let py = owner.py();
        let fields = Self::normal_form(py, checked, owner)?;
        Self::instance(py, fields, checked.clone())
    }

    /// The owner object (None when there is none).
    pub(crate) fn held_owner<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.fields[const { weight_manifest::wire::field_index(&Self::FIELDS, super::dataclass::OWNER) }].bind(py)
    }
}
