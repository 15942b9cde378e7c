#!/usr/bin/env bash
# Fetches pytorch-fid's FID Inception weights (legacy torch.save format) and checks the sha256.
#   scripts/download_inception.sh [DEST_DIR]   (default: ~/.cache/hamgan)
# Then: hamgan fid ... --inception DEST_DIR/pt_inception-2015-12-05-6726825d.pth
#   (or export HAMGAN_INCEPTION=that path).
# The torch-hub name carries the first 8 hex digits of the sha256 (6726825d); that prefix is
# checked strictly. The full hash below comes from one public note about the identically named
# torch-fidelity copy and is NOT independently verified: a mismatch on it only warns.
set -euo pipefail
dest=${1:-$HOME/.cache/hamgan}
name=pt_inception-2015-12-05-6726825d.pth
url=https://github.com/mseitzer/pytorch-fid/releases/download/fid_weights/$name
prefix=6726825d
full_candidate=6726825d0af5f729cebd5821db510b11b1cfad8faad88a03f1befd49fb9129b2
mkdir -p "$dest"
if [ ! -f "$dest/$name" ]; then
  curl -fL --retry 3 -o "$dest/$name.part" "$url"
  mv "$dest/$name.part" "$dest/$name"
fi
sum=$(sha256sum "$dest/$name" | cut -d' ' -f1)
echo "sha256 $sum  $dest/$name"
if [ "${sum:0:8}" != "$prefix" ]; then
  echo "error: sha256 does not start with $prefix: corrupt or wrong file" >&2
  exit 1
fi
[ "$sum" = "$full_candidate" ] || echo "warning: full sha256 differs from the unverified $full_candidate" >&2
echo "ok: --inception $dest/$name"
