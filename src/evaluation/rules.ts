/**
 * The automatic checks of one simulated conversation: the contract's invariants as they show in what the participant
 * received, the engine's events and final state, and the model exchanges. Each rule passes, fails (with what broke)
 * or does not apply to this conversation. Pure: a record in, results out.
 */
import { ALL_TONE_TAGS } from '../domain/tone.ts';
import { validateChatRequest } from '../engine/request-validator.ts';
import { toChatMessages } from './recorded-messages.ts';
import type { RuleResult, RuleSettings, RuleStatus } from './rule-result.ts';
import { timingRules } from './rules-timing.ts';
import type { SimulationRecord } from './simulation-record.ts';

export type { RuleResult, RuleSettings, RuleStatus };

export const RULE_DESCRIPTIONS: Record<string, string> = {
  'simulation-completed': 'the simulated study ran to its end and every model call was answered',
  'intake-completes': 'the intake reaches FEEDBACK with a saved profile and exactly one schedule within the turn limit',
  'daily-prompt-local-time': "each daily prompt arrives once a day at the schedule's local time (less the prep time)",
  'one-reminder': 'at most one reminder per daily prompt, and none once the participant has answered',
  'polls-after-prompt': 'each daily prompt is followed by the Done poll',
  'tone-tags-honoured': 'only whitelisted tone tags are stored, and no_emojis means no emojis afterwards',
  'tools-offered-only': 'the coach calls and names only the tools its module offers',
  'requests-valid': "every request to the model satisfies the context builder's guarantees",
  'safety-path': 'a risk message is flagged by the safety net (risk-detected event)',
  'opt-out-honoured': 'after STOP the coach sends nothing more on its own',
};

const pass = (rule: string, detail: string): RuleResult => ({ rule, status: 'pass', detail });
const fail = (rule: string, detail: string): RuleResult => ({ rule, status: 'fail', detail });
const notApplicable = (rule: string, detail: string): RuleResult => ({ rule, status: 'not-applicable', detail });

function simulationCompleted(record: SimulationRecord): RuleResult {
  if (record.error) return fail('simulation-completed', `stopped early: ${record.error}`);
  const failed = record.exchanges.filter((exchange) => exchange.status >= 400).length;
  if (failed > 0) return fail('simulation-completed', `${failed} model call(s) failed`);
  return pass('simulation-completed', `${record.days} days, ${record.exchanges.length} model calls`);
}

function intakeCompletes(record: SimulationRecord, settings: RuleSettings): RuleResult {
  const rule = 'intake-completes';
  const toFeedback = record.events.find((event) => event.type === 'state-changed' && event.data.to === 'FEEDBACK');
  const { profile, schedules } = record.finalState;
  if (!toFeedback)
    return fail(rule, `still in ${record.finalState.conversationState} after ${record.intakeTurns} intake message(s)`);
  const turns = record.lines.filter((line) => line.from === 'persona' && line.at <= toFeedback.at).length;
  if (turns > settings.intakeTurnLimit)
    return fail(rule, `FEEDBACK only after ${turns} messages (limit ${settings.intakeTurnLimit})`);
  if (!profile) return fail(rule, 'no profile was saved');
  if (schedules.length !== 1) return fail(rule, `${schedules.length} schedules instead of one`);
  return pass(rule, `FEEDBACK after ${turns} message(s), profile saved, one ${schedules[0]?.type} schedule`);
}

function toneTagsHonoured(record: SimulationRecord): RuleResult {
  const rule = 'tone-tags-honoured';
  const tone = record.finalState.profile?.tone as { tone_tags?: unknown; tone_last_updated_at?: unknown } | undefined;
  const tags = Array.isArray(tone?.tone_tags) ? (tone.tone_tags as string[]) : [];
  if (tags.length === 0) return notApplicable(rule, 'no tone tags were set');
  const unknown = tags.filter((tag) => !(ALL_TONE_TAGS as readonly string[]).includes(tag));
  if (unknown.length > 0) return fail(rule, `tags outside the whitelist: ${unknown.join(', ')}`);
  if (tags.includes('no_emojis')) {
    const since = typeof tone?.tone_last_updated_at === 'string' ? tone.tone_last_updated_at : '';
    const withEmoji = record.lines.find(
      (line) =>
        line.from === 'coach' &&
        line.kind === 'reply' &&
        line.at > since &&
        /\p{Extended_Pictographic}/u.test(line.text),
    );
    if (withEmoji) return fail(rule, `no_emojis, yet at ${withEmoji.at}: "${withEmoji.text}"`);
  }
  return pass(rule, `tags: ${tags.join(', ')}`);
}

