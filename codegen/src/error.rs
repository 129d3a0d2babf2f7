//! The generator's result type (a leaf: every module imports it, it imports nothing).

/// Errors are readable messages for the person running the generator.
pub type Result<T> = std::result::Result<T, String>;
