//! Stopping a launch from another thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set from another thread (a Cancel button) to stop a launch between blocks; a clone shares
/// the flag. The launch then ends with [`crate::EmuFaultKind::Cancelled`].
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
