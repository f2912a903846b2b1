import { describe, expect, it } from 'vitest';
import { escapeLegalComments, nonAsciiLines } from '../../scripts/ascii-bundle.ts';

describe('keeping the bundle ASCII', () => {
  it('escapes non-ASCII characters inside legal comments, block and line', () => {
    const code = '/*! polyfill. MIT License. Jimmy W\u00e4rting */\nconst a = 1;\n//! \u00a9 2024 \u2014 someone\n';
    const escaped = escapeLegalComments(code);
    expect(escaped).toBe(
      '/*! polyfill. MIT License. Jimmy W\\u00e4rting */\nconst a = 1;\n//! \\u00a9 2024 \\u2014 someone\n',
    );
    expect(nonAsciiLines(escaped)).toEqual([]);
  });

  it('leaves code and ordinary text outside legal comments as it is, and reports where non-ASCII is left', () => {
    const code = 'const a = "/*! not a comment";\nconst dot = html`a \u00b7 b`;\n/* \u00e9 */\n';
    expect(escapeLegalComments(code)).toBe(code);
    expect(nonAsciiLines(code)).toEqual([2, 3]);
  });
});
