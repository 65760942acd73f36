#!/usr/bin/env bash
# The wheel works on its own: build the sdist and (from it) the wheel, install the wheel into a
# fresh venv outside the checkout (no system site-packages, no source tree on the path) and run a
# small end-to-end there: synth a tiny city from the packaged demo crop, ingest, build, generate
# and check tasks, eval the oracle, `city360 cities`. Then the README's runnable examples (the
# blocks marked `<!-- example: runs -->`, scripts/readme_examples.py) run exactly as written, in
# README order, in one folder with one fresh city cache: the first builds the demo city (the
# ~3 min of this check), the later ones reuse it. Dependencies come from the package index at
# the versions pinned in constraints.txt, through pip's cache. Run by `make test`; WHEEL_CHECK=0
# skips it; README_EXAMPLES=0 skips only the README examples; README_CACHE_DIR=DIR keeps their
# city cache there between runs (a CI cache: packaged cities are keyed by the city360 version
# and their inputs, so a kept build is never stale) instead of a fresh one.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${WHEEL_CHECK:-1}" = "0" ]; then
  echo "wheel-check: skipped (WHEEL_CHECK=0)"
  exit 0
fi
PYTHON=${PYTHON:-python3}
started=$SECONDS
quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
work=$(mktemp -d "${TMPDIR:-/tmp}/city360-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT

# build from a copy of the tracked files, so the checkout gets no build/ or egg-info
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - 2>/dev/null \
  | tar -xf - -C "$work/src"
"$PYTHON" -m venv "$work/buildenv"
quiet_pip "$work/buildenv/bin/python" -m pip install --quiet --upgrade pip build
"$work/buildenv/bin/python" -m build --outdir "$work/dist" "$work/src" >"$work/build.log" 2>&1 \
  || { cat "$work/build.log"; exit 1; }
ls "$work"/dist/city360-*.tar.gz "$work"/dist/city360-*.whl >/dev/null
listing=$(unzip -l "$work"/dist/city360-*.whl)
for required in LICENSE NOTICE city360/bench/run.py city360/synth/shaders/sky.vert; do
  grep -q "$required" <<<"$listing" || { echo "wheel-check: $required is not in the wheel"; exit 1; }
done
echo "wheel-check: built $(cd "$work/dist" && ls) in $((SECONDS - started)) s"

"$PYTHON" -m venv "$work/venv"
quiet_pip "$work/venv/bin/python" -m pip install --quiet --upgrade pip
# at the versions `make test` pins (constraints.txt), so a new release elsewhere cannot change
# what this check means between two runs of the same commit
quiet_pip "$work/venv/bin/python" -m pip install --quiet -c constraints.txt "$work"/dist/city360-*.whl
echo "wheel-check: installed in a fresh venv at $((SECONDS - started)) s"

run=$work/run
mkdir "$run"
cd "$run"  # outside the checkout: only the installed wheel can be imported
export CITY360_CACHE_DIR=$run/cache CITY360_NO_PROGRESS=1
c360=$work/venv/bin/city360
"$work/venv/bin/python" -c "import city360, pathlib; \
  assert 'site-packages' in city360.__file__, city360.__file__; print('city360', city360.__version__)"
"$c360" synth --demo --bbox 60.1652,24.9420,60.1664,24.9445 --width 256 --fps 1 --out city
"$c360" ingest city/videos/*.mp4 $(for g in city/videos/*.gpx; do printf -- '--gps %s ' "$g"; done) \
  --out city
"$c360" build city --osm city/map/extract.osm
"$c360" info city --json >/dev/null
"$c360" tasks generate city --out city/tasks/main --per-family 1 --seed 0
"$c360" tasks check city/tasks/main --city city
"$c360" eval city --suite main --agent oracle --output-root runs --run-id oracle --no-report
test -s runs/oracle/results.csv
"$c360" cities --json >/dev/null
"$c360" bench --help >/dev/null
echo "wheel-check: end-to-end from the installed wheel passed in $((SECONDS - started)) s"

if [ "${README_EXAMPLES:-1}" = "0" ]; then
  echo "wheel-check: README examples skipped (README_EXAMPLES=0)"
  exit 0
fi
examples=$work/readme-examples
"$work/venv/bin/python" "$work/src/scripts/readme_examples.py" "$work/src/README.md" "$examples" \
  >"$work/examples.txt"
test -s "$work/examples.txt" || { echo "wheel-check: README has no runnable example"; exit 1; }
mkdir "$work/readme"
cd "$work/readme"  # a fresh folder and cache: what a new user has
export CITY360_CACHE_DIR=${README_CACHE_DIR:-$work/readme/cache}
while read -r example; do
  begun=$SECONDS
  case $example in
    *.py) "$work/venv/bin/python" "$examples/$example" ;;
    *.sh) PATH="$work/venv/bin:$PATH" bash -euo pipefail "$examples/$example" ;;
  esac </dev/null >"$work/example.log" 2>&1 || {
    cat "$work/example.log"
    fence=${example#*-line-}
    echo "wheel-check: the README example at README.md line ${fence%.*} failed (output above)"
    exit 1
  }
  echo "wheel-check: README example $example ran in $((SECONDS - begun)) s"
done <"$work/examples.txt"
echo "wheel-check: $(wc -l <"$work/examples.txt") README examples passed at $((SECONDS - started)) s"
