/** Randomised trials: the study design file (validated before anything is sent), the trial service, the arms' settings. */

import { createArmSettings } from '../trials/arm-settings.ts';
import { loadStudyDesign } from '../trials/study-design-file.ts';
import { createTrialService } from '../trials/trial-service.ts';
import type { Core } from './application.ts';

export type Trials = Awaited<ReturnType<typeof wireTrials>>;

export async function wireTrials(core: Core) {
  const { config, log, clock, store } = core;
  // A trial's design is validated before anything is sent: an error in it stops the start, naming its line and field.
  const study = config.study.designFile ? await loadStudyDesign(config.study.designFile) : undefined;
  if (study) {
    log.info({ studyId: study.design.study.id, hash: study.hash, arms: study.design.arms.length }, 'study design');
  }
  const trials = createTrialService({ store, clock, study });
  // What an arm changes (prompts, tone, static or no daily prompt, timers) goes through the ports the engine has.
  const armSettings = study ? createArmSettings({ study, store, clock }) : undefined;
  return { study, trials, armSettings };
}
