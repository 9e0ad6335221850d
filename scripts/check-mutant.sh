#!/bin/sh
# One mutant checked by hand, as the "killed since" lines of mutation/survivors.md were: apply a Perl
# substitution to a compiled file under .build, run compiled test files, put the file back. Prints
# "killed" (a test failed), "survived" (all passed) or "not applied" (the substitution matched nothing).
#   npx tsc -p tsconfig.test.json
#   sh scripts/check-mutant.sh .build/src/db/batcher.js 's/this.sendScheduled = true;/this.sendScheduled = false;/' .build/test/db/batcher.test.js
set -eu
[ $# -ge 3 ] || { echo "usage: check-mutant.sh COMPILED_FILE PERL_SUBSTITUTION TEST_FILE..." >&2; exit 2; }
file=$1
substitution=$2
shift 2
backup=$(mktemp)
cp "$file" "$backup"
trap 'cp "$backup" "$file"; rm -f "$backup"' EXIT
perl -0pi -e "$substitution" "$file"
if cmp -s "$file" "$backup"; then echo "not applied"; exit 1; fi
if node --test "$@" > /dev/null 2>&1; then echo "survived"; exit 1; fi
echo "killed"
