# fetch_checked URL FILE SIZE SHA256: FILE when it is there with that size and sha256, else URL
# downloaded beside it and moved into place only once verified (a broken transfer never leaves
# a file under the final name). Exits on a size or sha256 that is not the expected one.
# Sourced by scripts/download_inception.sh and scripts/download_dinov2.sh.
fetch_checked() {
  local url=$1 file=$2 size=$3 sha=$4
  check_file() {  # FILE: exits unless size and sha256 are the expected ones
    local got sum
    got=$(stat -c %s "$1")
    [ "$got" = "$size" ] || { echo "error: $1: $got bytes, expected $size" >&2; exit 1; }
    sum=$(sha256sum "$1" | cut -d' ' -f1)
    [ "$sum" = "$sha" ] || { echo "error: $1: sha256 $sum, expected $sha (corrupt or a different file)" >&2; exit 1; }
  }
  mkdir -p "$(dirname "$file")"
  if [ -f "$file" ]; then
    check_file "$file"
  else
    curl -fL --retry 3 -o "$file.part" "$url"
    check_file "$file.part"
    mv "$file.part" "$file"
  fi
  echo "ok: sha256 $sha"
}
