#!/usr/bin/env bash
# Debian packages the tests use: tesseract (OCR of signs), Noto CJK (Japanese signs), Chromium
# (viewer browser tests). Installs what is missing when we can (root + apt-get), else says how.
set -euo pipefail
need=()
command -v tesseract >/dev/null 2>&1 || need+=(tesseract-ocr tesseract-ocr-jpn)
[ -d /usr/share/fonts/opentype/noto ] || need+=(fonts-noto-cjk)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "note: missing Debian packages ${need[*]}; tests needing them will be skipped."
  echo "      install with: sudo apt-get install ${need[*]}"
fi
