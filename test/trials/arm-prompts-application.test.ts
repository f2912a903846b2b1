/**
 * An arm's prompt directory through the composition root (`createApplication`) and a scripted OpenAI-compatible
 * model server: the design file's arm prompts reach the model for that arm's participants only, and each model
 * call's provenance names the arm's file.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { startTestApplication } from '../support/test-application.ts';
import { phoneFor } from './trial-fixture.ts';

let app: Application | undefined;
let model: ScriptedOpenAiServer | undefined;
let directory = '';
afterEach(async () => {
  await app?.stop();
  await model?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

describe("an arm's prompt directory in the application", () => {
  it("sends the arm's intake prompt to the model and records its file as the call's prompt", async () => {
    directory = await mkdtemp(join(tmpdir(), 'promptpipe-arm-prompts-'));
    await mkdir(join(directory, 'prompts', 'brief'), { recursive: true });
    await writeFile(join(directory, 'prompts', 'brief', 'intake.txt'), 'You are the BRIEF arm coach. Be short.');
    const designFile = join(directory, 'study.yaml');
    await writeFile(
      designFile,
      `study: { id: prompt-app-trial, seed: "prompt-app-seed" }
arms:
  - { id: standard, label: Standard }
  - { id: brief, label: Brief, prompt_dir: prompts/brief }
`,
    );
    model = await startScriptedOpenAiServer({ respond: () => ({ content: 'Hello there.' }) });
    app = await startTestApplication({
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'test',
      STUDY_DESIGN_FILE: designFile,
    });
    const running = app;
    const inArm = async (index: number, arm: string) => {
      const participant = await running.participants.enroll({ phoneNumber: phoneFor(index) }, { greet: false });
      const moved = await running.server.inject({
        method: 'POST',
        url: `/conversation/participants/${participant.id}/arm`,
        payload: { arm, reason: 'test arm' },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      await running.flow.handleMessage({ participantId: participant.id, text: 'Hi', receivedAt: running.clock.now() });
      return participant.id;
    };
    const standard = await inArm(1, 'standard');
    const brief = await inArm(2, 'brief');

    const systemOf = (index: number) =>
      (model?.requests[index]?.body.messages ?? [])
        .filter((message) => message.role === 'system')
        .map((message) => message.content ?? '')
        .join('\n');
    expect(model.requests).toHaveLength(2);
    expect(systemOf(0)).not.toContain('BRIEF arm');
    expect(systemOf(1)).toContain('You are the BRIEF arm coach. Be short.');

    const calls = await app.store.research.llmCallsPage({}, undefined, 10);
    const fileOf = (participantId: string) => calls.find((call) => call.participantId === participantId)?.promptFile;
    expect(fileOf(standard)).toBe('intake.txt');
    expect(fileOf(brief)).toBe('arms/brief/intake.txt');
  });
});
