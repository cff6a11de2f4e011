#!/usr/bin/env bash
# llama-cpp-python (the real model's server, sparqlab[real]) is published as source only, and compiling llama.cpp
# takes ~20 minutes on 2 cores. Build its wheel once into WHEEL_DIR (make setup: the CI cache folder,
# ${SPARQLAB_CI_CACHE:-$HOME/.cache/sparqlab-ci}/wheels, kept between runs) with portable flags (no
# -march=native, so a cached wheel runs on any x86-64 machine sharing the cache); pip then installs it with
# --find-links WHEEL_DIR.
#
#     scripts/llama_cpp_wheel.sh PIP WHEEL_DIR
#
# The version is requirements.txt's pin. Prints whether the wheel was built or taken from the cache.
set -euo pipefail
pip="$1"
wheels="$2"
cd "$(dirname "$0")/.."
version="$(sed -n 's/^llama-cpp-python==\([^ ]*\).*/\1/p' requirements.txt)"
if [ -z "$version" ]; then
    echo "scripts/llama_cpp_wheel.sh: requirements.txt pins no llama-cpp-python==VERSION" >&2
    exit 1
fi
mkdir -p "$wheels"
for wheel in "$wheels"/llama_cpp_python-"$version"-*.whl; do
    if [ -f "$wheel" ]; then
        echo "llama-cpp-python $version: taken from the cache ($wheel)"
        exit 0
    fi
done
echo "llama-cpp-python $version: not in the cache ($wheels), building it (~20 minutes on 2 cores)"
# Built in a folder of its own and moved in whole, so a build running beside this one (or one interrupted) never
# leaves a partial wheel where the next setup would take it.
partial="$(mktemp -d "$wheels/.building.XXXXXX")"
trap 'rm -rf "$partial"' EXIT
CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_OPENMP=OFF" \
    "$pip" wheel --quiet --no-deps -w "$partial" "llama-cpp-python==$version"
mv "$partial"/llama_cpp_python-"$version"-*.whl "$wheels"/
echo "llama-cpp-python $version: built into $wheels"
