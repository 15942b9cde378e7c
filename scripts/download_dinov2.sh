#!/usr/bin/env bash
# Fetches one of Meta's released DINOv2 backbones and checks its size and sha256.
#   scripts/download_dinov2.sh [vits14|vitb14|vitl14|vitg14] [DEST_DIR]   (default: vits14, ~/.cache/hamgan)
# Then: hamgan fid ... --features DEST_DIR/dinov2_vits14_pretrain.pth   (prints fd_dinov2, not fid)
#   or eval.features: that path, to score in DINOv2 while training.
# Meta publishes no checksums for these files. The sizes and sha256 below are the ones that
# several independent public projects pin for the files of dl.fbaipublicfiles.com (among them a
# maintained model-conversion library that checks all four), each agreeing with the others;
# they were not downloaded here (no internet on the project's machines).
set -euo pipefail
. "$(dirname "$0")/lib/fetch_checked.sh"
arch=${1:-vits14}
dest=${2:-$HOME/.cache/hamgan}
case "$arch" in
  vits14) size=88283115;   sha=b938bf1bc15cd2ec0feacfe3a1bb553fe8ea9ca46a7e1d8d00217f29aef60cd9 ;;
  vitb14) size=346378731;  sha=0b8b82f85de91b424aded121c7e1dcc2b7bc6d0adeea651bf73a13307fad8c73 ;;
  vitl14) size=1217586395; sha=d5383ea8f4877b2472eb973e0fd72d557c7da5d3611bd527ceeb1d7162cbf428 ;;
  vitg14) size=4546108579; sha=baf8467e50af277596bbbafa06887c177ee899ab46033649c383577d7e9309d3 ;;
  *) echo "error: architecture '$arch'; expected vits14, vitb14, vitl14 or vitg14" >&2; exit 2 ;;
esac
name=dinov2_${arch}_pretrain.pth
url=https://dl.fbaipublicfiles.com/dinov2/dinov2_$arch/$name
fetch_checked "$url" "$dest/$name" "$size" "$sha"
echo "use: --features $dest/$name"
