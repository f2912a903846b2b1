import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { readData } from '../../src/domain/participant-data.ts';
import { appendToHistory, readDataWithHistory } from '../../src/engine/conversation-history.ts';
import { UNREGISTER_NOTICE } from '../../src/participants/participant-service.ts';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';
import { GREETING_TEXT } from '../support/fake-conversation-flow.ts';

const PATH = '/conversation/participants';

let harness: ApiHarness;
beforeEach(async () => {
  harness = await createApiHarness();
});
afterEach(async () => {
  await harness.close();
});

describe('POST /conversation/participants', () => {
  it('enrolls, canonicalises the phone, stores the background, and greets', async () => {
    const response = await harness.call('POST', PATH, {
      phone_number: '(555) 123-0001',
      name: 'Alice Smith',
      gender: 'female',
      background: 'College student',
      timezone: 'America/New_York',
    });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body.status).toBe('ok');
    expect(body.message).toBe('Conversation participant enrolled successfully');
    expect(body.result).toEqual({
      id: expect.stringMatching(/^conv_/),
      phone_number: '+15551230001',
      name: 'Alice Smith',
      gender: 'female',
      ethnicity: '',
      background: 'College student',
      timezone: 'America/New_York',
      language: 'en',
      channel: 'webhook',
      status: 'active',
      enrolled_at: '2026-03-02T14:00:00.000Z',
      created_at: '2026-03-02T14:00:00.000Z',
      updated_at: '2026-03-02T14:00:00.000Z',
    });
    const id = body.result.id as string;
    const flowState = await harness.store.flowStates.get(id);
    expect(flowState?.currentState).toBe('CONVERSATION_ACTIVE');
    expect(flowState?.stateData[DataKey.participantBackground]).toBe(
      'Name: Alice Smith\nGender: female\nBackground: College student',
    );
    expect(harness.flow.greeted).toEqual([id]);
    const events = await harness.store.events.list({ participantId: id, type: 'participant-enrolled' });
    expect(events).toHaveLength(1);
    const history = (await harness.call('GET', `${PATH}/${id}/history`)).json();
    expect(history.result.map((entry: { content: string }) => entry.content)).toEqual([GREETING_TEXT]);
  });

  it('stores no background line for absent fields, and the canonical case of a time zone', async () => {
    const response = await harness.call('POST', PATH, { phone_number: '+44 20 7946 0958', timezone: 'europe/london' });
    expect(response.statusCode).toBe(201);
    expect(response.json().result.phone_number).toBe('+442079460958');
    expect(response.json().result.timezone).toBe('Europe/London');
    const data = await readData(harness.store, response.json().result.id);
    expect(data[DataKey.participantBackground]).toBeUndefined();
  });

  it('still enrolls (201) when the greeting fails', async () => {
    harness.flow.failGreeting = true;
    const response = await harness.call('POST', PATH, { phone_number: '+15551230001' });
    expect(response.statusCode).toBe(201);
    expect((await harness.call('GET', PATH)).json().result).toHaveLength(1);
  });

  it('answers 409 when the phone number is already enrolled, whatever its format', async () => {
    expect((await harness.call('POST', PATH, { phone_number: '+1 555 123 0001' })).statusCode).toBe(201);
    const response = await harness.call('POST', PATH, { phone_number: '555-123-0001' });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ status: 'error', message: expect.stringContaining('already enrolled') });
  });

  it.each([
    ['a missing phone_number', { name: 'Bob' }, 'phone_number is required'],
    ['a phone_number that is not a string', { phone_number: 15551230001 }, 'phone_number'],
    ['an invalid phone number', { phone_number: '12' }, 'not a valid phone number'],
    ['letters as a phone number', { phone_number: 'call me maybe' }, 'not a valid phone number'],
    ['an unknown time zone', { phone_number: '+15551230001', timezone: 'Mars/Olympus' }, 'IANA time zone'],
    ['a fixed offset as time zone', { phone_number: '+15551230001', timezone: '+01:00' }, 'IANA time zone'],
    ['a body that is not an object', [1, 2], 'request body'],
  ])('answers 400 for %s', async (_case, body, expected) => {
    const response = await harness.call('POST', PATH, body);
    expect(response.statusCode).toBe(400);
    expect(response.json().status).toBe('error');
    expect(response.json().message).toContain(expected);
    expect(await harness.store.participants.count()).toBe(0);
  });

  it('answers 400, not 500, for malformed JSON and for an empty JSON body', async () => {
    const malformed = await harness.call('POST', PATH, '{"phone_number": ');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toEqual({ status: 'error', message: expect.stringContaining('not valid JSON') });
    const empty = await harness.call('POST', PATH, '');
    expect(empty.statusCode).toBe(400);
    expect(empty.json().status).toBe('error');
  });

  it('answers 413 for a body over the limit', async () => {
    await harness.close();
    harness = await createApiHarness({ bodyLimitBytes: 1024 });
    const response = await harness.call('POST', PATH, { phone_number: '+15551230001', background: 'x'.repeat(2000) });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ status: 'error', message: 'request body is too large' });
  });

  it('answers 415 with an envelope for a non-JSON content type', async () => {
    const response = await harness.call('POST', PATH, 'phone_number=1', { 'content-type': 'text/csv' });
    expect(response.statusCode).toBe(415);
    expect(response.json().status).toBe('error');
  });
});

