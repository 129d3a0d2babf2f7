//! Per-fragment checks: PlacementFragment (§2.3), RuntimeFragment (§2.4) and
//! RuntimeBindingFragment (§2.5). Each runs its checks in the contract's order on the
//! members as found in the document and returns the wire value.

use crate::error::{Code, Error, Result};
use crate::path::Path;
use crate::rules::values;
use crate::rules::values::{end_address, MIN_ADDRESS, MIN_EXTENT, MIN_NBYTES, MIN_OFFSET};
use crate::value::Value;
use crate::wire::key;
use crate::wire::{ParallelRank, PlacementFragment, RuntimeBindingFragment, RuntimeFragment};

/// The members of a placement fragment. The rank is already checked (§6.2 step 4.3);
/// `None` means the in-memory value is not a ParallelRank, which fails at its step.
pub(crate) struct PlacementFragmentFields<'v, 'a> {
    pub placement_fragment_id: &'v Value<'a>,
    pub tensor_id: &'v Value<'a>,
    pub global_offset: &'v Value<'a>,
    pub local_shape: &'v Value<'a>,
    pub nbytes: &'v Value<'a>,
    pub rank: Option<ParallelRank>,
    /// `None` means absent (default `[]`); a present `null` fails ALIASES.
    pub aliases: Option<&'v Value<'a>>,
}

