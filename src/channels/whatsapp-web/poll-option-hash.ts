/**
 * How a WhatsApp poll vote names the options it selects: by the SHA-256 of each option's name. The vote itself is
 * decrypted by the socket (`WhatsAppSocket.decryptPollVote`, Baileys' own implementation).
 */
import { createHash } from 'node:crypto';

/** SHA-256 of the option's name. */
export function pollOptionHash(option: string): Buffer {
  return createHash('sha256').update(option, 'utf8').digest();
}

/** The options whose hashes were selected, in the poll's order; unknown hashes are ignored. */
export function selectedOptionNames(hashes: readonly Uint8Array[], options: readonly string[]): string[] {
  return options.filter((option) => {
    const hash = pollOptionHash(option);
    return hashes.some((selected) => hash.equals(selected));
  });
}
