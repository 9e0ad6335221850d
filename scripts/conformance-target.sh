#!/bin/sh
# Start command for the shared conformance runner (compare.mjs): it sets SERVICE, ERRORS, CATCHALL
# and TARGET_PORT for each sequence; this maps them onto our command line.
set -eu
cd "$(dirname "$0")/.."
catch_all=""
if [ "${CATCHALL:-0}" = "1" ]; then catch_all="--catch-all"; fi
exec node dist/cli.js "$SERVICE" --port "$TARGET_PORT" --db memory --errors "${ERRORS:-default}" $catch_all --log-level silent
