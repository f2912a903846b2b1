/**
 * The roster's trial arm: a column and a filter, shown only when a study design is loaded. Kept apart from the
 * roster's other filters so that the page gains them by a few calls.
 */
import type { Arm } from '../trials/study-design.ts';
import { html, type SafeHtml } from './html.ts';

export interface RosterArms {
  /** The design's arms, in design order. */
  arms: readonly Pick<Arm, 'id' | 'label'>[];
  /** The arm in force of each row's participant (none: not allocated). */
  armOf: ReadonlyMap<string, string>;
}

/** The `arm` query parameter when it names an arm of the design, else '' (no filter). */
export function armFilterOf(query: Record<string, string | undefined>, arms: readonly Pick<Arm, 'id'>[]): string {
  const arm = query['arm'] ?? '';
  return arms.some((candidate) => candidate.id === arm) ? arm : '';
}

export function armFilterControl(selected: string, trial: RosterArms | undefined): SafeHtml | string {
  if (!trial) return '';
  const option = (value: string, label: string) =>
    html`<option value="${value}" ${value === selected ? html`selected` : ''}>${label}</option>`;
  return html`<label>Arm <select name="arm">${option('', 'any')}${trial.arms.map((arm) => option(arm.id, arm.label))}</select></label>`;
}

export function armHeader(trial: RosterArms | undefined): SafeHtml | string {
  return trial ? html`<th scope="col">Arm</th>` : '';
}

export function armCell(trial: RosterArms | undefined, participantId: string): SafeHtml | string {
  if (!trial) return '';
  return html`<td class="arm">${trial.armOf.get(participantId) ?? '\u2014'}</td>`;
}
