/**
 * Starting and stopping the built parts. Start: the startup record, the channels, recovery of what a previous run
 * left, the job runner, then (for `serve`) the HTTP server. Stop, gracefully: stop taking work, finish the turns and
 * jobs in flight, close the database.
 */
import type { FastifyInstance } from 'fastify';
import { warnAboutDisabledChannels } from '../channels/disabled-channels.ts';
import type { HttpClient } from '../http/http-client.ts';
import type { InboundService } from '../inbound/inbound-port.ts';
import { recordStartup } from '../research/provenance/startup-record.ts';
import type { SharedManualClock } from '../scheduling/shared-manual-clock.ts';
import type { Application, Core } from './application.ts';
import type { ChannelSet } from './channels.ts';
import type { Prompts } from './llm.ts';
import type { Safety } from './safety.ts';
import { VERSION } from './web.ts';

export function lifecycle(
  core: Core,
  parts: {
    prompts: Prompts;
    channels: ChannelSet;
    sharedClock: SharedManualClock | undefined;
    safety: Safety;
    inbound: InboundService;
    server: FastifyInstance;
    httpClient: HttpClient;
  },
): Pick<Application, 'start' | 'stop'> {
  const { config, log, store, clock, runner, coordinator } = core;
  const { prompts, sharedClock, safety, inbound, server, httpClient } = parts;
  const { channels, whatsappWebChannel, telegramChannel } = parts.channels;
  let stopping: Promise<void> | undefined;
  let listening = false;
  return {
    async start(startOptions = {}) {
      await recordStartup({ events: store.events, config, prompts: prompts.files, version: VERSION, now: clock.now() });
      for (const enabled of channels.all()) await enabled.start?.();
      // Participants on a channel this server does not run (a `promptpipe chat` participant on a webhook server).
      await warnAboutDisabledChannels({ participants: store.participants, enabled: channels.names, log });
      await sharedClock?.start();
      // SQLite: this process is the only runner, so what a killed predecessor left running is released now rather
      // than when its lease expires. (PostgreSQL may have live peers: the runner releases only the jobs of instances
      // whose liveness lock is gone, at its start and on every heartbeat.)
      if (store.dialect === 'sqlite') {
        const released = await store.jobs.releaseLeases(clock.now());
        if (released > 0) log.info({ count: released }, 'jobs left running by the last run released');
      }
      await safety.adherence.start();
      await inbound.recoverUnprocessed();
      inbound.startRecoveryLoop?.(config.cluster.recoveryIntervalMs);
      runner.start();
      if (startOptions.listen) {
        await server.listen({ host: config.api.host, port: config.api.port });
        listening = true;
      }
    },
    stop() {
      stopping ??= (async () => {
        // Order: no new requests (in-flight ones finish), then the turns in flight, then jobs, then the database.
        if (listening) await server.close();
        // WhatsApp acknowledges a message once received: stop receiving before the pipeline refuses messages, or one
        // arriving in between would be lost. Deliveries still running then are held for the next start.
        await whatsappWebChannel?.stop?.();
        await telegramChannel?.stop?.();
        await inbound.stop();
        await runner.stop();
        for (const enabled of channels.all()) await enabled.stop?.();
        if (!listening) await server.close();
        await coordinator?.close();
        await store.close();
        await httpClient.close();
        log.info({}, 'stopped');
      })();
      return stopping;
    },
  };
}
