// `npm run docs:record`: writes what the services publish now into test/fixtures/published, after
// a change to the documents or pages that was meant. Review the diff before committing it.
import { fetchPublished, MODES, record } from './published.js';

for (const mode of MODES) {
  record(mode, await fetchPublished(mode));
  process.stdout.write(`recorded ${mode.name}\n`);
}
