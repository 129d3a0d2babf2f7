//! The opaque owner handle (contract §2): whatever keeps a fragment's memory alive.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// An opaque in-process handle carried by runtime and binding fragments. It is never
/// validated, compared, hashed or serialised.
#[derive(Clone)]
pub struct Owner(pub Arc<dyn Any + Send + Sync>);

impl Owner {
    /// Wraps any shareable value.
    pub fn new<T: Any + Send + Sync>(value: T) -> Self {
        Owner(Arc::new(value))
    }

    /// The held value, if it is a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Owner(..)")
    }
}
