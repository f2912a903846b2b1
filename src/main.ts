/**
 * The composition root: the ONE place that turns the configuration into running parts. It reads as a table of
 * contents; each capability is wired by one module in `wiring/`:
 *
 *   core (clock, HTTP pool, store, job runner, outbox messenger) → trials → prompts and the model → safety
 *   → the conversation engine → channels → delivery → participants → inbound pipeline → HTTP server → lifecycle
 *
 * Nothing here runs at import time. `createApplication` builds everything without listening or starting work;
 * `start` recovers unprocessed messages, starts the job runner and (for `serve`) the HTTP server; `stop` shuts down
 * gracefully: stop taking work, finish the turns and jobs in flight, close the database.
 */
import { loadMessageCatalogue } from './i18n/load-message-catalogue.ts';
import type { Application, ApplicationOptions } from './wiring/application.ts';
import { wireChannels } from './wiring/channels.ts';
import { wireCore } from './wiring/core.ts';
import { wireDelivery } from './wiring/delivery.ts';
import { wireEngine } from './wiring/engine.ts';
import { wireInbound } from './wiring/inbound.ts';
import { lifecycle } from './wiring/lifecycle.ts';
import { loadPrompts, safetyModel, wireLlm } from './wiring/llm.ts';
import { wireParticipants } from './wiring/participants.ts';
import { wireSafety } from './wiring/safety.ts';
import { wireTrials } from './wiring/trials.ts';
import { wireWeb } from './wiring/web.ts';

export type { Application, ApplicationLogger, ApplicationOptions } from './wiring/application.ts';
export { createWhatsAppLease, loadWhatsAppSocketFactory } from './wiring/channel-sdks.ts';
export { openStore } from './wiring/store.ts';
export { VERSION } from './wiring/web.ts';

export async function createApplication(options: ApplicationOptions): Promise<Application> {
  const { core, httpClient, sharedClock } = await wireCore(options);
  const { config, log, store, clock, metrics, runner } = core;
  const { study, trials, armSettings } = await wireTrials(core);
  const prompts = loadPrompts(config, study);
  const llm = wireLlm(core, prompts, httpClient.fetch);
  const messages = loadMessageCatalogue({ ...config.language, log });
  const safety = wireSafety(core, safetyModel(core, prompts, llm));
  const flow = wireEngine(core, { llm, prompts, messages, safety, study, armSettings });
  const channels = await wireChannels(core, httpClient.fetch, messages, options.channel);
  const receipts = wireDelivery(core, channels, messages);
  const people = wireParticipants(core, { flow, llm, messages, channels, study });
  const inbound = wireInbound(core, { flow, messages, channels, people, safety });
  const server = wireWeb(core, {
    wallClock: options.wallClock,
    sharedClock,
    llm,
    channels,
    receipts,
    people,
    inbound,
    safety,
    trials,
  });
  const { participants, imports, pauses } = people;
  return {
    config,
    store,
    clock,
    metrics,
    channel: channels.channel,
    channels: channels.channels,
    llm,
    flow,
    participants,
    inbound,
    runner,
    imports,
    pauses,
    server,
    ...lifecycle(core, { prompts, channels, sharedClock, safety, inbound, server, httpClient }),
  };
}
