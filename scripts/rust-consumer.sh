#!/usr/bin/env bash
# The README's Rust example, built and run as a user would: a new Cargo project in a
# temporary folder outside the workspace, depending on the core by path, on the bundled
# example. The program is the README's code block between the rust-example markers.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="$(mktemp -d)"
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/src"
cat >"$DIR/Cargo.toml" <<TOML
[package]
name = "readme-example"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
weight-manifest = { path = "$ROOT" }

# Not a member of any workspace around the temporary folder.
[workspace]
TOML
awk '/<!-- rust-example:start -->/{on=1; next} /<!-- rust-example:end -->/{on=0} on' "$ROOT/README.md" \
  | sed -e '/^```/d' >"$DIR/src/main.rs"
if ! grep -q 'fn main' "$DIR/src/main.rs"; then
  echo "rust-consumer: no rust-example block with fn main in README.md" >&2
  exit 1
fi
# The workspace's lock as the starting point: the consumer gets the versions CI tests. Not
# --locked: cargo drops the entries this project does not use (the CLI's, the tests').
cp "$ROOT/Cargo.lock" "$DIR/Cargo.lock"
# A target folder of its own under the workspace's, so repeated runs reuse the build.
CARGO_TARGET_DIR="$ROOT/target/rust-consumer" cargo run -q --manifest-path "$DIR/Cargo.toml" -- \
  "$ROOT/examples/moe-ep-pp"
echo "rust-consumer: the README's Rust example built outside the workspace and ran"
