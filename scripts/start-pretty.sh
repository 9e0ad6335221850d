#!/bin/sh
# `npm run start:pretty -- [arguments of npm start]`: `npm start`, its JSON log lines printed by
# pino-pretty for a person to read (docs/operating.md, "Reading the logs"; pino-pretty's options
# are in .pino-prettyrc). Ctrl-C reaches the whole group: the server stops gracefully, pino-pretty
# prints its last lines and ends with the pipe. This shell only waits for them, and so exits with
# pino-pretty's status instead of dying of the SIGINT before the last lines are out.
trap : INT
npm start --silent -- "$@" | pino-pretty
