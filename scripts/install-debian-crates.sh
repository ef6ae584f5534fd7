#!/usr/bin/env bash
# Installs a fixed list of Debian librust-*-dev packages: their crate sources land under
# /usr/share/cargo/registry/<name>-<version>/ and serve as the real-crate corpus for the
# ingest tests and `npm run bench:ingest`. Idempotent: packages already present are skipped.
# Exits 0 with a message (and installs nothing) where apt-get is not usable (not root,
# no network, not Debian) — the tests and the bench then skip with a message of their own.
set -uo pipefail

PACKAGES=(
  librust-regex-dev librust-regex-syntax-dev librust-aho-corasick-dev librust-memchr-dev
  librust-serde-dev librust-serde-derive-dev librust-serde-json-dev
  librust-syn-dev librust-proc-macro2-dev librust-quote-dev librust-unicode-ident-dev
  librust-itoa-dev librust-ryu-dev librust-once-cell-dev librust-log-dev librust-cfg-if-dev
  librust-libc-dev librust-bitflags-dev librust-smallvec-dev librust-either-dev
  librust-itertools-dev librust-lazy-static-dev librust-byteorder-dev librust-bytes-dev
  librust-hashbrown-dev librust-indexmap-dev librust-thiserror-dev librust-thiserror-impl-dev
  librust-anyhow-dev librust-rand-dev librust-rand-core-dev librust-getrandom-dev
  librust-ppv-lite86-dev librust-crossbeam-utils-dev librust-scopeguard-dev
  librust-lock-api-dev librust-parking-lot-dev librust-parking-lot-core-dev
  librust-autocfg-dev librust-version-check-dev librust-semver-dev librust-heck-dev
  librust-strsim-dev librust-fnv-dev librust-unicode-width-dev librust-unicode-segmentation-dev
  librust-percent-encoding-dev librust-form-urlencoded-dev librust-base64-dev librust-hex-dev
  librust-toml-dev librust-glob-dev librust-walkdir-dev librust-same-file-dev
  librust-memoffset-dev librust-num-traits-dev librust-static-assertions-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-debian-crates: all ${#PACKAGES[@]} packages present"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-debian-crates: skipped: apt-get not available (${#missing[@]} packages missing)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-debian-crates: skipped: not root (${#missing[@]} packages missing)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq; then
  echo "install-debian-crates: skipped: apt-get update failed"
  exit 0
fi
# --no-install-recommends keeps it to the crate sources (and their librust-* dependencies).
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  echo "install-debian-crates: skipped: apt-get install failed for some of: ${missing[*]}"
  exit 0
fi
echo "install-debian-crates: installed ${#missing[@]} packages"
