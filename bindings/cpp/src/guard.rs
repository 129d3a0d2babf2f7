//! No panic crosses the C ABI: every entry point runs its body inside [`guard`] or
//! [`guard_error`].

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; if it panics, returns `on_panic` instead.
///
/// The panic payload is leaked on purpose: dropping it could itself panic, and nothing
/// may unwind out of an `extern "C"` function. A caught panic is a bug, so the leak is
/// bounded by the number of bugs hit.
pub(crate) fn guard<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            std::mem::forget(payload);
            on_panic
        }
    }
}

/// Runs `body`; if it panics, returns `Err` with the panic message.
pub(crate) fn guard_error<T>(body: impl FnOnce() -> T) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => Ok(value),
        Err(payload) => {
            let message = panic_message(&*payload);
            std::mem::forget(payload);
            Err(message)
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    let detail = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    format!("internal error: a panic was caught at the C ABI: {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_values() {
        assert_eq!(guard(7, || -> i32 { panic!("boom") }), 7);
        assert_eq!(guard(7, || 8), 8);
        let error = guard_error(|| -> i32 { panic!("boom {}", 1) }).unwrap_err();
        assert!(error.ends_with("boom 1"), "{error}");
        let error = guard_error(|| -> i32 { panic!("static") }).unwrap_err();
        assert!(error.ends_with("static"), "{error}");
        assert_eq!(guard_error(|| 3), Ok(3));
    }
}
