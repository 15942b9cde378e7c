# The domain classifier that scores runs (`hamgan fid --features`), trained once and cached.
# Source it, then: ensure_classifier BIN CONFIG PATH   (trains CONFIG's classifier into PATH
# when PATH is missing; it only measures, never trains the GAN).

ensure_classifier() {
  local bin=$1 config=$2 clf=$3
  [ -f "$clf" ] && return 0
  echo "training the domain classifier $clf (once, about 2 minutes on 2 cores; it only measures)"
  mkdir -p "$(dirname "$clf")"
  "$bin" classifier train --config "$config" --out "$clf"
}