describe('GET /conversation/participants', () => {
  it('lists participants, optionally by status', async () => {
    const ada = await harness.enroll('+15551230001');
    await harness.enroll('+15551230002', { status: 'paused' });
    const all = (await harness.call('GET', PATH)).json();
    expect(all.status).toBe('ok');
    expect(all.result).toHaveLength(2);
    const active = (await harness.call('GET', `${PATH}?status=active`)).json();
    expect(active.result.map((participant: { id: string }) => participant.id)).toEqual([ada.id]);
  });

  it('answers 400 for an unknown status filter', async () => {
    const response = await harness.call('GET', `${PATH}?status=sleeping`);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain('status: must be one of active, paused, completed, withdrawn');
  });
});

describe('GET /conversation/participants/{id}', () => {
  it('returns one participant', async () => {
    const ada = await harness.enroll();
    const response = await harness.call('GET', `${PATH}/${ada.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json().result).toMatchObject({ id: ada.id, phone_number: '+15551230001', status: 'active' });
  });

  it('answers 404 for an unknown id', async () => {
    const response = await harness.call('GET', `${PATH}/conv_nobody`);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ status: 'error', message: 'participant conv_nobody not found' });
  });
});

describe('PUT /conversation/participants/{id}', () => {
  it('updates only the given fields and refreshes the background the model sees', async () => {
    const ada = await harness.enroll();
    harness.clock.advance(60_000);
    const response = await harness.call('PUT', `${PATH}/${ada.id}`, { background: 'Runner', timezone: 'Europe/Paris' });
    expect(response.statusCode).toBe(200);
    expect(response.json().result).toMatchObject({
      name: 'Ada',
      background: 'Runner',
      timezone: 'Europe/Paris',
      status: 'active',
      updated_at: '2026-03-02T14:01:00.000Z',
    });
    const data = await readData(harness.store, ada.id);
    expect(data[DataKey.participantBackground]).toBe('Name: Ada\nBackground: Runner');
  });

  it('cancels pending jobs when the participant leaves active', async () => {
    const ada = await harness.enroll();
    await harness.store.jobs.enqueue(
      {
        id: 'job_reminder',
        kind: 'daily_prompt',
        participantId: ada.id,
        runAt: new Date('2026-03-03T09:00:00Z'),
        payload: {},
      },
      harness.clock.now(),
    );
    const response = await harness.call('PUT', `${PATH}/${ada.id}`, { status: 'paused' });
    expect(response.statusCode).toBe(200);
    expect(response.json().result.status).toBe('paused');
    expect((await harness.store.jobs.get('job_reminder'))?.status).toBe('cancelled');
    const [event] = await harness.store.events.list({ participantId: ada.id, type: 'participant-updated' });
    expect(event?.data).toMatchObject({ status_from: 'active', status_to: 'paused', cancelled_jobs: 1 });
  });

  it.each([
    ['an unknown status value', { status: 'sleeping' }, 'status: must be one of active, paused, completed, withdrawn'],
    ['an invalid time zone', { timezone: 'Nowhere/Land' }, 'IANA time zone'],
    ['nothing to update', {}, 'nothing to update'],
    ['a wrongly typed field', { name: 42 }, 'name'],
  ])('answers 400 for %s', async (_case, body, expected) => {
    const ada = await harness.enroll();
    const response = await harness.call('PUT', `${PATH}/${ada.id}`, body);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain(expected);
  });

  it('answers 404 for an unknown id', async () => {
    expect((await harness.call('PUT', `${PATH}/conv_nobody`, { name: 'X' })).statusCode).toBe(404);
  });
});

describe('DELETE /conversation/participants/{id}', () => {
  it('sends the notice, cancels jobs, clears the state, removes the participant and keeps the transcript', async () => {
    const ada = await harness.enroll();
    await harness.participants.sendOrganiserMessage(ada.id, 'Welcome to the study');
    await harness.store.jobs.enqueue(
      {
        id: 'job_prompt',
        kind: 'daily_prompt',
        participantId: ada.id,
        runAt: new Date('2026-03-03T09:00:00Z'),
        payload: {},
      },
      harness.clock.now(),
    );
    const response = await harness.call('DELETE', `${PATH}/${ada.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: 'ok',
      message: 'Participant unregistered; transcript kept',
      result: { id: ada.id, purged_transcript_entries: 0 },
    });
    expect(await harness.store.participants.get(ada.id)).toBeUndefined();
    expect(await harness.store.flowStates.get(ada.id)).toBeUndefined();
    expect((await harness.store.jobs.get('job_prompt'))?.status).toBe('cancelled');
    // The notice's delivery job was enqueued after the cancellation: it is the only pending job left.
    const pending = await harness.store.jobs.listPending({ participantId: ada.id });
    expect(pending.map((job) => [job.kind, (job.payload['message'] as { text: string }).text])).toEqual([
      ['deliver_message', UNREGISTER_NOTICE],
    ]);
    const history = (await harness.call('GET', `${PATH}/${ada.id}/history`)).json();
    expect(history.result.map((entry: { content: string }) => entry.content)).toEqual([
      'Welcome to the study',
      UNREGISTER_NOTICE,
    ]);
    expect((await harness.call('GET', `${PATH}/${ada.id}`)).statusCode).toBe(404);
  });

  it('purges the transcript with ?purge=true', async () => {
    const ada = await harness.enroll();
    await harness.participants.sendOrganiserMessage(ada.id, 'Hello');
    const response = await harness.call('DELETE', `${PATH}/${ada.id}?purge=true`);
    expect(response.statusCode).toBe(200);
    expect(response.json().result).toEqual({ id: ada.id, purged_transcript_entries: 2 });
    expect(await harness.store.transcript.list(ada.id)).toEqual([]);
    expect((await harness.call('GET', `${PATH}/${ada.id}/history`)).statusCode).toBe(404);
  });

  it('answers 400 for a purge value that is not a boolean, and 404 for an unknown id', async () => {
    const ada = await harness.enroll();
    expect((await harness.call('DELETE', `${PATH}/${ada.id}?purge=maybe`)).statusCode).toBe(400);
    expect((await harness.call('DELETE', `${PATH}/conv_nobody`)).statusCode).toBe(404);
  });
});