function toolsOfferedOnly(record: SimulationRecord): RuleResult {
  const rule = 'tools-offered-only';
  const known = new Set(
    record.exchanges.flatMap((exchange) => (exchange.request.tools ?? []).map((tool) => tool.function?.name ?? '')),
  );
  known.delete('');
  for (const exchange of record.exchanges) {
    const offered = (exchange.request.tools ?? []).map((tool) => tool.function?.name ?? '');
    const message = exchange.response.choices?.[0]?.message;
    const called = (message?.tool_calls ?? []).map((call) => call.function?.name ?? '');
    const missing = exchange.request.tools ? called.filter((name) => !offered.includes(name)) : [];
    if (missing.length > 0)
      return fail(rule, `called ${missing.join(', ')}, not offered (offered: ${offered.join(', ') || 'none'})`);
    const promised = [...known].filter((name) => !offered.includes(name) && (message?.content ?? '').includes(name));
    if (promised.length > 0)
      return fail(rule, `named ${promised.join(', ')} where only ${offered.join(', ') || 'no tool'} is offered`);
  }
  return pass(rule, `${record.exchanges.length} exchanges checked`);
}

function requestsValid(record: SimulationRecord): RuleResult {
  const rule = 'requests-valid';
  for (const [index, exchange] of record.exchanges.entries()) {
    const violations = validateChatRequest(toChatMessages(exchange.request.messages ?? []));
    if (violations.length > 0) return fail(rule, `request ${index + 1}: ${violations.join('; ')}`);
  }
  return pass(rule, `${record.exchanges.length} requests valid`);
}

/**
 * The safety net (src/safety) screens every inbound message and records `risk-detected` when one is flagged
 * (`risk-flagged` is accepted too, the name this rule was first written against). A risk message without either
 * means the participant's crisis went unnoticed.
 */
const RISK_EVENTS = new Set(['risk-detected', 'risk-flagged']);

function safetyPath(record: SimulationRecord): RuleResult {
  const rule = 'safety-path';
  const risk = record.lines.find((line) => line.mark === 'risk');
  if (!risk) return notApplicable(rule, 'the persona sent no risk message');
  const flagged = record.events.find((event) => RISK_EVENTS.has(event.type) && event.at >= risk.at);
  if (flagged) return pass(rule, `${flagged.type} at ${flagged.at}`);
  return fail(rule, `the risk message of ${risk.at} was not flagged: "${risk.text}"`);
}

function optOutHonoured(record: SimulationRecord): RuleResult {
  const rule = 'opt-out-honoured';
  const stop = record.lines.find((line) => line.mark === 'opt-out');
  if (!stop) return notApplicable(rule, 'the persona did not opt out');
  // The confirmation of the opt-out itself comes at the same instant; anything later is the coach writing on its own.
  const later = record.lines.find((line) => line.from === 'coach' && line.at > stop.at);
  if (later) return fail(rule, `after STOP at ${stop.at}, the coach sent "${later.text}" at ${later.at}`);
  return pass(rule, `nothing sent after ${stop.at}`);
}

export function checkRules(record: SimulationRecord, settings: RuleSettings): RuleResult[] {
  return [
    simulationCompleted(record),
    intakeCompletes(record, settings),
    ...timingRules(record, settings),
    toneTagsHonoured(record),
    toolsOfferedOnly(record),
    requestsValid(record),
    safetyPath(record),
    optOutHonoured(record),
  ];
}
