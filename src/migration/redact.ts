// What the recorder writes in place of credentials, unless told to keep them (--keep-secrets): a
// HAR is passed around, attached to tickets, committed. The scheme of an Authorization is kept
// (`Bearer [REDACTED]`), and the names of cookies and the attributes of a Set-Cookie, so that the
// report still says what was sent; their values are not.

export const REDACTED = '[REDACTED]';

const redactors: Readonly<Record<string, (value: string) => string>> = {
  authorization: schemeOnly,
  'proxy-authorization': schemeOnly,
  cookie: (value) =>
    value
      .split(';')
      .map((pair) => `${(pair.split('=', 1)[0] ?? '').trim()}=${REDACTED}`)
      .join('; '),
  'set-cookie': (value) => {
    const [first = '', ...attributes] = value.split(';');
    return [`${(first.split('=', 1)[0] ?? '').trim()}=${REDACTED}`, ...attributes].join(';');
  },
};

function schemeOnly(value: string): string {
  const scheme = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s+\S/.exec(value);
  return scheme === null ? REDACTED : `${scheme[1]} ${REDACTED}`;
}

/** The value a header is recorded with. */
export function redactedValue(name: string, value: string): string {
  const redact = redactors[name.toLowerCase()];
  return redact === undefined ? value : redact(value);
}

/** The header names whose values are redacted, as the recorder says at start. */
export const REDACTED_HEADERS = 'Authorization, Proxy-Authorization, Cookie and Set-Cookie';
