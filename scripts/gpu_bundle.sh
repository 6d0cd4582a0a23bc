#!/usr/bin/env bash
# Packs a build for a GPU machine that lacks the Debian libraries it links (the lent device
# machines): src/cli/fpemu and bench/bench_cuda, stripped, with every shared library they need
# except the C and C++ runtimes and cuBLASLt, which such a machine has with its CUDA.
#
#   scripts/gpu_bundle.sh BUILD TARBALL     BUILD as for scripts/gpu_session.sh
#
# There: tar xzf TARBALL -C DIR; export LD_LIBRARY_PATH=DIR/lib:<the folder of libcublasLt.so.13>;
#        scripts/gpu_session.sh DIR
set -euo pipefail
build=$1 tarball=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/src/cli" "$stage/bench" "$stage/lib"
cp "$build/src/cli/fpemu" "$stage/src/cli/"
cp "$build/bench/bench_cuda" "$stage/bench/"
strip "$stage/src/cli/fpemu" "$stage/bench/bench_cuda"
ldd "$build/src/cli/fpemu" "$build/bench/bench_cuda" | awk '/=>/ { print $3 }' | sort -u |
  grep -vE '/lib(c|m|stdc\+\+|gcc_s|pthread|dl|rt|cublasLt)\.so|ld-linux' |
  xargs -I{} cp -L {} "$stage/lib/"
# Debug sections of our own libraries, unstripped, made the tarball larger than the 64 MiB a
# device machine takes with the working tree.
strip --strip-unneeded "$stage"/lib/*.so*
tar czf "$tarball" -C "$stage" .