describe('GET /conversation/participants/{id}/history', () => {
  it('returns the transcript oldest first, with tool calls in the OpenAI shape, paged by limit and before', async () => {
    const ada = await harness.enroll();
    const at = harness.clock.now();
    await harness.store.transcript.append([
      { participantId: ada.id, role: 'user', kind: 'message', content: 'hi', createdAt: at },
      {
        participantId: ada.id,
        role: 'assistant',
        kind: 'tool_call',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'save_user_profile', arguments: '{"habit_domain":"walking"}' }],
        module: 'INTAKE',
        createdAt: at,
      },
      {
        participantId: ada.id,
        role: 'tool',
        kind: 'tool_result',
        content: '{"status":"success"}',
        toolCallId: 'call_1',
        toolName: 'save_user_profile',
        module: 'INTAKE',
        createdAt: at,
      },
      { participantId: ada.id, role: 'assistant', kind: 'reply', content: 'Great!', module: 'INTAKE', createdAt: at },
    ]);
    const all = (await harness.call('GET', `${PATH}/${ada.id}/history`)).json().result;
    expect(all).toHaveLength(4);
    expect(all[0]).toEqual({
      id: all[0].id,
      role: 'user',
      kind: 'message',
      content: 'hi',
      created_at: at.toISOString(),
    });
    expect(all[1].tool_calls).toEqual([
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'save_user_profile', arguments: '{"habit_domain":"walking"}' },
      },
    ]);
    expect(all[2]).toMatchObject({ role: 'tool', tool_call_id: 'call_1', module: 'INTAKE' });

    const newestTwo = (await harness.call('GET', `${PATH}/${ada.id}/history?limit=2`)).json().result;
    expect(newestTwo.map((entry: { content: string }) => entry.content)).toEqual(['{"status":"success"}', 'Great!']);
    const before = (await harness.call('GET', `${PATH}/${ada.id}/history?limit=2&before=${newestTwo[0].id}`)).json();
    expect(before.result.map((entry: { content: string }) => entry.content)).toEqual(['hi', '']);
  });

  it('answers 400 for a bad limit and 404 for an unknown id', async () => {
    const ada = await harness.enroll();
    const badLimit = await harness.call('GET', `${PATH}/${ada.id}/history?limit=zero`);
    expect(badLimit.statusCode).toBe(400);
    expect(badLimit.json().message).toContain('limit');
    expect((await harness.call('GET', `${PATH}/${ada.id}/history?limit=0`)).statusCode).toBe(400);
    expect((await harness.call('GET', `${PATH}/conv_nobody/history`)).statusCode).toBe(404);
  });
});

