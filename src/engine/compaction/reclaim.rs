//! Gives the space flushes and compactions free back to the file system as they free it.

use crate::engine::inner::Inner;

impl Inner {
    /// Punches holes over the pages freed since the last call, so the file's allocated size
    /// follows its live data between compactions instead of keeping the high-water mark of
    /// every hole (the tail is truncated anyway; holes below it were only reused, never
    /// returned). The allocator lock is held throughout, so no page punched can be handed out
    /// and written meanwhile; every page it lists is free: no durable superblock, version or
    /// reader refers to it, exactly as for reuse. A failed punch costs nothing but the space,
    /// so it is not an error.
    pub fn punch_free_space(&self) {
        let mut alloc = self.alloc.lock();
        for extent in self.graveyard.drain() {
            alloc.free(extent);
        }
        for hole in alloc.take_unpunched() {
            if self.storage.punch_hole(hole.offset, hole.len).is_err() {
                // Not supported by the file system: later frees would fail the same way.
                break;
            }
        }
    }
}
