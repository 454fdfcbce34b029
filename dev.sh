#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# VRAM Lab on a fresh Debian 12 machine: installs what is missing, builds, runs.
#   ./dev.sh start   install, build (release) and start the VRAM Lab window (default scenario)
#   ./dev.sh test    install, build and run every test: the dev build, then the whole suite
#                    again under AddressSanitizer + UBSan, then a bounded libFuzzer run of
#                    the scenario and config.json readers (what CI runs)
#   ./dev.sh bench   build (release) and run the core benchmarks
set -euo pipefail
cd "$(dirname "$0")"

BUILD_PACKAGES=(build-essential cmake pkg-config nlohmann-json3-dev qt6-base-dev qt6-svg-dev libqcustomplot-dev libbenchmark-dev)
# Eager PyTorch on the CPU is the ground truth the validation suite compares with;
# appstream, desktop-file-utils, libxml2-utils and dpkg-dev validate and build the Debian
# package; clang and its runtime bring libFuzzer for the fuzz preset; clang-format-14
# checks that every C++ file is formatted as .clang-format says.
TEST_PACKAGES=(python3 python3-torch appstream desktop-file-utils libxml2-utils dpkg-dev clang-14 libclang-rt-14-dev clang-format-14)
DEFAULT_SCENARIO=resources/scenarios/llama-3-8b-8xh100.json
JOBS=$(nproc)

install_missing() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "dev.sh: installing ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
    cmake --preset "$1"
    cmake --build --preset "$1" -j "$JOBS"
}

case "${1:-}" in
start)
    install_missing "${BUILD_PACKAGES[@]}"
    build release
    exec build/release/app/gui/vramlab "${2:-$DEFAULT_SCENARIO}"
    ;;
test)
    install_missing "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    build dev
    ctest --preset dev -j "$JOBS"
    build asan
    ctest --preset asan -j "$JOBS"
    build fuzz
    ctest --preset fuzz
    ;;
bench)
    install_missing "${BUILD_PACKAGES[@]}"
    build release
    build/release/benchmarks/bench_core
    exec build/release/benchmarks/bench_gui
    ;;
*)
    echo "usage: ./dev.sh start [SCENARIO.json] | test | bench" >&2
    exit 2
    ;;
esac
