/** The overview page's HTML: charts as inline SVG. */
import { layout, type PageContext } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';

/** A horizontal bar chart as inline SVG (no script, no CDN). */
export function barChart(title: string, bars: { label: string; value: number }[]): SafeHtml {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const rowHeight = 26;
  const height = bars.length * rowHeight + 10;
  return html`<figure class="chart"><figcaption>${title}</figcaption><svg role="img" aria-label="${title}" viewBox="0 0 400 ${height}" width="100%">
${bars.map((bar, index) => {
  const width = Math.round((bar.value / max) * 250);
  const y = index * rowHeight + 5;
  return html`<text x="0" y="${y + 16}" font-size="13">${bar.label}</text><rect x="110" y="${y}" width="${width}" height="20" fill="#1f5fa8"></rect><text x="${115 + width}" y="${y + 16}" font-size="13">${bar.value}</text>`;
})}</svg></figure>`;
}

export function overviewPage(context: PageContext, charts: SafeHtml[]): string {
  return layout('Study overview', context, html`<section class="grid">${charts}</section>`);
}
