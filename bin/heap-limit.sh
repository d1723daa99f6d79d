#!/bin/sh
# The image's start: runs "$@" (node and its arguments) with V8's heap limit at NODE_HEAP_PERCENT
# (default 75) of the container's memory limit.
#
# Why: Node sizes its heap at half the container's limit, and an aggregation stops with "JavaScript
# heap out of memory" when its live heap reaches that, however little of the rest it uses. At 1M
# identities the probabilistic model needs about 1.0 GiB of live heap and 1.4 GiB of RSS: a 2Gi worker
# holds it only with more than half of its limit as heap (docs/benchmarks.md). The rest (typed arrays,
# matching threads, code) lives beside the heap: matching threads are planned from the limit itself
# (src/core/matching/parallel/parallelism.ts), not from what the heap leaves.
#
# Left as Node sizes it: no cgroup limit (or "max"), NODE_HEAP_PERCENT=0, a limit under 256 MiB, or
# a --max-old-space-size already given in NODE_OPTIONS or in the arguments.
# CGROUP_ROOT (default /sys/fs/cgroup) is for tests. Reads the same files as memory-limit.ts.
set -eu

percent="${NODE_HEAP_PERCENT:-75}"
refuse() {
  echo "NODE_HEAP_PERCENT must be a whole number from 10 to 95 (or 0: Node's own default), not \"$percent\"" >&2
  exit 64
}
case "$percent" in
  '' | *[!0-9]*) refuse ;;
esac
if [ "$percent" -ne 0 ] && { [ "$percent" -lt 10 ] || [ "$percent" -gt 95 ]; }; then refuse; fi
if [ $# -eq 0 ]; then
  echo "usage: heap-limit.sh node [node arguments]" >&2
  exit 64
fi

# V8 takes its flags with dashes or underscores.
case " ${NODE_OPTIONS:-} $* " in
  *--max?old?space?size*) exec "$@" ;;
esac
[ "$percent" -eq 0 ] && exec "$@"

root="${CGROUP_ROOT:-/sys/fs/cgroup}"
limit=''
if [ -r "$root/memory.max" ]; then
  limit=$(cat "$root/memory.max")
elif [ -r "$root/memory/memory.limit_in_bytes" ]; then
  limit=$(cat "$root/memory/memory.limit_in_bytes")
fi
case "$limit" in
  '' | *[!0-9]*) exec "$@" ;; # none, "max", or unreadable
esac
# cgroup v1 says "no limit" with a page-rounded 2^63 - 1: 19 digits. Anything that long (>= 1 EB) is none.
[ ${#limit} -ge 19 ] && exec "$@"
mib=$((limit / 1048576))
[ "$mib" -lt 256 ] && exec "$@"

node=$1
shift
exec "$node" "--max-old-space-size=$((mib * percent / 100))" "$@"
