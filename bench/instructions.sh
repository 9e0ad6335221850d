#!/bin/sh
# Instructions per request, counted by valgrind (callgrind) on each server's main thread: a measure
# that does not move with this virtual machine's speed, as req/s and CPU time do. It counts the main
# thread's user-space work (our code, node:http, V8, the SQLite read), not the kernel's share (the
# socket's system calls, a third or more of a request's CPU time here) nor other threads (SQLite
# writes, log writes in libuv's pool), so it compares code, not throughput.
#
#   sh bench/instructions.sh [PATH] [ROUNDS]     a path of the to-do service (default /todos/1), ROUNDS (default 2)
#   CLI=other/dist/cli.js sh bench/instructions.sh   the to-do service of another build, to compare two
#   BODY='{"done":true}' sh bench/instructions.sh /todos   POST with that JSON body (here the 422 of the bench)
#   ERRORS=problem BODY='{"done":true}' sh bench/instructions.sh /todos   the same in another error format (both servers)
#
# The to-do service runs on a fresh SQLite file. autocannon sends 9,000 requests (10 connections)
# to warm a server up, then the count is reset and 3,000 more are counted; every request must be
# answered (its status is checked by the bench proper, not here). How many requests share a turn
# of the event loop changes from round to round, and with it the per-turn costs a request carries
# (the read transaction, the turn-end writes), so each server is measured ROUNDS times and the
# table shows the least and the most. Needs valgrind (Debian: valgrind), curl and a build
# (npm run bench:instructions builds first).
set -eu
TARGET=${1:-/todos/1}
BODY=${BODY:-}
ERRORS=${ERRORS:-default}
ROUNDS=${2:-2}
COUNTED=3000
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=${CLI:-$ROOT/dist/cli.js}
BASELINE=$ROOT/.build/bench/baseline.js
AUTOCANNON=$ROOT/node_modules/autocannon/autocannon.js
PORT=${PORT:-9870}
WORK=$(mktemp -d)
server=''
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
  echo "instructions: $*" >&2
  exit 1
}

for tool in valgrind callgrind_control curl node; do
  command -v "$tool" >/dev/null || fail "$tool is missing (Debian: apt-get install -y valgrind curl)"
done
for file in "$CLI" "$BASELINE" "$AUTOCANNON"; do
  [ -f "$file" ] || fail "$file is missing: npm ci, then npm run bench:instructions"
done

# load COUNT: sends COUNT requests and fails unless every one was answered.
load() {
  if [ -n "$BODY" ]; then
    node "$AUTOCANNON" -c 10 -a "$1" -m POST -H 'Content-Type=application/json' -b "$BODY" -j "http://127.0.0.1:$PORT$TARGET" 2>/dev/null >"$WORK/load.json"
  else
    node "$AUTOCANNON" -c 10 -a "$1" -j "http://127.0.0.1:$PORT$TARGET" 2>/dev/null >"$WORK/load.json"
  fi
  node -e '
    const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const answered = r["2xx"] + r.non2xx;
    if (r.errors || r.timeouts || answered !== Number(process.argv[2])) {
      console.error(`instructions: ${answered} of ${process.argv[2]} requests answered (${r.errors} errors, ${r.timeouts} time-outs)`);
      process.exit(1);
    }' "$WORK/load.json" "$1"
}

# measure NAME ARGS...: sets `result` to the main thread's instructions per counted request. Not
# run in a subshell, so that the EXIT trap still knows the server to stop if a step fails.
measure() {
  out=$WORK/$1
  shift
  rm -f "$WORK"/db.sqlite*
  if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then fail "something already answers on port $PORT (set PORT)"; fi
  # valgrind runs the server in its own process, so $! is the server.
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out.%p" "$@" >"$out.log" 2>&1 &
  server=$!
  tries=0
  until curl -s -o /dev/null "http://127.0.0.1:$PORT$TARGET"; do
    kill -0 "$server" 2>/dev/null || { cat "$out.log" >&2; fail "the server exited before it answered"; }
    tries=$((tries + 1))
    [ $tries -lt 240 ] || fail "the server did not answer within 2 minutes"
    sleep 0.5
  done
  load 3000
  load 3000
  load 3000
  callgrind_control -z "$server" >/dev/null 2>&1 || fail "callgrind_control could not reset the count"
  load $COUNTED
  callgrind_control -d "$server" >/dev/null 2>&1 || fail "callgrind_control could not dump the count"
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=''
  # One file per thread; the main thread's is numbered -01, and its summary line is its total.
  total=$(sed -n 's/^summary: //p' "$out.$!.1-01")
  [ -n "$total" ] || fail "no count of the main thread in $out.$!.1-01"
  result=$((total / COUNTED))
}

# row LABEL ARGS...: measures ROUNDS times, prints least and most.
row() {
  label=$1
  shift
  least=''
  most=''
  i=0
  while [ $i -lt "$ROUNDS" ]; do
    measure "round$i" "$@"
    n=$result
    if [ -z "$least" ] || [ "$n" -lt "$least" ]; then least=$n; fi
    if [ -z "$most" ] || [ "$n" -gt "$most" ]; then most=$n; fi
    i=$((i + 1))
  done
  echo "| $label | $least | $most |"
}

if [ -n "$BODY" ]; then request="POST $TARGET $BODY"; else request="GET $TARGET"; fi
echo "Instructions per request on the main thread, $request, error format $ERRORS, $COUNTED requests counted, least and most of $ROUNDS rounds"
echo
echo "| Server | least | most |"
echo "|---|---:|---:|"
row 'baseline (bare node:http)' node "$BASELINE" --port "$PORT" --errors "$ERRORS"
row 'to-do, access line on' node "$CLI" todo --port "$PORT" --db "sqlite:$WORK/db.sqlite" --errors "$ERRORS"
row 'to-do, --access-log off' node "$CLI" todo --port "$PORT" --db "sqlite:$WORK/db.sqlite" --errors "$ERRORS" --access-log off
