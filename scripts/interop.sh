#!/usr/bin/env bash
# Interop: writes outputs from every fixture with simrec and opens them with the formats' own
# software (../shared/tools: Elodin's replay loader, 3es-core's 3esinfo and tesplay; NanoVer's
# Python reader). Each part is scripts/interop/<part>.sh; it prints `PASS name` or
# `FAIL name: why` per check. Exit 1 if any check failed; exit 0 with a SKIPPED line when
# ../shared/tools is absent (the tools are not redistributed with simrec).
#
# Environment (all optional):
#   SHARED      the shared directory (default: ../shared beside the project)
#   SIMREC      a built simrec (default: cargo build --release, target/release/simrec)
#   NANOVER_PY  a python with nanover-server 0.1.3018 (default: a venv made in target/, from
#               PyPI, with a Python 3.13 found on the machine; skipped when none can be made)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
shared="${SHARED:-$root/../shared}"
if [ ! -d "$shared/tools" ]; then
  echo "SKIPPED interop: $shared/tools is absent (the formats' own tools live there)"
  exit 0
fi

if [ -z "${SIMREC:-}" ]; then
  cargo build --release --quiet
  SIMREC="$root/target/release/simrec"
fi

tools="$root/target/interop-tools"
mkdir -p "$tools"
for packed in "$shared"/tools/*/*.xz; do
  tool="$tools/$(basename "$packed" .xz)"
  if [ ! -x "$tool" ] || [ "$packed" -nt "$tool" ]; then
    xz -dc "$packed" > "$tool.tmp" && chmod +x "$tool.tmp" && mv "$tool.tmp" "$tool"
  fi
done

if [ -z "${NANOVER_PY:-}" ]; then
  venv="$root/target/interop-venv"
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import nanover' 2>/dev/null; then
    NANOVER_PY="$venv/bin/python"
  else
    # The first Python 3.13 that runs (a pyenv shim on PATH may exist and still refuse).
    py313=""
    for candidate in python3.13 "$HOME"/.pyenv/versions/3.13*/bin/python3.13 /usr/bin/python3.13; do
      if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' >/dev/null 2>&1; then
        py313="$candidate"; break
      fi
    done
    if [ -n "$py313" ] && "$py313" -m venv "$venv" >/dev/null 2>&1 \
      && "$venv/bin/pip" install --quiet nanover-server==0.1.3018 msgpack >/dev/null 2>&1; then
      NANOVER_PY="$venv/bin/python"
    else
      NANOVER_PY=""
    fi
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SIMREC TOOLS="$tools" NANOVER_PY FIXTURES="$root/fixtures" SHARED="$shared"
failed=0
for part in scripts/interop/*.sh; do
  name="$(basename "$part" .sh)"
  mkdir -p "$work/$name"
  echo "== $name"
  if ! WORK="$work/$name" bash "$part"; then
    failed=1
  fi
done
if [ "$failed" = 0 ]; then echo "interop: every check passed"; else echo "interop: FAILED"; fi
exit "$failed"
