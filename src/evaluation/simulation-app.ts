/**
 * One isolated study for one simulated participant: the real application (engine, tools, timers, job runner, outbox)
 * on an in-memory SQLite database, the manual clock, a channel that records what the coach sends, and the coach's
 * model reached through a recording proxy. Nothing touches the study's own database or channels.
 */
import { pino } from 'pino';
import type { Channel, DeliveryResult, OutboundMessage } from '../channels/channel.ts';
import { type Environment, loadConfig } from '../config.ts';
import { type Application, createApplication } from '../main.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { type RecordingProxy, startRecordingProxy } from './recording-proxy.ts';

/** The coach under evaluation: what differs between the two sides of a comparison. */
export interface CoachConfiguration {
  /** A label for the report (`A`, `B`). */
  label: string;
  /** A directory with intake.txt / feedback.txt / prompt-generator.txt (and per-language folders); else built-in. */
  promptsDir?: string | undefined;
  /** `GENAI_MODEL` override. */
  model?: string | undefined;
  /** `LLM_TOOL_PROTOCOL` override. */
  toolProtocol?: 'native' | 'text' | undefined;
}

export const EVALUATION_CHANNEL = 'eval';

/** A message the coach sent, stamped with the study clock at delivery. */
export interface DeliveredMessage {
  at: Date;
  message: OutboundMessage;
}

export interface SimulationApp {
  app: Application;
  proxy: RecordingProxy;
  delivered: DeliveredMessage[];
  close(): Promise<void>;
}

/** The settings of the study's environment that shape the coach; everything else (database, channels) stays out. */
const COACH_SETTING =
  /^(OPENAI_|GENAI_|LLM_|SCHEDULER_|DAILY_PROMPT_|FEEDBACK_|AUTO_FEEDBACK_|IDLE_|DEFAULT_|CHAT_HISTORY_LIMIT$|INTAKE_BOT_PROMPT_FILE$|FEEDBACK_TRACKER_PROMPT_FILE$|PROMPT_GENERATOR_PROMPT_FILE$|MESSAGE_CATALOGUE_DIR$)/;

/** The coach's part of the study's environment (the model, prompts and scheduling settings). */
export function coachEnvironment(environment: Environment): Environment {
  return Object.fromEntries(Object.entries(environment).filter(([name]) => COACH_SETTING.test(name)));
}

function promptFiles(promptsDir: string | undefined): Environment {
  if (!promptsDir) return {};
  return {
    INTAKE_BOT_PROMPT_FILE: `${promptsDir}/intake.txt`,
    FEEDBACK_TRACKER_PROMPT_FILE: `${promptsDir}/feedback.txt`,
    PROMPT_GENERATOR_PROMPT_FILE: `${promptsDir}/prompt-generator.txt`,
  };
}

export async function startSimulationApp(options: {
  environment: Environment;
  coach: CoachConfiguration;
  start: Date;
}): Promise<SimulationApp> {
  const { environment, coach } = options;
  const upstream = environment.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
  const proxy = await startRecordingProxy(upstream);
  const coachSettings = coachEnvironment(environment);
  const delivered: DeliveredMessage[] = [];
  let app: Application | undefined;
  try {
    const config = loadConfig({
      ...coachSettings,
      ...promptFiles(coach.promptsDir),
      ...(coach.model ? { GENAI_MODEL: coach.model } : {}),
      ...(coach.toolProtocol ? { LLM_TOOL_PROTOCOL: coach.toolProtocol } : {}),
      // A failing model should fail the conversation's turn quickly, not wait out a production retry budget.
      LLM_MAX_RETRIES: coachSettings.LLM_MAX_RETRIES ?? '1',
      OPENAI_BASE_URL: proxy.baseUrl,
      OPENAI_API_KEY: coachSettings.OPENAI_API_KEY ?? 'evaluation',
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: options.start.toISOString(),
      LOG_LEVEL: 'silent',
    });
    const channel: Channel = {
      name: EVALUATION_CHANNEL,
      supportsPolls: true,
      async send(message): Promise<DeliveryResult> {
        delivered.push({ at: app?.clock.now() ?? options.start, message });
        return { providerMessageId: `eval_${message.id}` };
      },
    };
    app = await createApplication({
      config,
      log: pino({ level: 'silent' }),
      channel,
      store: await createSqliteStore({ filename: ':memory:' }),
    });
    await app.start();
  } catch (error) {
    await proxy.close();
    throw error;
  }
  const running = app;
  return {
    app: running,
    proxy,
    delivered,
    async close() {
      try {
        await running.stop();
      } finally {
        await proxy.close();
      }
    },
  };
}

/** Lets every turn and every job due now finish, including what they enqueue for now (replies, follow-up polls). */
export async function settle(app: Application): Promise<void> {
  for (let round = 0; round < 20; round += 1) {
    await app.inbound.idle();
    const ran = await app.runner.advanceTo(app.clock.now());
    await app.inbound.idle();
    if (ran === 0) return;
  }
}
