/**
 * Keeps the bundle ASCII. V8 holds a script's source in memory for as long as the script lives, one byte a character
 * when every character is Latin-1 and two bytes a character otherwise: a single `…` or `→` anywhere in
 * `dist/bundle/main.js` made its 3.7 MB source cost 7.4 MB of the server's heap. rolldown's `charset: 'ascii'`
 * escapes strings and regular expressions; what it leaves are the legal comments it keeps (`/*! … *\/`) and tagged
 * template literals, whose raw text a tag may read. The first are escaped here; the second are reported, to be
 * written as entities or escapes in the source.
 */

/** A rolldown output plugin: escapes non-ASCII characters inside legal comments (harmless there). */
export const asciiLegalComments = {
  name: 'ascii-legal-comments',
  renderChunk(code: string): { code: string; map: null } | null {
    const escaped = escapeLegalComments(code);
    // Escaping inside a comment moves no code, so the chunk's source map stays right (`map: null` keeps it).
    return escaped === code ? null : { code: escaped, map: null };
  },
};

/**
 * rolldown writes the legal comments it keeps on lines of their own. Only a line that starts with `/*!` or `//!` is
 * taken for one; whatever is missed is reported by {@link nonAsciiLines}.
 */
const LEGAL_COMMENT = /^[ \t]*(?:\/\*![\s\S]*?\*\/|\/\/![^\n]*)/gm;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at NUL on purpose.
const NON_ASCII = /[^\x00-\x7f]/g;

export function escapeLegalComments(code: string): string {
  return code.replace(LEGAL_COMMENT, (comment) =>
    comment.replace(NON_ASCII, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
}

/** The 1-based numbers of the lines that still hold a non-ASCII character. */
export function nonAsciiLines(code: string): number[] {
  const lines: number[] = [];
  code.split('\n').forEach((line, index) => {
    NON_ASCII.lastIndex = 0;
    if (NON_ASCII.test(line)) lines.push(index + 1);
  });
  return lines;
}
