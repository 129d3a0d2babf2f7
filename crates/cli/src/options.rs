//! The options several commands share: the input file and `--format`, `--output`,
//! `--address-semantics` and the inventory options they make. A leaf: the commands import
//! it, it imports none of them.

use std::borrow::Cow;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use weight_manifest::{AddressSemantics, Error, Limits, Options, Value};

#[derive(Args)]
pub(crate) struct Input {
    /// JSON file (`-` for standard input).
    pub file: String,
    #[command(flatten)]
    pub format: FormatArg,
}

#[derive(Args)]
pub(crate) struct FormatArg {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Args)]
pub(crate) struct Semantics {
    /// Declare that every address already points at the first byte of the view.
    #[arg(long, value_name = "view")]
    pub address_semantics: Option<String>,
}

#[derive(Args)]
pub(crate) struct Out {
    /// Write the JSON to this file (atomically) instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Human-readable lines.
    Text,
    /// One JSON object on standard output.
    Json,
}

/// The options of an inventory `text` (labelled `label`) under `--limit` and
/// `--address-semantics` as given: any text, an invalid one reported where §10.2 puts it.
pub(crate) fn inventory_options(
    text: &[u8],
    label: &str,
    given: Option<&String>,
    limits: &Limits,
) -> Result<Options<'static>, Error> {
    let given = given.map(|s| Value::Str(Cow::Borrowed(s.as_str())));
    let semantics = AddressSemantics::for_text(text, given.as_ref(), label, limits)?;
    Ok(Options::default()
        .with_limits(*limits)
        .with_address_semantics(semantics))
}
