#!/usr/bin/env bash
# Runs the whole benchmark suite from a fresh clone and writes BENCHMARKS.md and
# docs/bench-throughput.png (about 10 minutes on 2 cores). `--smoke` runs tiny versions of every
# phase in well under a minute and writes bench/target/bench-work/BENCHMARKS-smoke.md instead.
# Other options go to the suite: `bench/run.sh --help` lists them. `--no-build` uses the jars
# already built (CI builds them with ./mvnw verify just before).
# Needs a JDK 17+, Node.js 18+ with npm; loopback traffic only. The cluster phase runs PostgreSQL from
# the binaries embedded-postgres unpacks (as root, through unshare -U) and redis-server from the PATH,
# else the build embedded-redis bundles.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
args=()
for a in "$@"; do
  if [[ "$a" == "--no-build" ]]; then build=0; else args+=("$a"); fi
done

if [[ $build == 1 ]]; then
  ./mvnw -B -q -ntp -DskipTests package
fi
(cd bench/src/main/node && npm ci --no-audit --no-fund --loglevel=error)

# The density phase opens 10,000 connections: the client and the gateway each need a descriptor
# per connection. Raise the soft limit to the hard one where that is allowed.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [[ "$(ulimit -n)" != unlimited && "$(ulimit -n)" -lt 10240 ]]; then
  echo "bench: ulimit -n is $(ulimit -n); the density phase needs about 10,100 (try --density 1000)" >&2
fi

exec java -jar bench/target/switchboard-bench.jar ${args[@]+"${args[@]}"}
