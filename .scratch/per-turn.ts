import { readFileSync } from 'node:fs';
const [unitPattern, ...files] = process.argv.slice(2);
for (const file of files) {
  const rows = JSON.parse(readFileSync(file, 'utf8')) as { text: string; calls: number; totalMs: number }[];
  if (rows.length === 0) continue;
  const unit = rows.filter((r) => new RegExp(unitPattern, 'i').test(r.text)).reduce((a, r) => a + r.calls, 0);
  const calls = rows.reduce((a, r) => a + r.calls, 0);
  const ms = rows.reduce((a, r) => a + r.totalMs, 0);
  console.log(`${file}: units ${unit}, round trips ${calls} (${(calls / unit).toFixed(1)} per unit), waited ${(ms / unit).toFixed(2)} ms per unit`);
  for (const r of rows.sort((a, b) => b.calls - a.calls).slice(0, Number(process.env.TOP ?? 14))) {
    console.log(`   ${(r.calls / unit).toFixed(2).padStart(6)} rt  ${(r.totalMs / r.calls).toFixed(2).padStart(6)} ms  ${r.text.slice(0, 110)}`);
  }
}