describe('GET /conversation/participants/{id}/state', () => {
  it('returns state, profile, schedules, pending jobs and data', async () => {
    const ada = await harness.enroll();
    const schedule = {
      id: 'sched_1',
      type: 'fixed',
      fixed_time: '09:00',
      timezone: 'America/New_York',
      created_at: '2026-03-02T14:00:00.000Z',
      timer_id: 'job_1',
    };
    const { writeData } = await import('../../src/domain/participant-data.ts');
    const hello = { role: 'user' as const, content: 'Hello', timestamp: harness.clock.now().toISOString() };
    await appendToHistory(harness.store, ada.id, [hello]);
    await writeData(
      harness.store,
      ada.id,
      {
        [DataKey.scheduleRegistry]: JSON.stringify([schedule]),
        [DataKey.userProfile]: JSON.stringify({ habit_domain: 'walking', success_count: 2 }),
      },
      harness.clock.now(),
    );
    await harness.store.jobs.enqueue(
      {
        id: 'job_1',
        kind: 'daily_prompt',
        participantId: ada.id,
        runAt: new Date('2026-03-03T13:50:00Z'),
        payload: {},
        dedupKey: `daily_prompt:${ada.id}`,
      },
      harness.clock.now(),
    );
    const response = await harness.call('GET', `${PATH}/${ada.id}/state`);
    expect(response.statusCode).toBe(200);
    const state = response.json().result;
    expect(state.current_state).toBe('CONVERSATION_ACTIVE');
    expect(state.conversation_state).toBe('INTAKE');
    expect(state.profile).toMatchObject({ habit_domain: 'walking', success_count: 2, intensity: 'normal' });
    expect(state.schedules).toEqual([schedule]);
    expect(state.pending_jobs).toEqual([
      {
        id: 'job_1',
        kind: 'daily_prompt',
        run_at: '2026-03-03T13:50:00.000Z',
        dedup_key: `daily_prompt:${ada.id}`,
        status: 'pending',
      },
    ]);
    expect(state.data[DataKey.participantBackground]).toBe('Name: Ada');
    expect(state.data[DataKey.scheduleRegistry]).toBe(JSON.stringify([schedule]));
    // The working history, stored one row per message, is shown under its contract key, first.
    expect(state.data[DataKey.conversationHistory]).toBe(JSON.stringify({ messages: [hello] }));
    expect(Object.keys(state.data)[0]).toBe(DataKey.conversationHistory);
  });

  it('has a null profile and no schedules before intake', async () => {
    const ada = await harness.enroll();
    const state = (await harness.call('GET', `${PATH}/${ada.id}/state`)).json().result;
    expect(state.profile).toBeNull();
    expect(state.schedules).toEqual([]);
    expect(state.pending_jobs).toEqual([]);
  });

  it('answers 404 for an unknown id', async () => {
    expect((await harness.call('GET', `${PATH}/conv_nobody/state`)).statusCode).toBe(404);
  });
});

