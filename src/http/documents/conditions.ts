// How a tagged operation is documented (conditions.ts): the ETag header of its success, and for a
// read the 304 it answers to a matching If-None-Match. The contract fixes each operation's
// three-digit codes, so the 304 is the `3XX` range; a 412 or 428 is shown among the operation's
// other errors (openapi.ts places each response).
import type { HeaderDoc } from '../stages/stage.js';

export const ETAG_HEADER_DOCS: Readonly<Record<string, HeaderDoc>> = {
  ETag: {
    description:
      'The entity tag of this representation (strong): send it back in If-None-Match to be answered 304 while it is current, ' +
      'or in If-Match on a write to have it refused (412) if the item changed in between (docs/conditional-requests.md in the repository).',
  },
};

export const NOT_MODIFIED_DESCRIPTION =
  'Not Modified: If-None-Match names the current ETag (or *). No body; the ETag is sent again.';
