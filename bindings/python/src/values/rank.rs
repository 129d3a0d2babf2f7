//! `ParallelRank(dp=0, tp=0, pp=0, ep=0)` (contract §2.1).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use weight_manifest::construct;
use weight_manifest::wire;

use super::args::Signature;
use super::fields::{arguments, stored};
use crate::errors::OrRaise;
use crate::scalars::int;

super::class::value_class! {
    /// Routing coordinates of the rank that owns a fragment (§2.1).
    ParallelRank = "ParallelRank", checked: wire::ParallelRank, new: ParallelRank::new, rank: ParallelRank,
    fields: [dp, tp, pp, ep],
}

static SIGNATURE: Signature<4> = Signature::new(ParallelRank::NAME, &ParallelRank::FIELDS, 0);

impl ParallelRank {
    fn new(args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let py = args.py();
        let given = SIGNATURE.bind(args, kwargs)?;
        let checked = construct::parallel_rank(&arguments(&Self::FIELDS, &given)?).or_raise(py)?;
        let fields = stored(
            py,
            &Self::FIELDS,
            &given,
            |_, _| true,
            || Self::normal_form(py, &checked),
        )?;
        Ok(ParallelRank { fields, checked })
    }

    /// The fields of a checked rank.
    fn normal_form(py: Python<'_>, r: &wire::ParallelRank) -> PyResult<[Py<PyAny>; 4]> {
        Ok([
            int(py, r.dp)?,
            int(py, r.tp)?,
            int(py, r.pp)?,
            int(py, r.ep)?,
        ]
        .map(Bound::unbind))
    }

    /// An instance for a rank the core has checked.
    pub(crate) fn trusted<'py>(
        py: Python<'py>,
        checked: &wire::ParallelRank,
    ) -> PyResult<Bound<'py, ParallelRank>> {
        let fields = Self::normal_form(py, checked)?;
        Self::instance(py, fields, checked.clone())
    }
}
