/**
 * Sets `key` to `value` as the most recently used entry of `map` (a Map iterates in insertion order, so its first
 * entry is the least recently used); past `capacity` entries, the least recently used one is dropped and returned.
 * The bounded caches (flow states, participants, recent transcripts, parsed histories) keep their entries this way.
 */
export function setMostRecent<K, V>(map: Map<K, V>, key: K, value: V, capacity: number): V | undefined {
  map.delete(key);
  map.set(key, value);
  if (map.size <= capacity) return undefined;
  const [oldestKey, oldest] = map.entries().next().value as [K, V];
  map.delete(oldestKey);
  return oldest;
}
