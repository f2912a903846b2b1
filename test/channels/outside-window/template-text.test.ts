/**
 * What a message outside the 24-hour window becomes as one template (template-text.ts): its one-line variable, the
 * template chosen by kind and language, and whether a prompt with its polls fits.
 */
import { describe, expect, it } from 'vitest';
import type { OutboundMessage } from '../../../src/channels/channel.ts';
import {
  fitsOneTemplate,
  planTemplate,
  TEMPLATE_PARAMETER_LIMIT,
  templateParameterText,
} from '../../../src/channels/outside-window/template-text.ts';
import type { TemplateCatalogue } from '../../../src/domain/message-templates.ts';
import { createBuiltInMessageCatalogue } from '../../../src/i18n/built-in-catalogues.ts';
import { badParameterText } from '../../support/fake-whatsapp-cloud-shapes.ts';

const messages = createBuiltInMessageCatalogue();
const CATALOGUE: TemplateCatalogue<string> = {
  text: { '*': 'text-any', es: 'text-es', pt: 'text-pt' },
  done_poll: { '*': 'done-buttons' },
  intensity_poll: { en: 'intensity-buttons' },
};

function message(overrides: Partial<OutboundMessage>): OutboundMessage {
  return { id: 'out_1', participantId: 'p_1', to: '+15551230001', kind: 'text', text: 'Walk now', ...overrides };
}

function poll(question: string, options: string[], firstNumber?: number): OutboundMessage {
  return message({
    id: `poll_${question.length}`,
    kind: 'poll',
    text: question,
    poll: { id: `poll_${question.length}`, question, options, ...(firstNumber ? { firstNumber } : {}) },
  });
}

describe('template parameter text', () => {
  it('is one line WhatsApp accepts: no newline, no tab, never more than four spaces (132018)', () => {
    const text = templateParameterText('Line one\n\nline\ttwo      and\r\nthree  ');
    expect(text).toBe('Line one line two and three');
    expect(badParameterText(text)).toBe(false);
    expect(templateParameterText(' \n ')).toBe('…');
  });
});

describe('planning a template', () => {
  it('keeps a lone poll of PromptPipe with all its options as quick-reply buttons, with the text before it', () => {
    const plan = planTemplate(
      message({ followUps: [poll('Did you do it?', ['Done', 'Next time'])] }),
      CATALOGUE,
      messages,
    );
    expect(plan).toMatchObject({ kind: 'done_poll', template: 'done-buttons', text: 'Walk now. Did you do it?' });
    expect(plan?.buttonsFor?.options).toEqual(['Done', 'Next time']);
  });

  it('numbers the options in the text template when no button template fits the poll', () => {
    // The intensity poll without "decrease" (lowest intensity): its three-button template does not fit.
    const low = planTemplate(poll("How's the intensity?", ['Keep current', 'Increase']), CATALOGUE, messages);
    expect(low).toMatchObject({
      kind: 'text',
      template: 'text-any',
      text: "How's the intensity? Reply 1 for Keep current, 2 for Increase",
    });
    // Two polls: one template, numbered on.
    const both = planTemplate(
      message({
        followUps: [
          poll('Did you do it?', ['Done', 'Next time']),
          poll("How's the intensity?", ['Decrease', 'Keep current', 'Increase'], 3),
        ],
      }),
      CATALOGUE,
      messages,
    );
    expect(both?.text).toBe(
      "Walk now. Did you do it? Reply 1 for Done, 2 for Next time. How's the intensity? Reply 3 for Decrease, 4 for Keep current, 5 for Increase",
    );
  });

  it('chooses by language: the exact tag, its primary language, then any; none without a text template', () => {
    expect(planTemplate(message({ language: 'es' }), CATALOGUE, messages)?.template).toBe('text-es');
    expect(planTemplate(message({ language: 'pt-BR' }), CATALOGUE, messages)?.template).toBe('text-pt');
    expect(planTemplate(message({ language: 'fr' }), CATALOGUE, messages)?.template).toBe('text-any');
    expect(planTemplate(message({}), { done_poll: { '*': 'x' } }, messages)).toBeUndefined();
  });

  it('says when a prompt and its polls no longer fit one template, and cuts a lone long text', () => {
    const long = 'a'.repeat(TEMPLATE_PARAMETER_LIMIT);
    expect(fitsOneTemplate(message({ text: long }))).toBe(true);
    expect(fitsOneTemplate(message({ text: long, followUps: [poll('Did you do it?', ['Done', 'Next time'])] }))).toBe(
      false,
    );
    expect(planTemplate(message({ text: `${long}b` }), CATALOGUE, messages)?.text).toHaveLength(
      TEMPLATE_PARAMETER_LIMIT,
    );
  });
});
