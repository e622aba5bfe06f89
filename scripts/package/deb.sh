#!/usr/bin/env bash
# Builds the Debian package with cargo-deb (metadata: [package.metadata.deb] in Cargo.toml)
# from the release binary: target/debian/haloscope_<version>-1_<arch>.deb, stripped.
#   NO_BUILD=1  use target/release/haloscope as it is (the tests, after `cargo test --release`)
#   OUT=<dir>   where the .deb goes (default target/debian)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v cargo-deb >/dev/null 2>&1 || {
    echo "deb.sh: cargo-deb is needed: cargo install cargo-deb --locked" >&2
    exit 1
}
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release
cargo deb --no-build --strip --output "${OUT:-target/debian}" 2>&1 | grep -v "license field is missing" >&2
ls "${OUT:-target/debian}"/haloscope_*.deb
