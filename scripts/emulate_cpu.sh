#!/usr/bin/env bash
# Runs a command as on a CPU of a lower class than this one, for the classes the project's
# machines come in (README "CPU classes"):
#   scripts/emulate_cpu.sh avx2 CMD [ARGS...]         # AVX2 + FMA, no AVX-512, no native bf16
#   scripts/emulate_cpu.sh avx512 CMD [ARGS...]       # AVX-512 without bf16
#   scripts/emulate_cpu.sh avx512_bf16 CMD [ARGS...]  # AVX-512 BF16 (no cap on such a machine)
# Every library that picks kernels by the CPU is capped, each by its own variable:
#   HAMGAN_CPU_ISA          hamgan's own decisions (train.amp auto; core/cpu_features.h); on
#                           LibTorch 1.13 it also keeps ATen's bf16 off oneDNN (core/compat.h)
#   ATEN_CPU_CAPABILITY     ATen's vectorised kernels (avx2 / avx512 / default)
#   ONEDNN_MAX_CPU_ISA      oneDNN's JIT kernels; the oneDNN 2.6 inside LibTorch 1.13 and the
#   DNNL_MAX_CPU_ISA        3.x inside 2.x both honour either name (checked: jit:avx2 kernels)
#   OPENBLAS_CORETYPE       OpenBLAS's kernels (Debian's LibTorch): Haswell = AVX2
#   MKL_ENABLE_INSTRUCTIONS MKL's kernels (the pip wheel's BLAS)
# The cap only lowers: asking for more than the hardware has is refused by hamgan.
set -euo pipefail
isa=${1:-}
[ $# -ge 2 ] || { echo "usage: scripts/emulate_cpu.sh avx2|avx512|avx512_bf16 CMD [ARGS...]" >&2; exit 2; }
shift
case "$isa" in
  avx2)        aten=avx2;    onednn=AVX2;             openblas=Haswell;   mkl=AVX2 ;;
  avx512)      aten=avx512;  onednn=AVX512_CORE;      openblas=SkylakeX;  mkl=AVX512 ;;
  avx512_bf16) aten=avx512;  onednn=AVX512_CORE_BF16; openblas=Cooperlake; mkl=AVX512 ;;
  *) echo "emulate_cpu: '$isa': expected avx2, avx512 or avx512_bf16" >&2; exit 2 ;;
esac
export HAMGAN_CPU_ISA=$isa ATEN_CPU_CAPABILITY=$aten ONEDNN_MAX_CPU_ISA=$onednn \
  DNNL_MAX_CPU_ISA=$onednn OPENBLAS_CORETYPE=$openblas MKL_ENABLE_INSTRUCTIONS=$mkl
exec "$@"
