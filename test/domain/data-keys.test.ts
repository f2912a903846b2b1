import { describe, expect, it } from 'vitest';
import { CONTRACT_DATA_KEYS } from '../../src/domain/data-keys.ts';

describe('data keys (specification §Data keys)', () => {
  it('lists the 18 keys of the contract, by their stored names, once each', () => {
    expect(CONTRACT_DATA_KEYS).toEqual([
      'conversationHistory',
      'systemPrompt',
      'participantBackground',
      'userProfile',
      'lastHabitPrompt',
      'feedbackState',
      'feedbackTimerID',
      'feedbackFollowupTimerID',
      'scheduleRegistry',
      'conversationState',
      'stateTransitionTimerID',
      'lastPromptSentAt',
      'autoFeedbackTimerID',
      'dailyPromptPending',
      'dailyPromptReminderTimerID',
      'dailyPromptReminderSentAt',
      'dailyPromptRespondedAt',
      'lastIntensityPromptDate',
    ]);
  });
});
