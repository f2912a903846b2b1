import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportTables } from '../../src/research/export/export-tables.ts';
import { exportToDirectory } from '../../src/research/export/export-to-directory.ts';
import { createPseudonymizer } from '../../src/research/export/pseudonymizer.ts';
import { ADA_PHONE, generateStudy, PROMPT_TEXT, type Study } from './study-fixture.ts';

let study: Study;
let directory: string;

beforeAll(async () => {
  study = await generateStudy();
  directory = mkdtempSync(join(tmpdir(), 'promptpipe-export-'));
}, 60_000);
afterAll(async () => {
  await study?.close();
  rmSync(directory, { recursive: true, force: true });
});

function readCsv(dir: string, table: string): Record<string, string>[] {
  return parse(readFileSync(join(dir, `${table}.csv`)), { columns: true }) as Record<string, string>[];
}

describe('export of a generated three-day study', () => {
  it('writes every table and the codebook, with every documented column', async () => {
    const out = join(directory, 'csv');
    const result = await exportToDirectory({
      directory: out,
      format: 'csv',
      context: {
        store: study.app.store,
        filter: { participantIds: [], since: undefined },
        pseudonymizer: undefined,
        defaultChannel: 'webhook',
      },
      version: 'test',
      exportedAt: new Date('2026-03-06T00:00:00Z'),
    });
    expect(readdirSync(out).sort()).toEqual(
      [
        'allocations.csv',
        'audit.csv',
        'codebook.md',
        'daily_outcomes.csv',
        'decisions.csv',
        'events.csv',
        'jobs.csv',
        'messages.csv',
        'participants.csv',
        'ratings.csv',
      ].sort(),
    );
    expect(result.files.map((file) => file.file)).toContain('codebook.md');
    const codebook = readFileSync(join(out, 'codebook.md'), 'utf8');
    for (const table of exportTables) {
      const header = (parse(readFileSync(join(out, `${table.name}.csv`)), { to_line: 1 }) as string[][])[0];
      expect(header).toEqual(table.columns.map((column) => column.name));
      for (const column of table.columns) expect(codebook).toContain(`| ${column.name} | ${column.type} |`);
    }
    expect(codebook).toContain('not pseudonymized');
  });

  it('participants: enrolment fields, status, channel, times, profile and tone', async () => {
    const out = join(directory, 'csv');
    const rows = readCsv(out, 'participants');
    expect(rows).toHaveLength(2);
    const ada = rows.find((row) => row['participant_id'] === study.adaId);
    expect(ada).toMatchObject({
      phone_number: ADA_PHONE,
      name: 'Ada',
      gender: '',
      ethnicity: '',
      background: '',
      timezone: 'America/New_York',
      channel: 'webhook',
      status: 'active',
      conversation_state: 'FEEDBACK',
      enrolled_at: '2026-03-02T14:00:00.000Z',
      created_at: '2026-03-02T14:00:00.000Z',
      habit_domain: 'walking',
      motivational_frame: 'more energy',
      preferred_time: '09:00',
      prompt_anchor: 'after breakfast',
      additional_info: '',
      last_barrier: 'rain',
      last_tweak: 'walk indoors',
      success_count: '1',
      total_prompts: '3',
    });
    expect(ada?.['intensity']).toMatch(/^(low|normal|high)$/);
    expect(ada?.['updated_at']).toMatch(/^2026-03-0\dT/);
    expect(ada).toHaveProperty('tone_tags');
    expect(ada).toHaveProperty('last_successful_prompt');
    expect(ada).toHaveProperty('last_motivator');
    const ben = rows.find((row) => row['participant_id'] === study.benId);
    expect(ben).toMatchObject({ timezone: 'Europe/London', conversation_state: 'INTAKE', total_prompts: '0' });
  });

  it('messages: the transcript with tool calls, polls with answers and provenance', async () => {
    const rows = readCsv(join(directory, 'csv'), 'messages');
    const ids = rows.map((row) => Number(row['message_id']));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const toolCall = rows.find((row) => row['kind'] === 'tool_call' && row['tool_names'] === 'save_user_profile');
    expect(toolCall).toBeDefined();
    expect(JSON.parse(toolCall?.['tool_calls'] ?? '[]')[0]).toMatchObject({ name: 'save_user_profile' });
    expect(toolCall?.['llm_call_id']).toMatch(/^\d+$/);
    expect(toolCall?.['module']).toBe('INTAKE');
    const toolResult = rows.find((row) => row['kind'] === 'tool_result');
    expect(toolResult?.['tool_call_id']).not.toBe('');
    expect(toolResult?.['tool_name']).toBe('save_user_profile');
    const reply = rows.find((row) => row['kind'] === 'reply' && row['content']?.startsWith('All set'));
    expect(reply).toMatchObject({
      role: 'assistant',
      module: 'INTAKE',
      provider_host: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      temperature: '0.1',
      prompt_file: 'intake.txt',
      prompt_version: expect.stringMatching(/^[0-9a-f]{12}$/),
      llm_outcome: 'success',
      // The study runs without PROMPTPIPE_WEBHOOK_URL: recorded, never sent, and the export says so.
      delivery_status: 'not_delivered',
      delivery_error: 'PROMPTPIPE_WEBHOOK_URL is not set: the message is only recorded, not sent',
    });
    expect(reply?.['delivery_status_at']).toMatch(/^2026-03-02T/);
    const userMessage = rows.find((row) => row['role'] === 'user');
    expect(userMessage).toMatchObject({ delivery_status: '', delivery_status_at: '', outbound_id: '' });
    // Every message sent to a participant has its outbox delivery.
    for (const row of rows.filter((candidate) => candidate['outbound_id'] !== '')) {
      expect(row['delivery_status'], row['content']).toMatch(/^(not_delivered|queued|sending)$/);
    }
    expect(reply?.['model']).not.toBe('');
    expect(reply?.['source_message_id']).not.toBe('');
    expect(reply?.['outbound_id']).toMatch(/./);
    expect(reply?.['prompt_tokens']).toMatch(/^\d*$/);
    expect(reply?.['completion_tokens']).toMatch(/^\d*$/);
    expect(reply?.['llm_latency_ms']).toMatch(/^\d+$/);
    expect(reply?.['created_at']).toMatch(/^2026-03-02T/);
    const answer = rows.find((row) => row['poll_answer'] === 'Next time');
    expect(answer).toMatchObject({ role: 'user', kind: 'message', poll_question: 'Did you do it?' });
    const poll = rows.find((row) => row['kind'] === 'poll');
    expect(poll?.['content']).toContain('Did you do it?');
    const prompt = rows.find((row) => row['kind'] === 'proactive' && row['content'] === PROMPT_TEXT);
    expect(prompt?.['module']).toBe('scheduler');
  });

  it('events and jobs: types, data, outcomes and lateness', async () => {
    const events = readCsv(join(directory, 'csv'), 'events');
    expect(events.map((row) => row['type'])).toEqual(
      expect.arrayContaining(['participant-enrolled', 'prompt-sent', 'tool-called', 'poll-answered']),
    );
    const enrolled = events.find((row) => row['type'] === 'participant-enrolled');
    expect(JSON.parse(enrolled?.['data'] ?? '{}')).toMatchObject({ source: 'api' });
    expect(enrolled?.['created_at']).toBe('2026-03-02T14:00:00.000Z');
    expect(events.some((row) => row['source_message_id'] !== '')).toBe(true);
    expect(events.every((row) => /^\d+$/.test(row['event_id'] ?? ''))).toBe(true);

    const jobs = readCsv(join(directory, 'csv'), 'jobs');
    const prompt = jobs.find((row) => row['kind'] === 'daily_prompt' && row['status'] === 'completed');
    expect(prompt).toMatchObject({ outcome: 'completed', attempts: '1', last_error: '', participant_id: study.adaId });
    expect(Number(prompt?.['lateness_ms'])).toBeGreaterThanOrEqual(0);
    expect(prompt?.['dedup_key']).not.toBe('');
    expect(JSON.parse(prompt?.['payload'] ?? '{}')).toHaveProperty('local_date');
    const pending = jobs.find((row) => row['status'] === 'pending');
    expect(pending?.['lateness_ms']).toBe('');
    expect(pending?.['outcome']).toBe('pending');
    for (const row of jobs) {
      expect(row['run_at']).toMatch(/^2026-/);
      expect(row['created_at']).toMatch(/^2026-/);
      expect(row['updated_at']).toMatch(/^2026-/);
      expect(Number(row['max_attempts'])).toBeGreaterThan(0);
    }
  });

  it('daily_outcomes: one row per study day with outcome, latency, reminder, intensity and feedback', async () => {
    const rows = readCsv(join(directory, 'csv'), 'daily_outcomes');
    expect(rows.map((row) => row['local_date'])).toEqual(['2026-03-03', '2026-03-04', '2026-03-05']);
    const [day1, day2, day3] = rows;
    expect(day1).toMatchObject({
      participant_id: study.adaId,
      timezone: 'America/New_York',
      prompt_text: PROMPT_TEXT,
      outcome: 'Done',
      first_reply_at: '2026-03-03T14:10:00.000Z',
      reminder_sent: 'false',
      reminder_sent_at: '',
      intensity_at_prompt: 'normal',
      intensity_change: 'normal → high',
      feedback_barrier: 'rain',
      feedback_tweak: 'walk indoors',
    });
    const sent1 = new Date(day1?.['prompt_sent_at_utc'] ?? '');
    expect(Number(day1?.['reply_latency_seconds'])).toBe(
      Math.round((Date.parse('2026-03-03T14:10:00Z') - sent1.getTime()) / 1000),
    );
    expect(day1?.['prompt_sent_at_local']).toMatch(/^2026-03-03T0[89]:\d\d:\d\d$/);
    expect(day2).toMatchObject({
      outcome: 'Next time',
      intensity_at_prompt: 'high',
      intensity_change: '',
      feedback_barrier: '',
    });
    expect(day3).toMatchObject({
      outcome: 'no answer',
      first_reply_at: '',
      reply_latency_seconds: '',
      reminder_sent: 'true',
    });
    expect(day3?.['reminder_sent_at']).toMatch(/^2026-03-05T1[89]:/);
  });

  it('jsonl carries the same columns with typed values; filters by participant and since', async () => {
    const out = join(directory, 'jsonl');
    await exportToDirectory({
      directory: out,
      format: 'jsonl',
      context: {
        store: study.app.store,
        filter: { participantIds: [study.benId], since: new Date('2026-03-02T00:00:00Z') },
        pseudonymizer: undefined,
        defaultChannel: 'webhook',
      },
      version: 'test',
      exportedAt: new Date(),
    });
    const lines = readFileSync(join(out, 'participants.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1);
    expect(lines[0].participant_id).toBe(study.benId);
    expect(Object.keys(lines[0])).toEqual(exportTables[0]?.columns.map((column) => column.name));
    expect(lines[0].success_count).toBe(0);
    const messages = readFileSync(join(out, 'messages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(messages.every((row) => row.participant_id === study.benId)).toBe(true);
    expect(messages.length).toBeGreaterThan(0);
    const later = join(directory, 'later');
    await exportToDirectory({
      directory: later,
      format: 'jsonl',
      context: {
        store: study.app.store,
        filter: { participantIds: [], since: new Date('2026-03-05T00:00:00Z') },
        pseudonymizer: undefined,
        defaultChannel: 'webhook',
      },
      version: 'test',
      exportedAt: new Date(),
    });
    const lateMessages = readFileSync(join(later, 'messages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lateMessages.every((row) => row.created_at >= '2026-03-05')).toBe(true);
  });

  it('pseudonymizes: phone numbers hashed with the key, names dropped, free text kept', async () => {
    const out = join(directory, 'pseudo');
    const pseudonymizer = createPseudonymizer('secret-key');
    await exportToDirectory({
      directory: out,
      format: 'csv',
      context: {
        store: study.app.store,
        filter: { participantIds: [], since: undefined },
        pseudonymizer,
        defaultChannel: 'webhook',
      },
      version: 'test',
      exportedAt: new Date(),
    });
    const participants = readCsv(out, 'participants');
    const ada = participants.find((row) => row['participant_id'] === study.adaId);
    expect(ada?.['phone_number']).toMatch(/^pn_[0-9a-f]{16}$/);
    expect(ada?.['phone_number']).toBe(createPseudonymizer('secret-key').phone(ADA_PHONE));
    expect(ada?.['phone_number']).not.toBe(createPseudonymizer('other-key').phone(ADA_PHONE));
    expect(ada?.['name']).toBe('');
    for (const file of readdirSync(out)) {
      const text = readFileSync(join(out, file), 'utf8');
      expect(text).not.toContain(ADA_PHONE);
      expect(text).not.toContain('"Ada"');
    }
    expect(readCsv(out, 'messages').some((row) => row['content'] === PROMPT_TEXT)).toBe(true);
    expect(readFileSync(join(out, 'codebook.md'), 'utf8')).toContain('**pseudonymized**');
    expect(() => createPseudonymizer(undefined)).toThrow(/EXPORT_PSEUDONYM_KEY/);
  });
});