describe('POST /conversation/participants/{id}/transition', () => {
  it('overrides the sub-state, records it as an event and cancels a pending delayed transition', async () => {
    const ada = await harness.enroll();
    await harness.store.jobs.enqueue(
      {
        id: 'job_delayed',
        kind: 'state_transition',
        participantId: ada.id,
        runAt: new Date('2026-03-02T15:00:00Z'),
        payload: { target: 'INTAKE' },
        dedupKey: `state_transition:${ada.id}`,
      },
      harness.clock.now(),
    );
    const response = await harness.call('POST', `${PATH}/${ada.id}/transition`, {
      target_state: 'FEEDBACK',
      reason: 'organiser override',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().result).toEqual({ participant_id: ada.id, from: 'INTAKE', to: 'FEEDBACK', changed: true });
    expect((await readData(harness.store, ada.id))[DataKey.conversationState]).toBe('FEEDBACK');
    expect((await harness.store.jobs.get('job_delayed'))?.status).toBe('cancelled');
    const [event] = await harness.store.events.list({ participantId: ada.id, type: 'state-changed' });
    expect(event?.data).toMatchObject({
      from: 'INTAKE',
      to: 'FEEDBACK',
      source: 'admin',
      reason: 'organiser override',
    });
  });

  it.each([
    ['an unknown target', { target_state: 'COORDINATOR' }, 'target_state: must be INTAKE or FEEDBACK'],
    ['a missing target', {}, 'target_state is required'],
  ])('answers 400 for %s', async (_case, body, expected) => {
    const ada = await harness.enroll();
    const response = await harness.call('POST', `${PATH}/${ada.id}/transition`, body);
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toContain(expected);
  });

  it('answers 404 for an unknown id', async () => {
    const response = await harness.call('POST', `${PATH}/conv_nobody/transition`, { target_state: 'INTAKE' });
    expect(response.statusCode).toBe(404);
  });
});

describe('POST /conversation/participants/{id}/messages', () => {
  it('queues the organiser message, records it in the transcript and the working history', async () => {
    const ada = await harness.enroll();
    const response = await harness.call('POST', `${PATH}/${ada.id}/messages`, { text: 'The study ends on Friday.' });
    expect(response.statusCode).toBe(202);
    expect(response.json().result).toEqual({
      id: expect.stringMatching(/^out_/),
      participant_id: ada.id,
      kind: 'organiser',
      text: 'The study ends on Friday.',
    });
    const [entry] = await harness.store.transcript.list(ada.id);
    expect(entry).toMatchObject({ role: 'assistant', kind: 'organiser', content: 'The study ends on Friday.' });
    const [job] = await harness.store.jobs.listPending({ participantId: ada.id, kind: 'deliver_message' });
    expect(job?.payload['message']).toMatchObject({
      to: '+15551230001',
      kind: 'text',
      text: 'The study ends on Friday.',
    });
    expect((await readDataWithHistory(harness.store, ada.id))[DataKey.conversationHistory]).toContain(
      'The study ends on Friday.',
    );
  });

  it('answers 400 for missing or blank text and 404 for an unknown id', async () => {
    const ada = await harness.enroll();
    expect((await harness.call('POST', `${PATH}/${ada.id}/messages`, {})).json().message).toContain('text is required');
    expect((await harness.call('POST', `${PATH}/${ada.id}/messages`, { text: '   ' })).statusCode).toBe(400);
    expect((await harness.call('POST', `${PATH}/conv_nobody/messages`, { text: 'hi' })).statusCode).toBe(404);
  });
});

describe('returning to active', () => {
  it('re-arms the daily schedule that pausing cancelled', async () => {
    const ada = await harness.enroll();
    const { createSchedulerTool } = await import('../../src/tools/scheduler-tool.ts');
    const scheduler = createSchedulerTool({
      store: harness.store,
      clock: harness.clock,
      newId: (prefix) => `${prefix}_scheduled`,
      config: { prepTimeMinutes: 10 },
    });
    const created = await scheduler.execute(
      { action: 'create', type: 'fixed', fixed_time: '09:00', timezone: 'America/New_York' },
      { participantId: ada.id, module: 'INTAKE', sourceMessageId: undefined },
    );
    expect(created.status).toBe('success');
    const pendingPrompt = async () =>
      (await harness.store.jobs.listPending({ participantId: ada.id, kind: 'daily_prompt' })).map((job) =>
        job.runAt.toISOString(),
      );
    expect(await pendingPrompt()).toEqual(['2026-03-03T13:50:00.000Z']);

    await harness.call('PUT', `${PATH}/${ada.id}`, { status: 'paused' });
    expect(await pendingPrompt()).toEqual([]);
    harness.clock.set(new Date('2026-03-04T20:00:00Z'));
    const resumed = await harness.call('PUT', `${PATH}/${ada.id}`, { status: 'active' });
    expect(resumed.statusCode).toBe(200);
    expect(await pendingPrompt()).toEqual(['2026-03-05T13:50:00.000Z']);
  });
});
