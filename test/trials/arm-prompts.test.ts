/**
 * An arm's prompt directory and tone adaptation change what the model is sent, on the real conversation flow, habit
 * prompt generator and save_user_profile tool with a fake model that records every request (SQLite in memory).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConversationState } from '../../src/domain/conversation-state.ts';
import { DataKey } from '../../src/domain/data-keys.ts';
import { sequentialIds } from '../../src/domain/ids.ts';
import { readData, writeProfile } from '../../src/domain/participant-data.ts';
import { parseProfile } from '../../src/domain/profile.ts';
import { createConversationFlow } from '../../src/engine/conversation-flow-service.ts';
import { createHabitPromptGenerator } from '../../src/engine/habit-prompt-generator-service.ts';
import { createFeedbackModule } from '../../src/engine/modules/feedback-module.ts';
import { createIntakeModule } from '../../src/engine/modules/intake-module.ts';
import { createRecordingMessenger } from '../../src/engine/recording-messenger.ts';
import { loadSystemPrompts } from '../../src/engine/system-prompts.ts';
import { createToolRegistry } from '../../src/engine/tool-registry.ts';
import { createFakeLlm } from '../../src/llm/fake-llm.ts';
import type { ChatRequest } from '../../src/llm/llm.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createSaveUserProfileTool } from '../../src/tools/save-user-profile-tool.ts';
import { createArmSettings } from '../../src/trials/arm-settings.ts';
import { parseStudyDesign } from '../../src/trials/study-design-file.ts';
import { createTrialService } from '../../src/trials/trial-service.ts';
import { systemText } from '../support/engine-harness.ts';
import { createTrialParticipantService, phoneFor, TRIAL_START } from './trial-fixture.ts';

let directory = '';
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

const TONE_REQUEST = 'Please keep it short.';

async function createArmPromptRig() {
  directory = await mkdtemp(join(tmpdir(), 'arm-prompts-'));
  await mkdir(join(directory, 'brief', 'es'), { recursive: true });
  await writeFile(join(directory, 'brief', 'intake.txt'), 'BRIEF ARM INTAKE PROMPT.');
  await writeFile(join(directory, 'brief', 'es', 'intake.txt'), 'PROMPT DE INTAKE DEL BRAZO BREVE.');
  await writeFile(join(directory, 'brief', 'prompt-generator.txt'), 'BRIEF ARM GENERATOR PROMPT.');
  const study = parseStudyDesign(
    `study: { id: prompt-trial, seed: "arm-prompt-seed" }
arms:
  - { id: standard, label: Standard }
  - { id: brief, label: Brief, prompt_dir: brief, features: { tone_adaptation: false } }
`,
    'design.yaml',
    directory,
  );
  store = await createSqliteStore({ filename: ':memory:' });
  const clock = createManualClock(TRIAL_START);
  const lock = createInProcessLock();
  const messenger = createRecordingMessenger();
  const newId = sequentialIds();
  // The model asks to save a tone when told to, and otherwise answers plainly.
  const llm = createFakeLlm((request: ChatRequest) => {
    const last = request.messages.at(-1);
    if (last?.role === 'user' && last.content === TONE_REQUEST) {
      return {
        toolCalls: [
          { name: 'save_user_profile', arguments: { tone_tags: ['concise'], tone_update_source: 'explicit' } },
        ],
      };
    }
    return { content: 'Noted.' };
  });
  const arms = createArmSettings({ study, store, clock });
  const prompts = loadSystemPrompts({});
  const generator = createHabitPromptGenerator({
    store,
    llm,
    clock,
    systemPrompt: prompts.promptGenerator,
    log: silentLog,
    promptSettings: arms.promptSettings,
  });
  const flow = createConversationFlow({
    store,
    llm,
    registry: createToolRegistry([createSaveUserProfileTool({ store, clock, toneAdaptation: arms.toneAdaptation })]),
    messenger,
    clock,
    lock,
    modules: {
      [ConversationState.INTAKE]: createIntakeModule(prompts.intake),
      [ConversationState.FEEDBACK]: createFeedbackModule(prompts.feedback),
    },
    config: { chatHistoryLimit: -1, debug: false },
    log: silentLog,
    promptSettings: arms.promptSettings,
  });
  const participants = createTrialParticipantService({ store, messenger, lock, clock, newId, study });
  const trials = createTrialService({ store, clock, study });
  const enrollInArm = async (arm: string, index: number, language = 'en') => {
    const participant = await participants.enroll({ phoneNumber: phoneFor(index), language }, { greet: false });
    await trials.overrideArm(participant.id, { armId: arm, reason: 'test arm', by: 'test' });
    return participant.id;
  };
  let received = 0;
  const send = (participantId: string, text: string) => {
    received += 1;
    return flow.handleMessage({ participantId, text, receivedAt: clock.now(), sourceMessageId: `in_${received}` });
  };
  const requestsOf = (participantId: string, purpose: string) =>
    llm.requests.filter((request) => request.participantId === participantId && request.purpose === purpose);
  const toneTags = async (participantId: string) =>
    parseProfile((await readData(store as Store, participantId))[DataKey.userProfile], clock.now()).tone.tone_tags;
  return { store, clock, prompts, generator, enrollInArm, send, requestsOf, toneTags };
}

describe("an arm's prompts and tone adaptation", () => {
  it("sends each arm's participants their arm's system prompt, in their language, and the defaults elsewhere", async () => {
    const rig = await createArmPromptRig();
    const standard = await rig.enrollInArm('standard', 1);
    const brief = await rig.enrollInArm('brief', 2);
    const briefSpanish = await rig.enrollInArm('brief', 3, 'es');
    for (const participantId of [standard, brief, briefSpanish]) await rig.send(participantId, 'Hello');

    const intakeSystem = (participantId: string) =>
      systemText(rig.requestsOf(participantId, 'intake')[0] ?? { messages: [] });
    expect(intakeSystem(standard)).toContain(rig.prompts.intake);
    expect(intakeSystem(standard)).not.toContain('BRIEF ARM');
    expect(intakeSystem(brief)).toContain('BRIEF ARM INTAKE PROMPT.');
    expect(intakeSystem(brief)).not.toContain(rig.prompts.intake);
    expect(intakeSystem(briefSpanish)).toContain('PROMPT DE INTAKE DEL BRAZO BREVE.');
    expect(intakeSystem(briefSpanish)).not.toContain('BRIEF ARM INTAKE PROMPT.');

    // The generator prompt too; an arm without its own file for a prompt would keep the default.
    for (const participantId of [standard, brief]) {
      const profile = parseProfile(undefined, rig.clock.now());
      await writeProfile(
        rig.store,
        participantId,
        { ...profile, prompt_anchor: 'coffee', preferred_time: '08:00' },
        rig.clock.now(),
      );
      await rig.generator.generate(participantId, { deliveryMode: 'scheduled' });
    }
    expect(systemText(rig.requestsOf(standard, 'prompt-generator')[0] ?? { messages: [] })).toContain(
      rig.prompts.promptGenerator,
    );
    expect(systemText(rig.requestsOf(brief, 'prompt-generator')[0] ?? { messages: [] })).toContain(
      'BRIEF ARM GENERATOR PROMPT.',
    );
  });

  it('neither updates nor applies the tone tags of an arm without tone adaptation', async () => {
    const rig = await createArmPromptRig();
    const standard = await rig.enrollInArm('standard', 1);
    const brief = await rig.enrollInArm('brief', 2);
    for (const participantId of [standard, brief]) {
      await rig.send(participantId, TONE_REQUEST);
      await rig.send(participantId, 'And now?');
    }
    expect(await rig.toneTags(standard)).toEqual(['concise']);
    expect(await rig.toneTags(brief)).toEqual([]);
    const lastSystem = (participantId: string) =>
      systemText(rig.requestsOf(participantId, 'intake').at(-1) ?? { messages: [] });
    expect(lastSystem(standard)).toContain('<TONE POLICY>');
    expect(lastSystem(brief)).not.toContain('<TONE POLICY>');

    // Tags saved before the arm changed (or by staff) are not applied either.
    const profile = parseProfile((await readData(rig.store, brief))[DataKey.userProfile], rig.clock.now());
    const tone = { ...profile.tone, tone_tags: ['concise'] };
    await writeProfile(rig.store, brief, { ...profile, tone }, rig.clock.now());
    await rig.send(brief, 'Once more.');
    expect(lastSystem(brief)).not.toContain('<TONE POLICY>');
  });
});
