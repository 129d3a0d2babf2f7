//! Upstream's rule that the two sides of a transfer are of one weight generation
//! (`plan_placement_transfer` and `plan_stored_transfer_to_target_placement` reject
//! differing `weight_generation`s), for `plan` on Mooncake inputs.

use weight_manifest::error::{Code, Detail, Error, Result};

/// Checks the weight generations of a plan's source and target, each `None` when that
/// side is a document of this project's format, which carries no generation: then there is
/// nothing to compare and the check passes.
///
/// # Errors
///
/// `mooncake_generation_mismatch` at the target's `/weight_generation` when both are
/// given and differ (the detail: the source's as expected, the target's as got).
pub fn check_generations(source: Option<u64>, target: Option<u64>) -> Result<()> {
    match (source, target) {
        (Some(s), Some(t)) if s != t => Err(Error::new(
            Code::MooncakeGenerationMismatch,
            format!("source and target weight_generation differ: source {s}, target {t}"),
        )
        .with_pointer(Some("/weight_generation".to_owned()))
        .with_detail(Detail::Mismatch {
            expected: s.to_string(),
            got: t.to_string(),
            other: None,
        })),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::check_generations;
    use weight_manifest::error::Code;

    #[test]
    fn only_two_different_generations_are_rejected() {
        assert!(check_generations(Some(3), Some(3)).is_ok());
        assert!(check_generations(None, Some(3)).is_ok());
        assert!(check_generations(Some(3), None).is_ok());
        assert!(check_generations(None, None).is_ok());
        let e = check_generations(Some(1), Some(2)).unwrap_err();
        assert_eq!(e.code(), Code::MooncakeGenerationMismatch);
        assert_eq!(e.path(), Some("/weight_generation"));
        assert_eq!(
            e.message(),
            "source and target weight_generation differ: source 1, target 2"
        );
    }
}
