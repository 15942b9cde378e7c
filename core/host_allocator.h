// glibc's malloc returns large blocks to the kernel on free (mmap above a threshold of at most
// 32 MB, heap trimming), so every training step page-faults its activations in afresh: the
// kernel zeroes each new page. Measured 2026-11-25 (Intel Xeon, bf16, SAGAN-32 ch 32 B 64,
// 2 threads): 845 -> 639 ms per step with the blocks kept (README "Speed"). hamgan keeps freed
// memory in the process for reuse instead (as PyTorch's CUDA caching allocator does on GPUs):
// resident memory stays at the peak of a step, which a training process reaches every step.
#pragma once

namespace hamgan {

// Raises glibc's mmap and trim thresholds (and its top pad) so freed blocks are reused, unless
// HAMGAN_MALLOC=default (glibc's own behaviour, e.g. to compare). Call once, early in main().
// Returns whether it changed them; another value of HAMGAN_MALLOC: hamgan::Error, nothing changed.
bool keep_freed_memory_for_reuse();

}  // namespace hamgan
