//! Reading members of inventory records (§10.1): a record that is not an object is read
//! as an object with no members.

use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::rules::rank::{check_rank, RankFields};
use crate::rules::values;
use crate::value::{Object, Value};
use crate::wire::{key, ParallelRank};

/// A record (or the top level, or a rank) being read.
#[derive(Clone, Copy)]
pub(crate) struct Members<'v, 'a> {
    object: Option<&'v Object<'a>>,
    path: &'v Path<'v>,
}

impl<'v, 'a> Members<'v, 'a> {
    /// Reads `value` as an object located at `path`.
    pub(crate) fn of(value: &'v Value<'a>, path: &'v Path<'v>) -> Self {
        Members {
            object: value.as_object(),
            path,
        }
    }

    /// The location of member `key`.
    pub(crate) fn at(&self, key: &'v str) -> Path<'v> {
        Path::Key(self.path, key)
    }

    /// The location of the object itself.
    pub(crate) fn path(&self) -> &'v Path<'v> {
        self.path
    }

    /// "read x (req)": `missing_field` located at this object if absent.
    pub(crate) fn req(&self, key: &str) -> Result<&'v Value<'a>> {
        self.object.and_then(|o| o.get(key)).ok_or_else(|| {
            Error::at(
                Code::MissingField,
                format!("missing required field: {key}"),
                self.path,
            )
        })
    }

    /// "read x (opt)": absent and `null` are both not set.
    pub(crate) fn opt(&self, key: &str) -> Option<&'v Value<'a>> {
        self.object
            .and_then(|o| o.get(key))
            .filter(|v| !matches!(v, Value::Null))
    }

    /// "read x (req)" as an integer of at least `min`, the member named in the error.
    pub(crate) fn int(&self, key: &'v str, min: u64) -> Result<u64> {
        values::int(self.req(key)?, key, min, &self.at(key))
    }

    /// "read x (opt)" as an integer of at least `min` when set.
    pub(crate) fn opt_int(&self, key: &'v str, min: u64) -> Result<Option<u64>> {
        values::opt_int(self.opt(key), key, min, &self.at(key))
    }
}

/// Reads dp, tp, pp, ep (req, in this order) and runs the ParallelRank checks.
pub(crate) fn read_rank(rank: &Members<'_, '_>) -> Result<ParallelRank> {
    let fields = RankFields {
        dp: rank.req(key::DP)?,
        tp: rank.req(key::TP)?,
        pp: rank.req(key::PP)?,
        ep: rank.req(key::EP)?,
    };
    check_rank(&fields, rank.path())
}

/// Reads aliases (opt): a set value that is not an array is `aliases_invalid`.
pub(crate) fn read_aliases<'v, 'a>(record: &Members<'v, 'a>) -> Result<Option<&'v Value<'a>>> {
    match record.opt(key::ALIASES) {
        Some(value) if !matches!(value, Value::Array(_)) => Err(Error::at(
            Code::AliasesInvalid,
            "aliases must be a sequence of non-empty strings",
            &record.at(key::ALIASES),
        )),
        other => Ok(other),
    }
}
