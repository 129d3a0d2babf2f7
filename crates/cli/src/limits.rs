//! The global `--limit NAME=VALUE` option: document limits for every command that reads a
//! document (SECURITY.md, "Limits in force").

use weight_manifest::Limits;

/// The `--limit` help: each name with its default.
pub(crate) const HELP: &str = "Override a document limit, NAME=VALUE (repeatable). \
    Limits and defaults: max_document_bytes=1073741824, max_depth=128 (at most 512), \
    max_dims=64, max_tensors=4194304, max_fragments=16777216, max_string_bytes=65536, \
    max_geometry_work=4096 (work units per box of a box-intersection search). \
    A document over a limit is rejected with limit_exceeded (exit 1). \
    Not applied to the conformance commands, whose fixtures assume the defaults.";

/// clap's value parser: a valid setting, else a usage error (exit 2).
pub(crate) fn parse_setting(setting: &str) -> Result<String, String> {
    Limits::default()
        .set_pair(setting)
        .map_err(|e| e.to_string())?;
    Ok(setting.to_owned())
}

/// The defaults with every setting applied in order (each already validated by clap).
pub(crate) fn from_settings(settings: &[String]) -> Result<Limits, String> {
    let mut limits = Limits::default();
    for setting in settings {
        limits.set_pair(setting).map_err(|e| e.to_string())?;
    }
    Ok(limits)
}
