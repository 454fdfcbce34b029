#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The desktop files validate, the .deb holds what it should with computed dependencies,
# and the unpacked programs run from their temporary root.
# usage: test_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
id=io.github.vramlab.VramLab

appstreamcli validate --no-net "$src/packaging/$id.metainfo.xml"
desktop-file-validate "$src/packaging/$id.desktop"
xmllint --noout "$src/packaging/$id.mime.xml"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" > "$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/out/*.deb)
dpkg-deb -c "$deb" | awk '{print $6}' > "$tmp/contents"
for path in ./usr/bin/vramlab ./usr/bin/vramlab-cli ./usr/share/applications/$id.desktop \
            ./usr/share/metainfo/$id.metainfo.xml ./usr/share/mime/packages/$id.xml \
            ./usr/share/icons/hicolor/scalable/apps/$id.svg ./usr/share/vramlab/scenarios/llama-3-8b-8xh100.json; do
    grep -qx "$path" "$tmp/contents" || { echo "missing from the package: $path"; cat "$tmp/contents"; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
case "$depends" in *libqt6widgets6*) ;; *) echo "Qt Widgets missing from the computed dependencies"; exit 1 ;; esac
case "$depends" in *cuda*|*cudart*) echo "CUDA must not be a hard dependency"; exit 1 ;; esac

root="$tmp/root"
dpkg-deb -x "$deb" "$root"
# Outputs captured first: grep -q closing a pipe early would fail the pipeline (pipefail).
version=$("$root/usr/bin/vramlab-cli" --version)
[[ "$version" == "vramlab-cli "* ]] || { echo "unexpected version line: $version"; exit 1; }
report=$("$root/usr/bin/vramlab-cli" estimate "$root/usr/share/vramlab/scenarios/llama-3-8b-8xh100.json" --json)
[[ "$report" == *'"format": "vramlab.report"'* ]] || { echo "no report from the unpacked vramlab-cli"; exit 1; }
env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$root/usr/bin/vramlab" --export "$tmp/chart.png" \
    "$root/usr/share/vramlab/scenarios/llama-3-8b-8xh100.json"
[[ "$(head -c 4 "$tmp/chart.png" | tail -c 3)" == "PNG" ]] || { echo "the unpacked vramlab wrote no PNG"; exit 1; }
# The probe is packaged when built with a CUDA toolkit; its runtime is static, so it runs
# unpacked with no CUDA package (exit 3 without a GPU, 0 with one).
if [[ -x "$root/usr/bin/vramlab-probe" ]]; then
    code=0
    "$root/usr/bin/vramlab-probe" info > /dev/null 2>&1 || code=$?
    [[ $code == 0 || $code == 3 ]] || { echo "the unpacked vramlab-probe info exited $code"; exit 1; }
fi
echo "package test passed: $(basename "$deb"), $(wc -l < "$tmp/contents") entries"