impl<'v, 'a> PlacementFragmentFields<'v, 'a> {
    /// The members from an object: `required` gives a required member (or `null`),
    /// `optional` an optional one if present.
    pub(crate) fn of(
        required: impl Fn(&'static str) -> &'v Value<'a>,
        optional: impl Fn(&'static str) -> Option<&'v Value<'a>>,
        rank: Option<ParallelRank>,
    ) -> Self {
        PlacementFragmentFields {
            placement_fragment_id: required(key::PLACEMENT_FRAGMENT_ID),
            tensor_id: required(key::TENSOR_ID),
            global_offset: required(key::GLOBAL_OFFSET),
            local_shape: required(key::LOCAL_SHAPE),
            nbytes: required(key::NBYTES),
            rank,
            aliases: optional(key::ALIASES),
        }
    }
}

/// A fragment's box: INTS(global_offset, 0); INTS(local_shape, 1) (§2.3, §2.4).
fn check_box(
    global_offset: &Value<'_>,
    local_shape: &Value<'_>,
    record: &Path<'_>,
) -> Result<(Vec<u64>, Vec<u64>)> {
    let at = |key: &'static str| Path::Key(record, key);
    let offset = values::ints(
        global_offset,
        "global_offset",
        MIN_OFFSET,
        &at(key::GLOBAL_OFFSET),
    )?;
    let shape = values::ints(
        local_shape,
        key::LOCAL_SHAPE,
        MIN_EXTENT,
        &at(key::LOCAL_SHAPE),
    )?;
    Ok((offset, shape))
}

/// `rank is a ParallelRank` (§2.3, §2.4; in-memory construction only).
fn checked_rank(rank: Option<&ParallelRank>) -> Result<ParallelRank> {
    rank.cloned()
        .ok_or_else(|| Error::new(Code::WrongElementType, "rank must be a ParallelRank"))
}

/// §2.3: INTS(global_offset, 0); INTS(local_shape, 1); STR(placement_fragment_id);
/// STR(tensor_id); INT(nbytes, 1); ALIASES.
pub(crate) fn check_placement_fragment(
    fields: &PlacementFragmentFields<'_, '_>,
    record: &Path<'_>,
) -> Result<PlacementFragment> {
    let at = |key: &'static str| Path::Key(record, key);
    let (global_offset, local_shape) = check_box(fields.global_offset, fields.local_shape, record)?;
    let id = values::string(
        fields.placement_fragment_id,
        "placement_fragment_id",
        &at(key::PLACEMENT_FRAGMENT_ID),
    )?;
    let tensor_id = values::string(fields.tensor_id, key::TENSOR_ID, &at(key::TENSOR_ID))?;
    let nbytes = values::int(fields.nbytes, key::NBYTES, MIN_NBYTES, &at(key::NBYTES))?;
    let rank = checked_rank(fields.rank.as_ref())?;
    let aliases = match fields.aliases {
        None => Vec::new(),
        Some(v) => values::aliases(v, &at(key::ALIASES))?,
    };
    Ok(PlacementFragment {
        aliases,
        global_offset,
        local_shape,
        nbytes,
        placement_fragment_id: id.to_owned(),
        rank,
        tensor_id: tensor_id.to_owned(),
    })
}

/// The members of a runtime fragment; the rank is already checked (`None`: not a
/// ParallelRank, in-memory only).
pub(crate) struct RuntimeFragmentFields<'v, 'a> {
    pub fragment_id: &'v Value<'a>,
    pub tensor_id: &'v Value<'a>,
    pub global_offset: &'v Value<'a>,
    pub local_shape: &'v Value<'a>,
    pub site: SiteFields<'v, 'a>,
    pub rank: Option<ParallelRank>,
    pub lease_generation: &'v Value<'a>,
    /// `None` means absent (default `[]`); a present `null` fails ALIASES.
    pub aliases: Option<&'v Value<'a>>,
    /// `None` or `null` means not set.
    pub placement_fragment_id: Option<&'v Value<'a>>,
}

impl<'v, 'a> RuntimeFragmentFields<'v, 'a> {
    /// The members from an object, as [`PlacementFragmentFields::of`] reads them.
    pub(crate) fn of(
        required: impl Fn(&'static str) -> &'v Value<'a>,
        optional: impl Fn(&'static str) -> Option<&'v Value<'a>>,
        rank: Option<ParallelRank>,
    ) -> Self {
        RuntimeFragmentFields {
            fragment_id: required(key::FRAGMENT_ID),
            tensor_id: required(key::TENSOR_ID),
            global_offset: required(key::GLOBAL_OFFSET),
            local_shape: required(key::LOCAL_SHAPE),
            site: SiteFields::of(&required),
            rank,
            lease_generation: required(key::LEASE_GENERATION),
            aliases: optional(key::ALIASES),
            placement_fragment_id: optional(key::PLACEMENT_FRAGMENT_ID),
        }
    }
}

/// §2.4 steps 1–8.
pub(crate) fn check_runtime_fragment(
    fields: &RuntimeFragmentFields<'_, '_>,
    record: &Path<'_>,
) -> Result<RuntimeFragment> {
    let at = |key: &'static str| Path::Key(record, key);
    let (global_offset, local_shape) = check_box(fields.global_offset, fields.local_shape, record)?;
    let fragment_id = values::string(fields.fragment_id, key::FRAGMENT_ID, &at(key::FRAGMENT_ID))?;
    let tensor_id = values::string(fields.tensor_id, key::TENSOR_ID, &at(key::TENSOR_ID))?;
    let site = check_site(&fields.site, record)?;
    let lease_generation = values::int(
        fields.lease_generation,
        "lease_generation",
        0,
        &at(key::LEASE_GENERATION),
    )?;
    let rank = checked_rank(fields.rank.as_ref())?;
    let aliases = match fields.aliases {
        None => Vec::new(),
        Some(v) => values::aliases(v, &at(key::ALIASES))?,
    };
    let placement_fragment_id = values::opt_string(
        fields.placement_fragment_id,
        "placement_fragment_id",
        &at(key::PLACEMENT_FRAGMENT_ID),
    )?
    .map(str::to_owned);
    let Site {
        worker_id,
        endpoint,
        device,
        address,
        nbytes,
    } = site;
    Ok(RuntimeFragment {
        address,
        aliases,
        device,
        endpoint,
        fragment_id: fragment_id.to_owned(),
        global_offset,
        lease_generation,
        local_shape,
        nbytes,
        placement_fragment_id,
        rank,
        tensor_id: tensor_id.to_owned(),
        worker_id,
    })
}

/// The members of a runtime binding fragment.
pub(crate) struct BindingFragmentFields<'v, 'a> {
    pub placement_fragment_id: &'v Value<'a>,
    pub fragment_id: &'v Value<'a>,
    pub site: SiteFields<'v, 'a>,
}

/// The members both fragment kinds locate their bytes with (§2.4, §2.5).
pub(crate) struct SiteFields<'v, 'a> {
    pub address: &'v Value<'a>,
    pub nbytes: &'v Value<'a>,
    pub worker_id: &'v Value<'a>,
    pub endpoint: &'v Value<'a>,
    pub device: &'v Value<'a>,
}

impl<'v, 'a> SiteFields<'v, 'a> {
    /// The site members as `member` reads them, in the contract's reading order
    /// (address, nbytes, worker_id, endpoint, device); the first failure is the result.
    pub(crate) fn read<E>(
        mut member: impl FnMut(&'static str) -> std::result::Result<&'v Value<'a>, E>,
    ) -> std::result::Result<Self, E> {
        Ok(SiteFields {
            address: member(key::ADDRESS)?,
            nbytes: member(key::NBYTES)?,
            worker_id: member(key::WORKER_ID)?,
            endpoint: member(key::ENDPOINT)?,
            device: member(key::DEVICE)?,
        })
    }

    /// The site members of an object whose members are all present (or default).
    pub(crate) fn of(member: impl Fn(&'static str) -> &'v Value<'a>) -> Self {
        match Self::read::<std::convert::Infallible>(|key| Ok(member(key))) {
            Ok(site) => site,
            Err(never) => match never {},
        }
    }
}

impl<'v, 'a> BindingFragmentFields<'v, 'a> {
    /// The members from an object whose members are all present (or `null`).
    pub(crate) fn of(required: impl Fn(&'static str) -> &'v Value<'a>) -> Self {
        BindingFragmentFields {
            placement_fragment_id: required(key::PLACEMENT_FRAGMENT_ID),
            fragment_id: required(key::FRAGMENT_ID),
            site: SiteFields::of(&required),
        }
    }
}

/// §2.5: STR on placement_fragment_id, fragment_id, worker_id, endpoint, device; ADDR.
pub(crate) fn check_binding_fragment(
    fields: &BindingFragmentFields<'_, '_>,
    record: &Path<'_>,
) -> Result<RuntimeBindingFragment> {
    let at = |key: &'static str| Path::Key(record, key);
    let placement_fragment_id = values::string(
        fields.placement_fragment_id,
        "placement_fragment_id",
        &at(key::PLACEMENT_FRAGMENT_ID),
    )?;
    let fragment_id = values::string(fields.fragment_id, key::FRAGMENT_ID, &at(key::FRAGMENT_ID))?;
    let site = check_site(&fields.site, record)?;
    Ok(RuntimeBindingFragment {
        address: site.address,
        device: site.device,
        endpoint: site.endpoint,
        fragment_id: fragment_id.to_owned(),
        nbytes: site.nbytes,
        placement_fragment_id: placement_fragment_id.to_owned(),
        worker_id: site.worker_id,
    })
}

/// Where a runtime or binding fragment's bytes are (§2.4, §2.5), checked.
struct Site {
    worker_id: String,
    endpoint: String,
    device: String,
    address: u64,
    nbytes: u64,
}

/// STR(worker_id); STR(endpoint); STR(device); ADDR: the members both fragment kinds
/// locate their bytes with, in that order.
fn check_site(fields: &SiteFields<'_, '_>, record: &Path<'_>) -> Result<Site> {
    let string = |value: &Value<'_>, name: &'static str| {
        values::string(value, name, &Path::Key(record, name)).map(str::to_owned)
    };
    let worker_id = string(fields.worker_id, key::WORKER_ID)?;
    let endpoint = string(fields.endpoint, key::ENDPOINT)?;
    let device = string(fields.device, key::DEVICE)?;
    let (address, nbytes) = check_address_range(fields.address, fields.nbytes, record)?;
    Ok(Site {
        worker_id,
        endpoint,
        device,
        address,
        nbytes,
    })
}

/// ADDR (§2.4 step 4): INT(address, 1); INT(nbytes, 1); the exclusive end
/// address + nbytes must itself be a u64.
fn check_address_range(
    address: &Value<'_>,
    nbytes: &Value<'_>,
    record: &Path<'_>,
) -> Result<(u64, u64)> {
    let address = values::int(
        address,
        key::ADDRESS,
        MIN_ADDRESS,
        &record.key(key::ADDRESS),
    )?;
    let nbytes = values::int(nbytes, key::NBYTES, MIN_NBYTES, &record.key(key::NBYTES))?;
    if end_address(address, nbytes).is_none() {
        return Err(Error::at(
            Code::AddressRangeOverflow,
            "address range must fit in an unsigned 64-bit integer",
            &record.key(key::NBYTES),
        ));
    }
    Ok((address, nbytes))
}
