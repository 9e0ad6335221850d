// Conditional requests (RFC 9110 §13): a request's If-Match and If-None-Match, read once, and how a
// representation's entity tag is judged against them. A route whose representation has a tag says
// so on its reply (`Reply.etag`); a read is judged here (304, or 412 for a failed If-Match), a
// write by its store, in the write's own transaction (src/todo/write-conditions.ts), since only
// there can nothing come between the check and the change.
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from './errors.js';
import type { Reply } from './route.js';

/** One member of a list: the opaque tag, quotes included, and whether it was sent weak (W/). */
export interface EntityTag {
  readonly opaque: string;
  readonly weak: boolean;
}

/** A header's value: `*`, or the entity tags it lists (a member that is not one is left out: it matches nothing). */
export type TagList = '*' | readonly EntityTag[];

export interface Preconditions {
  readonly ifMatch: TagList | undefined;
  readonly ifNoneMatch: TagList | undefined;
}

/** What nearly every request carries: shared, so that reading no header makes nothing. */
export const NO_PRECONDITIONS: Preconditions = { ifMatch: undefined, ifNoneMatch: undefined };

export const ETAG_HEADER = 'ETag';

export const preconditionFailed = (): ApiError => new ApiError('PRECONDITION_FAILED');
export const preconditionRequired = (): ApiError => new ApiError('PRECONDITION_REQUIRED');

/** The request's preconditions. Node joins repeated If-Match lines with commas, which is the list they make. */
export function preconditionsOf(headers: IncomingHttpHeaders): Preconditions {
  const ifMatch = headers['if-match'];
  const ifNoneMatch = headers['if-none-match'];
  if (ifMatch === undefined && ifNoneMatch === undefined) return NO_PRECONDITIONS;
  return {
    ifMatch: ifMatch === undefined ? undefined : parseTagList(ifMatch),
    ifNoneMatch: ifNoneMatch === undefined ? undefined : parseTagList(ifNoneMatch),
  };
}

/** entity-tag = [ W/ ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text; members apart by commas and blanks. */
const MEMBER = /[ \t]*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*(?:,|$)/y;

export function parseTagList(value: string): TagList {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  let at = 0;
  while (at < value.length) {
    MEMBER.lastIndex = at;
    const member = MEMBER.exec(value);
    if (member !== null) {
      tags.push({ opaque: member[2] as string, weak: member[1] !== undefined });
      at = MEMBER.lastIndex;
      continue;
    }
    // Not an entity tag: skipped up to the next comma (a quoted comma cannot start a member).
    const comma = value.indexOf(',', at);
    if (comma < 0) break;
    at = comma + 1;
  }
  return tags;
}

/** Strong comparison (If-Match): both tags strong and the same. Our tags are always strong. */
export function matchesStrongly(list: TagList, opaque: string): boolean {
  return list === '*' || list.some((tag) => !tag.weak && tag.opaque === opaque);
}

/** Weak comparison (If-None-Match): the same opaque tag, weak or not. */
export function matchesWeakly(list: TagList, opaque: string): boolean {
  return list === '*' || list.some((tag) => tag.opaque === opaque);
}

/**
 * A read of a representation tagged `etag` (a strong tag, quotes included), RFC 9110 §13.2.2: a
 * failed If-Match is 412; an If-None-Match that matches is 304, which keeps the ETag and has no
 * body; otherwise the reply itself.
 */
export function conditionalRead(preconditions: Preconditions, etag: string, reply: Reply): Reply {
  const { ifMatch, ifNoneMatch } = preconditions;
  if (ifMatch !== undefined && !matchesStrongly(ifMatch, etag)) throw preconditionFailed();
  if (ifNoneMatch !== undefined && matchesWeakly(ifNoneMatch, etag)) return { status: 304, etag };
  return reply;
}
