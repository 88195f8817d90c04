#!/usr/bin/env bash
# Starts three gateway nodes on this machine, on ports 8001-8003, sharing one Redis and one
# PostgreSQL database that already run. Each node logs to cluster-data/node-N.log; Ctrl-C stops all.
#
#   scripts/cluster.sh [--redis redis://127.0.0.1:6379] [--store postgresql://USER:PASSWORD@HOST:5432/DB]
#                      [--nodes 3] [--port 8001] [-- extra gateway options]
#
# Defaults: Redis on 127.0.0.1:6379, PostgreSQL database "switchboard" of user "switchboard" on
# 127.0.0.1:5432 (password from PGPASSWORD). Builds the jar first when it is missing.
set -euo pipefail

cd "$(dirname "$0")/.."
redis="redis://127.0.0.1:6379"
store="postgresql://switchboard${PGPASSWORD:+:$PGPASSWORD}@127.0.0.1:5432/switchboard"
nodes=3
port=8001
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --redis) redis="$2"; shift 2 ;;
    --store) store="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

jar=gateway-server/target/switchboard.jar
if [[ ! -f "$jar" ]]; then
  ./mvnw -q -B -DskipTests package
fi

mkdir -p cluster-data
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT INT TERM

for ((i = 1; i <= nodes; i++)); do
  p=$((port + i - 1))
  java -jar "$jar" --port "$p" --data-dir "cluster-data/node-$i" --node-id "node-$i" \
    --store-url "$store" --cluster-redis-url "$redis" "${extra[@]}" > "cluster-data/node-$i.log" 2>&1 &
  pids+=($!)
done

for ((i = 1; i <= nodes; i++)); do
  p=$((port + i - 1))
  for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$p/healthz" > /dev/null 2>&1; then
      echo "node-$i serves on http://127.0.0.1:$p (log: cluster-data/node-$i.log)"
      break
    fi
    if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null; then
      echo "node-$i stopped; its log:" >&2
      cat "cluster-data/node-$i.log" >&2
      exit 1
    fi
    sleep 0.2
  done
done
echo "Ctrl-C stops every node."
wait
