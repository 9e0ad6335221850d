#!/bin/sh
# npm run mutation: StrykerJS over each area of stryker.config.mjs in turn (one core, one mutant at a
# time), then the score over everything measured so far (scripts/mutation-score.mjs).
set -e
for area in ${MUTATION_AREAS:-$(node -e "import('./scripts/mutation-areas.mjs').then((m) => console.log(Object.keys(m.areas).join(' ')))")}; do
  start=$(date +%s)
  MUTATION_AREA=$area npx stryker run
  echo "mutation area $area: $(( $(date +%s) - start )) s"
done
node scripts/mutation-score.mjs
