/** Reads a participant's poll answer back from its transcript text (`Q: Did you do it? A: Done`). */
export function parsePollText(content: string): { question: string; option: string } | undefined {
  const match = /^Q: (.*) A: (.*)$/s.exec(content);
  if (!match?.[1] || match[2] === undefined) return undefined;
  return { question: match[1], option: match[2].trim() };
}
