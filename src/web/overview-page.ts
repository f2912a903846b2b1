/**
 * The overview page's HTML: horizontal bar charts as inline SVG (no script, no CDN), drawn at the size they are shown
 * (the SVG's width is its viewBox's, so a 13 px label stays 13 px instead of being scaled down to fit a card), with a
 * value axis, and the label and value columns as wide as their longest text, so a five-digit value is never cut.
 */
import { layout, type PageContext } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';

export interface Bar {
  label: string;
  value: number;
  /** What the bar means in words (the SVG title), e.g. "812 of 1,000 prompts answered". */
  detail?: string;
}

const FONT_SIZE = 13;
/**
 * A generous width of `text` at FONT_SIZE in a system UI font (capitals and m/w widest), so the label and value
 * columns are never narrower than what they hold.
 */
function textWidth(text: string): number {
  let width = 0;
  for (const character of text) width += /[A-Z%@mw]/.test(character) ? 11.5 : /[a-z0-9]/.test(character) ? 9 : 6;
  return Math.ceil(width);
}
const ROW_HEIGHT = 24;
const BAR_HEIGHT = 16;
const AXIS_HEIGHT = 26;
const GAP = 8;
/** The chart's width on the page: two side by side in a 1,200 px page. */
export const CHART_WIDTH = 560;

const formatNumber = (value: number): string =>
  value.toLocaleString('en-US', { maximumFractionDigits: 1, useGrouping: false });

/** Round tick steps (1, 2 or 5 × 10ⁿ) giving at most five ticks from 0 to at least `max`. */
function ticks(max: number): number[] {
  if (max <= 0) return [0, 1];
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough) ?? power * 10;
  const count = Math.ceil(max / step);
  return Array.from({ length: count + 1 }, (_, index) => index * step);
}

/** A horizontal bar chart: one row per bar, the label left, the value right of its bar, a value axis below. */
export function barChart(title: string, bars: readonly Bar[], options: { unit?: string } = {}): SafeHtml {
  const scale = ticks(Math.max(0, ...bars.map((bar) => bar.value)));
  const top = scale.at(-1) ?? 1;
  const labelWidth = Math.max(24, ...bars.map((bar) => textWidth(bar.label))) + GAP;
  const valueWidth = Math.max(8, ...bars.map((bar) => textWidth(formatNumber(bar.value)))) + GAP;
  const plotWidth = Math.max(80, CHART_WIDTH - labelWidth - valueWidth);
  const height = bars.length * ROW_HEIGHT + AXIS_HEIGHT;
  const x = (value: number) => labelWidth + (value / top) * plotWidth;
  const axisY = bars.length * ROW_HEIGHT + 2;
  const rows = bars.map((bar, index) => {
    const y = index * ROW_HEIGHT;
    const width = Math.max(0, x(bar.value) - labelWidth);
    const text = formatNumber(bar.value);
    return html`<g class="bar"><title>${bar.label}: ${bar.detail ?? `${text}${options.unit ? ` ${options.unit}` : ''}`}</title><text x="${labelWidth - GAP}" y="${y + 16}" text-anchor="end">${bar.label}</text><rect x="${labelWidth}" y="${y + 4}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" fill="#1f5fa8"></rect><text class="value" x="${(labelWidth + width + 4).toFixed(1)}" y="${y + 16}">${text}</text></g>`;
  });
  const axis = scale.map(
    (tick) =>
      html`<line x1="${x(tick).toFixed(1)}" y1="0" x2="${x(tick).toFixed(1)}" y2="${axisY}" stroke="#ddd"></line><text x="${x(tick).toFixed(1)}" y="${axisY + 16}" text-anchor="middle" fill="#444">${formatNumber(tick)}</text>`,
  );
  return html`<figure class="chart"><figcaption>${title}</figcaption><svg role="img" aria-label="${title}" width="${CHART_WIDTH}" height="${height}" viewBox="0 0 ${CHART_WIDTH} ${height}" font-size="${FONT_SIZE}" font-family="system-ui, sans-serif">
${axis}<line x1="${labelWidth}" y1="0" x2="${labelWidth}" y2="${axisY}" stroke="#444"></line><line x1="${labelWidth}" y1="${axisY}" x2="${labelWidth + plotWidth}" y2="${axisY}" stroke="#444"></line>
${rows}</svg></figure>`;
}

export interface OverviewSection {
  heading: string;
  note: string;
  charts: SafeHtml[];
}

export function overviewPage(context: PageContext, sections: readonly OverviewSection[]): string {
  return layout(
    'Study overview',
    context,
    html`${sections.map(
      (section) =>
        html`<section class="overview"><h2>${section.heading}</h2><p class="note">${section.note}</p><div class="charts">${section.charts}</div></section>`,
    )}`,
  );
}
