#!/usr/bin/env bash
# Runs a command while every core is kept busy by a bounded busy loop: the suite must not depend
# on timing (no lower bounds, no "fast enough" assumptions), and this is where that is proven.
set -euo pipefail
seconds="${CONTENTION_SECONDS:-900}"
cores="$(nproc)"
pids=()
for _ in $(seq "$cores"); do
  timeout "$seconds" sh -c 'while :; do :; done' &
  pids+=("$!")
done
stop() { kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
echo "running under contention ($cores busy loops, at most ${seconds}s): $*"
"$@"
