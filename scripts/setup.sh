#!/usr/bin/env bash
# Installs what hamgan needs (only what is missing), then configures and builds.
# Idempotent: on a ready machine it only re-configures and builds incrementally.
#   LIBTORCH=debian (default): Debian's LibTorch 1.13 (CPU) into build/.
#   LIBTORCH=pip: the pinned PyTorch 2.x CUDA wheel (TORCH2_VERSION) in a venv outside the
#     repository (TORCH2_VENV, default ~/.cache/hamgan/torch2-venv, reused when it
#     holds that version), built with CUDA on against the machine's toolkit (CUDA_HOME, default
#     /usr/local/cuda) into build-torch2/.
#   BUILD_DIR (default build or build-torch2), HAMGAN_CMAKE_ARGS (extra cmake arguments).
#   ECOSYSTEM_VENV (default ~/.cache/hamgan/oracle-venv): Debian's python3-torch plus the
#     clients the tests check hamgan's files with (tensorboard, safetensors, onnx, onnxruntime),
#     pinned below; made once, outside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

libtorch=${LIBTORCH:-debian}
case "$libtorch" in
  debian|pip) ;;
  *) echo "setup: LIBTORCH='$libtorch': expected debian or pip" >&2; exit 2 ;;
esac

# The pip build still takes the other libraries (and the test oracles' python3-torch) from Debian.
packages=(cmake g++ make libtorch-dev libopenblas0-pthread libgloo-dev libstb-dev libcxxopts-dev
          libeigen3-dev libyaml-cpp-dev libgtest-dev dataset-fashion-mnist
          libjpeg62-turbo-dev zlib1g-dev python3-pil
          python3 python3-torch python3-torchvision python3-scipy python3-numpy python3-venv)
[ "$libtorch" = pip ] && packages+=(ccache)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The real readers of what hamgan writes for other tools: TensorBoard's event reader, the
# safetensors reference reader, ONNX Runtime. On Debian's torch and numpy (--system-site-packages),
# so the Python package of python/ is tested against the same torch as the oracles.
eco=${ECOSYSTEM_VENV:-$HOME/.cache/hamgan/oracle-venv}
eco_packages=(tensorboard==2.17.1 safetensors==0.4.5 onnxruntime==1.19.2 onnx==1.16.2 "numpy<1.27")
if ! "$eco/bin/python" -c "import tensorboard, safetensors, onnxruntime, onnx, torch" 2>/dev/null; then
  echo "setup: installing ${eco_packages[*]} into $eco"
  /usr/bin/python3 -m venv --system-site-packages "$eco"
  "$eco/bin/python" -m pip install --quiet --disable-pip-version-check "${eco_packages[@]}"
fi

cmake_args=(-DHAMGAN_ECOSYSTEM_PYTHON="$eco/bin/python")
if [ "$libtorch" = pip ]; then
  build=${BUILD_DIR:-build-torch2}
  # 2.15.0: the newest 2.x release; its default (PyPI) wheel is built for CUDA 13.2, the
  # major version of the CUDA 13 toolkit on the project's machines (docs/user-guide.md: building).
  version=${TORCH2_VERSION:-2.15.0}
  venv=${TORCH2_VENV:-$HOME/.cache/hamgan/torch2-venv}
  py="$venv/bin/python"
  if ! "$py" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null; then
    echo "setup: installing torch==$version (CUDA wheel and its nvidia-* libraries) into $venv"
    [ -x "$py" ] || ${TORCH2_PYTHON:-python3} -m venv "$venv"
    "$py" -m pip install --quiet --disable-pip-version-check "torch==$version"
  fi
  cuda_home=${CUDA_HOME:-/usr/local/cuda}
  [ -x "$cuda_home/bin/nvcc" ] || { echo "setup: LIBTORCH=pip needs the CUDA toolkit: no $cuda_home/bin/nvcc (set CUDA_HOME)" >&2; exit 1; }
  # The torch package directory as prefix: its lib/ then wins over Debian's libtorch.so
  # and libc10.so, which TorchConfig's find_library would otherwise pick up.
  read -r prefix torch_cuda < <("$py" -W ignore -c 'import os, torch
print(os.path.dirname(torch.__file__), torch.version.cuda)')
  [ "$torch_cuda" != None ] || { echo "setup: torch==$version in $venv is a CPU-only wheel" >&2; exit 1; }
  # No GPU to detect the architecture from: A100 (sm_80) and H100 (sm_90).
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-8.0;9.0}
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix" -DCUDAToolkit_ROOT="$cuda_home"
              -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc")
  command -v ccache >/dev/null && cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  build=${BUILD_DIR:-build}
fi

# Configure every time: cheap, repairs a half-configured tree (e.g. a first
# configure run before libtorch-dev was installed) and picks up new source files.
mkdir -p "$build"
# Ninja where it is installed: it rebuilds only what a change touches (Makefiles rebuild every
# object when a source file is added). A build folder keeps the generator it was made with.
if command -v ninja > /dev/null && [ ! -f "$build/CMakeCache.txt" ]; then cmake_args+=(-G Ninja); fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" ${HAMGAN_CMAKE_ARGS:-} >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
grep -E "^-- (hamgan:|Found CUDA)" "$build/configure.log" || true
cmake --build "$build" -j"$(nproc)"
